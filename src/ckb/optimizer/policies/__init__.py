"""Practical policies of :class:`ckb.Optimizer` (one file each, registered in ``OPTIMIZER_POLICIES``).

``ckb-ucb``, ``ckb-ts``, ``ckb-rand`` (Zhou & Ji's primal-dual rule), ``rpol-ucb`` and ``config``
(Guo, Zhu & Liu; Xu, Jiang & Jones), ``penalty-noisy`` (Shi & Eryilmaz, Algorithm 3), ``cei``
(constrained expected improvement, the conventional reference). A new policy is one file here with
``@OPTIMIZER_POLICIES.register("name")`` on an :class:`OptimizerPolicy` subclass.
"""

from ckb.optimizer.policies.base import Decision, OptimizerPolicy
from ckb.optimizer.policies.registry import OPTIMIZER_POLICIES
from ckb.registry import import_submodules

import_submodules(__name__, skip=("base", "registry"))

__all__ = ["OPTIMIZER_POLICIES", "Decision", "OptimizerPolicy"]
