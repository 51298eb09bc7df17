r"""Standard constrained test problems with known optima, for benchmarking optimizers.

Every problem is a continuous box (``BoxDomain`` without a grid), constraints are feasible where
:math:`g_j(x) \le 0`, and the optimum :math:`(x^*, f^*)` is given explicitly (each is checked by a dense or
multistart search in ``tests/problems/test_constrained_benchmarks.py``). Observations are exact by default
(``noise_std = 0``), as in the papers these problems come from.

``gardner-1`` — Gardner et al. (2014), *Bayesian optimization with inequality constraints*, simulation 1
(also problem 4 of Letham et al. 2019's supplement):

.. math::

    \min_{x \in [0, 6]^2} \cos(2 x_1) \cos(x_2) + \sin(x_1)
    \quad\text{s.t.}\quad \cos(x_1)\cos(x_2) - \sin(x_1)\sin(x_2) - 0.5 \le 0 .

:math:`f \ge -2` everywhere and :math:`f = -2` only at :math:`x^* = (3\pi/2, 0)`, where
:math:`g = \cos(3\pi/2) - 0.5 = -0.5`: the constraint is *inactive* at the optimum (about 67% of the box is
feasible); it tests whether a method wastes evaluations on infeasible points it need not visit.
Gardner et al.'s simulation 2 is the existing problem ``gardner`` (:mod:`ckb.problems.gardner`, stated
as the maximization of :math:`-\sin x_1 - x_2`); it is reused, not duplicated.

``gramacy`` — the toy problem of Gramacy et al. (2016), *Modeling an augmented Lagrangian for blackbox
constrained optimization*:

.. math::

    \min_{x \in [0, 1]^2} x_1 + x_2 \quad\text{s.t.}\quad
    \tfrac32 - x_1 - 2 x_2 - \tfrac12 \sin\bigl(2\pi (x_1^2 - 2 x_2)\bigr) \le 0,\quad
    x_1^2 + x_2^2 - \tfrac32 \le 0 .

The paper gives :math:`f^* \approx 0.5998` at :math:`x^* \approx (0.1954, 0.4044)`; 200 SLSQP restarts
give :math:`f^* = 0.5997881` at :math:`(0.1951227, 0.4046654)` (first constraint active), used here.

``branin-disk`` — the Branin-Hoo function under a disk constraint (Gelbart, Snoek & Adams 2014,
*Bayesian optimization with unknown constraints*; Letham et al. 2019's supplement):

.. math::

    \min_{x \in [-5, 10] \times [0, 15]} \mathrm{branin}(x) \quad\text{s.t.}\quad
    (x_1 - 2.5)^2 + (x_2 - 7.5)^2 - 50 \le 0 .

The disk excludes two of Branin's three global minimizers; the third, :math:`x^* = (\pi, 2.275)` with
:math:`f^* = 5/(4\pi) \approx 0.397887`, is inside (:math:`g(x^*) \approx -22.3`).

``hartmann6-ball`` — the 6-D Hartmann function in the unit ball (Letham et al. 2019, *Constrained
Bayesian optimization with noisy experiments*; BoTorch's ``ConstrainedHartmann``):

.. math::

    \min_{x \in [0, 1]^6} \mathrm{hartmann6}(x) \quad\text{s.t.}\quad \|x\|_2 - 1 \le 0 .

About 8% of the cube is feasible; the global minimizer (:math:`f^* = -3.32237`, :math:`\|x^*\|_2 = 0.946`)
lies inside the ball, close to its boundary.

Benchmark facts (:data:`CONSTRAINED_BENCHMARKS`)
------------------------------------------------
Each benchmark names a registered problem and states, besides :math:`(x^*, f^*)`:

- a *typical magnitude* :math:`s_j` per constraint, used to put violations of different constraints
  (and problems) on one scale: the standard deviation of :math:`g_j(x)` for :math:`x` uniform on the box,
  rounded to two significant digits (the scale that an outcome standardization divides by);
- the *gap normaliser*: the final gap is :math:`(u^* - u_\text{best}) / \text{scale}` with utility
  :math:`u = \pm f` (maximized), and the scale is :math:`|f^*|` unless the optimum is near zero relative to
  the objective's variation, :math:`|f^*| < 0.1 \cdot \text{range}(f)` over the box, in which case it is
  :math:`\text{range}(f) = \max_X f - \min_X f`. This makes ``gardner`` (:math:`f^* = -0.2532`, range 8)
  and ``branin-disk`` (:math:`f^* = 0.398`, range 307.7) use the range, and the others :math:`|f^*|`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ckb._validation import check_noise_scale
from ckb.contract.domain import BoxDomain
from ckb.kernels import Matern
from ckb.problems.gardner import F_STAR as GARDNER2_F_STAR
from ckb.problems.noise import GaussianNoise
from ckb.problems.problem import Problem
from ckb.problems.registry import PROBLEMS

# ---------------------------------------------------------------------------------------------- functions


def gardner1_f(X: np.ndarray) -> np.ndarray:
    return np.cos(2.0 * X[:, 0]) * np.cos(X[:, 1]) + np.sin(X[:, 0])


def gardner1_g(X: np.ndarray) -> np.ndarray:
    return (np.cos(X[:, 0]) * np.cos(X[:, 1]) - np.sin(X[:, 0]) * np.sin(X[:, 1]) - 0.5)[:, None]


def gramacy_f(X: np.ndarray) -> np.ndarray:
    return X[:, 0] + X[:, 1]


def gramacy_g(X: np.ndarray) -> np.ndarray:
    x1, x2 = X[:, 0], X[:, 1]
    c1 = 1.5 - x1 - 2.0 * x2 - 0.5 * np.sin(2.0 * math.pi * (x1**2 - 2.0 * x2))
    c2 = x1**2 + x2**2 - 1.5
    return np.stack([c1, c2], axis=1)


def branin(X: np.ndarray) -> np.ndarray:
    """Branin-Hoo with the standard constants a = 1, b = 5.1/(4 pi^2), c = 5/pi, r = 6, s = 10, t = 1/(8 pi)."""
    b, c, t = 5.1 / (4.0 * math.pi**2), 5.0 / math.pi, 1.0 / (8.0 * math.pi)
    x1, x2 = X[:, 0], X[:, 1]
    return (x2 - b * x1**2 + c * x1 - 6.0) ** 2 + 10.0 * (1.0 - t) * np.cos(x1) + 10.0


def branin_disk_g(X: np.ndarray) -> np.ndarray:
    return ((X[:, 0] - 2.5) ** 2 + (X[:, 1] - 7.5) ** 2 - 50.0)[:, None]


_H6_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
_H6_A = np.array(
    [
        [10.0, 3.0, 17.0, 3.5, 1.7, 8.0],
        [0.05, 10.0, 17.0, 0.1, 8.0, 14.0],
        [3.0, 3.5, 1.7, 10.0, 17.0, 8.0],
        [17.0, 8.0, 0.05, 10.0, 0.1, 14.0],
    ]
)
_H6_P = 1e-4 * np.array(
    [
        [1312, 1696, 5569, 124, 8283, 5886],
        [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650],
        [4047, 8828, 8732, 5743, 1091, 381],
    ]
)


def hartmann6(X: np.ndarray) -> np.ndarray:
    """The 6-D Hartmann function (minimum -3.32237 at ``HARTMANN6_X_STAR``)."""
    inner = np.einsum("kj,nkj->nk", _H6_A, (X[:, None, :] - _H6_P[None, :, :]) ** 2)
    return -np.exp(-inner) @ _H6_ALPHA


def ball_g(X: np.ndarray) -> np.ndarray:
    return (np.linalg.norm(X, axis=1) - 1.0)[:, None]


# ---------------------------------------------------------------------------------------------- optima

GARDNER1_X_STAR = np.array([1.5 * math.pi, 0.0])
GARDNER1_F_STAR = -2.0
#: SLSQP from 200 starts (the tests re-check it), rounded to 1e-10 on the feasible side of the active
#: first constraint (g_1(x*) = -1e-10); the paper's rounded values are (0.1954, 0.4044) and 0.5998
GRAMACY_X_STAR = np.array([0.1951226902, 0.4046653619])
GRAMACY_F_STAR = 0.1951226902 + 0.4046653619
BRANIN_X_STAR = np.array([math.pi, 2.275])
BRANIN_F_STAR = 5.0 / (4.0 * math.pi)  # 0.397887: the square vanishes, 10 (1 - t) cos(pi) + 10 = 10 t
HARTMANN6_X_STAR = np.array([0.20168952, 0.15001069, 0.47687398, 0.27533243, 0.31165162, 0.65730054])
HARTMANN6_F_STAR = float(hartmann6(HARTMANN6_X_STAR[None, :])[0])  # -3.32237


# ---------------------------------------------------------------------------------------------- facts


@dataclass(frozen=True)
class ConstrainedBenchmark:
    """A benchmark: a registered problem (with parameters) and the facts the benchmark metrics need.

    ``constraint_scale`` holds the typical magnitude ``s_j`` of each constraint (the standard deviation
    of ``g_j`` under the uniform distribution on the box, two significant digits); ``f_range`` the
    objective's range ``max f - min f`` over the box; ``gap_scale`` the gap normaliser (``|f*|``, or
    ``f_range`` when ``|f*| < 0.1 f_range``); ``source`` the reference.
    """

    name: str
    problem: str
    params: dict[str, Any] = field(default_factory=dict)
    constraint_scale: tuple[float, ...] = ()
    f_star: float = 0.0
    f_range: float = 1.0
    source: str = ""

    @property
    def gap_normaliser(self) -> str:
        return "|f*|" if abs(self.f_star) >= 0.1 * self.f_range else "range(f)"

    @property
    def gap_scale(self) -> float:
        return abs(self.f_star) if self.gap_normaliser == "|f*|" else self.f_range

    def make(self, rng: np.random.Generator | None = None, **params: Any) -> Problem:
        """Build the problem (``params`` override the benchmark's)."""
        from ckb.problems import make_problem

        return make_problem(self.problem, rng or np.random.default_rng(0), **{**self.params, **params})

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "problem": self.problem,
            "params": dict(self.params),
            "constraint_scale": list(self.constraint_scale),
            "f_star": self.f_star,
            "f_range": self.f_range,
            "gap_normaliser": self.gap_normaliser,
            "gap_scale": self.gap_scale,
            "source": self.source,
        }


