r"""``rpol-ucb``: rectified pessimistic-optimistic learning (Guo, Zhu & Liu; 004, digest 004 §2.0-2.1).

.. math::

    x_t = \arg\max_x\ \hat f_t(x) - \sum_j Q_{t,j}[\check g_{t,j}(x)]^+, \qquad
    \hat f_t = \mu_f + \beta\sigma_f,\quad \check g_{t,j} = \mu_{g_j} - \beta_g\sigma_{g_j},

    Q_{t+1,j} = \max\big(Q_{t,j} + [c_{t,j}]^+,\ \sqrt t\big),\qquad Q_{1,j} = Q_1 = 1,

with :math:`c_t` the *observed* constraint values in policy units (scaled by their RMS at the time of the
tell). **At ask time**: the floor :math:`Q_t = \max(Q_t, \sqrt{t-1})` (t = the policy's round, counted
from the first ask after the initial design) and the argmax. **At tell time** (a point the policy
chose): :math:`Q \leftarrow Q + [c]^+`. Initial-design and user-supplied points feed the models, not Q.
As in :mod:`ckb.policies.rpol`: one Q per constraint; with a batch, each pick is one round.

Defaults on standardized outcomes: ``beta`` = ``beta_g`` = 2.0 (constant widths; ``"theory"``:
:math:`B + R\sqrt{2(\hat\gamma + 1 + \ln(2/p))}` with ``B_f`` = ``B_g`` = 5.0, ``R`` = 0.1,
``p`` = 0.05), ``Q1`` = 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ckb._validation import check_scalar
from ckb.optimizer.acquisition import rpol_add_costs, rpol_floor, rpol_score
from ckb.optimizer.policies._optimistic import UcbLcb
from ckb.optimizer.policies.registry import OPTIMIZER_POLICIES


@OPTIMIZER_POLICIES.register("rpol-ucb", aliases=("rpol",))
class RPOLUCB(UcbLcb):
    __doc__ = __doc__

    def __init__(self, m: int, horizon: int, *, Q1: float = 1.0, **kwargs: Any) -> None:
        super().__init__(m, horizon, **kwargs)
        self.Q = np.full(self.m, check_scalar(Q1, "Q1", low=0.0))

    def decide(self, ctx):
        self.t += 1
        self.Q = rpol_floor(self.Q, self.t)
        Q = self.Q.copy()
        bf, bg, bounds = self._bounds(ctx)
        x, _ = ctx.maximize(lambda X: rpol_score(*bounds(X), Q))
        return x, {
            "beta": bf,
            "beta_g": bg,
            **self._named("Q", Q),
            **self._named("lcb_g", self._lcb_at(bounds, x)),
        }

    def observe(self, y: float, c: np.ndarray) -> None:
        self.Q = rpol_add_costs(self.Q, c)

    def internals(self) -> dict[str, float]:
        return self._named("Q", self.Q)

    def _state(self) -> dict[str, Any]:
        return {"Q": self.Q.copy()}

    def _load(self, state: dict[str, Any]) -> None:
        self.Q = np.asarray(state["Q"], dtype=float).reshape(self.m).copy()
