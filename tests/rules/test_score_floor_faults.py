"""Faults at the rules' floors and limits: pcei's and slack-cei's admissible values below ``FLOOR``,
CONFIG's feasible UCBs below ``CONFIG_FLOOR``, the noiseless penalty's overflow, and constrained EI at a
zero standard deviation (ckb.rules.feasible_ei, .optimistic, .penalty, .cei)."""

import math

import numpy as np
import pytest
from scipy.special import log_ndtr

from ckb.errors import InvalidInputError
from ckb.exploration import argmax_random_tie, refine_from_candidates
from ckb.rules.optimistic import CONFIG_FLOOR, ConfigRule, config_score
from ckb.rules.penalty import PenaltyNoiselessRule, PenaltyNoisyRule

torch = pytest.importorskip("torch")
pytest.importorskip("botorch")

from ckb.rules.cei import log_cei  # noqa: E402
from ckb.rules.feasible_ei import FLOOR, PessimisticCEIRule, SlackCEIRule  # noqa: E402

T = lambda a: torch.as_tensor(np.asarray(a, dtype=float))


# ------------------------------------------------------------------ pcei / slack-cei: below FLOOR
def _endgame(cls=PessimisticCEIRule, **kw):
    rule = cls(1, 20, **kw)
    rule.endgame = True  # width kappa (1 for pcei)
    return rule


def test_pcei_an_admissible_point_far_below_the_incumbent_outranks_every_inadmissible_one():
    """The probe's case: (best - mu)/sd = 2000 puts log EI near -2e6, below FLOOR; the admissible point
    must still win (it lost to a point of excess 0.01 before)."""
    rule = _endgame()
    mu_f, sd_f = T([0.8, 0.5]), T([1e-4, 0.3])
    mu_g, sd_g = T([[-1.0], [-0.09]]), T([[0.5], [0.1]])
    s = rule.score(mu_f, sd_f, 1.0, mu_g, sd_g)
    assert rule.excess(mu_g, sd_g).tolist() == [0.0, pytest.approx(0.01)]
    assert s[0] > FLOOR > s[1]
    assert int(s.argmax()) == 0


def test_pcei_admissible_values_keep_their_order_below_the_floor_and_their_values_above_it():
    rule = _endgame()
    # log EI from about -5e3 (kept) down to about -5e9 and -inf (mu < best with sd = 0): all admissible
    mu_f = T([0.9, 0.0, -1.0, -10.0, 0.5, 0.2])
    sd_f = T([1e-2, 1e-3, 1e-3, 1e-3, 0.0, 0.5])
    mu_g, sd_g = T([[-1.0]] * 5 + [[0.3]]), T([[0.1]] * 5 + [[0.1]])  # the last one is not admissible
    v = rule.score(mu_f, sd_f, 1.0, mu_g, sd_g)
    raw = log_cei(mu_f, sd_f, 1.0, mu_g, sd_g)
    assert float(raw[0]) > FLOOR + 1.0 and float(v[0]) == float(raw[0])  # above the band: unchanged
    assert float(raw[2]) < FLOOR and float(raw[3]) < float(raw[2])
    assert v[0] > v[1] > v[2] > v[3] > v[4] > v[5]  # log EI's order, then -inf, then outside
    assert float(v[4]) > FLOOR and float(v[5]) == pytest.approx(FLOOR - 0.4)
    assert float(v[2]) <= FLOOR + 1.0


def test_pcei_outside_points_stay_ordered_by_their_excess_below_every_admissible_value():
    rule = _endgame()
    mu_f, sd_f = T([-5.0, 0.0, 0.0, 0.0]), T([1e-4, 1.0, 1.0, 1.0])
    mu_g, sd_g = T([[-1.0], [0.1], [0.2], [3.0]]), T([[0.1]] * 4)
    v = rule.score(mu_f, sd_f, 1.0, mu_g, sd_g).numpy()
    np.testing.assert_allclose(v[1:], FLOOR - np.array([0.2, 0.3, 3.1]))
    assert v[0] > v[1] > v[2] > v[3]