CONSTRAINED_BENCHMARKS: dict[str, ConstrainedBenchmark] = {}
"""The benchmark problems by name (``gardner-2`` is the registered problem ``gardner``, noise-free); the
modules that define more add theirs with :func:`add_benchmarks`."""


def add_benchmarks(*benchmarks: ConstrainedBenchmark) -> dict[str, ConstrainedBenchmark]:
    """Add ``benchmarks`` to :data:`CONSTRAINED_BENCHMARKS` (a name taken by another benchmark is an
    error); returns them by name, in order."""
    added = {b.name: b for b in benchmarks}
    for name, bench in added.items():
        if CONSTRAINED_BENCHMARKS.get(name, bench) is not bench:
            raise RuntimeError(f"constrained benchmark {name!r} is already defined elsewhere.")
        CONSTRAINED_BENCHMARKS[name] = bench
    return added


add_benchmarks(
    ConstrainedBenchmark(
        "gardner-1",
        "gardner-1",
        {},
        (0.71,),
        GARDNER1_F_STAR,
        4.0,
        "Gardner et al. 2014, simulation 1",
    ),
    ConstrainedBenchmark(
        "gardner-2",
        "gardner",
        {"reward_std": 0.0},
        (0.52,),
        GARDNER2_F_STAR,
        8.0,
        "Gardner et al. 2014, simulation 2 (maximize -sin x1 - x2)",
    ),
    ConstrainedBenchmark(
        "gramacy",
        "gramacy",
        {},
        (0.76, 0.42),
        GRAMACY_F_STAR,
        2.0,
        "Gramacy et al. 2016, toy problem",
    ),
    ConstrainedBenchmark(
        "branin-disk",
        "branin-disk",
        {},
        (24.0,),
        BRANIN_F_STAR,
        308.12909601160663 - BRANIN_F_STAR,
        "Gelbart et al. 2014 (Branin-Hoo, disk constraint)",
    ),
    ConstrainedBenchmark(
        "hartmann6-ball",
        "hartmann6-ball",
        {},
        (0.27,),
        HARTMANN6_F_STAR,
        -HARTMANN6_F_STAR,
        "Letham et al. 2019 (Hartmann-6, ||x||_2 <= 1)",
    ),
)


