r"""DMABO: distributed multi-agent BO with coupled black-box and affine constraints (Xu et al. (2023),
Algorithm 4.1).

For :math:`t = 1, \dots, T`:

2. **local primal update**, every agent :math:`i` in parallel, from its own posterior after ``t - 1``
   observations (clipped lower confidence bounds, Lemma 3.1):

   .. math:: x_i^t \in \arg\min_{x_i \in \mathcal X^i}\ \underline f_i^t(x_i) + \eta\,\lambda_t^\top
             \underline g_i^t(x_i) + \eta\,\mu_t^\top A_i x_i \qquad (4.5)

   by exhaustive search over the agent's grid; agent ``i`` sends :class:`~ckb.multiagent.messages.Proposal`
   :math:`(A_i x_i^t,\ \underline g_i^t(x_i^t))` (Remark 2) and nothing else;
3. **global dual update** at the coordinator, unit step, projection on :math:`\lambda` only:

   .. math:: \lambda_{t+1} = \Big[\lambda_t + \sum_i \underline g_i^t(x_i^t) + \epsilon e\Big]^+, \qquad
             \mu_{t+1} = \mu_t + \sum_i A_i x_i^t - b \qquad (4.6)

   and broadcasts :class:`~ckb.multiagent.messages.PriceBroadcast` :math:`(\lambda_{t+1}, \mu_{t+1})`;
4. every agent evaluates its own :math:`f_i, g_{i,1..m}` at :math:`x_i^t` (noisy);
5. every agent updates its ``m + 1`` posteriors.

:math:`\eta` multiplies the duals only in the primal step; the dual step adds the raw pre-evaluation
bounds. Lines 4-5 of round ``t`` do not depend on line 3, so an agent runs lines 2, 4 and 5 in one call
(``step``): it computes the proposal from the pre-evaluation posterior, then evaluates and updates,
then answers. One message exchange per round, identical decisions to the paper's ordering.

Variants: ``m = 0`` (only affine constraints, the power allocation of Sec. 5.2) drops :math:`\lambda`;
``l = 0`` (only black-box constraints, the GP experiment of Sec. 5.1 and Theorem 4.2) drops :math:`\mu`.
They are the same code with empty vectors.

Parameter modes (:func:`dmabo_parameters`)
------------------------------------------
``mode = "practical"`` (not in the paper, which gives only Theorem 4.1's settings; every default is our
choice): ``eta`` a number or ``"1/sqrt(T)"`` (default); ``eps`` a number (default 0) or ``eps_scale``
``c`` for :math:`\epsilon = c/\sqrt T`; ``lam1`` (default 0) and ``mu1`` (default 0) numbers or vectors
(of ``m``, resp. ``l``, entries).

``mode = "theory"`` (Theorem 4.1): :math:`\eta = 1/\sqrt T`, :math:`\mu_1 = 0`,
:math:`\lambda_1 = \sqrt{H_1/m}\,e` and :math:`\epsilon \in \{\epsilon_1, \epsilon_2\}` (``eps = "eps1"`` or
``"eps2"``) from the problem's public constants (:func:`theory_parameters`): :math:`C_{i,j}` (the clipping
bounds), :math:`\xi`, :math:`\rho`, :math:`B`, and the widths :math:`\beta^T_{i,j}` and information gains
:math:`\gamma^T_{i,j}` of the agents' models (for :math:`\epsilon_1`: :math:`\gamma^T` from the greedy
curve always, :math:`\beta^T` from the model's own schedule, which is Lemma 3.1's with that same
:math:`\gamma` only under ``beta = {"type": "theory", "gamma": "greedy"}``, the shipped specs' setting; a
constant β enters as itself, and ``gamma = "chosen"`` as its value before any point is queried,
:math:`\gamma = 0`). :math:`\epsilon_2` is Appendix A.1's
:math:`\sqrt{2(H_1 + H_2 + 2C_0/\eta + 2\|C\|^2 + B^2)}/T` (the theorem statement's extra :math:`/\eta` under
the root contradicts the claimed :math:`O(N/\sqrt T)` and the proof step A.17). The theorem
requires :math:`\epsilon \le \min\{\xi/2, \min_j C_j\}`; whether this holds is recorded
(``eps_admissible``), and ``eps_cap = "xi/2"`` (or a number) caps :math:`\epsilon` there (off by
default). A parameter only the other mode reads is refused (:func:`check_mode_params`): ``eps_cap``
in practical mode; ``eta``, ``eps_scale``, ``lam1``, ``mu1`` in theory mode. With ``l = 0``:
:math:`H_2 = 0`, :math:`B = 0`; with ``m = 0``: :math:`H_1 = 0` and no :math:`\lambda` (our reading: the
potential of Lemmas A.7-A.8 then has no :math:`\lambda` part).

Choices where the paper is silent (also in the specs' ``[choices]``): ties of the grid argmin broken
uniformly at random with the agent's own seeded generator (``tie_break = "random"``; ``"first"`` takes
the lowest index, used for the deterministic counter-example); no initial design (round 1 acts on the
prior); one kernel per agent, fixed (no hyperparameter fitting).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from ckb._validation import as_real_array, check_choice, check_finite_array, check_scalar, short_repr
from ckb.errors import InvalidInputError
from ckb.multiagent.agent import GridAgent
from ckb.multiagent.coordinator import Coordinator
from ckb.multiagent.messages import PriceBroadcast, Proposal
from ckb.multiagent.methods import MAX_MAGNITUDE, METHODS, Setup, agent_kwargs, check_method_params


class DMABOAgent(GridAgent):
    """Agent ``i`` of DMABO: line 2 (local primal step), then lines 4-5 (evaluate, update)."""

    protocol: ClassVar[dict[str, tuple[type | None, type]]] = {"step": (PriceBroadcast, Proposal)}

    def __init__(self, *, eta: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.eta = check_scalar(eta, "eta", low=0.0, low_inclusive=False, high=MAX_MAGNITUDE)
        self.last_index = -1

    def primal(self, t: int, lam: np.ndarray, mu: np.ndarray) -> tuple[int, np.ndarray]:
        """Eq. 4.5 on the grid: ``(k, g_lcb(x_k))`` (no evaluation)."""
        f_lcb, g_lcb = self.model.lower(t)
        score = f_lcb.copy()
        if self.m:
            score += self.eta * (g_lcb @ lam)
        if self.l:
            score += self.eta * (self.ax_grid @ mu)
        k = self._argmin(score)
        return k, g_lcb[k]

    def step(self, msg: PriceBroadcast) -> Proposal:
        t = self._check_round(msg, PriceBroadcast)
        lam, mu = np.asarray(msg.lam), np.asarray(msg.mu)
        if lam.shape != (self.m,) or mu.shape != (self.l,):
            raise InvalidInputError(
                f"agent {self.agent}: prices must have m = {self.m} and l = {self.l} entries, got "
                f"{lam.shape[0]} and {mu.shape[0]}."
            )
        k, g_lcb = self.primal(t, lam, mu)
        proposal = Proposal(self.agent, t, a_x=self.ax_grid[k], g_lcb=g_lcb)
        self._evaluate(k)  # lines 4-5
        self.last_index = k
        self.t = t
        return proposal

    def _extra_state(self) -> dict[str, Any]:
        return {"last_index": self.last_index}

    def _load_extra_state(self, state: dict[str, Any]) -> None:
        self.last_index = int(state.get("last_index", -1))


class DMABOCoordinator(Coordinator):
    """The dual update (4.6) and the price broadcast."""

    reply_type = Proposal

    def __init__(self, n_agents: int, *, b: Any, eps: float, lam1: Any, mu1: Any) -> None:
        super().__init__(n_agents)
        self.b = check_finite_array(b, "b", ndim=1)
        self.lam = check_finite_array(lam1, "lambda_1", ndim=1).copy()
        if np.any(self.lam < 0):
            raise InvalidInputError(f"lambda_1 must be >= 0 elementwise, got {self.lam.tolist()}.")
        self.mu = check_finite_array(mu1, "mu_1", shape=(self.b.shape[0],)).copy()
        _check_magnitude(self.lam, "lambda_1")
        _check_magnitude(self.mu, "mu_1")
        self.eps = check_scalar(eps, "eps", low=0.0, high=MAX_MAGNITUDE)
        self.m, self.l = self.lam.shape[0], self.b.shape[0]

    def outgoing(self) -> list[PriceBroadcast]:
        msg = PriceBroadcast(self.t, self.lam, self.mu)
        return [msg] * self.n_agents

    def update(self, replies: list[Proposal]) -> None:
        self._check_replies(replies)
        g_sum = np.zeros(self.m)
        ax_sum = np.zeros(self.l)
        for r in replies:
            if len(r.g_lcb) != self.m or len(r.a_x) != self.l:
                raise InvalidInputError(
                    f"proposal of agent {r.agent} has {len(r.g_lcb)} bounds and {len(r.a_x)} affine values; "
                    f"expected m = {self.m} and l = {self.l}."
                )
            g_sum += r.g_lcb
            ax_sum += r.a_x
        self.lam = np.maximum(self.lam + g_sum + self.eps, 0.0)
        self.mu = self.mu + ax_sum - self.b
        self.t += 1

    def internals(self) -> dict[str, np.ndarray]:
        return {"lam": self.lam.copy(), "mu": self.mu.copy()}

    def state_dict(self) -> dict[str, Any]:
        return {"t": self.t, "lam": self.lam.copy(), "mu": self.mu.copy()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.t = int(state["t"])
        self.lam = np.asarray(state["lam"], dtype=float).reshape(self.m).copy()
        self.mu = np.asarray(state["mu"], dtype=float).reshape(self.l).copy()


# ----------------------------------------------------------------------------- parameters
def theory_parameters(
    T: int,
    C: Any,
    *,
    xi: float | None,
    rho: float | None = None,
    B: float = 0.0,
    l: int = 0,
    beta_T: Any = None,
    gamma_T: Any = None,
) -> dict[str, Any]:
    r"""Theorem 4.1's constants.

    ``C`` is the ``(N, m + 1)`` array of :math:`C_{i,j}` (column 0: objective); :math:`C_j = \sum_i C_{i,j}`
    and :math:`\|C\|^2 = \sum_{j \ge 1} C_j^2`. ``beta_T``, ``gamma_T`` are ``(N, m)`` arrays of
    :math:`\beta^T_{i,j}`, :math:`\gamma^T_{i,j}` (constraints only), needed for :math:`\epsilon_1`.
    Returns ``eta, H1, H2, lam1 (m,), eps1, eps2, eps2_main_text`` and the admissibility bound
    :math:`\min\{\xi/2, \min_j C_j\}`.
    """
    T = int(check_scalar(T, "T", low=1, integer=True))
    C = check_finite_array(C, "C", ndim=2)
    m = C.shape[1] - 1
    eta = 1.0 / math.sqrt(T)
    C0 = float(C[:, 0].sum())
    Cj = C[:, 1:].sum(axis=0)
    C2 = float(np.sum(Cj**2))
    B = check_scalar(B, "B (hints['B'])", low=0.0)
    if m > 0:
        if xi is None or _hint_number(xi, "xi (hints['xi'], the Slater margin)") <= 0:
            raise InvalidInputError(f"theory mode needs the Slater margin xi > 0 (Assumption 5), got {xi!r}.")
    if l > 0:
        if rho is None or _hint_number(rho, "rho (hints['rho'], Lemma A.1)") <= 0:
            raise InvalidInputError(
                f"theory mode with affine constraints needs rho > 0 (Lemma A.1), got {rho!r}."
            )
    try:
        H1 = 0.5 * (4.0 * C0 / (eta * xi) + (4.0 * C2 + 2.0 * B**2) / xi) ** 2 if m > 0 else 0.0
        s = (1.0 + math.sqrt(m)) ** 2
        H2 = 4.0 * C0**2 / (rho**2 * eta**2) * s + s / rho**2 * (2.0 * C2 + B**2) ** 2 if l > 0 else 0.0
        K = H1 + H2 + 2.0 * C0 / eta + 2.0 * C2 + B**2
    except (OverflowError, ZeroDivisionError):
        K = math.inf
    if not math.isfinite(K) or math.sqrt(2.0 * K) > MAX_MAGNITUDE:
        raise InvalidInputError(
            f"theory mode: Theorem 4.1's constants overflow for T = {T}, sum C = {C0 + float(Cj.sum()):.3g}, "
            f"xi = {xi!r}, rho = {rho!r}, B = {B!r} (lambda_1 or eps would exceed {MAX_MAGNITUDE:g}); "
            f"check the problem's hints."
        )
    lam1 = np.full(m, math.sqrt(H1 / m)) if m > 0 else np.zeros(0)
    eps2 = math.sqrt(2.0 * K) / T
    out: dict[str, Any] = {
        "eta": eta,
        "H1": H1,
        "H2": H2,
        "lam1": lam1,
        "eps2": eps2,
        "eps2_main_text": math.sqrt(2.0 * K / eta) / T,
        "eps_bound": (min(xi / 2.0, float(Cj.min())) if m > 0 else None),
    }
    if beta_T is not None and gamma_T is not None and m > 0:
        bT = check_finite_array(beta_T, "beta_T", shape=(C.shape[0], m))
        gT = check_finite_array(gamma_T, "gamma_T", shape=(C.shape[0], m))
        learn = 8.0 * float(np.sum(np.linalg.norm(bT, axis=1) * np.sqrt(T * np.linalg.norm(gT, axis=1))))
        out["eps1"] = (math.sqrt(2.0 * K) + learn) / T
    return out


def _hint_number(value: Any, name: str) -> float:
    """A hint as a finite real number, named (the caller checks its sign, with its own message)."""
    return check_scalar(value, name)


def _check_magnitude(arr: np.ndarray, name: str) -> None:
    """Refuse entries beyond :data:`~ckb.multiagent.methods.MAX_MAGNITUDE` (see there why)."""
    if arr.size and float(np.max(np.abs(arr))) > MAX_MAGNITUDE:
        raise InvalidInputError(
            f"{name} must be at most {MAX_MAGNITUDE:g} in absolute value (larger values overflow the "
            f"primal scores), got {short_repr(arr.tolist())}."
        )


def _no_effect(params: dict[str, Any], keys: tuple[str, ...], problem, why: str) -> None:
    """Refuse a parameter ``problem`` makes ineffective (e.g. ``lam1`` without black-box constraints)."""
    for key in keys:
        if key in params:
            raise InvalidInputError(
                f"{key} would have no effect: problem {problem.name!r} has {why}; drop {key} "
                f"(got {key} = {short_repr(params[key], 40)})."
            )


def dmabo_parameters(params: dict[str, Any], T: int, problem, models: list) -> dict[str, Any]:
    """Resolve ``eta, eps, lam1, mu1`` from a spec's parameters (module docstring) for horizon ``T``.

    ``models`` are the agents' :class:`~ckb.multiagent.models.LocalModel` (built by the harness to read
    :math:`\\beta^T, \\gamma^T` for :math:`\\epsilon_1`). Returns the values and a record of how they arose.
    """
    mode = check_mode_params(params)
    m, l = problem.m, problem.l
    if mode == "practical":
        eta = _practical_eta(params.get("eta", "1/sqrt(T)"), T)
        if "eps_scale" in params and "eps" in params:
            raise InvalidInputError("give either eps or eps_scale, not both.")
        if "eps_scale" in params:
            eps = check_scalar(params["eps_scale"], "eps_scale", low=0.0, high=MAX_MAGNITUDE) / math.sqrt(T)
        else:
            eps = _practical_eps(params.get("eps", 0.0))
        lam1 = _initial_dual(params.get("lam1", 0.0), "lam1", "m", m)
        if np.any(lam1 < 0):
            raise InvalidInputError(f"lam1 must be >= 0 elementwise, got {lam1.tolist()}.")
        mu1 = _initial_dual(params.get("mu1", 0.0), "mu1", "l", l)
        if m == 0:
            _no_effect(
                params, ("lam1", "eps", "eps_scale"), problem, "m = 0 black-box constraints (no lambda)"
            )
        if l == 0:
            _no_effect(params, ("mu1",), problem, "l = 0 affine constraints (no mu)")
        return {"eta": eta, "eps": eps, "lam1": lam1, "mu1": mu1, "record": {"mode": "practical"}}
    which = check_choice(params.get("eps", "eps2"), "theory mode: eps", ("eps1", "eps2"))
    C = np.asarray(problem.hints["C"], dtype=float)
    beta_T = gamma_T = None
    if which == "eps1" and m > 0:
        beta_T = np.stack([mod.beta(T)[1:] for mod in models])
        gamma_T = np.stack([_gamma_T(mod, T) for mod in models])
    th = theory_parameters(
        T,
        C,
        xi=problem.hints.get("xi"),
        rho=problem.hints.get("rho"),
        B=problem.hints.get("B", 0.0),
        l=l,
        beta_T=beta_T,
        gamma_T=gamma_T,
    )
    eps = th.get(which, 0.0) if m > 0 else 0.0
    bound = th["eps_bound"]
    cap = params.get("eps_cap")
    capped = False
    if isinstance(cap, str) and cap != "xi/2":
        raise InvalidInputError(f"eps_cap must be a number >= 0 or 'xi/2', got {cap!r}.")
    if cap is not None and cap != "xi/2":
        cap = check_scalar(cap, "eps_cap", low=0.0)
    if m == 0:
        _no_effect(params, ("eps", "eps_cap"), problem, "m = 0 black-box constraints (no eps, no lambda)")
    if cap is not None and m > 0:
        cap_value = bound if cap == "xi/2" else cap
        if eps > cap_value:
            eps, capped = cap_value, True
    record = {
        "mode": "theory",
        "eps_rule": which,
        "eps_formula": th.get(which),
        "eps_admissible": None if bound is None else bool(th.get(which, 0.0) <= bound),
        "eps_bound": bound,
        "eps_capped": capped,
        "H1": th["H1"],
        "H2": th["H2"],
        "eps2_main_text": th["eps2_main_text"],
    }
    return {"eta": th["eta"], "eps": eps, "lam1": th["lam1"], "mu1": np.zeros(l), "record": record}


#: Parameters that only one mode reads; given in the other mode they would be silently ignored.
_MODE_ONLY = {"practical": ("eta", "eps_scale", "lam1", "mu1"), "theory": ("eps_cap",)}


def _practical_eta(value: Any, T: int) -> float:
    """Practical mode's step size: a number > 0, or the string ``"1/sqrt(T)"`` (the default)."""
    if isinstance(value, str):
        if value == "1/sqrt(T)":
            return 1.0 / math.sqrt(T)
        raise InvalidInputError(
            f"eta must be a number > 0 or the string '1/sqrt(T)' (the default, exactly so written), got "
            f"{short_repr(value, 40)}."
        )
    return check_scalar(value, "eta", low=0.0, low_inclusive=False, high=MAX_MAGNITUDE)


