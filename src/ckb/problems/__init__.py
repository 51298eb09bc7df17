"""Problems: true functions, noise models and ground truth (apart from policies).

The policy-facing contract (domains, :class:`ProblemInfo`, :class:`Observation`) lives in :mod:`ckb.contract`
and is re-exported here.
"""

from ckb.contract import BoxDomain, Domain, FiniteDomain, Observation, ProblemInfo
from ckb.problems.noise import (
    GaussianNoise,
    GaussianRewardNoise,
    ObservationModel,
    ResampledReadings,
    UniformNoise,
)
from ckb.problems.problem import Problem
from ckb.problems.registry import PROBLEMS
from ckb.registry import import_submodules

# Every module in this package registers its problems on import.
import_submodules(
    "ckb.problems", skip=("data", "domain", "noise", "observation", "problem", "registry", "safety")
)

__all__ = [
    "PROBLEMS",
    "BoxDomain",
    "Domain",
    "FiniteDomain",
    "GaussianNoise",
    "GaussianRewardNoise",
    "Observation",
    "ObservationModel",
    "Problem",
    "ProblemInfo",
    "ResampledReadings",
    "UniformNoise",
    "make_problem",
]


def make_problem(name: str, rng, **params) -> Problem:
    """Build a registered problem; unknown parameters get an error naming them and the closest valid ones."""
    from ckb._validation import check_params

    factory = PROBLEMS.get(name)
    check_params(factory, params, f"problem {name!r}", skip=("rng",))
    return factory(rng, **params)
