r"""SCGP-UCB: stochastic constrained GP-UCB with a virtual queue (the CBO paper, Algorithm 2,
Theorems 3-4).

Stochastic full constraint information (the CBO paper, Sec. 4): before round ``t`` the environment
reveals an i.i.d. random function :math:`g_t(\cdot)` with :math:`\mathbb E[g_t] = g` and
:math:`|g_t| \le G` (Assumptions 5-6); environment ``"full-information"`` passes it to
:meth:`SCGPUCB.ask` as an ``(n, m)`` array over the candidates. With :math:`Q(1) = 0`,
:math:`\mu_0 = 0`, :math:`\sigma_0 = 1`, for ``t = 1, 2, ...``:

.. math::

    f_t(x) &= \mu_{t-1}(x) + \beta_t \sigma_{t-1}(x), \qquad \bar f_t = \mathrm{Proj}_{[-B, B]} f_t, \\
    z_t(x) &= \bar f_t(x) - \frac{1}{V_t} Q(t)\, g_t(x), \qquad x_t = \arg\max_x z_t(x), \\
    Q(t+1) &= [\,Q(t) + g_t(x_t) + \epsilon_t\,]^+ ,

then the GP of ``f`` is updated with :math:`(x_t, r_t)`; no model of ``g`` is kept (``g_t`` is seen whole).
Ties in the argmax are broken uniformly at random. The queue update needs no feedback, so it happens
in ``ask`` right after the choice; ``tell`` only updates the GP.

Parameter settings of Theorem 4 (``setting``), with δ the Slater margin of :math:`g = \mathbb E[g_t]`:

- ``"i"`` (Theorem 3 = Theorem 4(i)): :math:`\epsilon_t = 1/\sqrt t`, :math:`V_t = \frac{\delta}{8B}\sqrt t`;
- ``"ii"`` (Theorem 4(ii)): :math:`\epsilon_t = \frac{\delta}{2\sqrt t}`, :math:`V_t = \frac{\delta^2\sqrt t}{16B}`.

Both are :math:`\epsilon_t = \epsilon_0/\sqrt t`, :math:`V_t = V_0\sqrt t`; ``epsilon0`` and ``V0``
override the setting's constants (``epsilon0 = 0``: no slack). :func:`violation_bound` and
:func:`burn_in_bound` give Theorem 4's explicit bounds on :math:`\mathbb E[\mathcal V(\tau)]`.

Choices where the paper is silent or loose
------------------------------------------
- :math:`\beta_t = B + R\sqrt{2(\gamma_{t-1} + 1 + \ln(2/\alpha))}` as Theorems 3-4 write it (their δ there
  is a confidence level, renamed α), via :func:`ckb.exploration.make_beta`: the ``"theory"`` schedule is
  built with ``alpha / 2``; :math:`\gamma_{t-1}` is the information gain of the chosen points (not
  computable as a max over sets). ``beta`` / ``beta_scale`` choose another schedule.
- ``B``, ``G``, ``delta`` default to the problem's hints ``"B"``, ``"G"``, ``"slater_margin"`` (the papers
  assume them known); δ is not clipped at 1 (the paper's "δ <= 1 WLOG" only serves the statements).
  ``G`` is not used by the decision rule: each revealed sample is checked against it (Assumption 6), and
  it enters the theoretical bounds.
- ``m > 1`` constraints (the paper has ``m = 1``): one queue per constraint,
  :math:`z_t = \bar f_t - \sum_j Q_j(t) g_{t,j} / V_t`, :math:`Q_j(t+1) = [Q_j(t) + g_{t,j}(x_t) + \epsilon_t]^+`,
  the vector virtual queue of Yu, Neely & Wei (2017), whose stochastic-constraint example App. A adapts;
  δ is then the common margin :math:`\max_x \min_j -g_j(x)`. Theorems 3-4 are proved for ``m = 1`` only.
- Candidates only (arms or a grid): :math:`g_t` is revealed as its values at the candidates.

What the proof of Theorems 3-4 shows (the CBO paper, App. E), and what it does not: pathwise
:math:`\sum_{t\le\tau} g_t(x_t) \le Q(\tau+1) - \sum_{t\le\tau}\epsilon_t`; the paper then takes expectations
with :math:`\mathbb E[g_t(x_t)] = g(x_t)`, which gives a bound on :math:`\mathbb E[\sum_t g(x_t)]`, the
expected *signed* sum, not on :math:`\mathbb E[(\sum_t g(x_t))^+]` as the statement's
:math:`\mathbb E[\mathcal V(\tau)]` reads. The identity also needs :math:`x_t` independent of the
sample's noise, although :math:`x_t` is chosen after seeing :math:`g_t`: it holds when the noise of
:math:`g_t` is the same at every x (as in App. A's queue, :math:`\omega(t) - H(x)`, up to clipping), not
in general (``x_t`` then favours arms whose sample came out low, so :math:`g(x_t)` tends to exceed
:math:`g_t(x_t)`, and the queue under-counts the violation).

Recorded per round (:meth:`internals`): ``beta`` (β_t), ``V`` (V_t), ``eps`` (ε_t), ``Q`` = the queue
*after* round t's update, :math:`Q(t+1)` (``Q_1 .. Q_m`` when m > 1), and ``penalty`` = :math:`Q(t)/V_t`, the
weight on :math:`g_t` in round t's choice (``penalty_j``). Pathwise,
:math:`\sum_{s \le t}(g_s(x_s) + \epsilon_s) \le Q(t+1)`, which is how the papers bound the violation.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ckb._validation import check_scalar
from ckb.contract.revealed import check_revealed_constraints
from ckb.errors import InvalidInputError
from ckb.exploration import argmax_random_tie
from ckb.policies.igp_ucb import IGPUCB
from ckb.policies.registry import POLICIES

SETTINGS = ("i", "ii")


def setting_constants(setting: str, B: float, delta: float) -> tuple[float, float]:
    r"""``(epsilon0, V0)`` of Theorem 4's setting: :math:`\epsilon_t = \epsilon_0/\sqrt t`, :math:`V_t = V_0\sqrt t`."""
    if setting == "i":
        return 1.0, delta / (8.0 * B)
    if setting == "ii":
        return delta / 2.0, delta**2 / (16.0 * B)
    raise InvalidInputError(f"setting must be 'i' or 'ii' (Theorem 4), got {setting!r}.")


