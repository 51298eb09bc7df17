import itertools
import math

import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.kernels import SquaredExponential
from ckb.multiagent.models import LocalModel, greedy_information_gain

GRID = np.linspace(-1, 1, 7)[:, None]
KERNEL = {"type": "se", "lengthscale": 0.5, "variance": 1.0}


def dense_posterior(X, y, Xs, lam):
    k = SquaredExponential(0.5)
    K = k(X) + lam * np.eye(len(X))
    Ks = k(X, Xs)
    mean = Ks.T @ np.linalg.solve(K, y)
    var = np.diag(k(Xs) - Ks.T @ np.linalg.solve(K, Ks))
    return mean, var


def test_lower_bounds_are_clipped_lcbs_of_the_exact_posterior():
    model = LocalModel(GRID, 2, kernel=KERNEL, noise=0.1, clip=[1.0, 0.5, 2.0], beta=1.5)
    obs = [(1, 0.3, [0.2, -0.4]), (5, -0.8, [0.1, 0.0]), (1, 0.35, [0.25, -0.5])]
    for k, yf, yg in obs:
        model.update(k, yf, np.array(yg))
    f_lcb, g_lcb = model.lower(4)
    X = GRID[[k for k, _, _ in obs]]
    Y = np.array([[yf, *yg] for _, yf, yg in obs])
    for j, C in enumerate([1.0, 0.5, 2.0]):
        mean, var = dense_posterior(X, Y[:, j], GRID, 0.1)
        want = np.maximum(mean - 1.5 * np.sqrt(var), -C)
        got = f_lcb if j == 0 else g_lcb[:, j - 1]
        np.testing.assert_allclose(got, want, atol=1e-10)
    assert np.any(g_lcb[:, 0] == -0.5)  # the clip is active somewhere
    unclipped = LocalModel(GRID, 0, kernel=KERNEL, noise=0.1, clip=None, beta=10.0)
    assert np.all(unclipped.lower(1)[0] == -10.0)


def test_theory_width_matches_lemma_3_1():
    # beta^t_{i,j} = C_{i,j} + sigma sqrt(2 (gamma_{t-1} + 1 + ln(N (m + 1) / delta)))
    beta = {"type": "theory", "delta": 0.1, "sigma": 0.02, "gamma": "greedy"}
    model = LocalModel(
        GRID, 1, kernel=KERNEL, noise=0.02**2, clip=[2.0, 3.0], beta=beta, n_agents=3, horizon=10
    )
    gam = greedy_information_gain(KERNEL, GRID, 0.02**2, 10)
    for t in (1, 5, 10):
        want = np.array([2.0, 3.0]) + 0.02 * math.sqrt(2 * (gam[t - 1] + 1 + math.log(3 * 2 / 0.1)))
        np.testing.assert_allclose(model.beta(t), want)
    chosen = LocalModel(
        GRID, 1, kernel=KERNEL, noise=0.02**2, clip=[2.0, 3.0], beta={**beta, "gamma": "chosen"}
    )
    chosen.update(3, 0.0, np.array([0.0]))
    ig = 0.5 * math.log(1 + 1 / 0.02**2)  # first point: sigma^2 = 1
    np.testing.assert_allclose(
        chosen.beta(2), np.array([2.0, 3.0]) + 0.02 * math.sqrt(2 * (ig + 1 + math.log(2 / 0.1)))
    )
    with pytest.raises(InvalidInputError, match="needs the bounds"):
        LocalModel(GRID, 1, kernel=KERNEL, clip=None, beta={"type": "theory"})


def test_greedy_information_gain_is_within_1_minus_1_over_e_of_the_maximum():
    lam = 0.05
    K = SquaredExponential(0.5)(GRID)
    gam = greedy_information_gain(KERNEL, GRID, lam, 3)
    assert gam[0] == 0.0 and np.all(np.diff(gam) > 0)
    for t in (1, 2, 3):
        best = max(
            0.5 * np.linalg.slogdet(np.eye(t) + K[np.ix_(s, s)] / lam)[1]
            for s in itertools.combinations_with_replacement(range(7), t)
        )
        assert (1 - 1 / math.e) * best - 1e-12 <= gam[t] <= best + 1e-12


def test_oracle_model_returns_the_tables():
    m = LocalModel(GRID[:3], 1, kind="oracle", values={"f": [1.0, 0.5, -1.0], "g": [[-1.0], [0.0], [2.0]]})
    f, g = m.lower(7)
    np.testing.assert_array_equal(f, [1.0, 0.5, -1.0])
    np.testing.assert_array_equal(g[:, 0], [-1.0, 0.0, 2.0])
    m.update(0, 3.0, np.array([3.0]))
    np.testing.assert_array_equal(m.lower(8)[0], [1.0, 0.5, -1.0])
