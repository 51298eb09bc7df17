import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.exploration import argmax_random_tie, refine_from_candidates, sobol_candidates


def _bump(X):
    return -np.sum((X - np.array([0.3141, 0.7071])) ** 2, axis=1)


@pytest.mark.parametrize("method", ["local", "lbfgs"])
def test_refinement_finds_the_maximum_between_candidates_and_never_loses(method):
    rng = np.random.default_rng(0)
    lo, hi = np.zeros(2), np.ones(2)
    C = rng.uniform(0, 1, (64, 2))
    vals = _bump(C)
    x = refine_from_candidates(vals, _bump, C, lo, hi, rng, n_restarts=2, method=method)
    assert _bump(x[None, :])[0] >= vals.max()
    np.testing.assert_allclose(x, [0.3141, 0.7071], atol=2e-3)
    assert np.all(x >= lo) and np.all(x <= hi)


def test_refinement_respects_the_box_at_a_boundary_maximum():
    rng = np.random.default_rng(1)
    f = lambda X: X[:, 0] + X[:, 1]
    C = rng.uniform(0, 1, (32, 2))
    x = refine_from_candidates(f(C), f, C, np.zeros(2), np.ones(2), rng)
    assert np.all(x <= 1.0) and x.sum() > 1.98


def test_zero_restarts_returns_the_best_candidate_with_random_ties():
    C = np.array([[0.0], [0.5], [1.0]])
    vals = np.array([1.0, 0.0, 1.0])
    picks = {
        float(
            refine_from_candidates(
                vals, None, C, np.zeros(1), np.ones(1), np.random.default_rng(s), n_restarts=0
            )[0]
        )
        for s in range(20)
    }
    assert picks == {0.0, 1.0}
    assert argmax_random_tie(np.array([0.0, 2.0, 1.0]), np.random.default_rng(0)) == 1
    with pytest.raises(InvalidInputError, match="method"):
        refine_from_candidates(
            vals, lambda X: X[:, 0], C, np.zeros(1), np.ones(1), np.random.default_rng(0), method="newton"
        )


def test_sobol_candidates_fill_a_non_unit_box_one_point_per_stratum():
    """A scrambled Sobol sequence of n = 2^k points has one point in each [i/n, (i+1)/n) of every
    coordinate; mapped affinely to the box, the points are inside it and keep that stratification on the
    box's own scale (an axis with lower == upper is the constant bound)."""
    lower, upper = np.array([-2.0, 10.0, -1.0, 4.0]), np.array([3.0, 10.5, 1.0, 4.0])
    C = sobol_candidates(lower, upper, 16, np.random.default_rng(0))
    assert C.shape == (16, 4)
    assert np.all(C >= lower) and np.all(C <= upper)
    U = (C[:, :3] - lower[:3]) / (upper[:3] - lower[:3])
    for j in range(3):
        np.testing.assert_array_equal(np.sort(np.floor(U[:, j] * 16)), np.arange(16))
    np.testing.assert_array_equal(C[:, 3], 4.0)
    # seeded from rng: the same rng state gives the same points, another state other points
    np.testing.assert_array_equal(C, sobol_candidates(lower, upper, 16, np.random.default_rng(0)))
    assert not np.array_equal(C, sobol_candidates(lower, upper, 16, np.random.default_rng(1)))
