"""The rules' scores and updates against hand computations (torch inputs: the optimizer's world)."""

import math

import numpy as np
import pytest
import torch
from scipy.stats import norm

from ckb.rules import RPOLRule
from ckb.rules.cei import log_cei
from ckb.rules.optimistic import CONFIG_FLOOR, config_score, rpol_score
from ckb.rules.penalty import PenaltyNoisyRule
from ckb.rules.primal_dual import dual_step, primal_dual_score

T = lambda a: torch.as_tensor(np.asarray(a, dtype=float))


def test_ckb_score_clips_then_penalizes():
    # f = 7 clipped to B = 5; g = (-6, 0.5) clipped to (-5, 0.5) with G = 5
    v = primal_dual_score(T([7.0]), T([[-6.0, 0.5]]), phi=[0.2, 2.0], B=5.0, G=[5.0, 5.0])
    assert v.item() == pytest.approx(5.0 - (0.2 * -5.0 + 2.0 * 0.5))


def test_ckb_dual_step_projects_on_zero_rho():
    phi = dual_step([0.1, 1.0, 3.9], [-1.0, 0.5, 1.0], slack=0.1, V=2.0, rho=4.0)
    np.testing.assert_allclose(phi, [0.0, 1.0 + 0.6 / 2, 4.0])


def test_rpol_score_rectifies_and_q_updates():
    v = rpol_score(T([1.0, 1.0]), T([[-2.0, 0.5], [0.3, 0.0]]), Q=[3.0, 2.0])
    np.testing.assert_allclose(v.numpy(), [1.0 - 2.0 * 0.5, 1.0 - 3.0 * 0.3])
    rule = RPOLRule(2, 10, B_f=1.0, B_g=1.0, R_f=0.1, R_g=0.1)
    rule.Q = np.array([1.0, 5.0])
    rule.begin_round()  # t = 1: no floor
    np.testing.assert_allclose(rule.Q, [1.0, 5.0])
    rule.t = 4
    rule.begin_round()  # t = 5: floor sqrt(t - 1) = 2
    np.testing.assert_allclose(rule.Q, [2.0, 5.0])
    rule.Q = np.array([1.0, 2.0])
    rule.observe([0.5, -3.0])
    np.testing.assert_allclose(rule.Q, [1.5, 2.0])


def test_config_score_prefers_any_optimistically_feasible_point():
    ucb = T([-50.0, 10.0, 3.0])
    lcb = T([[-0.1, -0.2], [0.4, -1.0], [0.1, 0.2]])
    v = config_score(ucb, lcb).numpy()
    assert (
        v[0] == -50.0
        and v[1] == pytest.approx(CONFIG_FLOOR - 0.4)
        and v[2] == pytest.approx(CONFIG_FLOOR - 0.2)
    )
    assert int(np.argmax(v)) == 0  # the only feasible point wins over a higher UCB
    assert int(np.argmax(v[1:])) == 1  # no feasible point: the smallest worst LCB (fallback)


def test_log_cei_is_ei_times_probability_of_feasibility():
    mu_f, sd_f, best = 0.3, 0.7, 0.5
    mu_g, sd_g = np.array([-0.2, 0.4]), np.array([0.5, 1.5])
    u = (mu_f - best) / sd_f
    ei = sd_f * (norm.pdf(u) + u * norm.cdf(u))
    pof = np.prod(norm.cdf(-mu_g / sd_g))
    got = log_cei(T([mu_f]), T([sd_f]), best, T([mu_g]), T([sd_g])).item()
    assert got == pytest.approx(math.log(ei * pof), rel=1e-10)
    none = log_cei(T([mu_f]), T([sd_f]), None, T([mu_g]), T([sd_g])).item()
    assert none == pytest.approx(math.log(pof), rel=1e-10)


def test_penalty_update_is_projected_gradient_step():
    rule = PenaltyNoisyRule(2, 4, S=1, B=1.0, R=0.1, mu=0.5)
    rule.kappa = np.array([0.0, 0.3])
    rule.update_multipliers(np.array([0.4, -1.0]))
    np.testing.assert_allclose(rule.kappa, [0.2, 0.0])
