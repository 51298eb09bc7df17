r"""The primal-dual master algorithm of Zhou & Ji (CKB / CBO, Algorithm 1) on arms: the bandit harness's
adapter around :class:`ckb.rules.PrimalDualRule`, which holds the rule (constants, duals, epochs, score,
dual step) and documents it.

This module keeps the estimation: exact GP posteriors of f and each g on the candidates
(:class:`~ckb.surrogates.ExactGP`), the exploration strategy that turns them into estimates
(``ckb-ucb``: GP-UCB for f and GP-LCB for g; ``ckb-ts``: joint posterior samples; ``ckb-rand``:
RandGP-UCB; ``ckb`` takes any ``exploration``; the CBO paper's names ``cbo-*`` are aliases), and the
exact argmax with random tie-breaking. Per round: the rule's widths, the estimates (f first, then each
g, from the policy's generator), the argmax of the rule's score, the rule's dual step at the played arm
(from its estimate, or with ``dual_estimate="mean"`` from the posterior mean of each g there); a tell
updates the posteriors.

Defaults from the problem's public hints: ``B`` (bound on |f|), ``G`` (max |g|), ``R`` (reward noise
level; the real-data problems publish the largest deviation of a reading from its arm's mean, as the
papers set it; ``R_g`` defaults to ``R``), ``delta`` (the Slater margin, the best single-arm margin
:math:`\max_x -g(x)`, not clipped at 1); ``beta`` = ``beta_g`` = ``"theory"``. ``V`` needs the horizon
T (passed by the runner) unless given or ``anytime``. ``anytime_restart_gp=True`` restarts the GPs at
each epoch of the doubling trick (by default they keep their data: their confidence bounds hold for
any data, so restarting them would only waste observations). ``noise``/``noise_g`` (the GP
regularizer λ), ``kernel``/``kernel_g`` and ``method`` (the GP representation; leave at ``"auto"``)
are estimation parameters.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ckb._validation import check_bool, check_scalar
from ckb.errors import InvalidInputError
from ckb.exploration import argmax_random_tie, make_strategy
from ckb.policies.base import Policy, RuleAdapter
from ckb.policies.registry import POLICIES
from ckb.rules import PrimalDualRule, named
from ckb.surrogates.gp import MIN_NOISE


@POLICIES.register("ckb", aliases=("cbo",))
class CKB(RuleAdapter, Policy):
    """Primal-dual CKB/CBO with a chosen exploration strategy (Zhou & Ji, Algorithm 1; the rule:
    :class:`ckb.rules.PrimalDualRule`)."""

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
        dual_estimate: str = "estimate",
        anytime_restart_gp: bool = False,
        kernel: Any = None,
        kernel_g: Any = None,
        method: str = "auto",
    ) -> None:
        super().__init__(info, rng)
        self._require_constraints()
        C = self._require_candidates()
        exploration = exploration if exploration is not None else self.default_exploration
        if exploration is None:
            raise InvalidInputError(
                "policy 'ckb' needs exploration='ucb' | 'ts' | 'rand' (or use ckb-ucb etc.)."
            )
        self.strategy = make_strategy(exploration)
        self.rule = PrimalDualRule(
            info.m,
            horizon,
            B=self._hint("B", B, "the bound on |f|"),
            G=self._hint("G", G, "the bound on |g|"),
            R=self._hint("R", R, "the sub-Gaussian noise level of the reward"),
            R_g=R_g,
            alpha=alpha,
            beta=beta,
            beta_g=beta_g,
            beta_scale=beta_scale,
            delta=self._hint("slater_margin", delta, "the Slater margin delta", "delta"),
            rho=rho,
            V=V,
            slack=slack,
            anytime=anytime,
            dual_estimate=dual_estimate,
        )
        self.horizon = self.rule.horizon
        self.anytime_restart_gp = check_bool(anytime_restart_gp, "anytime_restart_gp")
        self.noise = check_scalar(noise, "noise", low=MIN_NOISE)
        self.noise_g = self.noise if noise_g is None else check_scalar(noise_g, "noise_g", low=MIN_NOISE)
        self.gp_f, self.gp_g = self._gps(
            kernel,
            self.noise,
            C,
            method=method,
            m=info.m,
            kernel_g=kernel_g,
            noise_g=self.noise_g,
            shared_prior=self.strategy.name == "ts",  # one prior factor for f and every g
        )

    def _model(self, name: str):
        return self.gp_f if name == "f" else self.gp_g[int(name[1:])]

    def estimates(self, bf: float, bg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """This round's estimates on the candidates: f (n,) and g (n, m), f first, then each g_j, from the
        policy's generator."""
        rng, strat = self.rng, self.strategy
        f_est = strat.estimate(self.gp_f, bf, rng, 1.0)
        g_est = np.stack([strat.estimate(gp, bg[j], rng, -1.0) for j, gp in enumerate(self.gp_g)], axis=-1)
        return f_est, g_est

    # ----------------------------------------------------------------- loop
    def ask(self, context: Any = None) -> int:
        rule = self.rule
        if rule.begin_round() and self.anytime_restart_gp:
            for gp in (self.gp_f, *self.gp_g):
                gp.reset()
        self.t = rule.t
        bf, bg = rule.widths(self._model)
        f_est, g_est = self.estimates(bf, bg)
        x = argmax_random_tie(rule.score(f_est, g_est), self.rng)
        g_at = np.array([gp.mean[x] for gp in self.gp_g]) if rule.steps_on_mean else g_est[x]
        rule.dual_step(g_at, record={"beta": bf, **named("beta_g", bg)})
        return x

    def tell(self, obs) -> None:
        obs = self._check_obs(obs)
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
        return self.rule.internals()

    # ----------------------------------------------------------- persistence
    def _state(self) -> dict[str, Any]:
        return {
            "gp_f": self.gp_f.state_dict(),
            "gp_g": [gp.state_dict() for gp in self.gp_g],
            "rule": self.rule.state_dict(),
        }

    def _load(self, state: dict[str, Any]) -> None:
        self.gp_f.load_state_dict(state["gp_f"])
        for gp, s in zip(self.gp_g, state["gp_g"], strict=True):
            gp.load_state_dict(s)
        self.rule.load_state_dict(state["rule"])


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
