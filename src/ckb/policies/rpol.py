r"""RPOL-UCB: rectified pessimistic-optimistic learning (Guo, Zhu & Liu 2023, Sec. 3-4).

An optimistic reward, a *pessimistic* constraint estimate that is a lower confidence bound (the paper's
Condition 1 needs :math:`\check g_t \le g`, so that :math:`\check g_t^+(x^*) = 0`; it is not a UCB), and a
rectified penalty with a non-decreasing weight:

.. math::

    \hat f_t = \mu^f_t + \beta^f_t\sigma^f_t, \qquad \check g_{t,j} = \mu^{g_j}_t - \beta^{g}_t\sigma^{g_j}_t,

.. math::

    x_t = \arg\max_x\ \hat f_t(x) - \sum_j Q_{t,j}\,[\check g_{t,j}(x)]^+ ,
    \qquad Q_{t+1,j} = \max\big(Q_{t,j} + [c_{t,j}]^+,\ \sqrt t\big),\quad Q_{1,j} = 1,

with :math:`c_t` the *observed* (noisy) cost: Q never decreases and noise alone pushes it up. Deep-feasible
points earn no bonus (the rectifier), unlike CKB's signed penalty. The paper states one constraint and
says the extension is easy; with m > 1 there is one Q per constraint (our choice).

Posteriors: kernel ridge with :math:`\lambda = 1 + 2/T` (``noise="auto"``, the IGP-UCB regularizer the
paper uses), widths :math:`\beta^f_t = B_f + R_f\sqrt{2(\hat\gamma^f + 1 + \ln(2/p))}` and the same for g
with :math:`B_g, R_g` (:mod:`ckb.exploration.beta` with α = p/2; ``beta_scale`` multiplies both).
Defaults from the problem's hints: ``B_f = B``, ``B_g = G``, ``R_f = R_g = R``.

Search: exact argmax over the candidates of a finite domain or grid (random tie-breaking); on a continuous
box, ``n_candidates`` Sobol points plus a local search (:func:`ckb.exploration.refine_from_candidates`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ckb._validation import check_scalar
from ckb.errors import InvalidInputError
from ckb.exploration import make_beta
from ckb.policies.base import Policy, RuleAdapter
from ckb.policies.registry import POLICIES
from ckb.rules import ConfigRule, RPOLRule


class OptimisticPolicy(RuleAdapter, Policy):
    """A GP for f and one per constraint over a shared search set, feeding the UCB of f and the LCBs of
    the constraints to an optimistic rule (:mod:`ckb.rules.optimistic`: RPOL or CONFIG)."""

    accepts_partial_feedback = True

    def __init__(
        self,
        info,
        rng,
        *,
        horizon: int | None = None,
        B_f: float | None = None,
        B_g: float | None = None,
        R_f: float | None = None,
        R_g: float | None = None,
        p: float = 0.05,
        noise: float | str = "auto",
        beta: Any = "theory",
        beta_scale: float = 1.0,
        kernel: Any = None,
        n_candidates: int = 2048,
        n_restarts: int = 1,
        method: str = "auto",
        **rule_constants: Any,
    ) -> None:
        super().__init__(info, rng)
        self._require_constraints()
        self.rule = self.rule_class(
            info.m,
            horizon,
            B_f=self._hint("B", B_f, default=1.0),
            B_g=self._hint("G", B_g, default=1.0),
            R_f=self._hint("R", R_f, default=0.1),
            R_g=self._hint("R", R_g, default=0.1),
            p=p,
            beta=beta,
            beta_scale=beta_scale,
            **rule_constants,
        )
        if noise == "auto":
            if horizon is None:
                raise InvalidInputError(
                    f"policy {self.name!r} with noise='auto' (1 + 2/T) needs the horizon T."
                )
            noise = 1.0 + 2.0 / check_scalar(horizon, "horizon", low=1, integer=True)
        self.gp_f, self.gp_g = self._search_gps(
            kernel, noise, n_candidates, n_restarts, method=method, m=info.m
        )
        self._bf = self._bg = float("nan")

    def _model(self, name: str):
        return self.gp_f if name == "f" else self.gp_g[int(name[1:])]

    def _widths(self) -> tuple[float, float]:
        """This round's widths of f and of the constraints (the rule's schedules)."""
        return self.rule.widths(self._model)

    def _bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """UCB of f (n,) and the LCBs of the constraints (n, m) at the candidates; records the widths."""
        self._bf, self._bg = bf, bg = self._widths()
        self.rule.last.update({"beta": bf, "beta_g": bg})
        ucb = self.gp_f.mean + bf * self.gp_f.std
        lcb = np.stack([gp.mean - bg * gp.std for gp in self.gp_g], axis=-1)
        return ucb, lcb

    def _point_bounds(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        m, v = self.gp_f.predict(X)
        ucb = m + self._bf * np.sqrt(v)
        lcb = []
        for gp in self.gp_g:
            mg, vg = gp.predict(X)
            lcb.append(mg - self._bg * np.sqrt(vg))
        return ucb, np.stack(lcb, axis=-1)

    def _score_point(self, X: np.ndarray) -> np.ndarray:
        return self.rule.score(*self._point_bounds(X))

    def _choose(self, scores: np.ndarray) -> int | np.ndarray:
        return self._best(scores, self._score_point, self.gp_f.candidates, self.n_restarts)

    def ask(self, context: Any = None) -> int | np.ndarray:
        self.rule.begin_round()
        self.t = self.rule.t
        ucb, self._lcb = self._bounds()
        return self._choose(self.rule.score(ucb, self._lcb))

    def _lcb_at(self, action) -> np.ndarray:
        """The constraints' LCBs (m,) the decision used at the chosen action."""
        if self._finite:
            return self._lcb[int(action)]
        return self._point_bounds(np.asarray(action, dtype=float)[None, :])[1][0]

    def tell(self, obs) -> None:
        obs = self._check_obs(obs)
        self._update_models(obs)
        if obs.has_c:  # every cost revealed in the round (with delays, possibly of earlier rounds)
            self.rule.observe(obs.c)

    def internals(self) -> dict[str, float]:
        return self.rule.internals()

    def _update_models(self, obs) -> None:
        """Condition on the parts that arrived (with delays, the reward and the costs may come apart)."""
        models = ([(self.gp_f, obs.y)] if obs.has_y else []) + (
            [(gp, float(obs.c[j])) for j, gp in enumerate(self.gp_g)] if obs.has_c else []
        )
        for gp, value in models:
            if obs.index >= 0 and self._finite:
                gp.update_arm(obs.index, value)
            else:
                gp.update(obs.x, value)

    def _state(self) -> dict[str, Any]:
        return {
            "gp_f": self.gp_f.state_dict(),
            "gp_g": [gp.state_dict() for gp in self.gp_g],
            "bf": self._bf,
            "bg": self._bg,
            "rule": self.rule.state_dict(),
            "last": dict(self.rule.last),
        }

    def _load(self, state: dict[str, Any]) -> None:
        self.gp_f.load_state_dict(state["gp_f"])
        for gp, s in zip(self.gp_g, state["gp_g"]):
            gp.load_state_dict(s)
        self._bf, self._bg = float(state["bf"]), float(state["bg"])
        self.rule.load_state_dict(state["rule"])
        self.rule.last = dict(state["last"])


