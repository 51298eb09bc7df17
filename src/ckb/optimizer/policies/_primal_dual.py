r"""The primal-dual rule CKB/CBO (Algorithm 1 of Zhou & Ji 2022 and of the CBO paper) on a box with
fitted GPs.

Per policy round t (after the initial design), with duals :math:`\phi_1 = 0` (one per constraint) and all
values in policy units (:mod:`ckb.optimizer.models`: objective standardized, constraints scaled by
their root mean square, threshold 0):

1. estimates :math:`f_t` (optimistic, high) and :math:`g_{t,j}` (optimistic, low) from the posteriors,
   conditioned on the pending points, with the exploration strategy of the policy:
   ``ckb-ucb`` :math:`\mu_f + \beta\sigma_f` and :math:`\mu_{g_j} - \beta_g\sigma_{g_j}`;
   ``ckb-ts`` independent posterior sample paths, widened by beta:
   :math:`\mu + \beta(s - \mu)`; ``ckb-rand`` :math:`\mu + Z\sigma` with one scalar
   :math:`Z \sim \mathcal N(0, \beta^2)` per function and round;
2. clip :math:`\bar f_t = \mathrm{Proj}_{[-B,B]} f_t`, :math:`\bar g_{t,j} = \mathrm{Proj}_{[-G_j,G_j]} g_{t,j}`;
3. :math:`x_t = \arg\max_x \bar f_t(x) - \sum_j \phi_{t,j}\bar g_{t,j}(x)` (multi-start L-BFGS-B, or
   enumeration over candidates);
4. dual step from the clipped *estimate* at :math:`x_t` (with ``dual_estimate="mean"``, the clipped
   posterior mean of each :math:`g_j` at :math:`x_t` instead):
   :math:`\phi_{t+1,j} = \mathrm{Proj}_{[0,\rho_j]}[\phi_{t,j} + (\bar g_{t,j}(x_t) + \varepsilon)/V]`.

**Feasibility first** (``feasibility_first``, on by default in the optimizer; the rule's own default,
and the harness's, is Algorithm 1 as written, without it): while no evaluation has satisfied every
constraint the ask is instead the point most likely feasible and better than the ``first_quantile``
(0.5) quantile of the observed objective values, with no dual step (phase 0 in the internals), as
``queue-ucb`` and the EI-based policies search for a first feasible point. Why on by default here:
Algorithm 1 pushes every constraint's estimate at once through its duals and, on problems whose
feasible set is a small share of the box, often evaluates no feasible point at all in a short run
(CKB-UCB on the tension/compression spring: a feasible point in 2 of 10 seeds at 60 evaluations,
with the search 10 of 10; ``docs/results-constrained-benchmark.md``). A run whose initial design
holds a feasible point never enters the search, so its decisions are Algorithm 1's.
``feasibility_first=False`` gives the rule exactly as written.

**Repeated points, on purpose**: the argmax of step 3 is often a point already evaluated (Algorithm 1
keeps the running sum of the constraints near zero by mixing the two ends of a trade-off, e.g. the
infeasible unconstrained optimum and a feasible point, and plays each again as the duals swing);
``ckb.Optimizer(exact=True)`` excludes evaluated points from the maximization for exact evaluations.

**At ask time**: steps 1-4 (the dual step needs no observation, so a batch ask(k) makes k rounds with k
dual steps, each pick conditioning the next one's variance). **At tell time**: nothing but the data
(the models are refitted from the stored observations at the next ask).

Constants on standardized outcomes (each a keyword of ``ckb.Optimizer``; the papers' theory values
need quantities unknown in practice, so these are choices):

- ``beta`` (2.0; 1.0 for ``ckb-ts``, i.e. plain posterior samples) and ``beta_g`` (default ``beta``):
  a number, or ``"theory"`` / ``"log"`` / a dict (:mod:`ckb.exploration.beta`, with ``B``, ``R``
  (0.1) and ``alpha`` (0.05, shared by the m + 1 GPs as in the library's CKB));
- ``B`` = 5.0: the clip of :math:`f_t` (an optimistic standardized value beyond 5 sample standard
  deviations is implausible; at 3 the clip would flatten the estimate near the optimum);
- ``G`` = 5.0 (a number or m numbers): the clip of :math:`g_{t,j}` in units of the constraint's RMS;
- ``delta`` = 1.0: the Slater margin :math:`\max_x -\tilde g(x)` in the same units (one RMS: a
  problem whose best point is feasible by less than that has a smaller true margin, and a smaller
  ``delta`` makes :math:`\rho` larger, i.e. allows larger duals);
- ``rho`` = :math:`4B/\delta` (Theorems 1-2), ``V`` = :math:`\max_j G_j \sqrt T/\rho` with T the policy's
  rounds (``budget - n_init``);
- ``slack`` :math:`\varepsilon` = 0 (Algorithm 1 as written); ``"auto"`` = :math:`\min(\delta/2, G/\sqrt T)`,
  ``"decreasing"`` = :math:`\varepsilon_t = \min(\delta/2, G/\sqrt t)` (the library's choices for Zhou & Ji's
  slackness, :mod:`ckb.policies.primal_dual`, with t the policy's round).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ckb.optimizer.policies.base import STANDARDIZED_DEFAULTS, Decision, RuleOptimizerPolicy
from ckb.rules import PrimalDualRule, named

RULE_DOC = __doc__


class PrimalDual(RuleOptimizerPolicy):
    """The primal-dual rule (:class:`ckb.rules.PrimalDualRule`) with this class's ``exploration``."""

    exploration: ClassVar[str] = "ucb"
    rule_class = PrimalDualRule
    bound_map = False  # the Lagrangian weighs the signed constraint estimates (OptimizerPolicy.bound_map)
    rule_defaults: ClassVar[dict[str, Any]] = {
        **STANDARDIZED_DEFAULTS,
        "G": 5.0,
        "delta": 1.0,
        "beta_g": None,
    }

    def __init__(self, m: int, horizon: int, **params: Any) -> None:
        params.setdefault("beta", self.default_beta)
        super().__init__(m, horizon, **params)

    # ------------------------------------------------------------------------------ estimates
    def _estimator(self, ctx: Decision, bf: float, bg: np.ndarray):
        """This round's estimates: a function X -> (f_t(X) (b,), g_t(X) (b, m)), strategy-specific (UCB/LCB)."""
        import torch

        models = ctx.models

        def est(X):
            mu, sd = models.mean_std(X)
            return mu[..., 0] + bf * sd[..., 0], mu[..., 1:] - torch.as_tensor(bg, dtype=mu.dtype) * sd[
                ..., 1:
            ]

        return est

    def decide(self, ctx: Decision) -> tuple[np.ndarray, dict[str, float]]:
        import torch

        rule = self.rule
        self._begin()
        x = self._first_feasible(ctx)
        if x is not None:  # no feasible evaluation yet: the search for one, no dual step
            return x, {**named("dual", rule.phi), "phase": 0.0}
        bf, bg = rule.widths(ctx.models.view)
        est = self._estimator(ctx, bf, bg)
        x, _ = ctx.maximize(lambda X: rule.score(*est(X)))
        with torch.no_grad():
            X = torch.as_tensor(x[None, :])
            g_at = ctx.models.mean_std(X)[0][..., 1:] if rule.steps_on_mean else est(X)[1]
            g_at = g_at.numpy().reshape(self.m)
        rule.dual_step(g_at, record={"beta": bf, **named("beta_g", bg)})
        return x, rule.internals()

    def internals(self) -> dict[str, float]:
        return named("dual", self.rule.phi)
