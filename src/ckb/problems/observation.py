"""The observation record, re-exported: it is part of the policy-facing contract (:mod:`ckb.contract`)."""

from ckb.contract.observation import Observation

__all__ = ["Observation"]