def test_pcei_the_squeezed_score_still_has_a_gradient_toward_higher_expected_improvement():
    """Below the floor the maximizer gets a smaller but nonzero gradient of the right sign (a clamp
    would give it none)."""
    rule = _endgame()
    mu_f = torch.tensor([-1.0], dtype=torch.float64, requires_grad=True)
    v = rule.score(mu_f, T([1e-3]), 1.0, T([[-1.0]]), T([[0.1]]))
    assert float(v.detach()) < FLOOR + 1.0
    v.sum().backward()
    assert math.isfinite(float(mu_f.grad)) and float(mu_f.grad) > 0.0


def test_pcei_leap_score_a_far_point_below_the_floor_outranks_a_near_one():
    rule = PessimisticCEIRule(1, 20, leap_radius=0.2)
    rule.endgame = True
    X, seen = T([[0.9, 0.9], [0.1, 0.1]]), T([[0.0, 0.0]])  # the second is 0.1 from a seen point
    v = rule.leap_score(T([-1.0, 0.9]), T([1e-3, 0.5]), 1.0, T([[-1.0], [-1.0]]), T([[0.1], [0.1]]), X, seen)
    assert v[0] > FLOOR > v[1] and float(v[1]) == pytest.approx(FLOOR - 0.1)


def test_slack_cei_endgame_an_admissible_mean_below_the_floor_outranks_an_inadmissible_point():
    rule = _endgame(SlackCEIRule)  # endgame: the posterior mean on the admissible set
    v = rule.score(T([-2e6, 5.0]), T([1.0, 1.0]), 0.0, T([[-3.0], [0.5]]), T([[0.1], [0.1]]))
    assert v[0] > FLOOR > v[1] and int(v.argmax()) == 0
    kept = rule.score(T([-5e5, 5.0]), T([1.0, 1.0]), 0.0, T([[-3.0], [-3.0]]), T([[0.1], [0.1]]))
    assert kept.tolist() == [-5e5, 5.0]


def test_pcei_first_admissible_search_keeps_admissible_probabilities_below_the_floor_on_top():
    """The budgeted feasibility-first search on the admissible set: a log PoF below FLOOR (a constraint
    mean 2000 sds above 0 that the allowance still admits) outranks an inadmissible point."""
    rule = PessimisticCEIRule(1, 10, budget_first="admissible")
    rule.set_budgeted(True, 9)
    k = rule.width
    tau = T([3.0 + k * 1e-3 + 1.0])
    mu_g, sd_g = T([[3.0], [50.0]]), T([[1.5e-3], [1.0]])
    v = rule.score(T([0.0, 0.0]), T([1.0, 1.0]), None, mu_g, sd_g, tau)
    assert float(torch.special.log_ndtr(T(-3.0 / 1.5e-3))) < FLOOR
    assert v[0] > FLOOR > v[1]


# ------------------------------------------------------------------ CONFIG below CONFIG_FLOOR
def test_config_numpy_a_feasible_point_below_the_floor_outranks_an_infeasible_one():
    s = config_score(np.array([-2e6, 10.0]), np.array([[-1.0], [3.0]]))
    assert s[0] == -2e6 and s[1] < s[0] and int(np.argmax(s)) == 0


def test_config_numpy_feasible_values_are_kept_exactly_and_infeasible_ones_keep_their_order():
    lo = -2e6
    ucb = np.array([lo, np.nextafter(lo, -np.inf), -5e7, 7.0, 1.0, 2.0, 3.0])
    lcb = np.array([[-1.0], [-1.0], [-1.0], [0.5], [1e-12], [2.0], [0.25]])
    s = config_score(ucb, lcb)
    np.testing.assert_array_equal(s[:3], ucb[:3])  # feasible: the UCB itself, to the bit
    assert s[0] > s[1] > s[2] > max(s[3:])  # exact order among feasible; infeasible below all
    assert s[4] > s[6] > s[3] > s[5]  # infeasible: by the worst LCB (1e-12, 0.25, 0.5, 2)
    huge = config_score(np.array([-1e300, 7.0]), np.array([[-1.0], [1e-12]]))
    assert huge[0] == -1e300 and huge[1] < huge[0]  # at any magnitude (their order: to float precision)