def violation_bound(tau: int | np.ndarray, G: float, delta: float, setting: str = "i") -> np.ndarray:
    r"""Theorem 4's explicit bound on :math:`\mathbb E[\mathcal V(\tau)]` (the CBO paper, App. E, end of each
    case).

    (i): :math:`\big(\frac{12(G+1)^2}{\delta}\ln\frac{8(G+1)}{\delta} + \frac{2G^2}{\delta^2} + \frac{2G^2+5G+7}{\delta} + 4\sqrt2 - \sqrt\tau\big)^+`;
    (ii): :math:`\big(\frac{12(G+1)^2}{\delta}\ln\frac{8(G+1)}{\delta} + \frac{2G^2+G+1}{\delta} + 9\sqrt2 - \frac{\delta}{2}\sqrt\tau\big)^+`.
    """
    tau = np.asarray(tau, dtype=float)
    return np.maximum(_bound_constant(G, delta, setting) - _bound_slope(delta, setting) * np.sqrt(tau), 0.0)


def burn_in_bound(G: float, delta: float, setting: str = "i") -> int:
    """The smallest τ at which :func:`violation_bound` is 0: the theory's burn-in, O(1/δ^4)."""
    return math.ceil((_bound_constant(G, delta, setting) / _bound_slope(delta, setting)) ** 2)


def _bound_constant(G: float, delta: float, setting: str) -> float:
    hajek = 12.0 * (G + 1.0) ** 2 / delta * math.log(8.0 * (G + 1.0) / delta)
    if setting == "i":
        return hajek + 2.0 * G**2 / delta**2 + (2.0 * G**2 + 5.0 * G + 7.0) / delta + 4.0 * math.sqrt(2.0)
    if setting == "ii":
        return hajek + (2.0 * G**2 + G + 1.0) / delta + 9.0 * math.sqrt(2.0)
    raise InvalidInputError(f"setting must be 'i' or 'ii' (Theorem 4), got {setting!r}.")


def _bound_slope(delta: float, setting: str) -> float:
    return 1.0 if setting == "i" else delta / 2.0


