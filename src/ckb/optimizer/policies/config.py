r"""``config``: CONFIG (Xu, Jiang & Jones 2022; digest 004 §3.4), optimistic feasibility.

:math:`x_t = \arg\max_x \hat f_t(x)` subject to :math:`\check g_{t,j}(x) \le 0` for all j, with
:math:`\hat f_t = \mu_f + \beta\sigma_f` and :math:`\check g_{t,j} = \mu_{g_j} - \beta_g\sigma_{g_j}`; when no
point is optimistically feasible, :math:`\arg\min_x \max_j \check g_{t,j}(x)` (the library's fallback,
:mod:`ckb.policies.rpol`). Maximized as one score (:func:`ckb.optimizer.acquisition.config_score`) whose
argmax is exactly this rule. **At ask time**: the argmax (the fallback is recorded in the trial's info).
**At tell time**: nothing but the data. Defaults: ``beta`` = ``beta_g`` = 2.0 (``"theory"`` as rpol-ucb).
"""

from __future__ import annotations

from ckb.optimizer.acquisition import config_score
from ckb.optimizer.policies._optimistic import UcbLcb
from ckb.optimizer.policies.registry import OPTIMIZER_POLICIES


@OPTIMIZER_POLICIES.register("config")
class CONFIG(UcbLcb):
    __doc__ = __doc__

    def decide(self, ctx):
        self.t += 1
        bf, bg, bounds = self._bounds(ctx)
        x, _ = ctx.maximize(lambda X: config_score(*bounds(X)))
        worst = float(self._lcb_at(bounds, x).max())
        return x, {"beta": bf, "beta_g": bg, "worst_lcb_g": worst, "fallback": float(worst > 0.0)}
