r"""The primal-dual master algorithm of Zhou & Ji: CKB (003) / CBO (002), Algorithm 1.

For ``t = 1, 2, ..., T`` with dual variables :math:`\phi_1 = 0` (one per constraint):

1. from the posteriors after ``t - 1`` observations, draw estimates :math:`f_t` with strategy
   :math:`\mathcal A_f` (optimistic: high) and :math:`g_{t,j}` with :math:`\mathcal A_g` (optimistic: low);
2. clip: :math:`\bar f_t = \mathrm{Proj}_{[-B, B]} f_t`, :math:`\bar g_{t,j} = \mathrm{Proj}_{[-G_j, G_j]} g_{t,j}`;
3. play :math:`x_t = \arg\max_x \bar f_t(x) - \sum_j \phi_{t,j} \bar g_{t,j}(x)` (ties uniformly at random);
4. dual step with the clipped *estimate* at the played point (not the observation):
   :math:`\phi_{t+1,j} = \mathrm{Proj}_{[0, \rho_j]}[\phi_{t,j} + (\bar g_{t,j}(x_t) + \varepsilon_t) / V]`;
5. update the GP of ``f`` with :math:`(x_t, r_t)` and of each :math:`g_j` with :math:`(x_t, c_{t,j})`.

``ckb-ucb``, ``ckb-ts`` and ``ckb-rand`` use GP-UCB, GP-TS and RandGP-UCB for both ``f`` and ``g``
(:mod:`ckb.exploration.strategies`); ``ckb`` takes any ``exploration``. 002's names ``cbo-*`` are
aliases. Steps 1-4 happen in :meth:`ask` (the dual step needs only the estimate); :meth:`tell` updates
the posteriors.

Parameters and the choices the papers leave open (digest 002-003 §2.1, §2.4, §5.1)
-------------------------------------------------------------------------------
- ``B``, ``G``: clipping bounds and the ``B``/``G`` of the theory widths; default: the problem's hints
  (``B`` = bound on |f|, ``G`` = max |g|). ``R`` (reward noise level; ``R_g`` for the constraints,
  default ``R``): default the problem's hint ``R`` when it publishes one (the real-data problems publish
  the largest deviation of a reading from its arm's mean, as the papers set it).
- ``beta`` / ``beta_g``: width schedules for ``f`` and ``g``; default "theory":
  :math:`\beta_t = B + R\sqrt{2(\hat\gamma_{t-1} + 1 + \ln((m+1)/\alpha))}`,
  :math:`\tilde\beta_t = G + \tilde R\sqrt{2(\hat{\tilde\gamma}_{t-1} + 1 + \ln((m+1)/\alpha))}`
  (α is shared by the m + 1 GPs: Theorem 1's :math:`\ln(2/\alpha)` for m = 1; the papers'
  :math:`\tilde\beta_t` uses B and R where G and :math:`\tilde R` are meant: digest §2.2). ``beta_scale``
  multiplies both.
- ``delta`` (Slater margin δ): default the problem's hint (the best single-arm margin max_x -g(x); not
  clipped at 1). ``rho`` default :math:`4B/\delta` (Theorems 1-2); ``V`` default :math:`G\sqrt T/\rho` with
  ``G`` the largest of the ``G_j`` and ``T = horizon`` (the run's horizon, passed by the runner).
- ``slack`` ε (003 Sec. 4, for bounded or zero violation): a number (constant ε, must be <= δ/2), or
  ``"auto"``: :math:`\varepsilon = \min(\delta/2,\ G/\sqrt T)`. The paper's schedule is in its missing
  Appendix E; this choice makes εT of the order of the :math:`G\sqrt T` term of Theorem 2's violation
  bound, so the extra regret :math:`\le 2B T\varepsilon/\delta = O(\sqrt T)` keeps the regret's order
  (digest §2.4). ``"decreasing"``: :math:`\varepsilon_t = \min(\delta/2,\ G/\sqrt t)` (``t`` counted within
  the epoch), the schedule of 002's own zero-violation result (SCGP-UCB, Theorem 4 (i):
  :math:`\epsilon_t = 1/\sqrt t`, times G to be in g's units); :math:`\sum_t \varepsilon_t \approx 2G\sqrt T`,
  and the slack comes early, where the optimism of the LCB used in the dual step biases the dual down
  most. On ``ckb-synthetic-independent`` it gives V(T) = 0 where the constant ``"auto"`` leaves CKB-UCB
  with V(T) > 0 in 4 of 50 trials (README). Default 0 (Algorithm 1 as written).
- ``anytime=True`` (Remark 2, doubling trick): epochs of lengths 1, 2, 4, ...; at the start of each
  epoch the dual is reset to 0 and ``V`` recomputed for the epoch's length. The GPs keep their data
  (their confidence bounds hold for any data, so restarting them would only waste observations); set
  ``anytime_restart_gp=True`` for the textbook restart of everything.
- ``method``: the GP representation (:class:`~ckb.surrogates.ExactGP`); leave at ``"auto"``.
- ``m > 1`` constraints: one dual variable per constraint, each projected on :math:`[0, \rho_j]`
  (digest §5.1.10); ``G`` may be a list.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ckb._validation import check_finite_array, check_scalar
from ckb.errors import InvalidInputError
from ckb.exploration import argmax_random_tie, make_beta, make_strategy
from ckb.policies.base import Policy
from ckb.policies.registry import POLICIES
from ckb.surrogates import ExactGP


def _hint(info, key: str, value, what: str, param: str | None = None) -> float:
    """``value`` if given, else the problem's public hint ``key``, else a clear error."""
    if value is not None:
        return value
    if key in info.hints:
        return info.hints[key]
    raise InvalidInputError(
        f"{what} is needed: pass {param or key}=... or use a problem that publishes the hint {key!r}."
    )


