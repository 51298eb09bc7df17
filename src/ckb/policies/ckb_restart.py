r"""CKB-RestartUCB (Deng, Zhou, Ghosh, Gupta & Shroff 2022; a non-stationary baseline of
Guo, Zhu & Liu 2023).

CKB-UCB (:class:`~ckb.policies.primal_dual.CKB`) whose GP posteriors restart from the prior every ``H``
rounds (at rounds H + 1, 2H + 1, ...), so the ``"theory"`` β (the default) is recomputed from the
block's own information gain (a ``"log"`` schedule keeps the global round count). The dual
variable is *not* reset by default, as in Deng et al.'s public code (``restart_dual=True`` resets
it too). Guo, Zhu & Liu give no H. ``H`` is a number of rounds, or ``"sqrt(T)"`` (default): ``ceil(sqrt(T))``
from the horizon, the only relevant quantity the algorithm may know. Restart-UCB analyses (Deng et al.
2022, and R-GP-UCB of Zhou & Shroff 2021) set the period as ``(T / P_T)^(1/2)`` up to information-gain
factors, with ``P_T`` the variation budget of the environment; a learner does not know ``P_T``, so it is
treated as a constant and the period is ``ceil(sqrt(T))`` (our reading; the information-gain factors are
dropped). A period chosen from an experiment's change points would leak the environment into the policy.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ckb._validation import check_bool, check_scalar
from ckb.errors import InvalidInputError
from ckb.policies.primal_dual import CKB
from ckb.policies.registry import POLICIES


@POLICIES.register("ckb-restart-ucb")
class CKBRestartUCB(CKB):
    """CKB-UCB with posteriors restarted every ``H`` rounds (module docstring)."""

    default_exploration = "ucb"

    def __init__(
        self, info, rng, *, H: int | str = "sqrt(T)", restart_dual: bool = False, **kwargs: Any
    ) -> None:
        super().__init__(info, rng, **kwargs)
        if isinstance(H, str):
            if H != "sqrt(T)":
                raise InvalidInputError(
                    f"H (restart period) must be a number of rounds or 'sqrt(T)', got {H!r}."
                )
            if self.horizon is None:
                raise InvalidInputError("H = 'sqrt(T)' needs the horizon: pass horizon=T or H=ROUNDS.")
            H = math.ceil(math.sqrt(self.horizon))
        self.H = check_scalar(H, "H (restart period)", low=1, integer=True)
        self.restart_dual = check_bool(restart_dual, "restart_dual")

    def ask(self, context: Any = None) -> int:
        if self.t > 0 and self.t % self.H == 0:  # the coming round t + 1 starts a new block
            self.gp_f.reset()
            for gp in self.gp_g:
                gp.reset()
            if self.restart_dual:
                self.rule.phi = np.zeros(self.rule.m)
        return super().ask(context)
