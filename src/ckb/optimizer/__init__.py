"""The practical optimizer: ``Optimizer`` (ask/tell over a box with fitted GPs, several
constraints, pending points, a crash-safe SQLite study), its policies, models and acquisitions.

- ``space.py``: the box (and optional candidates), unit-cube scaling, ``initial_design`` (scrambled Sobol);
- ``models.py``: fitted GPs (BoTorch ``SingleTaskGP``, ``fit_gpytorch_mll``), pending-point fantasies;
- ``acquisition.py``: each rule's score as a torch function, its state updates, the maximizer
  (``optimize_acqf`` or enumeration);
- ``policies/``: one file per practical policy (``ckb-ucb``, ``ckb-ts``, ``ckb-rand``, ``rpol-ucb``,
  ``config``, ``penalty-noisy``, ``cei``), registered in ``OPTIMIZER_POLICIES``;
- ``study.py``: ``Study``, the record behind an optimizer (trials, pending asks, budget, reports,
  transactions over :class:`ckb.studies.StudyStorage`), and ``BudgetExhaustedError``;
- ``core.py``: ``Optimizer``, the decisions (units of the outcomes, model fitting, maximizer, policy)
  on top of its study: ask/tell, resume, metrics.

``initial_design``, ``Space``, ``Study`` and ``BudgetExhaustedError`` need only numpy/scipy; ``Optimizer``
and the rest import torch and BoTorch (``pip install -e '.[botorch]'``) when first used.
"""

from __future__ import annotations

from typing import Any

from ckb.optimizer.space import Space, initial_design
from ckb.optimizer.study import BudgetExhaustedError, Study

__all__ = ["OPTIMIZER_POLICIES", "BudgetExhaustedError", "Optimizer", "Space", "Study", "initial_design"]


def __getattr__(name: str) -> Any:
    if name == "Optimizer":
        from ckb.optimizer.core import Optimizer

        return Optimizer
    if name == "OPTIMIZER_POLICIES":
        from ckb.optimizer.policies import OPTIMIZER_POLICIES

        return OPTIMIZER_POLICIES
    raise AttributeError(f"module 'ckb.optimizer' has no attribute {name!r}")
