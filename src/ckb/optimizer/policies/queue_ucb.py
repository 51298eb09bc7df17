r"""``queue-ucb``: drift-plus-penalty with virtual queues (:class:`ckb.rules.virtual_queue.VirtualQueueRule`),
the optimizer's policy for the cumulative goal: UCB of the objective minus, per constraint, its queue
over V times its estimate; the queues follow the observed running sum of every evaluation's constraint
values (in trial order), so a positive running sum pushes toward feasibility and earlier slack pays for
later infeasible but rewarding points.

**At ask time**: the queues (from the complete observations, in policy units), the widths, the argmax
(while no evaluation is feasible, with ``feasibility_first``: of the probability of feasibility times
that of beating the ``first_quantile`` quantile of the observed objective values).
**At tell time**: nothing but the data (the queues are recomputed from it). Constants on standardized
outcomes: ``V`` = 1.0, ``beta`` = 1.0, ``beta_g`` = 0.0, ``feasibility_first`` = True,
``first_quantile`` = 0.5. Internals: the
widths, the queues ``Q`` and ``phase`` (0 feasibility first, 1 the queue score).
"""

from __future__ import annotations

from ckb.optimizer.policies.base import RuleOptimizerPolicy
from ckb.optimizer.policies.registry import OPTIMIZER_POLICIES
from ckb.rules.virtual_queue import VirtualQueueRule


@OPTIMIZER_POLICIES.register("queue-ucb", aliases=("drift-plus-penalty",))
class QueueUCB(RuleOptimizerPolicy):
    __doc__ = __doc__
    rule_class = VirtualQueueRule
    bound_map = False  # the queues weigh the signed constraint estimates (OptimizerPolicy.bound_map)

    def decide(self, ctx):
        self._begin()
        rule = self.rule
        rule.queues(ctx.c)
        models = ctx.models
        bf, bg = rule.widths(models.view)
        x = self._first_feasible(ctx)
        if x is not None:
            return x, {**rule.internals(), "phase": 0.0}

        def score(X):
            mu, sd = models.mean_std(X)
            return rule.score(mu[..., 0] + bf * sd[..., 0], mu[..., 1:] - bg * sd[..., 1:])

        x, _ = ctx.maximize(score)
        return x, {**rule.internals(), "phase": 1.0}
