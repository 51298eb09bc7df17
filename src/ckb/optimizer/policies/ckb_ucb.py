"""``ckb-ucb``: the primal-dual rule with GP-UCB for f and GP-LCB for each g (:mod:`._primal_dual`)."""

from ckb.optimizer.policies._primal_dual import RULE_DOC, PrimalDual
from ckb.optimizer.policies.registry import OPTIMIZER_POLICIES


@OPTIMIZER_POLICIES.register("ckb-ucb", aliases=("cbo-ucb",))
class CKBUCB(PrimalDual):
    __doc__ = (
        "CKB-UCB: clipped UCB of f minus duals times clipped LCBs of g; the dual steps at ask.\n" + RULE_DOC
    )
    exploration = "ucb"
