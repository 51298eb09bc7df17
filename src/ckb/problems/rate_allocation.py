r"""Data-rate allocation to four servers under an electricity budget (Shi & Eryilmaz (2022), App. E.2,
after Lee et al. 2005).

Rates :math:`x \in [0, 2]^4`; utility :math:`f(x) = \sum_i U_i(x_i)` with sigmoid utilities for servers
1 and 3 and logarithmic utilities for servers 2 and 4 (Shi & Eryilmaz (2022), eqs. 35-36):

.. math::

    U_i(x) = c_i\Big(\frac{1}{1 + e^{-a_i (x - b_i)}} + d_i\Big)\ (i = 1, 3), \qquad
    U_i(x) = c_i\big(\log(a_i x + b_i) + d_i\big)\ (i = 2, 4);

budget constraint :math:`g(x) = 0.2 x_1 + 0.4 x_2 + 0.8 x_3 + 1.2 x_4 - 2 \le 0` (electricity cost
:math:`h(x) = 1 + 0.2 x_1 + \dots` against the budget 3).

**Stand-in constants.** Shi & Eryilmaz take :math:`a_i, b_i, c_i, d_i` from the first experiment of Lee,
Mazumdar & Shroff (2005), which is not at hand. We use the normalization of that line of work, so that every
utility rises from :math:`U_i(0) = 0` to 1: sigmoids with :math:`c = (1 + e^{ab})/e^{ab}`,
:math:`d = -1/(1 + e^{ab})`, :math:`a = 5` and :math:`b = 1` (server 1), :math:`b = 1.5` (server 3); logs with
:math:`a = 1`, :math:`b = 1`, :math:`d = 0`, :math:`c = 1/\log(2a + 1)` (the values of a and b are
placeholders, from neither paper). **Absolute utilities are therefore not comparable with Shi & Eryilmaz's
figures**; the qualitative claims are.

Noise (Shi & Eryilmaz (2022), App. E.2): each utility is measured with ``N(0, 0.01)`` error, so the observed
total carries the sum of four such errors (``reward_std = 0.2``; a choice the paper leaves open: one error on
the total would give 0.1); the constraint is observed exactly (E.2.1) or with ``U[-0.2, 0.2]`` noise
(E.2.2, ``constraint_noise="uniform"``).

The paper reports utility because the optimum is unknown; here the stand-in's constrained optimum is
computed numerically (SLSQP from a grid of starts, checked against a dense random search), so regret is
defined too. Hints: ``B = 4`` (f in [0, 4]), ``R = 0.2``, ``G = 3.2`` (max |g|), Slater margin 2 (at x = 0).
Kernel: Matérn 2.5 with lengthscale a quarter of the box width (0.5).
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any

import numpy as np

from ckb._validation import MAX_NOISE_SCALE, check_choice, check_noise_scale, check_scalar
from ckb.contract.domain import BoxDomain
from ckb.kernels import Matern
from ckb.problems.noise import GaussianRewardNoise
from ckb.problems.problem import Problem
from ckb.problems.registry import PROBLEMS

WEIGHTS = np.array([0.2, 0.4, 0.8, 1.2])
BUDGET = 2.0
UPPER = 2.0


def _sigmoid_consts(a: float, b: float) -> tuple[float, float]:
    e = math.exp(a * b)
    return (1.0 + e) / e, -1.0 / (1.0 + e)


def utilities(X: np.ndarray, a_sig=(5.0, 5.0), b_sig=(1.0, 1.5), a_log=(1.0, 1.0)) -> np.ndarray:
    """``(k, 4)`` utilities :math:`U_i(x_i)` at points ``X`` (k, 4)."""
    X = np.asarray(X, dtype=float)
    U = np.empty_like(X)
    for col, a, b in ((0, a_sig[0], b_sig[0]), (2, a_sig[1], b_sig[1])):
        c, d = _sigmoid_consts(a, b)
        U[:, col] = c * (1.0 / (1.0 + np.exp(-a * (X[:, col] - b))) + d)
    for col, a in ((1, a_log[0]), (3, a_log[1])):
        U[:, col] = np.log(a * X[:, col] + 1.0) / math.log(a * UPPER + 1.0)
    return U


@functools.lru_cache(maxsize=8)
def constrained_optimum(a_sig=(5.0, 5.0), b_sig=(1.0, 1.5), a_log=(1.0, 1.0)) -> tuple[tuple, float]:
    """The best feasible allocation of the stand-in problem, by SLSQP from 3^4 starts."""
    from scipy.optimize import minimize

    def neg_f(x):
        return -float(utilities(x[None, :], a_sig, b_sig, a_log).sum())

    cons = [{"type": "ineq", "fun": lambda x: BUDGET - WEIGHTS @ x, "jac": lambda x: -WEIGHTS}]
    best_x, best_v = np.zeros(4), 0.0
    for start in itertools.product((0.1, 0.8, 1.6), repeat=4):
        x0 = np.array(start)
        if WEIGHTS @ x0 > BUDGET:
            x0 = x0 * BUDGET / (WEIGHTS @ x0) * 0.99
        res = minimize(neg_f, x0, method="SLSQP", bounds=[(0.0, UPPER)] * 4, constraints=cons)
        x = np.clip(res.x, 0.0, UPPER)
        if WEIGHTS @ x <= BUDGET + 1e-9 and -neg_f(x) > best_v:
            best_x, best_v = x, -neg_f(x)
    return tuple(best_x.tolist()), best_v


def rate_f(X: np.ndarray) -> np.ndarray:
    return utilities(X).sum(axis=1)


def rate_g(X: np.ndarray) -> np.ndarray:
    return (np.asarray(X, dtype=float) @ WEIGHTS - BUDGET)[:, None]


@PROBLEMS.register("rate-allocation")
def rate_allocation(
    rng: np.random.Generator,
    *,
    utility_noise_std: float = 0.1,
    constraint_noise: str = "none",
    constraint_half_width: float = 0.2,
    lengthscale: float = 0.5,
    grid: Any = None,
) -> Problem:
    """The rate-allocation problem with stand-in utilities (see the module docstring); ``rng`` is unused."""
    # the reward's noise is the sum of four utilities' errors, of std 2 s: that one must stay in range too
    s = check_noise_scale(utility_noise_std, "utility_noise_std", high=MAX_NOISE_SCALE / 2)
    constraint_half_width = check_noise_scale(constraint_half_width, "constraint_half_width")
    lengthscale = check_scalar(lengthscale, "lengthscale", low=0.0, low_inclusive=False)
    check_choice(constraint_noise, "constraint_noise", ("none", "uniform"))
    noise = GaussianRewardNoise(
        2.0 * s, constraint_noise, constraint_half_width if constraint_noise != "none" else 0.0
    )
    domain = BoxDomain([0.0] * 4, [UPPER] * 4, grid=grid)
    x_star, f_star = constrained_optimum()
    return Problem(
        "rate-allocation",
        domain,
        rate_f,
        rate_g,
        noise,
        kernel=Matern(lengthscale, nu=2.5),
        optimum=None if domain.is_finite else (np.array(x_star), f_star),
        hints={"B": 4.0, "R": float(max(2.0 * s, noise.scale)), "G": 3.2, "slater_margin": BUDGET},
        metadata={
            "utilities": "stand-ins (not Lee et al. 2005's constants): sigmoid a = 5, b = 1 and 1.5; log a = 1",
            "x_star": list(x_star),
            "f_star": f_star,
            "reward_std": 2.0 * s,
        },
    )