@POLICIES.register("ckb", aliases=("cbo",))
class CKB(Policy):
    """Primal-dual CKB/CBO with a chosen exploration strategy (Zhou & Ji, Algorithm 1)."""

    accepts_partial_feedback = True

    default_exploration: Any = None

    def __init__(
        self,
        info,
        rng,
        *,
        exploration: Any = None,
        horizon: int | None = None,
        B: float | None = None,
        G: float | list[float] | None = None,
        R: float | None = None,
        R_g: float | None = None,
        noise: float = 1.0,
        noise_g: float | None = None,
        alpha: float = 0.05,
        beta: Any = "theory",
        beta_g: Any = "theory",
        beta_scale: float = 1.0,
        delta: float | None = None,
        rho: float | None = None,
        V: float | None = None,
        slack: float | str = 0.0,
        anytime: bool = False,
        anytime_restart_gp: bool = False,
        kernel: Any = None,
        kernel_g: Any = None,
        method: str = "auto",
    ) -> None:
        super().__init__(info, rng)
        m = info.m
        if m < 1:
            raise InvalidInputError(
                f"{self.name or 'ckb'} needs a constrained problem (m >= 1), got m = {m}."
            )
        if info.domain.candidates is None:
            raise InvalidInputError(
                "CKB here needs a finite domain or a grid of candidates; give the box a grid (BoxDomain(..., grid=...))."
            )
        exploration = exploration if exploration is not None else self.default_exploration
        if exploration is None:
            raise InvalidInputError(
                "policy 'ckb' needs exploration='ucb' | 'ts' | 'rand' (or use ckb-ucb etc.)."
            )
        self.strategy = make_strategy(exploration)
        self.B = check_scalar(_hint(info, "B", B, "the bound on |f|"), "B", low=0.0, low_inclusive=False)
        G = _hint(info, "G", G, "the bound on |g|")
        G = np.atleast_1d(check_finite_array(G, "G"))
        if G.shape not in ((1,), (m,)):
            raise InvalidInputError(f"G must be a number or a list of m = {m} numbers, got {G.tolist()}.")
        self.G = np.broadcast_to(G, (m,)).astype(float).copy()
        if np.any(self.G <= 0):
            raise InvalidInputError(f"G must be > 0, got {G!r}.")
        self.R = check_scalar(_hint(info, "R", R, "the sub-Gaussian noise level of the reward"), "R", low=0.0)
        self.R_g = self.R if R_g is None else check_scalar(R_g, "R_g", low=0.0)
        self.noise = check_scalar(noise, "noise", low=0.0, low_inclusive=False)
        self.noise_g = (
            self.noise if noise_g is None else check_scalar(noise_g, "noise_g", low=0.0, low_inclusive=False)
        )
        self.alpha = check_scalar(
            alpha, "alpha", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False
        )
        scale = check_scalar(beta_scale, "beta_scale", low=0.0)
        a = self.alpha / (m + 1)  # α is shared by the m + 1 GPs (Theorem 1's ln(2/α) for m = 1)
        self.beta = make_beta(beta, B=self.B, R=self.R, alpha=a, scale=scale)
        self.beta_g = [make_beta(beta_g, B=float(Gj), R=self.R_g, alpha=a, scale=scale) for Gj in self.G]
        self.delta = check_scalar(
            _hint(info, "slater_margin", delta, "the Slater margin", "delta"),
            "delta",
            low=0.0,
            low_inclusive=False,
        )
        self.rho = check_scalar(
            4.0 * self.B / self.delta if rho is None else rho, "rho", low=0.0, low_inclusive=False
        )
        self.anytime = bool(anytime)
        self.anytime_restart_gp = bool(anytime_restart_gp)
        if horizon is None and not self.anytime and (V is None or slack == "auto"):
            raise InvalidInputError(
                "the horizon T is needed for V = G sqrt(T) / rho (or pass V=..., or anytime=True)."
            )
        self.horizon = None if horizon is None else check_scalar(horizon, "horizon (T)", low=1, integer=True)
        self._V_fixed = None if V is None else check_scalar(V, "V", low=0.0, low_inclusive=False)
        if slack in ("auto", "decreasing"):
            self.slack_mode = slack
            self.slack = 0.0  # set per epoch by _set_epoch ("auto") or per round by ask ("decreasing")
        elif isinstance(slack, str):
            raise InvalidInputError(
                f"slack must be a number in [0, delta/2], 'auto' or 'decreasing', got {slack!r}."
            )
        else:
            self.slack_mode = "constant"
            self.slack = check_scalar(slack, "slack (epsilon)", low=0.0, high=self.delta / 2.0)
        kf = self._kernel(kernel)
        kg = kf if kernel_g is None else self._kernel(kernel_g)
        C = info.domain.candidates
        self.gp_f = ExactGP(kf, self.noise, C, method=method)
        prior = None
        if self.strategy.name == "ts" and kg is kf:
            prior = self.gp_f.prior  # one prior factor for f and every g
        self.gp_g = [ExactGP(kg, self.noise_g, C, method=method, prior=prior) for _ in range(m)]
        self.phi = np.zeros(m)
        self._epoch_start, self._epoch_len = 1, None
        self._set_epoch(1 if self.anytime else self.horizon)
        self._last: dict[str, float] = {}

    # ------------------------------------------------------------- schedule
    def _set_epoch(self, length: int | None) -> None:
        self._epoch_len = length
        Gmax = float(np.max(self.G))
        if self._V_fixed is not None:
            self.V = self._V_fixed
        else:
            self.V = Gmax * math.sqrt(length) / self.rho
        if self.slack_mode == "auto":
            self.slack = min(self.delta / 2.0, Gmax / math.sqrt(length))

    def _maybe_new_epoch(self) -> None:
        if self.anytime and self.t >= self._epoch_start + self._epoch_len:
            self._epoch_start = self.t
            self._set_epoch(2 * self._epoch_len)
            self.phi[:] = 0.0
            if self.anytime_restart_gp:
                self.gp_f.reset()
                for gp in self.gp_g:
                    gp.reset()

    # ----------------------------------------------------------------- loop
    def ask(self, context: Any = None) -> int:
        self.t += 1
        self._maybe_new_epoch()
        rng, strat = self.rng, self.strategy
        bf = self.beta(self.t, self.gp_f)
        f_bar = np.clip(strat.estimate(self.gp_f, bf, rng, 1.0), -self.B, self.B)
        score = f_bar.copy()
        g_bar = []
        bgs = []
        for j, gp in enumerate(self.gp_g):
            bg = self.beta_g[j](self.t, gp)
            gj = np.clip(strat.estimate(gp, bg, rng, -1.0), -self.G[j], self.G[j])
            score -= self.phi[j] * gj
            g_bar.append(gj)
            bgs.append(bg)
        x = argmax_random_tie(score, rng)
        self._last = {"beta": bf, **self._named("beta_g", bgs), **self._named("dual", self.phi)}
        if self.slack_mode == "decreasing":  # ε_t = min(δ/2, G/√t), t counted within the epoch
            self.slack = min(
                self.delta / 2.0, float(np.max(self.G)) / math.sqrt(self.t - self._epoch_start + 1)
            )
        g_at_x = np.array([gj[x] for gj in g_bar])
        self.phi = np.clip(self.phi + (g_at_x + self.slack) / self.V, 0.0, self.rho)
        self._last.update(self._named("g_bar", g_at_x))
        return x

    def tell(self, obs) -> None:
        self._check_obs(obs)
        if obs.index < 0:
            raise InvalidInputError(
                "CKB observes candidate arms; got an observation at a non-candidate point."
            )
        if obs.has_y:  # with delayed feedback the reward and the costs may arrive apart
            self.gp_f.update_arm(obs.index, obs.y)
        if obs.has_c:
            for j, gp in enumerate(self.gp_g):
                gp.update_arm(obs.index, float(obs.c[j]))

    def internals(self) -> dict[str, float]:
        """``dual`` is φ_t used for this round's decision (before its update); ``g_bar`` the clipped
        estimate at the played arm that drove the update."""
        return self._last

    # ----------------------------------------------------------- persistence
    def _state(self) -> dict[str, Any]:
        return {
            "gp_f": self.gp_f.state_dict(),
            "gp_g": [gp.state_dict() for gp in self.gp_g],
            "phi": self.phi.copy(),
            "epoch": [self._epoch_start, self._epoch_len if self._epoch_len is not None else -1],
            "last": dict(self._last),
        }

    def _load(self, state: dict[str, Any]) -> None:
        self.gp_f.load_state_dict(state["gp_f"])
        for gp, s in zip(self.gp_g, state["gp_g"], strict=True):
            gp.load_state_dict(s)
        self.phi = np.asarray(state["phi"], dtype=float).copy()
        start, length = state["epoch"]
        self._epoch_start = int(start)
        self._set_epoch(None if length < 0 else int(length))
        self._last = dict(state["last"])


@POLICIES.register("ckb-ucb", aliases=("cbo-ucb",))
class CKBUCB(CKB):
    """CKB-UCB: GP-UCB for f, GP-LCB for g (Zhou & Ji, Corollary 1)."""

    default_exploration = "ucb"


@POLICIES.register("ckb-ts", aliases=("cbo-ts",))
class CKBTS(CKB):
    """CKB-TS: independent joint posterior samples for f and g, scaled by beta (Corollary 2)."""

    default_exploration = "ts"


@POLICIES.register("ckb-rand", aliases=("cbo-rand",))
class CKBRand(CKB):
    """CKB-Rand (RandGP-UCB): one shared random scalar per function per round (Corollary 3)."""

    default_exploration = "rand"
