"""The policy-facing contract: everything a policy may see of a problem, and nothing else.

A policy is built from a :class:`ProblemInfo` (name, :class:`Domain`, ``m``, kernel hint, sense, public
hints), acts on the domain, and is told :class:`Observation` records. Ground truth (true functions,
optimum, noise model) stays in :mod:`ckb.problems`, which builds on this package; policies, rules and
exploration import from here and never from :mod:`ckb.problems`. Depends only on numpy/scipy,
:mod:`ckb.errors`, :mod:`ckb._validation` and :mod:`ckb.kernels`.
"""

from ckb.contract.distances import euclidean_distances, kernel_distances
from ckb.contract.domain import BoxDomain, Domain, FiniteDomain
from ckb.contract.observation import Observation
from ckb.contract.problem_info import ProblemInfo

__all__ = [
    "BoxDomain",
    "Domain",
    "FiniteDomain",
    "Observation",
    "ProblemInfo",
    "euclidean_distances",
    "kernel_distances",
]
