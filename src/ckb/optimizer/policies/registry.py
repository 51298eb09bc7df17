"""The registry of practical policies: ``@OPTIMIZER_POLICIES.register("name")`` on an OptimizerPolicy."""

from ckb.registry import Registry

OPTIMIZER_POLICIES: Registry = Registry("optimizer policy")
