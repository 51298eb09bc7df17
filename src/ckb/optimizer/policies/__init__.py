"""Practical policies of :class:`ckb.Optimizer` (one file each, registered in ``OPTIMIZER_POLICIES``).

``ckb-ucb``, ``ckb-ts``, ``ckb-rand`` (Zhou & Ji's primal-dual rule), ``rpol-ucb`` and ``config``
(Guo, Zhu & Liu; Xu, Jiang & Jones), ``penalty-noisy`` (Shi & Eryilmaz, Algorithm 3), ``cei``
(constrained expected improvement, the conventional reference), and ckb's own rules for the two goals:
``pcei`` (best feasible design with few violations, a violation budget), ``slack-cei`` (the cumulative
goal's default: spends the running sum's slack) and ``queue-ucb`` (drift-plus-penalty with virtual queues).
A new policy is one file here with
``@OPTIMIZER_POLICIES.register("name")`` on an :class:`OptimizerPolicy` subclass; a rule of
:mod:`ckb.rules` whose score takes (UCB of f, LCBs of g) needs only ``rule_class`` on an
:class:`OptimisticPolicy` subclass (docs/adding-a-rule.md).
"""

from ckb.optimizer.policies._optimistic import UcbLcb as OptimisticPolicy
from ckb.optimizer.policies.base import Decision, OptimizerPolicy, RuleOptimizerPolicy
from ckb.optimizer.policies.registry import OPTIMIZER_POLICIES
from ckb.registry import import_submodules

import_submodules(__name__, skip=("base", "registry"))

#: the policy each goal of ckb.Optimizer uses when ``policy`` is not given
GOAL_POLICIES = {"best-feasible": "pcei", "cumulative": "slack-cei"}

__all__ = [
    "GOAL_POLICIES",
    "OPTIMIZER_POLICIES",
    "Decision",
    "OptimisticPolicy",
    "OptimizerPolicy",
    "RuleOptimizerPolicy",
]