@POLICIES.register("rpol-ucb", aliases=("rpol",))
class RPOLUCB(OptimisticPolicy):
    """RPOL-UCB (Guo, Zhu & Liu's algorithm with GP-UCB/LCB; the rule: :class:`ckb.rules.RPOLRule`). Extra
    parameter: ``Q1`` (1)."""

    rule_class = RPOLRule


@POLICIES.register("config")
class CONFIG(OptimisticPolicy):
    r"""CONFIG (Xu, Jiang & Jones 2022) with the same widths as RPOL; the rule and its fallback (when no
    point is optimistically feasible): :class:`ckb.rules.ConfigRule`. ``fallback`` is recorded."""

    rule_class = ConfigRule

    def ask(self, context: Any = None) -> int | np.ndarray:
        action = super().ask(context)
        self.rule.record_choice(self._lcb_at(action))
        return action

    def tell(self, obs) -> None:
        obs = self._check_obs(obs)
        self._update_models(obs)


@POLICIES.register("rpol-censored-ucb")
class RPOLCensoredUCB(RPOLUCB):
    r"""RPOL-CensoredUCB (Guo, Zhu & Liu 2023, Sec. 5, App. C; censored GP-UCB of Verma et al.) for delayed
    feedback.

    Every played point enters both models at once with target 0; its reward (cost) replaces the 0 when it
    arrives, if its delay :math:`d_s \le` ``censor`` (the paper's m), and stays 0 otherwise:
    :math:`\tilde r_{s,t} = r_s\,\mathbb 1\{d^f_s \le \min(m, t - s)\}`, likewise :math:`\tilde c`. The posterior
    mean therefore estimates :math:`\rho_m f` (:math:`\rho_m = P(d \le m)`), the variance is the usual one
    on all played points. Widths:

    .. math::

        v^f_t = B_r \sum_{s=t-m}^{t-1} \sigma^f_t(x_s) + \beta^f_t, \qquad
        \beta^f_t = B_f + (R_f + B_r)\sqrt{2(\hat\gamma^f + 1 + \ln(4/p))}, \qquad
        B_r = B_f + R_f\sqrt{2\ln T},

    and the same for each cost with :math:`B_g, R_g, B_c`; ``beta_scale`` multiplies :math:`v`. The sum uses the
    *current* posterior std at the last m played points (Guo, Zhu & Liu, Sec. 5; the proof of their Lemma 4
    in App. C.2 writes :math:`\sigma_{t-1}`). Q is fed by every cost revealed in the round, censored or not.
    Default ``censor = 30`` (P(d <= 30) = 0.9998 under Poisson(15); the paper gives no m).
    """

    finite_state_keys = ("yf", "yg")

    def __init__(self, info, rng, *, censor: int = 30, horizon: int | None = None, **kwargs: Any) -> None:
        super().__init__(info, rng, horizon=horizon, **kwargs)
        self.censor = check_scalar(censor, "censor (m)", low=0, integer=True)
        T = check_scalar(horizon if horizon is not None else 1, "horizon", low=1, integer=True)
        self.B_r = self.B_f + self.R_f * math.sqrt(2.0 * math.log(max(T, 2)))
        self.B_c = self.B_g + self.R_g * math.sqrt(2.0 * math.log(max(T, 2)))
        scale = self.beta_f.scale if hasattr(self.beta_f, "scale") else 1.0
        self._scale = scale
        # beta_t of the censored widths: B + (R + B_r) sqrt(2 (gamma + 1 + ln(4/p))) = TheoryBeta with alpha = p/4
        self.beta_f = make_beta("theory", B=self.B_f, R=self.R_f + self.B_r, alpha=self.p / 4, scale=1.0)
        self.beta_g = make_beta("theory", B=self.B_g, R=self.R_g + self.B_c, alpha=self.p / 4, scale=1.0)
        self._played: list[Any] = []  # actions asked, in round order; row s-1 of every model is round s
        self._in_models = 0
        self._yf = np.zeros(0)
        self._yg = np.zeros((0, info.m))
        self._arrived: set[int] = set()  # rows whose target arrived since the models last saw them

    def _flush(self) -> None:
        """Enter every played point not yet in the models, with target 0 (censored until it arrives)."""
        while self._in_models < len(self._played):
            a = self._played[self._in_models]
            for gp in (self.gp_f, *self.gp_g):
                if self._finite:
                    gp.update_arm(int(a), 0.0)
                else:
                    gp.update(np.asarray(a, dtype=float), 0.0)
            self._in_models += 1
            self._yf = np.append(self._yf, 0.0)
            self._yg = np.vstack([self._yg, np.zeros((1, self.info.m))])

    def _sum_std(self, gp) -> float:
        recent = self._played[max(0, len(self._played) - self.censor) :]
        if not recent:
            return 0.0
        if self._finite:
            return float(np.sum(gp.std[np.asarray(recent, dtype=np.intp)]))
        return float(np.sum(np.sqrt(gp.predict(np.asarray(recent, dtype=float))[1])))

    def _widths(self) -> tuple[float, float]:
        self._flush()
        if self._arrived:  # only the arrived targets change: O(censor^2 + censor n), not O(t^2) (retarget)
            rows = np.array(sorted(self._arrived), dtype=np.intp)
            self.gp_f.retarget(rows, self._yf[rows])
            for j, gp in enumerate(self.gp_g):
                gp.retarget(rows, self._yg[rows, j])
            self._arrived.clear()
        s = self._scale
        bf = s * (self.B_r * self._sum_std(self.gp_f) + self.beta_f(self.t, self.gp_f))
        bg = s * max(self.B_c * self._sum_std(gp) + self.beta_g(self.t, gp) for gp in self.gp_g)
        return bf, bg

    def ask(self, context: Any = None) -> int | np.ndarray:
        action = super().ask(context)
        self._played.append(int(action) if self._finite else np.asarray(action, dtype=float).copy())
        return action

    def _check_obs(self, obs):
        obs = super()._check_obs(obs)
        if obs.t > len(self._played):
            raise InvalidInputError(
                f"observation of round t = {obs.t!r}, but rpol-censored-ucb has played rounds "
                f"1..{len(self._played)} only; nothing was recorded."
            )
        return obs

    def _update_models(self, obs) -> None:
        self._flush()
        delay = self.t - obs.t  # feedback of round s arriving at the end of round t: d_s = t - s
        if delay <= self.censor:
            if obs.has_y:
                self._yf[obs.t - 1] = obs.y
            if obs.has_c:
                self._yg[obs.t - 1] = np.asarray(obs.c, dtype=float)
            self._arrived.add(obs.t - 1)

    def _state(self) -> dict[str, Any]:
        width = 1 if self._finite else self.info.domain.d
        played = np.asarray(self._played, dtype=float).reshape(len(self._played), width)
        return {
            **super()._state(),
            "played": played,
            "in_models": self._in_models,
            "yf": self._yf.copy(),
            "yg": self._yg.copy(),
            "arrived": np.array(sorted(self._arrived), dtype=np.int64),
        }

    def _load(self, state: dict[str, Any]) -> None:
        super()._load(state)
        played = np.asarray(state["played"], dtype=float)
        if self._finite:
            self._played = [int(v) for v in played.reshape(-1)]
        else:
            self._played = [row.copy() for row in played.reshape(-1, self.info.domain.d)]
        self._in_models = int(state["in_models"])
        self._yf = np.asarray(state["yf"], dtype=float).reshape(-1).copy()
        self._yg = np.asarray(state["yg"], dtype=float).reshape(-1, self.info.m).copy()
        self._arrived = {int(s) for s in np.asarray(state["arrived"]).reshape(-1)}

    def load_state_dict(self, state: Any) -> None:
        """As every policy's; a state of the version that re-fitted all targets when one had arrived (a
        ``"dirty"`` flag, no ``"arrived"`` rows) loads too: its rows are all taken again at the next ask."""
        if isinstance(state, dict) and "dirty" in state and "arrived" not in state:
            dirty = bool(state["dirty"])
            state = {k: v for k, v in state.items() if k != "dirty"}
            rows = state.get("in_models") if dirty else 0
            ok = isinstance(rows, (int, np.integer)) and not isinstance(rows, bool) and rows >= 0
            state["arrived"] = np.arange(rows if ok else 0, dtype=np.int64)
        super().load_state_dict(state)


