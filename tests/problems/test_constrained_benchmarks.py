"""The constrained benchmark problems: stated optima against dense + multistart searches, stated scales."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from ckb.problems import make_problem
from ckb.problems.constrained_benchmarks import CONSTRAINED_BENCHMARKS, GRAMACY_F_STAR
from ckb.problems.engineering_benchmarks import ENGINEERING_BENCHMARKS

#: the toy problems (std-of-g scales, plain SLSQP); the engineering problems, whose scales span many orders
#: of magnitude, have their own verified optima and scale rule (tests/problems/test_engineering_benchmarks.py)
NAMES = sorted(set(CONSTRAINED_BENCHMARKS) - set(ENGINEERING_BENCHMARKS))


def _uniform(problem, n, seed):
    dom = problem.domain
    return np.random.default_rng(seed).uniform(dom.lower, dom.upper, (n, dom.d))


def _f(problem, X):
    return np.asarray(problem._f_fn(X), dtype=float)


def _g(problem, X):
    return np.asarray(problem._g_fn(X), dtype=float).reshape(X.shape[0], problem.m)


def _multistart(problem, starts):
    """Best feasible utility u = sign f found by SLSQP (constraints g <= 0, box bounds) from ``starts``."""
    sign, dom = problem.sign, problem.domain
    bounds = list(zip(dom.lower, dom.upper))
    best = -np.inf
    for x0 in starts:
        res = minimize(
            lambda x: -sign * _f(problem, x[None, :])[0],
            x0,
            method="SLSQP",
            bounds=bounds,
            constraints=[{"type": "ineq", "fun": lambda x: -_g(problem, x[None, :])[0]}],
            options={"ftol": 1e-12, "maxiter": 300},
        )
        x = np.clip(res.x, dom.lower, dom.upper)
        if np.all(_g(problem, x[None, :]) <= 1e-9):
            best = max(best, sign * _f(problem, x[None, :])[0])
    return best


@pytest.mark.parametrize("name", NAMES)
def test_stated_optimum_is_feasible_and_not_beaten(name):
    bench = CONSTRAINED_BENCHMARKS[name]
    P = bench.make()
    assert isinstance(P.domain.lower, np.ndarray) and not P.domain.is_finite
    _, x_star, f_star = P.optimum
    assert f_star == bench.f_star
    f, g = P.evaluate(-1, x_star)
    assert f == pytest.approx(f_star, abs=1e-12) and np.all(g <= 0.0)  # feasible, value as stated
    P.domain.check_point(x_star)
    u_star = P.sign * f_star
    # dense uniform search: no feasible point beats the optimum
    X = _uniform(P, 400_000 if P.domain.d == 2 else 200_000, seed=1)
    feas = np.all(_g(P, X) <= 0.0, axis=1)
    u = P.sign * _f(P, X)
    assert feas.any() and u[feas].max() <= u_star + 1e-12
    # multistart local search from the best feasible dense points and from random points
    top = X[feas][np.argsort(-u[feas])[:15]]
    found = _multistart(P, np.vstack([top, _uniform(P, 15, seed=2)]))
    assert found <= u_star + 1e-7  # nothing better (up to SLSQP's constraint tolerance)
    assert found >= u_star - 1e-5  # and the optimum is attained: the searches reach it


def test_gramacy_matches_the_paper_value():
    assert GRAMACY_F_STAR == pytest.approx(0.5998, abs=1e-4)  # Gramacy et al. 2016: 0.5998


@pytest.mark.parametrize("name", NAMES)
def test_stated_scales_match_the_box(name):
    bench = CONSTRAINED_BENCHMARKS[name]
    P = bench.make()
    X = _uniform(P, 200_000, seed=3)
    g = _g(P, X)
    assert len(bench.constraint_scale) == P.m
    # typical magnitude: the standard deviation of g_j under the uniform distribution, 2 digits
    np.testing.assert_allclose(bench.constraint_scale, g.std(axis=0), rtol=0.03)
    f = _f(P, X)
    # the stated range is the box's: no sample exceeds it, and samples (with the optimum, which the
    # test above checks; in 6-D uniform samples do not reach it) nearly span it
    assert f.max() - f.min() <= bench.f_range * (1 + 1e-9)
    assert max(f.max(), bench.f_star) - min(f.min(), bench.f_star) >= 0.97 * bench.f_range
    # the hints bound |f|, |g|, and the best margin is (close to) attained
    assert np.abs(f).max() <= P.hints["B"] + 1e-9
    assert np.abs(g).max() <= P.hints["G"] + 1e-9
    dom = P.domain  # the box's lower corner and centre join the samples (the ball's centre is a corner)
    extra = np.vstack([dom.lower, (dom.lower + dom.upper) / 2])
    margin = max((-g).min(axis=1).max(), (-_g(P, extra)).min(axis=1).max())
    assert margin <= P.hints["slater_margin"] + 1e-9 and margin >= 0.95 * P.hints["slater_margin"]


def test_gap_normaliser_rule():
    """|f*| unless |f*| < 0.1 range(f): then the range (Gardner 2 and Branin, whose optima are near 0)."""
    uses_range = {n for n, b in CONSTRAINED_BENCHMARKS.items() if b.gap_normaliser == "range(f)"}
    assert uses_range == {"gardner-2", "branin-disk"}
    b = CONSTRAINED_BENCHMARKS["gramacy"]
    assert b.gap_scale == abs(b.f_star)
    b = CONSTRAINED_BENCHMARKS["branin-disk"]
    assert b.gap_scale == pytest.approx(308.129 - 0.397887, abs=1e-3)
    assert CONSTRAINED_BENCHMARKS["gardner-2"].gap_scale == 8.0  # -sin x1 - x2 spans [-7, 1]


def test_gardner_2_is_the_registered_gardner_problem_without_noise():
    P = CONSTRAINED_BENCHMARKS["gardner-2"].make()
    assert P.name == "gardner" and not P.minimize and P.noise.reward_std == 0.0
    assert P.optimum[2] == pytest.approx(1 - math.asin(0.95))


def test_problems_agree_with_botorch_test_functions():
    """An independent implementation of the same functions (BoTorch's test problems)."""
    torch = pytest.importorskip("torch")
    from botorch.test_functions.synthetic import Branin, ConstrainedGramacy, ConstrainedHartmann

    for name, tf in (
        ("gramacy", ConstrainedGramacy()),
        ("hartmann6-ball", ConstrainedHartmann(dim=6)),
        ("branin-disk", Branin()),
    ):
        P = make_problem(name, np.random.default_rng(0))
        X = _uniform(P, 50, seed=4)
        T = torch.tensor(X, dtype=torch.float64)
        # rtol 1e-6: BoTorch's Hartmann keeps its constants in float32 (differences of ~1e-8 relative)
        np.testing.assert_allclose(_f(P, X), tf.evaluate_true(T).numpy(), rtol=1e-6, atol=1e-12)
        if hasattr(tf, "evaluate_slack_true"):  # BoTorch's slack is feasible where >= 0: slack = -g
            np.testing.assert_allclose(_g(P, X), -tf.evaluate_slack_true(T).numpy(), rtol=1e-10, atol=1e-12)
    assert CONSTRAINED_BENCHMARKS["branin-disk"].f_star == pytest.approx(Branin().optimal_value, abs=1e-6)
    assert CONSTRAINED_BENCHMARKS["hartmann6-ball"].f_star == pytest.approx(
        ConstrainedHartmann(dim=6).optimal_value, abs=1e-5
    )


def test_noise_parameter_and_validation():
    P = make_problem("gramacy", np.random.default_rng(0), noise_std=0.1)
    assert P.noise.reward_std == 0.1 and P.hints["R"] == 0.1
    with pytest.raises(ValueError, match="noise_std"):
        make_problem("gardner-1", np.random.default_rng(0), noise_std=-1.0)
