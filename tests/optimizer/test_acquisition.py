"""The decision rules' scores and updates against hand computations, and the maximizer."""

import math

import numpy as np
import pytest
import torch
from scipy.stats import norm

from ckb.errors import InvalidInputError
from ckb.optimizer.acquisition import (
    CONFIG_FLOOR,
    Maximizer,
    ckb_dual_step,
    ckb_score,
    config_score,
    log_cei,
    penalty_update,
    rpol_add_costs,
    rpol_floor,
    rpol_score,
)

T = lambda a: torch.as_tensor(np.asarray(a, dtype=float))


def test_ckb_score_clips_then_penalizes():
    # f = 7 clipped to B = 5; g = (-6, 0.5) clipped to (-5, 0.5) with G = 5
    v = ckb_score(T([7.0]), T([[-6.0, 0.5]]), phi=[0.2, 2.0], B=5.0, G=[5.0, 5.0])
    assert v.item() == pytest.approx(5.0 - (0.2 * -5.0 + 2.0 * 0.5))


def test_ckb_dual_step_projects_on_zero_rho():
    phi = ckb_dual_step([0.1, 1.0, 3.9], [-1.0, 0.5, 1.0], slack=0.1, V=2.0, rho=4.0)
    np.testing.assert_allclose(phi, [0.0, 1.0 + 0.6 / 2, 4.0])


def test_rpol_score_rectifies_and_q_updates():
    v = rpol_score(T([1.0, 1.0]), T([[-2.0, 0.5], [0.3, 0.0]]), Q=[3.0, 2.0])
    np.testing.assert_allclose(v.numpy(), [1.0 - 2.0 * 0.5, 1.0 - 3.0 * 0.3])
    np.testing.assert_allclose(rpol_floor([1.0, 5.0], t=5), [2.0, 5.0])  # sqrt(t - 1) = 2
    np.testing.assert_allclose(rpol_floor([1.0, 5.0], t=1), [1.0, 5.0])
    np.testing.assert_allclose(rpol_add_costs([1.0, 2.0], [0.5, -3.0]), [1.5, 2.0])


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
    np.testing.assert_allclose(penalty_update([0.0, 0.3], [0.4, -1.0], mu=0.5), [0.2, 0.0])


def test_maximizer_finds_the_peak_of_a_smooth_score_and_skips_excluded_points():
    peak = np.array([0.3, 0.8])
    fn = lambda X: -((X - T(peak)) ** 2).sum(-1)
    maxi = Maximizer(2, np.random.default_rng(0), num_restarts=4, raw_samples=64)
    x, v = maxi(fn)
    np.testing.assert_allclose(x, peak, atol=1e-4)
    x2, _ = maxi(fn, exclude=x[None, :])
    assert np.max(np.abs(x2 - x)) > 1e-6


def test_maximizer_with_a_separation_leaves_the_excluded_ellipsoid_at_its_best_edge():
    # -||x - peak||^2 outside the ellipse of radii r around the peak is best on the ellipse, along the
    # shorter radius (0.1 in x_0), at -0.01: the hinge pushes the restarts to about 1.05 radii
    torch.manual_seed(
        0
    )  # optimize_acqf's choice of starts among the raw samples draws from torch's generator
    peak, r = np.array([0.5, 0.5]), np.array([0.1, 0.2])
    fn = lambda X: -((X - T(peak)) ** 2).sum(-1)
    x, v = Maximizer(2, np.random.default_rng(0), num_restarts=4, raw_samples=64)(
        fn, exclude=peak[None, :], separation=r
    )
    scaled = np.linalg.norm((x - peak) / r)
    assert 1.0 <= scaled <= 1.1  # outside, near the hinge's edge (L-BFGS-B stops near the kink)
    # near the short axis: the best point 1.05 radii out along x_1 would score -(1.05 * 0.2)^2 = -0.044
    assert v >= -((1.1 * 0.1) ** 2) - 1e-9
    assert v == pytest.approx(float(fn(T(x[None, :]))[0]))  # the score itself, not the penalized one


def test_maximizer_separation_on_candidates_falls_back_to_exact_repeats():
    C = np.array([[0.0, 0.0], [0.05, 0.0], [1.0, 1.0]])
    fn = lambda X: -(X**2).sum(-1)  # best at the origin, then (0.05, 0)
    maxi = Maximizer(2, np.random.default_rng(0), candidates=C)
    x, _ = maxi(fn, exclude=C[:1], separation=np.array([0.1, 0.1]))
    np.testing.assert_array_equal(x, [1.0, 1.0])  # (0.05, 0) is inside the excluded disk
    x, _ = maxi(fn, exclude=C[:1], separation=np.array([0.01, 0.01]))
    np.testing.assert_array_equal(x, [0.05, 0.0])
    # every candidate within the separation: only the exact repeat is avoided
    x, _ = maxi(fn, exclude=C[:1], separation=np.array([5.0, 5.0]))
    np.testing.assert_array_equal(x, [0.05, 0.0])
    with pytest.raises(InvalidInputError, match="separation must be 2 positive radii"):
        maxi(fn, exclude=C[:1], separation=np.array([0.1, -1.0]))


def test_maximizer_enumerates_candidates_with_random_ties():
    C = np.array([[0.0, 0.0], [0.5, 0.5], [1.0, 1.0], [0.5, 0.0]])
    fn = lambda X: -((X[:, :1] - 0.5) ** 2).sum(-1)  # ties between rows 1 and 3
    picks = {tuple(Maximizer(2, np.random.default_rng(s), candidates=C)(fn)[0]) for s in range(20)}
    assert picks == {(0.5, 0.5), (0.5, 0.0)}
    x, _ = Maximizer(2, np.random.default_rng(0), candidates=C)(
        fn, exclude=np.array([[0.5, 0.5], [0.5, 0.0]])
    )
    assert tuple(x) in {(0.0, 0.0), (1.0, 1.0)}
