r"""Piecewise non-stationary problems (Guo, Zhu & Liu (2023), Sec. 6 and the non-stationary experiment of
Sec. 7): phases with their own f, g and optimum.

A :class:`PhasedProblem` is a :class:`~ckb.problems.Problem` whose functions change at given rounds. Its
own ``f``/``g`` are those of the first phase (what a policy's defaults and hints see), so every other
environment refuses it (it would play phase 1 for the whole horizon); the ``phased`` environment
(:mod:`ckb.runner.environments.phased`) evaluates round t with the functions of t's phase and
records that phase's best feasible utility, so the runner's regret is the *dynamic* regret
:math:`\sum_t f_t(x^*_t) - f_t(x_t)` and the violations use :math:`g_t`.

``gardner-phases`` is Guo, Zhu & Liu's non-stationary experiment (Sec. 7, Fig. 3): rounds 1-100 the Gardner
problem, rounds 101-300 :math:`f = -\sin(x_1 - 5) - x_2`, :math:`g = \sin x_1 \sin(x_2 + 5) + 0.5`, rounds
301-500 :math:`f = -\sin(x_1 + 4) - x_2`, :math:`g = \sin(x_1 + 5)\sin x_2 + 0.95`, on a grid of [0, 6]^2
(per-phase optima over the grid; the continuous ones are -0.2532, 0.6703, -0.6775).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ckb._validation import check_noise_scale, check_scalar
from ckb.contract.domain import BoxDomain
from ckb.errors import InvalidInputError
from ckb.problems.gardner import gardner_kernel
from ckb.problems.noise import GaussianRewardNoise
from ckb.problems.problem import Problem
from ckb.problems.registry import PROBLEMS


class PhasedProblem(Problem):
    """A problem whose ``(f, g)`` change at rounds ``starts[1:]`` (``starts[0] = 1``), on a finite domain.

    ``phases``: one ``(f, g)`` pair per phase, callables on points or tables over the candidates.
    """

    needs_environment = "phased"
    needs_environment_because = (
        "its functions change between rounds, and any other environment plays its first phase for the "
        "whole horizon"
    )

    def __init__(
        self,
        name: str,
        domain,
        phases: list[tuple[Any, Any]],
        noise,
        *,
        starts: list[int],
        **kwargs: Any,
    ) -> None:
        if not domain.is_finite:
            raise InvalidInputError(
                "a phased problem needs a finite domain or a grid (per-phase optima are tabulated)."
            )
        if (
            len(phases) != len(starts)
            or not starts
            or starts[0] != 1
            or any(b <= a for a, b in itertools.pairwise(starts))
        ):
            raise InvalidInputError(
                f"starts must begin at round 1 and increase, one per phase; got {starts!r} for {len(phases)} phase(s)."
            )
        C = domain.candidates
        tables = []
        for f, g in phases:
            fv = np.asarray(f(C) if callable(f) else f, dtype=float).reshape(-1)
            gv = np.asarray(g(C) if callable(g) else g, dtype=float)
            tables.append((fv, gv.reshape(C.shape[0], -1)))
        super().__init__(name, domain, tables[0][0], tables[0][1], noise, **kwargs)
        self.starts = [int(s) for s in starts]
        self._tables = tables
        self.phase_utility_star = []
        for fv, gv in tables:
            feas = np.all(gv <= 0.0, axis=1)
            if not np.any(feas):
                raise InvalidInputError(f"problem {name!r}: a phase has no feasible candidate.")
            self.phase_utility_star.append(float(np.max(self.sign * fv[feas])))

    def phase_of(self, t: int) -> int:
        """0-based phase of round ``t`` (1-based)."""
        return int(np.searchsorted(self.starts, t, side="right")) - 1

    def evaluate_round(self, t: int, index: int) -> tuple[float, np.ndarray, float]:
        """True ``(f, g)`` of round ``t``'s functions at arm ``index``, and that phase's best feasible utility."""
        k = self.phase_of(t)
        fv, gv = self._tables[k]
        return float(fv[index]), gv[index].copy(), self.phase_utility_star[k]

    @property
    def utility_star_randomized(self) -> None:
        return None  # R+ is not defined against a moving optimum here

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out.update({"phase_starts": self.starts, "phase_utility_star": self.phase_utility_star})
        return out


def _shifted(a1: float, a2: float, b1: float, b2: float, h: float):
    def f(X):
        return -np.sin(X[:, 0] + a1) - X[:, 1]

    def g(X):
        return (np.sin(X[:, 0] + b1) * np.sin(X[:, 1] + b2) + h)[:, None]

    return f, g


@PROBLEMS.register("gardner-phases")
def gardner_phases(
    rng: np.random.Generator,
    *,
    grid: int = 100,
    starts: Any = (1, 101, 301),
    reward_std: float = 0.05,
    constraint_std: float = 0.05,
    kernel: str = "se",
    lengthscale: float = 1.5,
) -> PhasedProblem:
    """The three phases of Guo, Zhu & Liu (2023), Sec. 7, Fig. 3 (module docstring); the instance is fixed,
    ``rng`` is unused."""
    grid = check_scalar(grid, "grid", low=2, integer=True)
    constraint_std = check_noise_scale(constraint_std, "constraint_std")  # the noise model calls it its scale
    kernel = gardner_kernel(kernel, lengthscale)
    phases = [_shifted(0, 0, 0, 0, 0.95), _shifted(-5, 0, 0, 5, 0.5), _shifted(4, 0, 5, 0, 0.95)]
    return PhasedProblem(
        "gardner-phases",
        BoxDomain([0.0, 0.0], [6.0, 6.0], grid=grid),
        phases,
        GaussianRewardNoise(reward_std, "gaussian", constraint_std),
        starts=list(starts),
        kernel=kernel,
        hints={"B": 7.0, "R": float(max(reward_std, constraint_std)), "G": 1.95, "slater_margin": 0.05},
        metadata={
            "phases": "Guo, Zhu & Liu (2023), Sec. 7, Fig. 3: Gardner; f = -sin(x1 - 5) - x2, g = sin x1 sin(x2 + 5) + 0.5; f = -sin(x1 + 4) - x2, g = sin(x1 + 5) sin x2 + 0.95"
        },
    )