def test_config_numpy_without_feasible_points_or_above_the_floor_the_scores_are_unchanged():
    lcb = np.array([[0.5, -1.0], [0.1, 0.2], [-0.3, -0.1]])
    for ucb in (np.array([1.0, 5.0, -50.0]), np.array([1.0, 5.0, -999_999.0])):
        want = np.where(lcb.max(-1) <= 0.0, ucb, CONFIG_FLOOR - lcb.max(-1))
        np.testing.assert_array_equal(config_score(ucb, lcb), want)
    none = np.array([[0.5], [0.1]])
    np.testing.assert_array_equal(config_score(np.array([-5e6, 1.0]), none), CONFIG_FLOOR - none[:, 0])


def test_config_finite_arms_argmax_is_the_best_feasible_ucb_at_large_negative_objectives():
    """The finite-arm harness: one score over every arm, argmax with random ties (rtol 1e-12)."""
    rng = np.random.default_rng(0)
    ucb = -3e6 + rng.normal(0.0, 1e3, 200)
    lcb = rng.normal(0.0, 1.0, (200, 2))
    feasible = lcb.max(-1) <= 0.0
    rule = ConfigRule(2, 10, B_f=1.0, B_g=1.0, R_f=0.1, R_g=0.1)
    rule.begin_round()
    i = argmax_random_tie(rule.score(ucb, lcb), np.random.default_rng(1))
    assert feasible[i] and ucb[i] == ucb[feasible].max()


def test_config_continuous_harness_local_search_does_not_leave_the_feasible_set():
    """The harness on a box scores the candidates in one call, then local batches around the best: the
    rule keeps this round's floor, so an infeasible neighbour never beats a feasible candidate whose UCB
    is below CONFIG_FLOOR (a batch of infeasible points alone scored CONFIG_FLOOR - worst > UCB)."""
    rule = ConfigRule(1, 10, B_f=1.0, B_g=1.0, R_f=0.1, R_g=0.1)

    def bounds(X):  # feasible for x0 <= 0.5; the UCB grows toward the boundary
        return -2e6 + X[:, 0], (X[:, 0] - 0.5)[:, None]

    for seed in range(5):
        rng = np.random.default_rng(seed)
        C = rng.random((64, 2))
        rule.begin_round()
        scores = rule.score(*bounds(C))
        x = refine_from_candidates(scores, lambda X: rule.score(*bounds(X)), C, np.zeros(2), np.ones(2), rng)
        assert x[0] <= 0.5
        assert x[0] >= C[C[:, 0] <= 0.5, 0].max()  # never worse than the best feasible candidate


def test_config_torch_feasible_outranks_infeasible_and_order_is_kept():
    ucb = T([-2e6, -3e6, -1e300, 10.0, 4.0])
    lcb = T([[-1.0], [-1.0], [-1.0], [3.0], [-0.1]])
    s = config_score(ucb, lcb)
    assert s[4] == 4.0  # above the floor: unchanged
    assert s[4] > s[0] > s[1] > s[2] > CONFIG_FLOOR > s[3]
    assert float(s[3]) == pytest.approx(CONFIG_FLOOR - 3.0)
    ucb_g = torch.tensor([-2e6], dtype=torch.float64, requires_grad=True)
    config_score(ucb_g, T([[-1.0]])).sum().backward()
    assert float(ucb_g.grad) > 0.0


