"""``ExactGP.load_state_dict`` (public through ``ckb.surrogates``). Before: a state that did not fit
was a raw KeyError, TypeError or ValueError, and since the GP was reset before the state was read,
a refused load had wiped the GP's observations; a mode other than 'cholesky' or 'dense' was taken
without a word. Now the state is checked first, each refusal is one line, and the GP keeps its data."""

import copy
import json

import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.io import _json_default
from ckb.kernels.stationary import SquaredExponential
from ckb.surrogates import ExactGP

GRID = np.linspace(0.0, 1.0, 11)[:, None]


def _used(method):
    gp = ExactGP(SquaredExponential(0.2), 0.01, GRID, method=method)
    for i in (1, 3, 5):
        gp.update_arm(i, float(i))
    return gp


def _edits(state):
    """(label, edited state, message) for every key of ``state`` and a few whole-state mistakes."""
    yield "not a dict", [1], r"a GP state is a dict from state_dict\(\), got \[1\]"
    yield "mode", {**state, "mode": "junk"}, r"GP state: mode = 'junk', expected 'cholesky' or 'dense'"
    yield "t", {**state, "t": -1}, r"GP state: t = -1 must be a count of observations >= 0"
    yield "missing", {k: v for k, v in state.items() if k != "y"}, r"missing key\(s\) \['y'\]"
    yield "arms", {**state, "arms": np.array([1, 3, 11])}, r"arms must be candidate indices in -1..10"
    for key in state:
        if key not in ("t", "mode"):
            yield f"{key} text", {**state, key: "junk"}, rf"GP state {key} must be"
            yield f"{key} nan", {**state, key: float("nan")}, rf"GP state {key} must be (finite|an integer)"
        if key not in ("t", "mode", "info_gain", "since_refresh"):
            yield f"{key} shape", {**state, key: [1.0]}, rf"GP state: {key} has shape \(1,\), expected"


@pytest.mark.parametrize("method", ["cholesky", "dense"])
def test_a_state_that_does_not_fit_is_one_line_and_the_gp_keeps_its_data(method):
    gp = _used(method)
    state = gp.state_dict()
    mean, var = gp.mean.copy(), gp.var.copy()
    for label, bad, match in _edits(copy.deepcopy(state)):
        with pytest.raises(InvalidInputError, match=match):
            gp.load_state_dict(bad)
        assert gp.t == 3, label
        np.testing.assert_array_equal(gp.mean, mean, err_msg=label)
        np.testing.assert_array_equal(gp.var, var, err_msg=label)
    gp.update_arm(7, 7.0)  # and it goes on as before
    ref = _used(method)
    ref.update_arm(7, 7.0)
    np.testing.assert_allclose(gp.mean, ref.mean, rtol=0, atol=1e-12)


def test_a_dense_state_is_refused_by_a_gp_without_candidates():
    state = _used("dense").state_dict()
    with pytest.raises(InvalidInputError, match=r"mode = 'dense', expected 'cholesky' \(no candidates\)"):
        ExactGP(SquaredExponential(0.2), 0.01).load_state_dict(state)


@pytest.mark.parametrize("candidates", [GRID, None])
def test_a_json_round_trip_still_loads_empty_or_not(candidates):
    for n_obs in (0, 2):
        gp = ExactGP(SquaredExponential(0.2), 0.01, candidates)
        for i in range(n_obs):
            gp.update(GRID[2 * i], float(i))
        state = json.loads(json.dumps(gp.state_dict(), default=_json_default))
        other = ExactGP(SquaredExponential(0.2), 0.01, candidates)
        other.load_state_dict(state)
        assert other.t == n_obs
        np.testing.assert_array_equal(other.predict(GRID)[0], gp.predict(GRID)[0])