# ---------------------------------------------------------------------------------------------- factories


#: the toy problems' boxes (lower, upper), objectives, constraints and optima (x*, f*)
_DEFINITIONS = {
    "gardner-1": ((0.0, 0.0), (6.0, 6.0), gardner1_f, gardner1_g, GARDNER1_X_STAR, GARDNER1_F_STAR),
    "gramacy": ((0.0, 0.0), (1.0, 1.0), gramacy_f, gramacy_g, GRAMACY_X_STAR, GRAMACY_F_STAR),
    "branin-disk": ((-5.0, 0.0), (10.0, 15.0), branin, branin_disk_g, BRANIN_X_STAR, BRANIN_F_STAR),
    "hartmann6-ball": ((0.0,) * 6, (1.0,) * 6, hartmann6, ball_g, HARTMANN6_X_STAR, HARTMANN6_F_STAR),
}
#: their hints: bounds B on |f| and G on |g| over the box, the best single-point Slater margin
_HINTS = {
    "gardner-1": {"B": 2.0, "G": 1.5, "slater_margin": 1.5},
    "gramacy": {"B": 2.0, "G": 1.78, "slater_margin": 0.78},
    "branin-disk": {"B": 308.13, "G": 62.5, "slater_margin": 50.0},
    "hartmann6-ball": {"B": 3.33, "G": math.sqrt(6.0) - 1.0, "slater_margin": 1.0},
}
#: their formulas (in the problems' metadata)
_FORMULAS = {
    "gardner-1": {"f": "cos(2 x1) cos(x2) + sin(x1)", "g": "cos(x1) cos(x2) - sin(x1) sin(x2) - 0.5"},
    "gramacy": {
        "f": "x1 + x2",
        "g": ["3/2 - x1 - 2 x2 - 1/2 sin(2 pi (x1^2 - 2 x2))", "x1^2 + x2^2 - 3/2"],
    },
    "branin-disk": {"f": "branin(x1, x2)", "g": "(x1 - 2.5)^2 + (x2 - 7.5)^2 - 50"},
    "hartmann6-ball": {"f": "hartmann6(x)", "g": "||x||_2 - 1"},
}


