"""Bad input to ``ckb.exploration``: a one-line ckb error naming the value (never a
raw numpy or scipy error, never a silently wrong answer), and nothing drawn from the generator.

Covers ``argmax_random_tie`` (``rtol``, lists, 2-D scores), ``maximize_on_box`` (NaN scores, bounds,
``n_raw``), ``sobol_candidates`` (``n``), ``make_beta``'s ``scale``, ``LogBeta``'s round and the
strategies' ``sign``.
"""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.exploration import (
    UCB,
    LogBeta,
    RandomShift,
    ThompsonSampling,
    argmax_random_tie,
    make_beta,
    maximize_on_box,
    sobol_candidates,
)
from ckb.kernels import SquaredExponential
from ckb.surrogates import ExactGP
from tests.checks import one_line as _one_line


def _untouched(rng: np.random.Generator) -> bool:
    return rng.bit_generator.state == np.random.default_rng(0).bit_generator.state


# ------------------------------------------------------------------------ argmax_random_tie
@pytest.mark.parametrize(
    "rtol, pattern",
    [(-1, "must be >= 0.0, got -1"), (float("nan"), "must be finite, got nan"), ("x", "real number")],
)
def test_argmax_refuses_a_bad_rtol(rtol, pattern):
    rng = np.random.default_rng(0)
    with pytest.raises(InvalidInputError, match=pattern) as err:
        argmax_random_tie(np.array([1.0, 1.0]), rng, rtol=rtol)
    assert "rtol" in _one_line(err) and _untouched(rng)


def test_argmax_takes_a_list():
    assert argmax_random_tie([1, 3, 2], np.random.default_rng(0)) == 1
    assert argmax_random_tie((0.5, -1.0), np.random.default_rng(0)) == 0


@pytest.mark.parametrize(
    "values", [np.array([[1.0, 5.0], [3.0, 2.0]]), np.float64(3.0), ["a", "b"], [True, False]]
)
def test_argmax_refuses_what_is_not_one_score_per_candidate(values):
    with pytest.raises(InvalidInputError, match="acquisition values") as err:
        argmax_random_tie(values, np.random.default_rng(0))
    _one_line(err)


def test_argmax_of_valid_scores_is_unchanged():
    values = np.array([0.2, 0.9, 0.9 - 1e-13, 0.1])
    picks = [argmax_random_tie(values, np.random.default_rng(s)) for s in range(30)]
    assert set(picks) == {1, 2}
    assert argmax_random_tie(values, np.random.default_rng(0), rtol=0.0) == 1


# ---------------------------------------------------------------------------- maximize_on_box
def _bowl(X):
    return -np.sum((np.asarray(X) - 0.3) ** 2, axis=1)


@pytest.mark.parametrize("nan_at", ["all", "one"])
def test_maximize_on_box_refuses_nan_scores(nan_at):
    def acq(X):
        v = _bowl(X)
        if nan_at == "all":
            return np.full(len(X), np.nan)
        v[5] = np.nan
        return v

    with pytest.raises(InvalidInputError, match="acquisition values contain NaN") as err:
        maximize_on_box(acq, np.zeros(2), np.ones(2), np.random.default_rng(0))
    _one_line(err)


@pytest.mark.parametrize(
    "lower, upper, kwargs, pattern",
    [
        (np.ones(2), np.zeros(2), {}, r"lower <= upper, but lower\[0\] = 1\.0 > upper\[0\] = 0\.0"),
        (np.zeros(2), np.ones(3), {}, "same length"),
        (np.zeros(2), [1.0, np.nan], {}, "upper must be finite"),
        (np.zeros((2, 1)), np.ones((2, 1)), {}, "lower must have 1 dimension"),
        (np.zeros(2), np.ones(2), {"n_raw": 0}, "n_raw must be >= 1, got 0"),
        (np.zeros(2), np.ones(2), {"n_raw": 2.5}, "n_raw must be an integer"),
        (np.zeros(2), np.ones(2), {"n_restarts": -1}, "n_restarts must be >= 0"),
    ],
)
def test_maximize_on_box_refuses_bad_bounds_and_counts(lower, upper, kwargs, pattern):
    rng = np.random.default_rng(0)
    with pytest.raises(InvalidInputError, match=pattern) as err:
        maximize_on_box(_bowl, lower, upper, rng, **kwargs)
    _one_line(err)
    assert _untouched(rng)


def test_maximize_on_box_refuses_scores_of_the_wrong_shape():
    with pytest.raises(InvalidInputError, match=r"one value per point, shape \(1024,\)"):
        maximize_on_box(lambda X: np.zeros((len(X), 2)), np.zeros(2), np.ones(2), np.random.default_rng(0))


