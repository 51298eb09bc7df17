r"""The synthetic RKHS problem of the primal-dual papers (the CBO paper, App. F.1; Zhou & Ji (2022),
Sec. 5.1).

Domain: a grid of ``n_grid`` points on [0, 1] (``0.01, 0.02, ..., 1`` for 100 points, as in Chowdhury &
Gopalan's code). Objective: :math:`f = \sum_{i \le p} a_i k(\cdot, x_i)` with :math:`a_i \sim U[-1, 1]`,
``p = n_support`` support points :math:`x_i` drawn uniformly from the grid (the papers say
:math:`x_i \in \mathcal X`; ``support="continuous"`` draws them from [0, 1] as the C&G code does), SE kernel.

Choices the papers leave open, each a parameter:

- ``normalize=True``: divide by :math:`\max|f|` over the grid so ``B = 1`` (C&G code);
- ``positive_max=True``: if the largest :math:`|f|` is attained at a negative value, flip the sign of f.
  The draw is symmetric (``a -> -a``), so this keeps instances equally likely while guaranteeing
  ``max f = B = 1``; without it, ``g = -f + h`` with ``h = B/2`` is infeasible on about half the draws;
- ``constraint``: ``"none"`` (m = 0), ``"neg-f-plus-h"`` (the CBO paper: :math:`g = -f + h`,
  ``h = h_fraction * B``), or ``"independent"`` (Zhou & Ji (2022): g drawn like f, normalized, sign chosen
  so that ``min g = -1``, i.e. feasible);
- noise: Gaussian with ``reward_std`` and ``constraint_std`` (the papers give none).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist

from ckb._validation import check_bool, check_choice, check_scalar
from ckb.contract.domain import FiniteDomain
from ckb.kernels import SquaredExponential
from ckb.problems.noise import GaussianNoise
from ckb.problems.problem import Problem
from ckb.problems.registry import PROBLEMS
from ckb.problems.safety import safety_hints

_CONSTRAINTS = ("none", "neg-f-plus-h", "independent")


def _rkhs_function(rng, kernel, grid, n_support, support):
    if support == "grid":
        xs = grid[rng.integers(0, grid.shape[0], n_support)]
    else:
        xs = rng.uniform(0.0, 1.0, (n_support, 1))
    a = rng.uniform(-1.0, 1.0, n_support)
    return kernel(grid, xs) @ a


@PROBLEMS.register("rkhs-synthetic")
def rkhs_synthetic(
    rng: np.random.Generator,
    *,
    n_grid: int = 100,
    n_support: int = 100,
    lengthscale: float = 0.2,
    support: str = "grid",
    normalize: bool = True,
    positive_max: bool = True,
    constraint: str = "none",
    h_fraction: float = 0.5,
    reward_std: float = 0.1,
    constraint_std: float = 0.1,
) -> Problem:
    """Draw one instance of the synthetic RKHS problem (see the module docstring)."""
    n_grid = check_scalar(n_grid, "n_grid", low=2, integer=True)
    n_support = check_scalar(n_support, "n_support", low=1, integer=True)
    check_choice(support, "support", ("grid", "continuous"))
    check_choice(constraint, "constraint", _CONSTRAINTS)
    normalize = check_bool(normalize, "normalize")
    positive_max = check_bool(positive_max, "positive_max")
    noise = GaussianNoise(reward_std, constraint_std)
    kernel = SquaredExponential(lengthscale)
    grid = (np.arange(1, n_grid + 1) / n_grid)[:, None]

    def draw(flip_to_positive_max: bool) -> np.ndarray:
        v = _rkhs_function(rng, kernel, grid, n_support, support)
        if normalize:
            v = v / np.max(np.abs(v))
        if flip_to_positive_max and np.max(v) < np.max(-v):
            v = -v
        return v

    f = draw(positive_max)
    B = float(np.max(np.abs(f)))
    meta: dict = {"B": B}
    if constraint == "none":
        g = None
    elif constraint == "neg-f-plus-h":
        h = check_scalar(h_fraction, "h_fraction") * B
        g = -f + h
        meta["h"] = h
    else:
        g = -draw(True)  # min g = -max|g|: a feasible point exists
    hints: dict = {"B": B}
    if g is not None:
        meta["G"] = float(np.max(np.abs(g)))
        # the best single-point Slater margin δ (a point mass is a valid π_0; the papers leave δ open)
        meta["slater_margin"] = float(np.max(-g))
        hints.update(G=meta["G"], slater_margin=meta["slater_margin"])
        # drawn last, so the instance (f, g) does not depend on it
        # rows of the grid's distance matrix on demand: the whole matrix is n^2 floats
        hints.update(safety_hints(g[:, None], lambda i0, i1: cdist(grid[i0:i1], grid), rng))
    return Problem(
        "rkhs-synthetic",
        FiniteDomain(grid),
        f,
        g,
        noise,
        kernel=kernel,
        hints=hints,
        metadata=meta,
    )