def _practical_eps(value: Any) -> float:
    """Practical mode's constraint tightening: a number >= 0 (``"eps1"``/``"eps2"`` are theory mode's)."""
    if isinstance(value, str) and value in ("eps1", "eps2"):
        raise InvalidInputError(
            f"eps = {value!r} is a rule of mode = 'theory'; set mode = 'theory', or give eps as a number "
            "(>= 0) in practical mode."
        )
    return check_scalar(value, "eps", low=0.0, high=MAX_MAGNITUDE)


def check_mode_params(params: dict[str, Any]) -> str:
    """The mode of ``params`` (``"practical"`` or ``"theory"``), after refusing a parameter that only the
    other mode reads (``eps_cap`` in practical mode; ``eta``, ``eps_scale``, ``lam1``, ``mu1`` in theory
    mode would have no effect)."""
    mode = params.get("mode", "practical")
    if mode not in _MODE_ONLY:
        raise InvalidInputError(f"mode must be 'practical' or 'theory', got {mode!r}.")
    for other, keys in _MODE_ONLY.items():
        for key in keys:
            if other != mode and key in params:
                raise InvalidInputError(
                    f"{key} applies only in mode = {other!r} (it would have no effect here), got mode = "
                    f"{mode!r} and {key} = {params[key]!r}; drop {key} or set mode = {other!r}."
                )
    return mode


