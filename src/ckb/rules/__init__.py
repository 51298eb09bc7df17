"""Decision rules of the papers, each written once (constants, state, score, updates) and used by both
the bandit harness (:mod:`ckb.policies`) and :class:`ckb.Optimizer` (:mod:`ckb.optimizer.policies`).

- :mod:`~ckb.rules.primal_dual`: Zhou & Ji's primal-dual CKB/CBO with the slack variants;
- :mod:`~ckb.rules.optimistic`: RPOL (Guo, Zhu & Liu) and CONFIG (Xu, Jiang & Jones);
- :mod:`~ckb.rules.penalty`: Shi & Eryilmaz's epoch-based penalty methods (Algorithms 2 and 3);
- :mod:`~ckb.rules.cei`: constrained expected improvement (the conventional reference);
- :mod:`~ckb.rules.botorch`: the score of a rule that decides on (f, g) estimates (primal-dual, RPOL, CONFIG,
  virtual queue) as a BoTorch ``AcquisitionFunction`` on any model, and any function of X as one (needs
  torch).

A rule has no estimation in it; :mod:`ckb.rules.base` says what every rule shares.
"""

from ckb.rules.base import Rule, named
from ckb.rules.optimistic import CONFIG_FLOOR, ConfigRule, OptimisticRule, RPOLRule
from ckb.rules.primal_dual import PrimalDualRule

__all__ = [
    "CONFIG_FLOOR",
    "ConfigRule",
    "OptimisticRule",
    "PrimalDualRule",
    "RPOLRule",
    "Rule",
    "named",
]
