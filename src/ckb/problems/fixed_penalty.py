r"""The counterexample of Shi & Eryilmaz (2022), Proposition 1: a fixed penalty cannot give sublinear regret
and violation.

The paper's Sec. 4: with a fixed multiplier κ and penalty Λ, applying any unconstrained bandit algorithm with
sublinear regret to :math:`f - \kappa\Lambda(g)` fails on

.. math::

    f(x) = \kappa\Lambda(g(x)) - (x - c)^2, \qquad g(x) = x, \qquad x \in [0, 1],\ c \in (0, 1]:

the penalized objective is :math:`-(x - c)^2`, so a no-regret learner on it plays :math:`x_t \to c` and
:math:`\sum_t g(x_t) \ge cT/2 - o(T)`, while the feasible optimum is :math:`x^* = 0`. Here
:math:`\Lambda = \psi - 1` with :math:`\psi(x) = e^{x}` on :math:`x \ge 0` (Algorithm 2's penalty with
its initial κ = 1), on a grid of ``n_grid`` points with exact constraint observations. Running
``penalty-noiseless`` with ``S >= T`` (a single epoch: the multiplier never changes) reproduces the
proposition; with ``S < T`` the multiplier updates drive the violation down.
"""

from __future__ import annotations

import numpy as np

from ckb._validation import check_scalar
from ckb.contract.domain import BoxDomain
from ckb.kernels import SquaredExponential
from ckb.problems.noise import GaussianRewardNoise
from ckb.problems.problem import Problem
from ckb.problems.registry import PROBLEMS


@PROBLEMS.register("fixed-penalty-counterexample")
def fixed_penalty_counterexample(
    rng: np.random.Generator,
    *,
    c: float = 0.5,
    kappa: float = 1.0,
    n_grid: int = 101,
    reward_std: float = 0.05,
    lengthscale: float = 0.2,
) -> Problem:
    """The construction of Shi & Eryilmaz's Proposition 1 (module docstring); the instance is fixed."""
    c = check_scalar(c, "c", low=0.0, high=1.0, low_inclusive=False)
    kappa = check_scalar(kappa, "kappa", low=0.0)
    n_grid = check_scalar(n_grid, "n_grid", low=2, integer=True)

    def f(X):
        x = X[:, 0]
        return kappa * np.expm1(np.maximum(x, 0.0)) - (x - c) ** 2

    return Problem(
        "fixed-penalty-counterexample",
        BoxDomain([0.0], [1.0], grid=n_grid),
        f,
        lambda X: X[:, :1].copy(),
        GaussianRewardNoise(reward_std, "none"),
        kernel=SquaredExponential(lengthscale),
        hints={"B": float(kappa * np.expm1(1.0) + 1.0), "R": reward_std, "G": 1.0, "slater_margin": 0.0},
        metadata={"c": c, "kappa": kappa, "f": "kappa (e^x - 1) - (x - c)^2", "g": "x"},
    )
