r"""``slack-cei``: constrained EI that spends the cumulative constraint's slack, then exploits
(:class:`ckb.rules.feasible_ei.SlackCEIRule`), the optimizer's policy for the cumulative goal: each ask may
use the running sum's slack spread over the asks left, :math:`a_t = -\sum_{s<t} c_s / R_t` per constraint
(observed values of every complete evaluation, in the constraints' own units), as the threshold of
:mod:`~ckb.optimizer.policies.pcei`'s admissible set; after the exploration phase it plays the best
posterior mean the models are confident is affordable.

**At ask time**: the incumbent, the allowance from the observed running sum and the asks left, the
argmax. **At tell time**: nothing but the data. Constants as ``pcei`` but ``kappa`` = 2.0 (pcei: 1.0),
``explore_kappa`` = 0, ``endgame_ei`` = 1e-3. The optimizer's ``violation_budget`` (a limit on the sum
of positive parts) is not read: this policy keeps the signed running sum at or below zero.
"""

from __future__ import annotations

import numpy as np

from ckb.optimizer.policies.pcei import PessimisticCEI, _signed_thresholds
from ckb.optimizer.policies.registry import OPTIMIZER_POLICIES
from ckb.rules.feasible_ei import SlackCEIRule

#: the models'-units threshold of a credit no model value can use up (a bound map's cap below it)
FAR_THRESHOLD = 1.0e6


@OPTIMIZER_POLICIES.register("slack-cei", aliases=("cumulative-cei",))
class SlackCEI(PessimisticCEI):
    __doc__ = __doc__
    rule_class = SlackCEIRule
    uses_rounds_left = True

    def _budgeted(self, ctx) -> bool:
        """The running sum's slack is not a violation budget: the exploration phase stays."""
        return False

    def _allowance(self, ctx) -> tuple[np.ndarray, np.ndarray]:
        """:math:`a_t = -S_t / R_t` (own units, signed) and its value in the models' units."""
        c = np.asarray(ctx.c, dtype=float).reshape(-1, self.m)
        raw = c if ctx.c_to_raw is None else np.asarray(ctx.c_to_raw(c), dtype=float).reshape(-1, self.m)
        a = -raw.sum(axis=0) / (int(ctx.rounds_left) + 1)
        tau = _signed_thresholds(a, ctx.c_to_raw, self.m)
        # a debt's margin below what the constraint's model can reach at all (the floor of its bound
        # map) is repaid by no point: merely feasible, as when no point is admissible (_relaxed); a
        # credit beyond its cap admits every value: P(g <= FAR) = 1 to double precision. Infinite
        # thresholds would make the gradient of P(g <= tau) NaN (inf / sd times a zero density).
        return a, np.where(np.isneginf(tau), 0.0, np.where(np.isposinf(tau), FAR_THRESHOLD, tau))

    def _relaxed(self, tau) -> np.ndarray | None:
        """In debt (some threshold < 0) with no point the models are confident repays it at this rate:
        threshold 0, i.e. feasibility (a debt the problem cannot repay is not chased at any price)."""
        tau = np.asarray(tau, dtype=float)
        return np.maximum(tau, 0.0) if np.any(tau < 0.0) else None
