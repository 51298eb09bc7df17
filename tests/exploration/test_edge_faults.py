"""Edge cases of the exploration layer: an infinite or empty score in ``argmax_random_tie``, a
subnormal ``alpha`` in ``TheoryBeta``, and non-finite or negative widths given to the strategies."""

import math

import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.exploration import UCB, RandomShift, ThompsonSampling, argmax_random_tie
from ckb.exploration.beta import TheoryBeta


# ------------------------------------------------------------------ argmax_random_tie
def test_argmax_an_infinite_score_wins():
    assert argmax_random_tie(np.array([np.inf, 1.0]), np.random.default_rng(0)) == 0
    assert argmax_random_tie(np.array([-np.inf, 3.0, np.inf]), np.random.default_rng(0)) == 2


def test_argmax_ties_among_infinite_scores_are_broken_at_random():
    values = np.array([1e300, np.inf, 5.0, np.inf, np.inf])
    picks = {argmax_random_tie(values, np.random.default_rng(seed)) for seed in range(60)}
    assert picks == {1, 3, 4}


def test_argmax_of_nothing_is_a_one_line_error():
    with pytest.raises(InvalidInputError, match="empty") as err:
        argmax_random_tie(np.array([]), np.random.default_rng(0))
    assert "\n" not in str(err.value)


def test_argmax_finite_and_all_minus_infinity_behave_as_before():
    values = np.array([1.0, 3.0, 3.0 - 1e-13, 2.0])  # within rtol 1e-12 of the maximum: a tie
    assert {argmax_random_tie(values, np.random.default_rng(s)) for s in range(40)} == {1, 2}
    allneg = np.full(3, -np.inf)  # every score -inf: all tie
    assert {argmax_random_tie(allneg, np.random.default_rng(s)) for s in range(40)} == {0, 1, 2}
    with pytest.raises(InvalidInputError, match="NaN"):
        argmax_random_tie(np.array([np.inf, np.nan]), np.random.default_rng(0))


# ------------------------------------------------------------------ TheoryBeta at a subnormal alpha
class _GP:
    info_gain = 2.5


def test_theory_beta_at_the_smallest_alpha_is_finite():
    b = TheoryBeta(alpha=5e-324)
    assert b._log_term == pytest.approx(1.0 + 744.4400719213812, rel=1e-15)
    want = 1.0 + 0.1 * math.sqrt(2.0 * (2.5 + 1.0 - math.log(5e-324)))
    assert b(3, _GP()) == pytest.approx(want, rel=1e-14)
    assert math.isfinite(TheoryBeta(alpha=1e-310)(1, _GP()))


def test_theory_beta_log_term_is_the_old_expression_wherever_that_was_finite():
    """Bit for bit: every alpha a run can use where 1/alpha is finite keeps 1 + log(1/alpha)."""
    alphas = np.concatenate([np.geomspace(1e-10, 0.5, 5001), [0.05, 0.025, 0.05 / 3, 1e-300, 6e-309]])
    for a in alphas:
        a = float(a)
        assert TheoryBeta(alpha=a)._log_term == 1.0 + math.log(1.0 / a)


# ------------------------------------------------------------------ strategies' widths
class _Posterior:
    mean = np.array([0.0, 1.0])
    std = np.array([1.0, 0.5])

    def sample(self, rng, scale=1.0):
        return self.mean + scale * self.std * rng.standard_normal(2)


@pytest.mark.parametrize("strategy", [UCB(), ThompsonSampling(), RandomShift()], ids=lambda s: s.name)
@pytest.mark.parametrize("beta", [float("nan"), -1.0, float("inf"), "2"])
def test_a_strategy_refuses_a_width_that_is_not_a_finite_nonnegative_number(strategy, beta):
    with pytest.raises(InvalidInputError, match="beta") as err:
        strategy.estimate(_Posterior(), beta, np.random.default_rng(0))
    assert "\n" not in str(err.value) and strategy.name in str(err.value)


def test_random_shift_draw_refuses_a_bad_width_and_consumes_nothing():
    rng = np.random.default_rng(0)
    with pytest.raises(InvalidInputError, match="beta"):
        RandomShift().draw(float("nan"), rng)
    assert rng.random() == np.random.default_rng(0).random()


def test_strategies_at_valid_widths_are_unchanged():
    gp = _Posterior()
    np.testing.assert_array_equal(UCB().estimate(gp, 2.0, None, -1.0), gp.mean - 2.0 * gp.std)
    np.testing.assert_array_equal(UCB().estimate(gp, np.float64(0.0), None), gp.mean)
    z = 1.5 * np.random.default_rng(3).standard_normal()
    np.testing.assert_array_equal(
        RandomShift().estimate(gp, 1.5, np.random.default_rng(3)), gp.mean + z * gp.std
    )