def _problem(name: str, noise_std: float) -> Problem:
    """Toy problem ``name`` (minimized) with Gaussian noise of standard deviation ``noise_std`` on f and
    every g_j, from its definition above and its benchmark facts."""
    noise_std = check_noise_scale(noise_std, "noise_std")
    lower, upper, f, g, x_star, f_star = _DEFINITIONS[name]
    domain = BoxDomain(lower, upper)
    m = np.asarray(g(domain.lower[None, :])).shape[1]
    bench = CONSTRAINED_BENCHMARKS[name]
    width = float(np.min(domain.upper - domain.lower))
    return Problem(
        name,
        domain,
        f,
        g,
        GaussianNoise(noise_std, [noise_std] * m),
        kernel=Matern(0.25 * width, nu=2.5),
        minimize=True,
        optimum=(np.asarray(x_star, dtype=float).copy(), float(f_star)),
        hints={**_HINTS[name], "R": noise_std},
        metadata={
            **_FORMULAS[name],
            "x_star": np.asarray(x_star).tolist(),
            "f_star": float(f_star),
            "constraint_scale": list(bench.constraint_scale),
            "f_range": bench.f_range,
            "gap_normaliser": bench.gap_normaliser,
            "source": bench.source,
        },
    )


def _factory(name: str, summary: str):
    """Register and return the factory of toy problem ``name`` (``summary``: its docstring)."""

    def factory(rng: np.random.Generator, *, noise_std: float = 0.0) -> Problem:
        return _problem(name, noise_std)

    factory.__name__ = factory.__qualname__ = name.replace("-", "_")
    factory.__doc__ = summary
    return PROBLEMS.register(name)(factory)


gardner_1 = _factory(
    "gardner-1",
    "Gardner et al. 2014 simulation 1: min cos(2x1)cos(x2) + sin(x1) s.t. cos(x1 + x2) <= 0.5 on [0,6]^2.",
)
gramacy = _factory(
    "gramacy", "Gramacy et al. 2016 toy problem: min x1 + x2 on [0,1]^2 under two constraints (f* = 0.5998)."
)
branin_disk = _factory(
    "branin-disk",
    "Branin-Hoo on [-5,10] x [0,15] s.t. (x1 - 2.5)^2 + (x2 - 7.5)^2 <= 50 (Gelbart et al. 2014).",
)
hartmann6_ball = _factory(
    "hartmann6-ball",
    "Hartmann-6 on [0,1]^6 s.t. ||x||_2 <= 1 (Letham et al. 2019; BoTorch's ConstrainedHartmann).",
)


# The engineering design problems (welded beam, tension spring, speed reducer) add their entries here.
import ckb.problems.engineering_benchmarks  # noqa: E402, F401