def _initial_dual(value: Any, name: str, size_name: str, size: int) -> np.ndarray:
    """``lam1`` / ``mu1``: a number (every entry) or a vector of ``size`` entries, as a ``(size,)`` array."""
    arr = as_real_array(value, name, "be numeric (real numbers)")
    arr = check_finite_array(arr, name) if arr.ndim else np.asarray(check_scalar(float(arr), name))
    _check_magnitude(arr, name)
    if arr.ndim <= 1 and arr.size == 1:  # a number, also as a 1-entry list (numpy broadcasting, as before)
        return np.full(size, float(arr.reshape(())))
    if arr.shape != (size,):
        raise InvalidInputError(
            f"{name} must be a number or a vector of {size_name} = {size} entries, got shape {arr.shape}."
        )
    return arr.copy()


def _gamma_T(model, T: int) -> np.ndarray:
    if getattr(model, "_gamma_curve", None) is not None:
        return np.full(model.m, model._gamma_curve[min(T, model._gamma_curve.shape[0] - 1)])
    from ckb.multiagent.models import greedy_information_gain

    g = greedy_information_gain(model.kernel_spec, model.grid, model.noise, T)[T]
    return np.full(model.m, g)


# ----------------------------------------------------------------------------------- setup

_OWN = ("mode", "eta", "eps", "eps_scale", "eps_cap", "lam1", "mu1")


