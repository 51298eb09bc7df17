"""Constrained EI spending the cumulative constraint's slack (ckb.rules.feasible_ei.SlackCEIRule and the
``slack-cei`` optimizer policy): the signed threshold, the exploiting endgame, the allowance from the
observed running sum, the relaxation when a debt cannot be repaid, and the running sum on a problem."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("botorch")

from ckb.optimizer.policies.pcei import _signed_thresholds  # noqa: E402
from ckb.rules.cei import log_cei  # noqa: E402
from ckb.rules.feasible_ei import FLOOR, SlackCEIRule  # noqa: E402

T = lambda a: torch.as_tensor(np.asarray(a, dtype=float))


def test_before_the_endgame_constrained_ei_against_the_threshold_on_the_admissible_set():
    rule = SlackCEIRule(1, 10, kappa=2.0, explore_kappa=1.0)  # exploring: width 1
    mu_f, sd_f = T([0.5, 0.9, 0.2]), T([1.0, 1.0, 1.0])
    mu_g, sd_g = T([[-0.5], [0.1], [0.4]]), T([[0.2], [0.2], [0.1]])  # UCBs -0.3, 0.3, 0.5
    tau = np.array([0.35])  # slack to spend: the second point becomes admissible
    v = rule.score(mu_f, sd_f, 0.0, mu_g, sd_g, tau).numpy()
    want = log_cei(mu_f, sd_f, 0.0, mu_g - 0.35, sd_g).numpy()  # P(g <= 0.35), not P(g <= 0)
    np.testing.assert_allclose(v[:2], want[:2])
    assert v[2] == pytest.approx(FLOOR - 0.15)


def test_in_the_endgame_the_best_admissible_posterior_mean():
    rule = SlackCEIRule(1, 10, kappa=2.0, explore_kappa=2.0)  # endgame from the start
    assert rule.endgame
    mu_f, sd_f = T([0.5, 0.9, 0.7]), T([1.0, 1.0, 1.0])
    mu_g, sd_g = T([[-1.0], [-0.5], [-0.1]]), T([[0.4], [0.4], [0.1]])  # UCBs -0.2, 0.3, 0.1
    v = rule.score(mu_f, sd_f, 0.0, mu_g, sd_g, np.array([-0.1])).numpy()  # in debt: margin 0.1
    np.testing.assert_allclose(v, [0.5, FLOOR - 0.4, FLOOR - 0.2])
    v = rule.score(mu_f, sd_f, 0.0, mu_g, sd_g, np.array([0.1])).numpy()  # slack 0.1
    np.testing.assert_allclose(v, [0.5, FLOOR - 0.2, 0.7])


def test_before_any_feasible_point_the_search_is_against_zero_not_the_debt_margin():
    """A design with no feasible point leaves the running sum in debt (threshold < 0); the search for a
    first feasible point still asks P(g <= 0) (pcei's), unless ``first_threshold = "slack"``."""
    mu_f, sd_f = T([0.5, 0.9]), T([1.0, 1.0])
    mu_g, sd_g = T([[0.2], [-0.1]]), T([[0.3], [0.2]])
    tau = np.array([-0.4])  # in debt: a margin of 0.4
    v = SlackCEIRule(1, 10, first_value="probability").score(mu_f, sd_f, None, mu_g, sd_g, tau, target=0.6)
    want = log_cei(mu_f, sd_f, None, mu_g, sd_g) + torch.special.log_ndtr((mu_f - 0.6) / sd_f)
    np.testing.assert_allclose(v.numpy(), want.numpy())
    old = SlackCEIRule(1, 10, first_threshold="slack", first_value="probability").score(
        mu_f, sd_f, None, mu_g, sd_g, tau, target=0.6
    )
    want = log_cei(mu_f, sd_f, None, mu_g + 0.4, sd_g) + torch.special.log_ndtr((mu_f - 0.6) / sd_f)
    np.testing.assert_allclose(old.numpy(), want.numpy())
    assert np.all(old.numpy() < v.numpy())  # the margin makes every point less likely to qualify
    with pytest.raises(ValueError, match="first_threshold"):
        SlackCEIRule(1, 10, first_threshold="debt")


def test_signed_thresholds_invert_the_unit_map_on_both_sides():
    to_raw = lambda v: 2.0 * np.asarray(v)
    np.testing.assert_allclose(_signed_thresholds([1.0, -1.0, 0.0], to_raw, 3), [0.5, -0.5, 0.0], atol=1e-12)
    cube = lambda v: np.asarray(v) ** 3  # nonlinear, odd, monotone
    np.testing.assert_allclose(_signed_thresholds([8.0, -0.001], cube, 2), [2.0, -0.1], rtol=1e-9)
    np.testing.assert_allclose(_signed_thresholds([-3.0], None, 1), [-3.0])


class _Ctx:
    def __init__(self, c, rounds_left, to_raw=None):
        self.c, self.rounds_left, self.c_to_raw = np.asarray(c, dtype=float), rounds_left, to_raw


def test_the_allowance_is_the_running_sums_slack_spread_over_the_asks_left():
    from ckb.optimizer.policies.slack_cei import SlackCEI

    pol = SlackCEI(2, 20)
    to_raw = lambda v: 3.0 * np.asarray(v)  # raw = 3 x policy units
    c = [[-1.0, 0.5], [-0.5, 0.5], [0.5, 0.2]]  # raw sums -3.0 and 3.6
    a, tau = pol._allowance(_Ctx(c, rounds_left=5, to_raw=to_raw))  # 6 asks with this one
    np.testing.assert_allclose(a, [0.5, -0.6])
    np.testing.assert_allclose(tau, [0.5 / 3.0, -0.2], atol=1e-12)
    assert pol._relaxed(tau) is not None and np.all(pol._relaxed(tau) == [tau[0], 0.0])
    assert pol._relaxed(np.array([0.1, 0.0])) is None  # no debt: the threshold is final


def test_slack_cei_keeps_the_running_sum_at_or_below_zero_and_exploits():
    """max x0 + x1 s.t. x0 + x1 <= 1 on [0, 1]^2 with a feasible design: the running constraint sum
    stays <= 0 (within the models' error) while the evaluations after the design approach the
    boundary, where the objective is best."""
    import ckb

    def ev(x):
        return float(x[0] + x[1]), [float(x[0] + x[1] - 1.0)]

    design = np.array([[0.1, 0.2], [0.3, 0.1], [0.2, 0.4], [0.05, 0.3], [0.4, 0.2], [0.1, 0.1]])
    opt = ckb.Optimizer([0, 0], [1, 1], m=1, goal="cumulative", policy="slack-cei", budget=24,
                        initial_design=design, seed=3)  # fmt: skip
    g_sum = 0.0
    while opt.metrics()["remaining"] > 0:
        x = opt.ask()
        f, g = ev(x)
        opt.tell(x, f, g)
        g_sum += g[0]
    hist = opt.history()
    f_after = [h["objective"] for h in hist[6:]]
    assert g_sum <= 0.05, g_sum
    assert np.mean(f_after[-6:]) > 0.9, f_after  # the last evaluations near the boundary, x0 + x1 = 1


def test_the_cumulative_rule_keeps_width_2_while_the_best_feasible_rule_defaults_to_1():
    """pcei's endgame width was lowered to 1 for the best-feasible goal's solved share; slack-cei's stays 2
    (its endgame may sit past the boundary by what the width allows, and its records were measured at 2)."""
    from ckb.rules.feasible_ei import PessimisticCEIRule

    assert PessimisticCEIRule(1, 10).kappa == 1.0
    rule = SlackCEIRule(1, 10)
    assert rule.kappa == 2.0
    assert SlackCEIRule(1, 10, kappa=0.5).kappa == 0.5  # still a parameter
    rule.endgame = True
    mu_g, sd_g = T([[-1.5]]), T([[1.0]])  # UCB at width 2: 0.5 > 0; at width 1: -0.5
    assert rule.score(T([0.0]), T([1.0]), 0.0, mu_g, sd_g).numpy()[0] == pytest.approx(FLOOR - 0.5)


def test_the_horizon_rule_explores_while_the_asks_left_can_earn_back_the_cost():
    """exploit = "horizon": explore when R * CEI(x_e) > mu(x_m) - mu(x_e), R the asks after this one."""
    rule = SlackCEIRule(1, 10)
    assert rule.exploit == "horizon"
    log_cei = np.log(0.1)
    assert rule.explores(log_cei, 0.2, 0.5, rounds_left=4)  # 4 x 0.1 = 0.4 > 0.3
    assert not rule.explores(log_cei, 0.2, 0.7, rounds_left=4)  # 0.4 < 0.5
    assert rule.explores(log_cei, 0.2, 0.25, rounds_left=1)  # 0.1 > 0.05
    assert not rule.explores(log_cei, 0.2, 0.35, rounds_left=1)  # 0.1 < 0.15
    rule.t = 10  # the last ask of the horizon, rounds_left unknown (0): nothing left to earn it back
    assert not rule.explores(0.0, 0.2, 0.2 + 1e-12, rounds_left=0)
    assert rule.explores(0.0, 0.3, 0.2, rounds_left=0)  # exploring is also the better mean: no cost
    with pytest.raises(ValueError, match="exploit"):
        SlackCEIRule(1, 10, exploit="never")


def _cumulative_run(budget, **params):
    import ckb

    def ev(x):
        return float(x[0] + x[1]), [float(x[0] + x[1] - 1.0)]

    design = np.array([[0.1, 0.2], [0.3, 0.1], [0.2, 0.4], [0.05, 0.3], [0.4, 0.2], [0.1, 0.1]])
    opt = ckb.Optimizer([0, 0], [1, 1], m=1, goal="cumulative", policy="slack-cei", budget=budget,
                        initial_design=design, seed=3, **params)  # fmt: skip
    while opt.metrics()["remaining"] > 0:
        x = opt.ask()
        f, g = ev(x)
        opt.tell(x, f, g)
    return [h["info"] for h in opt.history()[6:]]


def test_slack_cei_exploits_at_the_last_ask_where_the_former_rule_still_explores():
    """The horizon rule's last ask has no ask left to earn an exploration back: it plays the best
    admissible posterior mean (endgame 1 in the internals). The former rule ("endgame") explores until
    the expected improvement falls below endgame_ei, which it has not by then on this problem."""
    modes = [i["endgame"] for i in _cumulative_run(16)]
    assert modes[0] == 0.0 and modes[-1] == 1.0, modes
    old = [i["endgame"] for i in _cumulative_run(16, exploit="endgame")]
    assert old[-1] == 0.0, old


def test_by_default_the_first_search_weighs_the_expected_improvement_over_the_target():
    """``first_value = "improvement"`` (the default): log EI over the target plus log P(g <= 0), by a
    hand-computed case: EI(y_q) = sd (u Phi(u) + phi(u)), u = (mu - y_q) / sd; the probability of
    beating the target saturates where EI keeps growing with the mean."""
    from scipy.stats import norm

    mu_f, sd_f = T([0.5, 3.0]), T([1.0, 0.5])
    mu_g, sd_g = T([[0.2], [-0.1]]), T([[0.3], [0.2]])
    v = SlackCEIRule(1, 10).score(mu_f, sd_f, None, mu_g, sd_g, np.array([-0.4]), target=0.6).numpy()
    u = (np.array([0.5, 3.0]) - 0.6) / np.array([1.0, 0.5])
    ei = np.array([1.0, 0.5]) * (u * norm.cdf(u) + norm.pdf(u))
    pof = norm.cdf(-np.array([0.2, -0.1]) / np.array([0.3, 0.2]))
    np.testing.assert_allclose(v, np.log(ei) + np.log(pof), rtol=1e-9)
    without = SlackCEIRule(1, 10).score(mu_f, sd_f, None, mu_g, sd_g, np.array([-0.4])).numpy()
    np.testing.assert_allclose(without, np.log(pof))  # no target (no data): feasibility alone


def test_the_exploiting_choice_is_an_evaluated_point_when_it_scores_higher_than_the_maximizers():
    """``exploit_seen``: the complete evaluated point of highest score replaces the maximizer's choice
    when it scores higher; a pending point is passed over, and with exact evaluations nothing changes."""
    from types import SimpleNamespace

    from ckb.optimizer.policies.slack_cei import SlackCEI

    done = np.array([[0.3, 0.3], [0.5, 0.5], [0.1, 0.9]])
    score = lambda X: -((X - 0.32) ** 2).sum(-1)  # best at (0.32, 0.32), near (0.3, 0.3)
    ctx = lambda X, exact=False: SimpleNamespace(exact=exact, models=SimpleNamespace(X=X), y=np.zeros(3))
    x = np.array([0.9, 0.9])
    np.testing.assert_array_equal(SlackCEI._best_seen(ctx(done), score, x), [0.3, 0.3])
    np.testing.assert_array_equal(SlackCEI._best_seen(ctx(done), score, np.array([0.32, 0.32])), [0.32, 0.32])
    pending = np.vstack([done, [[0.3, 0.3]]])  # (0.3, 0.3) asked again and not yet told: not twice
    np.testing.assert_array_equal(SlackCEI._best_seen(ctx(pending), score, x), [0.5, 0.5])
    np.testing.assert_array_equal(SlackCEI._best_seen(ctx(done, exact=True), score, x), x)
