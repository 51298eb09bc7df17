r"""``config``: CONFIG (Xu, Jiang & Jones 2022; digest 004 §3.4), optimistic feasibility.

:math:`x_t = \arg\max_x \hat f_t(x)` subject to :math:`\check g_{t,j}(x) \le 0` for all j, with
:math:`\hat f_t = \mu_f + \beta\sigma_f` and :math:`\check g_{t,j} = \mu_{g_j} - \beta_g\sigma_{g_j}`; when no
point is optimistically feasible, :math:`\arg\min_x \max_j \check g_{t,j}(x)` (the library's fallback,
:class:`ckb.rules.ConfigRule`). Maximized as one score whose argmax is exactly this rule. **At ask time**: the argmax (the fallback is recorded in the trial's info).
**At tell time**: nothing but the data. Defaults: ``beta`` = ``beta_g`` = 2.0 (``"theory"`` as rpol-ucb).
"""

from __future__ import annotations

from ckb.optimizer.policies._optimistic import UcbLcb
from ckb.optimizer.policies.registry import OPTIMIZER_POLICIES
from ckb.rules import ConfigRule


@OPTIMIZER_POLICIES.register("config")
class CONFIG(UcbLcb):
    __doc__ = __doc__
    rule_class = ConfigRule

    def _decision_info(self, bounds, x):
        self.rule.record_choice(self._lcb_at(bounds, x))  # whether the fallback chose x
        return self.rule.internals()