@POLICIES.register("scgp-ucb")
class SCGPUCB(IGPUCB):
    """SCGP-UCB (the CBO paper, Algorithm 2); see the module docstring.

    Parameters
    ----------
    setting:
        ``"i"`` or ``"ii"``: the (ε_t, V_t) of Theorem 4.
    B, G, delta:
        Bound on |f| (clipping, β_t, V_t), bound on |g_t| (Assumption 6, checked), Slater margin δ of
        E[g_t]. Default: the problem's hints ``B``, ``G``, ``slater_margin``.
    epsilon0, V0:
        Override the setting's constants in ε_t = epsilon0 / sqrt(t), V_t = V0 sqrt(t).
    R, noise, alpha, beta, beta_scale, kernel, method:
        IGP-UCB's (:class:`~ckb.policies.igp_ucb.IGPUCB`, whose GP of ``f`` and β_t this policy keeps):
        sub-Gaussian noise level of the reward (0.1), GP noise λ (1.0), confidence level (β_t uses
        ln(2/alpha)), β_t schedule (``"theory"``) and a multiplier, GP kernel (default: the problem's)
        and representation (leave ``"auto"``).
    """

    # Theorems 3-4 write ln(2/delta) with delta the confidence level: theory beta with alpha / 2
    confidence_split = 2.0

    def __init__(
        self,
        info,
        rng,
        *,
        setting: str = "i",
        B: float | None = None,
        G: float | None = None,
        delta: float | None = None,
        epsilon0: float | None = None,
        V0: float | None = None,
        **ucb: Any,
    ) -> None:
        super().__init__(info, rng, B=B, **ucb)
        check_scalar(self.B, "B", low=0.0, low_inclusive=False)
        self._require_constraints()
        self._shape = (len(self._require_candidates(" (g_t is revealed at the candidates)")), info.m)
        if setting not in SETTINGS:
            raise InvalidInputError(f"setting must be 'i' or 'ii' (Theorem 4), got {setting!r}.")
        self.setting = setting
        self.G = check_scalar(
            self._hint("G", G, "the bound G on |g_t| (Assumption 6)"), "G", low=0.0, low_inclusive=False
        )
        self.delta = check_scalar(
            self._hint("slater_margin", delta, "the Slater margin delta", "delta"),
            "delta (Slater margin)",
            low=0.0,
            low_inclusive=False,
        )
        e0, v0 = setting_constants(setting, self.B, self.delta)
        self.epsilon0 = e0 if epsilon0 is None else check_scalar(epsilon0, "epsilon0", low=0.0)
        self.V0 = v0 if V0 is None else check_scalar(V0, "V0", low=0.0, low_inclusive=False)
        self.m = info.m
        self.Q = np.zeros(self.m)  # Q(t), one virtual queue per constraint
        self._penalty = np.zeros(self.m)  # Q(t) / V_t of the last decision
        self._beta_t = self._V_t = self._eps_t = float("nan")

    # ------------------------------------------------------------ schedules
    def epsilon(self, t: int) -> float:
        """ε_t = epsilon0 / sqrt(t)."""
        return self.epsilon0 / math.sqrt(t)

    def V(self, t: int) -> float:
        """V_t = V0 sqrt(t)."""
        return self.V0 * math.sqrt(t)

    # ----------------------------------------------------------------- loop
    def _check_context(self, context: Any) -> np.ndarray:
        if context is None:
            raise InvalidInputError(
                "scgp-ucb needs the revealed constraint sample g_t before each round: run it in the "
                "'full-information' environment (ask(g_t) with g_t of shape (n, m))."
            )
        g = check_revealed_constraints(context, self._shape, "the revealed constraint sample")
        worst = float(np.max(np.abs(g)))
        if worst > self.G * (1.0 + 1e-12):
            raise InvalidInputError(
                f"a revealed constraint sample has |g_t| = {worst:.6g} > G = {self.G:.6g}; Assumption 6 requires "
                "|g_t| <= G (clip the samples in the problem, or pass a larger G)."
            )
        return g

    def ask(self, context: Any = None) -> int:
        g_t = self._check_context(context)
        self.t += 1
        t, gp = self.t, self.gp
        self._beta_t = beta = self.beta(t, gp)
        self._V_t = V = self.V(t)
        self._eps_t = eps = self.epsilon(t)
        z = np.clip(gp.mean + beta * gp.std, -self.B, self.B)
        self._penalty = self.Q / V
        if self.m == 1:
            z = z - self._penalty[0] * g_t[:, 0]
        else:
            z = z - g_t @ self._penalty
        x = argmax_random_tie(z, self.rng)
        self.Q = np.maximum(self.Q + g_t[x] + eps, 0.0)
        return x

    def tell(self, obs) -> None:
        obs = self._check_obs(obs)
        if obs.index < 0:
            raise InvalidInputError("scgp-ucb plays candidate arms; got an observation without an arm index.")
        self.gp.update_arm(obs.index, obs.y)

    def internals(self) -> dict[str, float]:
        out = {"beta": self._beta_t, "V": self._V_t, "eps": self._eps_t}
        if self.m == 1:
            out["Q"] = float(self.Q[0])
            out["penalty"] = float(self._penalty[0])
        else:
            for j in range(self.m):
                out[f"Q_{j + 1}"] = float(self.Q[j])
                out[f"penalty_{j + 1}"] = float(self._penalty[j])
        return out

    # ---------------------------------------------------------- persistence
    def _state(self) -> dict[str, Any]:
        return {
            "gp": self.gp.state_dict(),
            "Q": self.Q.copy(),
            "penalty": self._penalty.copy(),
            "scalars": [self._beta_t, self._V_t, self._eps_t],
        }

    def _load(self, state: dict[str, Any]) -> None:
        self.gp.load_state_dict(state["gp"])
        Q = np.asarray(state["Q"], dtype=float).reshape(-1)
        if Q.shape != (self.m,):
            raise InvalidInputError(f"checkpoint has {Q.shape[0]} queue(s) but the problem has m = {self.m}.")
        self.Q = Q.copy()
        self._penalty = np.asarray(state["penalty"], dtype=float).reshape(self.m).copy()
        self._beta_t, self._V_t, self._eps_t = (float(v) for v in state["scalars"])
