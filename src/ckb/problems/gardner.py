r"""The 2-D test problem with a small feasible region (Gardner et al. 2014; Shi & Eryilmaz (2022), App. E.1).

.. math::

    \max_{x \in [0, 6]^2} f(x) = -\sin x_1 - x_2 \quad\text{s.t.}\quad g(x) = \sin x_1 \sin x_2 + 0.95 \le 0.

The feasible set is about 1.8% of the box; the optimum is :math:`x^* = (3\pi/2, \arcsin 0.95)` with
:math:`f^* = 1 - \arcsin 0.95 \approx -0.2532` (Shi & Eryilmaz say "around -0.25").

Observation noise (their App. E.1.1 / E.1.2): reward ``N(0, 0.01)`` (0.01 is the variance, so std 0.1); the
constraint exactly (``constraint_noise="none"``, E.1.1) or with ``N(0, 0.01)`` (``"gaussian"``, E.1.2).

Choices the paper leaves open (each a parameter):

- kernel: Matérn ν = 2.5 (the paper's) with lengthscale a quarter of the box width (1.5) and unit
  variance; the paper gives no lengthscale;
- public hints for policy defaults: ``B = max |f| = 7`` (the scale of f over the box; used as the RKHS-norm
  bound of the confidence widths), ``R = 0.1``, ``G = max |g| = 1.95``, Slater margin
  ``max_x -g(x) = 0.05``;
- the domain is the continuous box (``grid=None``); ``grid=k`` searches a k x k grid instead (then
  regret is measured against the best feasible grid point);
- ``kernel="se"``: the squared-exponential kernel that Guo, Zhu & Liu (2023) use for RPOL, with the same
  lengthscale.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ckb._validation import check_choice, check_noise_scale, check_scalar
from ckb.contract.domain import BoxDomain
from ckb.kernels import Kernel, Matern, SquaredExponential
from ckb.problems.noise import GaussianRewardNoise
from ckb.problems.problem import Problem
from ckb.problems.registry import PROBLEMS

#: the optimum of the continuous problem
X_STAR = np.array([1.5 * math.pi, math.asin(0.95)])
F_STAR = 1.0 - math.asin(0.95)


def gardner_f(X: np.ndarray) -> np.ndarray:
    return -np.sin(X[:, 0]) - X[:, 1]


def gardner_g(X: np.ndarray) -> np.ndarray:
    return (np.sin(X[:, 0]) * np.sin(X[:, 1]) + 0.95)[:, None]


def gardner_kernel(kernel: str, lengthscale: float) -> Kernel:
    """The kernel choices of the Gardner problems: ``"matern52"`` (Matérn ν = 5/2) or ``"se"``."""
    lengthscale = check_scalar(lengthscale, "lengthscale", low=0.0, low_inclusive=False)
    if check_choice(kernel, "kernel", ("matern52", "se")) == "se":
        return SquaredExponential(lengthscale)
    return Matern(lengthscale, nu=2.5)


@PROBLEMS.register("gardner")
def gardner(
    rng: np.random.Generator,
    *,
    reward_std: float = 0.1,
    constraint_noise: str = "none",
    constraint_std: float = 0.1,
    lengthscale: float = 1.5,
    kernel: str = "matern52",
    grid: Any = None,
) -> Problem:
    """The Gardner problem (see the module docstring); the instance is fixed, ``rng`` is unused."""
    kernel = gardner_kernel(kernel, lengthscale)
    check_choice(constraint_noise, "constraint_noise", ("none", "gaussian"))
    constraint_std = check_noise_scale(constraint_std, "constraint_std")  # checked even when unused
    domain = BoxDomain([0.0, 0.0], [6.0, 6.0], grid=grid)
    noise = GaussianRewardNoise(
        reward_std, constraint_noise, constraint_std if constraint_noise != "none" else 0.0
    )
    optimum = None if domain.is_finite else (X_STAR.copy(), F_STAR)
    hints = {"B": 7.0, "R": float(max(reward_std, noise.scale)), "G": 1.95, "slater_margin": 0.05}
    return Problem(
        "gardner",
        domain,
        gardner_f,
        gardner_g,
        noise,
        kernel=kernel,
        optimum=optimum,
        hints=hints,
        metadata={
            "f": "-sin x1 - x2",
            "g": "sin x1 sin x2 + 0.95",
            "x_star": X_STAR.tolist(),
            "f_star": F_STAR,
            "feasible_fraction": 0.018,
        },
    )
