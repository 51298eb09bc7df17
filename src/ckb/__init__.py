"""ckb: constrained kernelized bandits / constrained Bayesian optimization with cumulative constraints."""

from typing import Any

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # ``ckb.Optimizer`` without importing torch at ``import ckb``
    if name == "Optimizer":
        from ckb.optimizer.core import Optimizer

        return Optimizer
    if name == "BudgetExhaustedError":  # what ``ask`` raises once a study's budget is used
        from ckb.optimizer.study import BudgetExhaustedError

        return BudgetExhaustedError
    if name == "NumericsError":  # what ``ask`` raises with ``strict_numerics=True``
        from ckb.optimizer.models import NumericsError

        return NumericsError
    if name == "optimizer":  # ``ckb.optimizer.initial_design`` after a bare ``import ckb``
        import importlib

        return importlib.import_module("ckb.optimizer")
    raise AttributeError(f"module 'ckb' has no attribute {name!r}")