def test_maximize_on_box_takes_list_bounds_and_matches_arrays():
    a = maximize_on_box(_bowl, [0.0, 0.0], [1, 1], np.random.default_rng(4))
    b = maximize_on_box(_bowl, np.zeros(2), np.ones(2), np.random.default_rng(4))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a, [0.3, 0.3], atol=1e-4)


# ---------------------------------------------------------------------------- sobol_candidates
@pytest.mark.parametrize(
    "n, pattern", [(-1, "must be >= 1, got -1"), (0, "must be >= 1, got 0"), (2.5, "integer")]
)
def test_sobol_candidates_refuses_a_bad_count(n, pattern):
    rng = np.random.default_rng(0)
    with pytest.raises(InvalidInputError, match=pattern) as err:
        sobol_candidates(np.zeros(2), np.ones(2), n, rng)
    assert "Sobol" in _one_line(err) and _untouched(rng)


def test_sobol_candidates_takes_lists_and_refuses_an_inverted_box():
    C = sobol_candidates([0.0, -1.0], [1.0, 1.0], 8, np.random.default_rng(0))
    assert C.shape == (8, 2) and np.all(C >= [0.0, -1.0]) and np.all(C <= [1.0, 1.0])
    assert np.any(C[:, 1] > 0.0)  # the whole box, not its unit-sized corner (scaling: test_select.py)
    with pytest.raises(InvalidInputError, match="lower <= upper"):
        sobol_candidates([1.0], [0.0], 8, np.random.default_rng(0))


# ------------------------------------------------------------------------------ beta schedules
@pytest.mark.parametrize(
    "scale, pattern", [("x", "real number, got 'x'"), (-1.0, ">= 0.0"), (float("nan"), "finite")]
)
def test_make_beta_of_a_number_checks_its_scale(scale, pattern):
    with pytest.raises(InvalidInputError, match=f"beta scale must .*{pattern}") as err:
        make_beta(2.0, scale=scale)
    _one_line(err)
    assert make_beta(2.0, scale=3).to_dict() == {"type": "constant", "value": 2.0, "scale": 3.0}


@pytest.mark.parametrize(
    "t, pattern",
    [
        (None, "must be an integer, got None"),
        ("3", "must be an integer, got '3'"),
        (float("nan"), "must be an integer, got nan"),
        (2.5, "must be an integer, got 2.5"),
        (-5, "must be >= 1, got -5"),
        (0, "must be >= 1, got 0"),
        (True, "must be an integer, got True"),
    ],
)
def test_log_beta_refuses_a_round_that_is_not_an_integer_at_least_one(t, pattern):
    with pytest.raises(InvalidInputError, match=pattern) as err:
        LogBeta()(t, SimpleNamespace(noise=0.04, info_gain=0.0))
    assert "round t" in _one_line(err)


def test_log_beta_of_valid_rounds_is_unchanged():
    gp = SimpleNamespace(noise=0.04, info_gain=0.0)
    b = LogBeta(B=0.8, R=0.2, scale=1.5)
    assert b(7, gp) == 1.5 * (0.8 + 0.2 / math.sqrt(0.04) * math.sqrt(math.log(7)))
    assert b(7.0, gp) == b(np.int64(7), gp) == b(7, gp)
    assert b(1, gp) == 1.5 * 0.8


# -------------------------------------------------------------------------------- strategies
def _gp():
    gp = ExactGP(SquaredExponential(0.2), 0.1, np.linspace(0, 1, 6)[:, None])
    gp.update_arm(2, 0.7)
    return gp


@pytest.mark.parametrize(
    "strategy", [UCB(), ThompsonSampling(), RandomShift(), RandomShift("uniform-discrete")]
)
@pytest.mark.parametrize(
    "sign, pattern",
    [
        (float("nan"), "must be finite"),
        (0.5, r"must be \+1 \(a reward\) or -1"),
        ("+", "real number"),
        (True, "real"),
    ],
)
def test_a_strategy_refuses_a_sign_other_than_plus_or_minus_one(strategy, sign, pattern):
    rng = np.random.default_rng(0)
    with pytest.raises(InvalidInputError, match=pattern) as err:
        strategy.estimate(_gp(), 1.0, rng, sign=sign)
    assert "sign" in _one_line(err) and _untouched(rng)


@pytest.mark.parametrize("sign", [1.0, -1.0, 1, -1, np.float64(-1.0)])
def test_a_strategy_with_a_valid_sign_is_unchanged(sign):
    gp = _gp()
    np.testing.assert_array_equal(UCB().estimate(gp, 2.0, None, sign), gp.mean + (sign * 2.0) * gp.std)
    a = RandomShift("uniform-discrete").estimate(gp, 2.0, np.random.default_rng(5), sign)
    rng = np.random.default_rng(5)
    k = int(rng.integers(11))
    np.testing.assert_array_equal(a, gp.mean + (sign * 2.0 * 2.0 * k / 10) * gp.std)
