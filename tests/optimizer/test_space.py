"""The box, unit-cube scaling, point checks and the shared Sobol initial design."""

import numpy as np
import pytest

from ckb.errors import InvalidInputError, OutOfDomainError
from ckb.optimizer import Space, initial_design
from ckb.optimizer.space import nearest_unused


def test_unit_scaling_round_trips_and_maps_the_corners():
    s = Space([0.0, -2.0], [6.0, 2.0])
    X = np.array([[0.0, -2.0], [6.0, 2.0], [3.0, 1.0]])
    np.testing.assert_allclose(s.to_unit(X), [[0, 0], [1, 1], [0.5, 0.75]])
    np.testing.assert_allclose(s.from_unit(s.to_unit(X)), X)


def test_initial_design_is_a_seeded_prefix_inside_the_box():
    a = initial_design([0, 0], [6, 6], 6, seed=3)
    b = initial_design([0, 0], [6, 6], 10, seed=3)
    assert a.shape == (6, 2) and np.array_equal(a, b[:6])
    assert np.all((a >= 0) & (a <= 6))
    assert not np.array_equal(a, initial_design([0, 0], [6, 6], 6, seed=4))
    # a scrambled Sobol design of 8 points puts exactly one point in each eighth of every axis
    u = initial_design([0], [1], 8, seed=0)[:, 0]
    assert sorted(np.floor(u * 8).astype(int)) == list(range(8))


def test_initial_design_on_candidates_uses_distinct_nearest_candidates():
    C = np.array([[0.1, 0.1], [0.9, 0.9], [0.1, 0.9], [0.9, 0.1]])
    X = initial_design([0, 0], [1, 1], 4, seed=0, candidates=C)
    assert sorted(map(tuple, X)) == sorted(map(tuple, C))
    idx = nearest_unused(C, np.array([[0.0, 0.0], [0.0, 0.0]]))
    assert idx.tolist() == [0, 2] or idx.tolist() == [0, 3]


@pytest.mark.parametrize(
    "x, err, match",
    [
        ([1.0, 7.0], OutOfDomainError, r"coordinate 1 = 7.0 is not in \[0.0, 6.0\]"),
        ([1.0], InvalidInputError, "d = 2 coordinate"),
        ([np.nan, 1.0], InvalidInputError, "finite"),
        (["a", 1.0], InvalidInputError, "numeric"),
    ],
)
def test_bad_points_are_named(x, err, match):
    with pytest.raises(err, match=match):
        Space([0, 0], [6, 6]).check_point(x)


@pytest.mark.parametrize(
    "lower, upper, cands, match",
    [
        ([0, 1], [1, 1], None, "coordinate 1 has lower = 1.0 and upper = 1.0"),
        ([0, 0], [1], None, "same length"),
        ([0, 0], [1, 1], [[0.5, 2.0]], "candidate 0"),
        ([0, 0], [1, 1], [[0.5, 0.5, 0.5]], r"\(n, d\) array with d = 2"),
    ],
)
def test_bad_boxes_are_named(lower, upper, cands, match):
    with pytest.raises(InvalidInputError, match=match):
        Space(lower, upper, cands)