# ------------------------------------------------------------------ the noiseless penalty's overflow
def test_penalty_overflow_is_a_one_line_error_naming_the_constraint_value_and_the_penalty():
    rule = PenaltyNoiselessRule(m=1, horizon=10, S=2, B=1.0, R=0.1)
    with pytest.raises(InvalidInputError, match=r"710\.0.*psi = 'exp'") as err:
        rule.target([0.0], [[710.0]])
    assert "\n" not in str(err.value) and "kappa" in str(err.value)
    rule.kappa = np.array([1e8])
    with pytest.raises(InvalidInputError, match="700"):  # expm1(700) is finite; times kappa it is not
        rule.target([0.0, 1.0], [[1.0], [700.0]])
    poly = PenaltyNoiselessRule(m=1, horizon=10, S=2, B=1.0, R=0.1, psi="poly", n=200.0)
    with pytest.raises(InvalidInputError, match="psi = 'poly'"):
        poly.target([0.0], [[1e3]])
    noisy = PenaltyNoisyRule(m=1, horizon=10, S=2, B=1.0, R=0.1)
    noisy.kappa = np.array([10.0])
    with pytest.raises(InvalidInputError, match="1e\\+308"):
        noisy.target([0.0], [[1e308]])


def test_penalty_targets_below_the_overflow_are_the_formula():
    rule = PenaltyNoiselessRule(m=2, horizon=10, S=2, B=1.0, R=0.1)
    rule.kappa = np.array([2.0, 3.0])
    c = np.array([[709.0, -1.0], [0.5, 2.0]])
    want = np.array([1.0, -1.0]) - (np.expm1(np.maximum(c, 0.0)) @ rule.kappa)
    np.testing.assert_array_equal(rule.target([1.0, -1.0], c), want)
    nan = rule.target([np.nan], [[1.0, 1.0]])  # a missing value stays missing (not an overflow)
    assert np.isnan(nan).all()


# ------------------------------------------------------------------ constrained EI at zero width
def test_log_cei_at_zero_objective_width_is_the_deterministic_improvement():
    mu_f, sd_f = T([2.0, 0.5, 1.0, 3.0]), T([0.0, 0.0, 0.0, 0.5])
    mu_g, sd_g = T([[-1.0]] * 4), T([[1.0]] * 4)
    v = log_cei(mu_f, sd_f, 1.0, mu_g, sd_g).numpy()
    assert v[0] == pytest.approx(math.log(1.0) + log_ndtr(1.0), rel=1e-14)
    assert v[1] == -np.inf and v[2] == -np.inf  # mu <= best: no improvement
    u = (3.0 - 1.0) / 0.5
    ei = 0.5 * (math.exp(-u * u / 2) / math.sqrt(2 * math.pi) + u * 0.5 * math.erfc(-u / math.sqrt(2)))
    assert v[3] == pytest.approx(math.log(ei) + log_ndtr(1.0), rel=1e-12)


def test_log_cei_at_zero_constraint_width_is_the_indicator_of_feasibility():
    mu_g, sd_g = T([[0.0], [-2.0], [0.5], [0.3]]), T([[0.0], [0.0], [0.0], [0.6]])
    v = log_cei(T([2.0] * 4), T([1.0] * 4), None, mu_g, sd_g).numpy()
    assert v[0] == 0.0 and v[1] == 0.0 and v[2] == -np.inf
    assert v[3] == pytest.approx(log_ndtr(-0.5), rel=1e-14)


def test_log_cei_values_and_gradients_at_positive_widths_do_not_see_zero_width_neighbours():
    mu_f = torch.tensor([2.0, 0.3, 1.5], dtype=torch.float64, requires_grad=True)
    sd_f, mu_g, sd_g = T([0.0, 0.7, 0.2]), T([[0.0], [-0.2], [0.1]]), T([[0.0], [0.5], [1.5]])
    v = log_cei(mu_f, sd_f, 0.5, mu_g, sd_g)
    alone = log_cei(mu_f[1:].detach(), sd_f[1:], 0.5, mu_g[1:], sd_g[1:])
    assert v[1:].tolist() == alone.tolist()
    assert float(v[0].detach()) == pytest.approx(math.log(1.5))
    v.sum().backward()
    assert torch.isfinite(mu_f.grad).all()
    assert float(mu_f.grad[0]) == pytest.approx(1.0 / 1.5)
