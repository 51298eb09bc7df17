r"""Zhou & Ji's primal-dual rule (CKB / CBO, Algorithm 1), with their slack for zero violation.

For rounds :math:`t = 1, 2, \dots, T` with duals :math:`\phi_1 = 0` (one per constraint), given estimates
:math:`f_t` (optimistic: high) and :math:`g_{t,j}` (optimistic: low) from an exploration strategy
(GP-UCB/LCB, posterior samples or RandGP-UCB; the adapter computes them):

1. clip :math:`\bar f_t = \mathrm{Proj}_{[-B, B]} f_t`, :math:`\bar g_{t,j} = \mathrm{Proj}_{[-G_j, G_j]} g_{t,j}`;
2. score :math:`\bar f_t(x) - \sum_j \phi_{t,j}\,\bar g_{t,j}(x)` (:meth:`PrimalDualRule.score`), played at its argmax;
3. dual step with the clipped *estimate* at the played point (not the observation):
   :math:`\phi_{t+1,j} = \mathrm{Proj}_{[0, \rho_j]}[\phi_{t,j} + (\bar g_{t,j}(x_t) + \varepsilon_t) / V]`
   (:meth:`PrimalDualRule.dual_step`).

Everything happens at ask time (the dual step needs only the estimate); a tell only feeds the models.

Constants (the adapters supply the world's defaults: the harness the problem's public hints, the
optimizer values on standardized outcomes):

- ``B``, ``G`` (a number or m numbers): the clips, and the B / G of the theory widths;
- ``R`` (reward noise level), ``R_g`` (constraints; default ``R``), ``alpha`` (0.05, shared by the m + 1
  GPs: the widths use :math:`\alpha/(m+1)`, Theorem 1's :math:`\ln(2/\alpha)` for m = 1);
- ``beta`` / ``beta_g`` (default ``beta``): width schedules
  :math:`\beta_t = B + R\sqrt{2(\hat\gamma_{t-1} + 1 + \ln((m+1)/\alpha))}` for ``"theory"`` (and the same
  with :math:`G_j, R_g` for each constraint: the papers' :math:`\tilde\beta_t` writes B and R where G and
  :math:`\tilde R` are meant), a number for a constant width; ``beta_scale`` multiplies both;
- ``delta``: the Slater margin δ; ``rho`` (default :math:`4B/\delta`, Theorems 1-2, with a slack too: the
  slack leaves a Slater margin of at least δ/2 for the tightened constraint, for which the theorems' factor
  would suggest :math:`8B/\delta`; the slack's proof is in an appendix we could not consult, so ρ is kept
  as the theorems state it and can be set); ``V`` (default
  :math:`G\sqrt T/\rho` with G the largest :math:`G_j` and T the horizon, or the epoch's length);
- ``slack`` ε (Zhou & Ji 2022, Sec. 4): a number in :math:`[0, \delta/2]`; ``"auto"``:
  :math:`\min(\delta/2, G/\sqrt T)` (Zhou & Ji's own schedule is in their Appendix E, which we could not
  consult; this makes εT of the order of the :math:`G\sqrt T` term of Theorem 2's violation bound, so the
  extra regret :math:`\le 2BT\varepsilon/\delta = O(\sqrt T)` keeps the regret's order); ``"decreasing"``:
  :math:`\varepsilon_t = \min(\delta/2, G/\sqrt t)` (t counted within the epoch; the CBO paper's
  Theorem 4 (i) schedule, times G to be in g's units), whose slack comes early, where the optimism of the
  LCB used in the dual step biases the dual down most. Default 0 (Algorithm 1 as written).
- ``dual_estimate``: what the dual step reads at the played point: ``"estimate"`` (default, Algorithm 1 as
  written: the clipped exploration estimate, an LCB for GP-UCB) or ``"mean"`` (the clipped posterior mean of
  each :math:`g_j` there, not a paper's choice). At the played point the LCB is low by
  :math:`\beta_g\sigma_{g_j}`, and with a positive dual the score favours points where it is low, so the
  dual lags the constraint and the running sum drifts above zero (Zhou & Ji's slack adds a constant
  instead, of order :math:`\delta/2`); the mean is the models' unbiased prediction. Measured with
  ``ckb.Optimizer`` on the eight constrained-benchmark problems (10 seeds, 60 evaluations; variants
  ``ckb-ucb``, ``ckb-ucb-mean``, ``ckb-ucb-slack``): median scaled :math:`[\sum_t g]^+` on Gramacy's
  problem 5.9 against 15 (cumulative regret 1.5 against -5.8: the mixture of infeasible and feasible
  points leans less to the infeasible side), Gardner's second 17.6 against 23.2 (2.27 against 1.27),
  Hartmann-6 in the ball 15.4 against 20.0 (30.3 against 29.3), the welded beam 1.5e5 against 3.2e5;
  ``slack="auto"`` (0.5 RMS units there) brings Gramacy's to 0 at a regret of 9.5. Not the default: the
  papers' rule is the estimate's, and the mean trades regret for violation rather than winning both.
- ``feasibility_first`` (False: Algorithm 1 as written) and ``first_quantile`` (0.5): while no evaluation
  has satisfied every constraint, play the point most likely feasible and better than that quantile of the
  observed objective values, without a dual step (:class:`ckb.rules.cei.FeasibilityFirst`, the optimizer's
  other policies' first step; torch only, so ``ckb.Optimizer`` only). Measured with ``ckb-ucb`` at 10 seeds
  (variant ``ckb-ucb-first``; only runs whose design holds no feasible point change, the others replay bit
  for bit): a feasible point on the tension/compression spring in 10 of 10 seeds against 2 (qLogNEI 9),
  Gardner 2 10 against 6, the welded beam 10 against 8; cumulative regret 1.08e4 against 1.01e4 on the
  spring, 1.47 against 1.27 on Gardner 2, 144 against 157 on the welded beam, 7.70 against 7.48 on the speed
  reducer, [sum g]+ within 3%. Off in the rule's defaults (it is not Algorithm 1); on in
  ``ckb.Optimizer``'s CKB policies (:mod:`ckb.optimizer.policies._primal_dual`), off there with
  ``feasibility_first=False`` (variant ``ckb-ucb-no-first``).
- ``anytime`` (Remark 2, doubling trick): epochs of lengths 1, 2, 4, ...; at each epoch's start the
  duals are reset to 0 and V (and the ``"auto"`` slack) recomputed for the epoch's length;
  :meth:`PrimalDualRule.begin_round` says when an epoch starts (the harness may restart its GPs).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from ckb._validation import check_scalar
from ckb.errors import InvalidInputError
from ckb.exploration.beta import ConstantBeta
from ckb.rules.base import NONNEGATIVE, PROBABILITY, Choice, Flag, Real, Rule, Width, clip, like, named
from ckb.rules.cei import FIRST_CONSTANTS, FeasibilityFirst


class PrimalDualRule(FeasibilityFirst, Rule):
    """The primal-dual rule's constants, duals and epochs (see the module docstring)."""

    constants: ClassVar[dict[str, Any]] = {
        "B": Real(low=0.0, low_inclusive=False),
        "G": Real(low=0.0, low_inclusive=False, per_constraint=True),
        "R": NONNEGATIVE,
        "R_g": Real(low=0.0, optional=True),
        "alpha": PROBABILITY,
        "beta": Width(),
        "beta_g": Width(),
        "beta_scale": NONNEGATIVE,
        "delta": Real(low=0.0, low_inclusive=False, label="delta (Slater margin)"),
        "rho": Real(low=0.0, low_inclusive=False, optional=True),
        "V": Real(low=0.0, low_inclusive=False, optional=True),
        "slack": Real(low=0.0, choices=("auto", "decreasing"), label="slack (epsilon)"),
        "anytime": Flag(),
        "dual_estimate": Choice(("estimate", "mean")),
        **FIRST_CONSTANTS,
    }
    defaults: ClassVar[dict[str, Any]] = {
        "R_g": None,
        "alpha": 0.05,
        "beta": "theory",
        "beta_g": None,
        "beta_scale": 1.0,
        "rho": None,
        "V": None,
        "slack": 0.0,
        "anytime": False,
        "dual_estimate": "estimate",
        "feasibility_first": False,
        "first_quantile": 0.5,
    }
    state_keys = ("phi", "epoch_start", "epoch_len", "last")
    nonnegative_state = ("phi",)

    def setup(self) -> None:
        m = self.m
        self.R_g = self.R if self.R_g is None else self.R_g
        self.rho = 4.0 * self.B / self.delta if self.rho is None else self.rho
        if not isinstance(self.slack, str):  # a constant slack is at most delta / 2
            check_scalar(self.slack, "slack (epsilon)", low=0.0, high=self.delta / 2.0)
        # the constants as given stay in slack_mode and V_fixed; slack and V are the values in use
        self.slack_mode = self.slack if isinstance(self.slack, str) else "constant"
        self.V_fixed = self.V
        if self.horizon is None and not self.anytime and (self.V is None or self.slack_mode == "auto"):
            raise InvalidInputError(
                "the horizon T is needed for V = G sqrt(T) / rho (or pass V=..., or anytime=True)."
            )
        a = self.alpha / (m + 1)  # alpha is shared by the m + 1 GPs (Theorem 1's ln(2/alpha) for m = 1)
        self.beta_f = self.schedule(self.beta, self.B, self.R, a, self.beta_scale)
        spec_g = self.beta if self.beta_g is None else self.beta_g
        self.beta_gs = [self.schedule(spec_g, float(Gj), self.R_g, a, self.beta_scale) for Gj in self.G]
        self.slack = 0.0 if isinstance(self.slack, str) else self.slack  # "auto", "decreasing": set later
        self.phi = np.zeros(m)
        self.epoch_start, self.epoch_len = 1, None
        self.last: dict[str, float] = {}
        self._set_epoch(1 if self.anytime else self.horizon)

    # ----------------------------------------------------------------------------------- epochs
    def _set_epoch(self, length: int | None) -> None:
        self.epoch_len = length
        Gmax = float(np.max(self.G))
        self.V = self.V_fixed if self.V_fixed is not None else Gmax * math.sqrt(length) / self.rho
        if self.slack_mode == "auto":
            self.slack = min(self.delta / 2.0, Gmax / math.sqrt(length))

    def after_load(self) -> None:
        self._set_epoch(self.epoch_len)

    def begin_round(self) -> bool:
        """Round t += 1; with ``anytime``, a new epoch when the current one is over (duals reset).
        Returns whether an epoch started (the harness may restart its GPs)."""
        self.t += 1
        if self.anytime and self.t >= self.epoch_start + self.epoch_len:
            self.epoch_start = self.t
            self._set_epoch(2 * self.epoch_len)
            self.phi = np.zeros(self.m)
            return True
        return False

    # ------------------------------------------------------------------------------- the rule
    def widths(self, model_of) -> tuple[float, np.ndarray]:
        """This round's widths of f and of each g_j; ``model_of(name)`` ("f", "g0", ...) gives the model a
        data-dependent schedule reads (its information gain); constant widths never ask for it."""
        bf = _width(self.beta_f, self.t, model_of, "f")
        bg = np.array([_width(b, self.t, model_of, f"g{j}") for j, b in enumerate(self.beta_gs)])
        return bf, bg

    def score(self, f_est, g_est):
        r""":math:`\mathrm{Proj}_{[-B,B]} f_t - \sum_j \phi_j \mathrm{Proj}_{[-G_j,G_j]} g_{t,j}`; ``f_est`` (...,),
        ``g_est`` (..., m), numpy or torch."""
        return primal_dual_score(f_est, g_est, self.phi, self.B, self.G)

    @property
    def steps_on_mean(self) -> bool:
        """Whether the dual step reads the posterior mean of each g at the played point (``dual_estimate =
        "mean"``) instead of the exploration estimate the score used."""
        return self.dual_estimate == "mean"

    def dual_step(self, g_est_at_x, record: dict[str, float] | None = None) -> np.ndarray:
        """Step 3 from the estimates at the played point (m,); records the decision's internals
        (``dual`` before the step, ``g_bar``, and ``record``'s widths) in ``last``. Returns the clipped
        estimate."""
        phi = self.phi.copy()
        g_bar = np.clip(np.asarray(g_est_at_x, dtype=float).reshape(self.m), -self.G, self.G)
        if self.slack_mode == "decreasing":  # eps_t = min(delta/2, G/sqrt t), t counted within the epoch
            self.slack = min(
                self.delta / 2.0, float(np.max(self.G)) / math.sqrt(self.t - self.epoch_start + 1)
            )
        self.phi = dual_step(phi, g_bar, self.slack, self.V, self.rho)
        self.last = {**(record or {}), **named("dual", phi), **named("g_bar", g_bar)}
        return g_bar

    def internals(self) -> dict[str, float]:
        """The last decision's widths, the dual it used (before its step) and the clipped estimate that
        drove the step."""
        return dict(self.last)


def primal_dual_score(f_est, g_est, phi, B: float, G):
    r""":math:`\mathrm{Proj}_{[-B,B]} f_t - \sum_j \phi_j \mathrm{Proj}_{[-G_j,G_j]} g_{t,j}`; ``f_est`` (...,),
    ``g_est`` (..., m), ``phi`` and ``G`` (m,); numpy or torch."""
    f_bar = clip(f_est, -B, B)
    g_bar = clip(g_est, -np.asarray(G, dtype=float), np.asarray(G, dtype=float))
    return f_bar - (g_bar * like(phi, g_bar)).sum(-1)


def dual_step(phi, g_bar_at_x, slack: float, V: float, rho: float) -> np.ndarray:
    r""":math:`\phi_{t+1} = \mathrm{Proj}_{[0,\rho]}[\phi_t + (\bar g_t(x_t) + \varepsilon)/V]` per constraint."""
    phi = np.asarray(phi, dtype=float)
    return np.clip(phi + (np.asarray(g_bar_at_x, dtype=float) + slack) / V, 0.0, rho)


def _width(schedule, t: int, model_of, name: str) -> float:
    if isinstance(schedule, ConstantBeta):
        return schedule(t, None)
    return float(schedule(t, model_of(name)))
