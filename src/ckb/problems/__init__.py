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
    from ckb.errors import InvalidInputError

    factory = PROBLEMS.get(name)
    check_params(factory, params, f"problem {name!r}", skip=("rng",))
    problem = factory(rng, **params)
    if not isinstance(problem, Problem):
        shown = repr(problem) if len(repr(problem)) <= 60 else repr(problem)[:57] + "..."
        raise InvalidInputError(
            f"the factory of problem {name!r} returned {shown} ({type(problem).__name__}); expected a "
            "ckb.problems.Problem."
        )
    return problem