@METHODS.register("dmabo")
def build_dmabo(problem, params: dict[str, Any], horizon: int, seed: int, trial: int) -> Setup:
    """DMABO agents and coordinator for ``problem`` (parameters: module docstring and methods.py)."""
    check_method_params("dmabo", params, _OWN)
    check_mode_params(params)
    kwargs = agent_kwargs(problem, params, horizon, seed, trial)
    models = []
    if params.get("mode", "practical") == "theory":
        from ckb.multiagent.models import LocalModel

        if params.get("surrogate", "gp") != "gp":
            raise InvalidInputError("theory mode needs GP models (surrogate = 'gp').")
        models = [LocalModel(kw["grid"], problem.m, horizon=horizon, **kw["model"]) for kw in kwargs]
    p = dmabo_parameters(params, horizon, problem, models)
    for kw in kwargs:
        kw["eta"] = p["eta"]
    coord = DMABOCoordinator(problem.n_agents, b=problem.b, eps=p["eps"], lam1=p["lam1"], mu1=p["mu1"])
    record = {
        **p["record"],
        "eta": p["eta"],
        "eps": p["eps"],
        "lam1": p["lam1"].tolist(),
        "mu1": p["mu1"].tolist(),
    }
    return Setup(DMABOAgent, kwargs, coord, record)
