"""What a policy may know about a problem before it starts: :class:`ProblemInfo`."""

from __future__ import annotations

from dataclasses import dataclass, field

from ckb.contract.domain import Domain
from ckb.kernels.base import Kernel


@dataclass(frozen=True)
class ProblemInfo:
    """What a policy may know about a problem: no true functions, no optimum."""

    name: str
    domain: Domain
    m: int
    kernel: Kernel | None
    minimize: bool = False
    #: public constants a policy may use as defaults, the ones its paper assumes known. Keys in use:
    #: ``B`` (bound on |f|, RKHS norm), ``G`` (bound on |g|), ``slater_margin`` (δ, best single-arm
    #: margin max_x -g(x)), ``R`` (noise level of the readings), ``safe_seed`` (a known strictly
    #: feasible arm), ``lipschitz`` (of g; see
    #: :mod:`ckb.problems.safety`). Experiments compute them from the instance, as the papers assume
    #: them known; nothing else of the ground truth reaches a policy.
    hints: dict[str, float] = field(default_factory=dict)
