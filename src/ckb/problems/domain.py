"""Domains, re-exported: they are part of the policy-facing contract and live in :mod:`ckb.contract.domain`."""

from ckb.contract.domain import BoxDomain, Domain, FiniteDomain

__all__ = ["BoxDomain", "Domain", "FiniteDomain"]
