r"""``rpol-ucb``: rectified pessimistic-optimistic learning (Guo, Zhu & Liu 2023, Sec. 3-4).

.. math::

    x_t = \arg\max_x\ \hat f_t(x) - \sum_j Q_{t,j}[\check g_{t,j}(x)]^+, \qquad
    \hat f_t = \mu_f + \beta\sigma_f,\quad \check g_{t,j} = \mu_{g_j} - \beta_g\sigma_{g_j},

    Q_{t+1,j} = \max\big(Q_{t,j} + [c_{t,j}]^+,\ \sqrt t\big),\qquad Q_{1,j} = Q_1 = 1,

with :math:`c_t` the *observed* constraint values in policy units (scaled by their RMS at the time of the
tell). **At ask time**: the floor :math:`Q_t = \max(Q_t, \sqrt{t-1})` (t = the policy's round, counted
from the first ask after the initial design) and the argmax. **At tell time** (a point the policy
chose): :math:`Q \leftarrow Q + [c]^+`. Initial-design and user-supplied points feed the models, not Q.
The rule (one Q per constraint): :class:`ckb.rules.RPOLRule`; with a batch, each pick is one round.

Defaults on standardized outcomes: ``beta`` = ``beta_g`` = 2.0 (constant widths; ``"theory"``:
:math:`B + R\sqrt{2(\hat\gamma + 1 + \ln(2/p))}` with ``B_f`` = ``B_g`` = 5.0, ``R_f`` = ``R_g`` = 0.1,
``p`` = 0.05), ``Q1`` = 1.
"""

from __future__ import annotations

from typing import Any

from ckb.optimizer.policies._optimistic import UcbLcb
from ckb.optimizer.policies.registry import OPTIMIZER_POLICIES
from ckb.rules import RPOLRule, named


@OPTIMIZER_POLICIES.register("rpol-ucb", aliases=("rpol",))
class RPOLUCB(UcbLcb):
    __doc__ = __doc__
    rule_class = RPOLRule

    def _decision_info(self, bounds, x):
        return {**self.rule.internals(), **named("lcb_g", self._lcb_at(bounds, x))}

    def internals(self) -> dict[str, Any]:
        return named("Q", self.rule.Q)