@POLICIES.register("rpol-sw-ucb")
class RPOLSWUCB(RPOLUCB):
    r"""RPOL-SWUCB (Guo, Zhu & Liu 2023, Sec. 6, App. D; SW-GP-UCB of Zhou & Shroff) for non-stationary
    functions.

    The posteriors use only the window :math:`t_0 = \max(1, t - W)`, i.e. the last ``W + 1`` observations:
    each new observation is added and the oldest one beyond the window removed exactly
    (:meth:`ckb.surrogates.ExactGP.remove_oldest`, O(W^2 + W n) per round). Q is not windowed. Widths

    .. math::

        \beta^f_t = B_f + \tfrac{1}{\sqrt\lambda} R_f \sqrt{2\hat\gamma^f_{t-t_0} + 2\ln(2T/p)}, \qquad
        \hat f_t = \mu^f_t + \beta^f_t \sigma^f_t + \Gamma^f, \quad
        \check g_t = \mu^g_t - \beta^g_t \sigma^g_t - \Gamma^g,

    with :math:`\hat\gamma` the information gain of the window (``beta_scale`` multiplies β). The drift terms
    :math:`\Gamma_t = C \sum_{s=t_0}^{t-1} \|f_s - f_{s+1}\|_k` need the true per-round drift in RKHS norm,
    which no learner knows: ``drift_f`` / ``drift_g`` give Γ as constants, default 0 (a choice the paper
    leaves open). The theory window :math:`W = \gamma_T^{1/4} (T/P_T)^{1/2}` needs the variation budget
    too; ``W`` is a parameter (default 100).
    """

    accepts_partial_feedback = False

    def __init__(
        self,
        info,
        rng,
        *,
        W: int = 100,
        drift_f: float = 0.0,
        drift_g: float = 0.0,
        horizon: int | None = None,
        method: str = "cholesky",
        **kwargs: Any,
    ) -> None:
        if method != "cholesky":
            raise InvalidInputError(f"rpol-sw-ucb needs method='cholesky' (window removal), got {method!r}.")
        super().__init__(info, rng, horizon=horizon, method=method, **kwargs)
        self.W = check_scalar(W, "W (window)", low=1, integer=True)
        self.drift_f = check_scalar(drift_f, "drift_f", low=0.0)
        self.drift_g = check_scalar(drift_g, "drift_g", low=0.0)
        T = check_scalar(horizon if horizon is not None else 1, "horizon", low=1, integer=True)
        self._log_term = 2.0 * math.log(2.0 * T / self.p)
        self._scale = getattr(self.beta_f, "scale", 1.0)

    def _width(self, B: float, R: float, gp) -> float:
        return self._scale * (B + R / math.sqrt(self.noise) * math.sqrt(2.0 * gp.info_gain + self._log_term))

    def _widths(self) -> tuple[float, float]:
        bf = self._width(self.B_f, self.R_f, self.gp_f)
        bg = max(self._width(self.B_g, self.R_g, gp) for gp in self.gp_g)
        return bf, bg

    def _bounds(self) -> tuple[np.ndarray, np.ndarray]:
        ucb, lcb = super()._bounds()
        return ucb + self.drift_f, lcb - self.drift_g

    def _point_bounds(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ucb, lcb = super()._point_bounds(X)
        return ucb + self.drift_f, lcb - self.drift_g

    def _update_models(self, obs) -> None:
        super()._update_models(obs)
        for gp in (self.gp_f, *self.gp_g):
            while gp.t > self.W + 1:  # keep x_{t0..t}, t0 = max(1, t - W)
                gp.remove_oldest()


#: the earlier private name
_TwoModelPolicy = OptimisticPolicy
