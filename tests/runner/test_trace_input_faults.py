"""Bad input to the runner's metric curves and traces: a one-line ckb error naming the
value (``curves`` silently gave curves of different lengths; ``Trace(-1, ...)`` raised numpy's
"negative dimensions are not allowed")."""

import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.runner import curves
from ckb.runner.trace import Trace
from tests.checks import one_line as _one_line


# ----------------------------------------------------------------------------------- curves
@pytest.mark.parametrize(
    "f, g, u, pattern",
    [
        (
            np.zeros(3),
            np.zeros((4, 1)),
            1.0,
            r"g must have one row per round, shape \(3, m\).*got shape \(4, 1\)",
        ),
        (np.zeros(3), np.zeros(2), 1.0, r"got shape \(2,\)"),
        (np.zeros(3), np.zeros((3, 1, 1)), 1.0, r"got shape \(3, 1, 1\)"),
        (np.zeros((3, 1)), np.zeros((3, 1)), 1.0, r"f must be a 1-D array"),
        (np.zeros(3), np.zeros((3, 1)), np.zeros(4), r"utility_star must be one number or one per round"),
        (["a", "b"], np.zeros((2, 1)), 1.0, r"f \(true objective values\) must"),
    ],
)
def test_curves_refuse_arrays_of_mismatched_lengths(f, g, u, pattern):
    with pytest.raises(InvalidInputError, match=pattern) as err:
        curves(f, g, u)
    _one_line(err)


def test_curves_of_valid_input_are_unchanged():
    f = np.array([1.0, 0.5, 2.0, 1.5])
    g = np.array([[0.5], [-1.0], [0.25], [-0.1]])
    c = curves(f, g, 2.0)
    np.testing.assert_array_equal(c["regret"], np.cumsum(2.0 - 1.0 * f))
    np.testing.assert_array_equal(curves(list(f), g[:, 0], 2.0)["violation"], c["violation"])
    u = np.array([2.0, 2.0, 3.0, 3.0])  # per-round optima
    np.testing.assert_array_equal(curves(f, g, u)["regret"], np.cumsum(u - 1.0 * f))


# ------------------------------------------------------------------------------------ Trace
@pytest.mark.parametrize(
    "args, pattern",
    [
        ((-1, 1, 1), r"trace horizon must be >= 0, got -1"),
        ((3, -1, 1), r"trace d must be >= 0, got -1"),
        ((3, 1, -1), r"trace m must be >= 0, got -1"),
        ((2.5, 1, 1), r"trace horizon must be an integer, got 2.5"),
        (("3", 1, 1), r"trace horizon must be an integer, got '3'"),
        ((3, None, 1), r"trace d must be an integer, got None"),
    ],
)
def test_trace_refuses_sizes_that_are_not_counts(args, pattern):
    with pytest.raises(InvalidInputError, match=pattern) as err:
        Trace(*args, 1.0, 1.0)
    _one_line(err)


def test_trace_takes_counts_of_every_kind_and_round_trips():
    tr = Trace(np.int64(4), np.array(2), 3.0, 1.0, 1.0)
    assert (tr.horizon, tr.d, tr.m) == (4, 2, 3) and type(tr.horizon) is int
    assert tr._x.shape == (4, 2) and tr._g.shape == (4, 3)
    state = tr.state_dict()
    state.update(horizon=np.array(4), d=np.array(2), m=np.array(3))  # as a saved .npz gives them
    again = Trace.from_state(state)
    assert (again.horizon, again.d, again.m) == (4, 2, 3)
    assert Trace(0, 0, 0, 0.0, 1.0).t == 0
