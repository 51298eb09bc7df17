r"""``cei``: constrained expected improvement (Gardner et al. 2014; Gelbart, Snoek & Adams 2014), the
conventional reference.

.. math::

    x_t = \arg\max_x\ \mathrm{EI}(x)\prod_j P(g_j(x) \le 0), \qquad
    \mathrm{EI}(x) = \sigma_f(x)\,h\big((\mu_f(x) - \tilde y^*)/\sigma_f(x)\big),\ h(u) = \varphi(u) + u\Phi(u),

maximized in log form (BoTorch's numerically stable :math:`\log h`), with :math:`\tilde y^*` the best
observed feasible (all observed constraints <= 0) standardized objective; before any feasible
observation, the probability of feasibility alone. Independent GPs for f and each g; pending points
condition the variances (posterior-mean fantasies), so a batch spreads out. No state besides the round
counter: nothing is updated at ask or tell time. No constants.
"""

from __future__ import annotations

import numpy as np

from ckb.optimizer.policies.base import RuleOptimizerPolicy
from ckb.optimizer.policies.registry import OPTIMIZER_POLICIES
from ckb.rules.cei import ConstrainedEIRule


@OPTIMIZER_POLICIES.register("cei")
class ConstrainedEI(RuleOptimizerPolicy):
    __doc__ = __doc__
    rule_class = ConstrainedEIRule

    def decide(self, ctx):
        self._begin()
        best = self.rule.incumbent(ctx.y, ctx.c)
        models = ctx.models

        def score(X):
            mu, sd = models.mean_std(X)
            return self.rule.score(mu[..., 0], sd[..., 0], best, mu[..., 1:], sd[..., 1:])

        x, v = ctx.maximize(score)
        return x, {"log_acq": v, "best_feasible_std": np.nan if best is None else best}
