"""Tests of the exact GP engine (ckb.surrogates.gp) against fresh dense solves.

The reference below is written here, independently of the engine: one Cholesky solve of
``K_t + λI`` per query. Tolerances on the exact-arithmetic identities are relative (``rtol = 1e-8``) with
an absolute floor of ``1e-10`` times the scale of the compared quantity, for entries that are ~0.
"""

import copy
import math

import numpy as np
import pytest

from ckb.errors import InvalidInputError, NotPositiveDefiniteError, OutOfDomainError
from ckb.kernels import Matern, PrecomputedKernel, SquaredExponential
from ckb.surrogates import ExactGP, PriorFactor, dense_posterior
from tests.surrogates.gp_reference import reference_posterior, reference_posterior_grouped

# ------------------------------------------------------------------------------------ helpers


def assert_close(actual, desired, rtol=1e-8, floor=1e-10, what=""):
    """``|a - d| <= rtol |d| + floor * max(1, max|d|)`` elementwise."""
    desired = np.asarray(desired)
    atol = floor * max(1.0, float(np.max(np.abs(desired), initial=0.0)))
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol, err_msg=what)


def assert_matches_reference(gp, X, y, rtol=1e-8):
    """Mean, variance and full covariance at every candidate agree with the dense reference."""
    mean, cov = reference_posterior(gp.kernel, gp.noise, X, y, gp.candidates)
    assert_close(gp.mean, mean, rtol, what=f"mean at t={gp.t} ({gp.mode})")
    assert_close(gp.var, np.diag(cov), rtol, what=f"var at t={gp.t} ({gp.mode})")
    assert_close(gp.covariance(), cov, rtol, what=f"covariance at t={gp.t} ({gp.mode})")
    sub = np.array([3, 0, 3, gp.n - 1])
    assert_close(gp.covariance(sub), cov[np.ix_(sub, sub)], rtol, what="covariance subset")
    np.testing.assert_array_equal(gp.std, np.sqrt(gp.var))


def bandit_arms(rng, n, T, hot=3, p_hot=0.8):
    """Arm sequence of a bandit: most pulls on a few arms, many exact repeats."""
    favourites = rng.choice(n, size=hot, replace=False)
    return np.where(rng.uniform(size=T) < p_hot, rng.choice(favourites, size=T), rng.integers(0, n, size=T))


def observations(rng, arms, n, noise_sd=0.3):
    f = rng.standard_normal(n)
    return f[arms] + noise_sd * rng.standard_normal(len(arms))


N_ARMS = 12


def _random_correlation(n, m, seed):
    Z = np.random.default_rng(seed).standard_normal((n, m))
    C = np.corrcoef(Z)
    return 0.5 * (C + C.T)


def make_case(name, n=N_ARMS):
    """(kernel, candidates) for a named test case."""
    if name == "se":
        return SquaredExponential(0.2), np.linspace(0, 1, n)[:, None]
    if name == "matern15":
        return Matern(0.3, 2.0, nu=1.5), np.linspace(0, 1, n)[:, None]
    if name == "matern25-ard":
        return Matern([0.3, 0.6], 1.5, nu=2.5), np.random.default_rng(99).uniform(size=(n, 2))
    if name == "precomputed":
        return PrecomputedKernel(_random_correlation(n, 30, 5)), np.arange(n)[:, None]
    if name == "precomputed-lowrank":  # rank 4 correlation matrix: singular prior covariance
        return PrecomputedKernel(_random_correlation(n, 5, 6)), np.arange(n)[:, None]
    raise ValueError(name)


CASES = ["se", "matern15", "matern25-ard", "precomputed", "precomputed-lowrank"]
METHODS = ["cholesky", "dense", "auto"]


def expected_mode(method, t, n):
    if method == "auto":
        return "cholesky" if 2 * t < n else "dense"
    return method


def spy_refresh(gp):
    """Count the calls of gp.refresh made by the engine (instance attribute shadows the method)."""
    calls = []
    original = gp.refresh

    def wrapper():
        calls.append(gp.t)
        original()

    gp.refresh = wrapper
    return calls


def nonarm_points(kernel, rng, q):
    d = kernel.input_dim or 1
    return rng.uniform(-0.1, 1.1, size=(q, d))


# ------------------------------------------------------------------ posterior at the candidates


def test_reference_agrees_with_library_dense_posterior(rng):
    k, C = make_case("matern25-ard")
    arms = bandit_arms(rng, N_ARMS, 25)
    y = observations(rng, arms, N_ARMS)
    m1, c1 = reference_posterior(k, 0.1, C[arms], y, C)
    m2, c2 = dense_posterior(k, 0.1, C[arms], y, C)
    assert_close(m2, m1, 1e-10)
    assert_close(c2, c1, 1e-10)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("noise", [1e-3, 0.1, 1.0])
@pytest.mark.parametrize("method", METHODS)
def test_posterior_matches_dense_solve_across_switch_and_refresh(case, noise, method, rng):
    kernel, C = make_case(case)
    n, T = N_ARMS, 40
    gp = ExactGP(kernel, noise, C, method=method, refresh_every=7)
    refreshes = spy_refresh(gp)
    arms = bandit_arms(rng, n, T)
    y = observations(rng, arms, n)
    assert len(np.unique(arms)) < T  # repeated arms
    checkpoints = {1, 2, 5, n - 1, n, n + 1, 19, 20, 21, 35, T}
    assert_matches_reference(gp, arms[:0], y[:0])  # the prior
    for t in range(1, T + 1):
        gp.update_arm(int(arms[t - 1]), y[t - 1])
        assert gp.t == t
        assert gp.mode == expected_mode(method, t, n)
        if t in checkpoints:
            assert_matches_reference(gp, C[arms[:t]], y[:t])
    dense_updates = {"cholesky": 0, "dense": T, "auto": T - n}[method]
    assert len(refreshes) == dense_updates // 7  # refresh_every = 7 updates in dense form
    np.testing.assert_array_equal(gp.arms, arms)
    np.testing.assert_array_equal(gp.y, y)
    np.testing.assert_array_equal(gp.X, C[arms])


@pytest.mark.parametrize("refresh_every", [0, 1, 3])
def test_refresh_schedule_never_or_every_few_updates_keeps_posterior_exact(refresh_every, rng):
    kernel, C = make_case("se")
    gp = ExactGP(kernel, 0.05, C, method="dense", refresh_every=refresh_every)
    refreshes = spy_refresh(gp)
    arms = bandit_arms(rng, N_ARMS, 30)
    y = observations(rng, arms, N_ARMS)
    for a, v in zip(arms, y):
        gp.update_arm(a, v)
    assert len(refreshes) == (30 // refresh_every if refresh_every else 0)
    assert_matches_reference(gp, C[arms], y)


def test_explicit_refresh_changes_nothing_but_round_off(rng):
    kernel, C = make_case("matern15")
    arms = bandit_arms(rng, N_ARMS, 30)
    y = observations(rng, arms, N_ARMS)
    gp = ExactGP(kernel, 0.1, C, method="cholesky")
    for a, v in zip(arms, y):
        gp.update_arm(a, v)
    mean, var = gp.mean.copy(), gp.var
    gp.refresh()  # no-op in Cholesky form
    np.testing.assert_array_equal(gp.mean, mean)
    np.testing.assert_array_equal(gp.var, var)
    gp = ExactGP(kernel, 0.1, C, method="dense", refresh_every=0)
    for a, v in zip(arms, y):
        gp.update_arm(a, v)
    mean, cov = gp.mean.copy(), gp.covariance()
    gp.refresh()
    assert_close(gp.mean, mean, 1e-10)
    assert_close(gp.covariance(), cov, 1e-10)
    assert gp.t == 30


def test_auto_never_switches_above_dense_max_arms(rng):
    kernel, C = make_case("se")
    gp = ExactGP(kernel, 0.1, C, dense_max_arms=N_ARMS - 1)
    arms = bandit_arms(rng, N_ARMS, 3 * N_ARMS)
    y = observations(rng, arms, N_ARMS)
    for a, v in zip(arms, y):
        gp.update_arm(a, v)
    assert gp.mode == "cholesky"
    assert_matches_reference(gp, C[arms], y)
    gp = ExactGP(kernel, 0.1, C, dense_max_arms=N_ARMS)
    for a, v in zip(arms, y):
        gp.update_arm(a, v)
    assert gp.mode == "dense"


def test_reset_returns_to_the_prior(rng):
    kernel, C = make_case("se")
    for method in METHODS:
        gp = ExactGP(kernel, 0.1, C, method=method)
        for a in bandit_arms(rng, N_ARMS, 20):
            gp.update_arm(a, 1.0)
        gp.reset()
        assert gp.t == 0 and gp.info_gain == 0.0
        assert gp.mode == ("dense" if method == "dense" else "cholesky")
        np.testing.assert_array_equal(gp.mean, np.zeros(N_ARMS))
        np.testing.assert_array_equal(gp.var, kernel.diag(C))
        gp.update_arm(4, 0.5)
        assert_matches_reference(gp, C[[4]], np.array([0.5]))


# ------------------------------------------------------------------------ predict anywhere


@pytest.mark.parametrize("case", ["se", "matern25-ard", "precomputed"])
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("q", [1, 3, 9])  # the engine solves q <= 4 and q > 4 differently
def test_predict_at_arbitrary_points_matches_dense_solve(case, method, q, rng):
    kernel, C = make_case(case)
    gp = ExactGP(kernel, 0.05, C, method=method, refresh_every=7)
    if case.startswith("precomputed"):
        Xq = rng.integers(0, N_ARMS, size=(q, 1)).astype(float)  # "points" of this kernel are arm indices
    else:
        Xq = nonarm_points(kernel, rng, q)
    mean, var = gp.predict(Xq)  # t = 0: the prior
    np.testing.assert_array_equal(mean, np.zeros(q))
    np.testing.assert_array_equal(var, kernel.diag(Xq))
    arms = bandit_arms(rng, N_ARMS, 20)
    y = observations(rng, arms, N_ARMS)
    for t, (a, v) in enumerate(zip(arms, y), 1):
        gp.update_arm(a, v)
        if t in (4, 20):
            ref_mean, ref_cov = reference_posterior(kernel, 0.05, C[arms[:t]], y[:t], Xq)
            mean, var = gp.predict(Xq)
            assert_close(mean, ref_mean)
            assert_close(var, np.diag(ref_cov))
            mean, cov = gp.predict(Xq, full_cov=True)
            assert_close(mean, ref_mean)
            assert_close(cov, ref_cov)
    assert gp.mode == expected_mode(method, 20, N_ARMS)


@pytest.mark.parametrize("method", METHODS)
def test_predict_at_candidates_agrees_with_maintained_posterior(method, rng):
    kernel, C = make_case("matern15")
    gp = ExactGP(kernel, 0.1, C, method=method)
    arms = bandit_arms(rng, N_ARMS, 25)
    for a, v in zip(arms, observations(rng, arms, N_ARMS)):
        gp.update_arm(a, v)
    mean, cov = gp.predict(C, full_cov=True)
    assert_close(mean, gp.mean, 1e-9)
    assert_close(cov, gp.covariance(), 1e-9)
    assert_close(gp.predict(C)[1], gp.var, 1e-9)


@pytest.mark.parametrize("case", ["se", "matern25-ard"])
@pytest.mark.parametrize("method", ["dense", "auto"])
def test_noncandidate_update_after_dense_switch_rebuilds_cholesky(case, method, rng):
    kernel, C = make_case(case)
    n = N_ARMS
    gp = ExactGP(kernel, 0.05, C, method=method, refresh_every=7)
    arms = bandit_arms(rng, n, 20)
    y = observations(rng, arms, n)
    for a, v in zip(arms, y):
        gp.update_arm(a, v)
    assert gp.mode == "dense"
    X, Y = list(C[arms]), list(y)
    x_new = nonarm_points(kernel, rng, 1)[0]
    gp.update(x_new, 0.7)
    X.append(x_new)
    Y.append(0.7)
    assert gp.mode == "cholesky" and gp.t == 21 and gp.arms[-1] == -1
    assert_matches_reference(gp, np.array(X), np.array(Y))
    Xq = nonarm_points(kernel, rng, 6)
    ref_mean, ref_cov = reference_posterior(kernel, 0.05, np.array(X), np.array(Y), Xq)
    mean, cov = gp.predict(Xq, full_cov=True)
    assert_close(mean, ref_mean)
    assert_close(cov, ref_cov)
    # further arm pulls and points continue from the rebuilt factor; no switch back to the dense form
    for a in bandit_arms(rng, n, 15):
        v = float(rng.standard_normal())
        gp.update_arm(a, v)
        X.append(C[a])
        Y.append(v)
    gp.update(nonarm_points(kernel, rng, 1)[0], -0.2)
    X.append(gp.X[-1])
    Y.append(-0.2)
    assert gp.mode == "cholesky" and gp.t == 37
    assert_matches_reference(gp, np.array(X), np.array(Y))
    np.testing.assert_array_equal(gp.X, np.array(X))
    assert gp.info_gain == pytest.approx(log_det_gain(kernel, 0.05, np.array(X)), rel=1e-10)


# ------------------------------------------------------------------------ continuous models


@pytest.mark.parametrize(
    "kernel, d",
    [(SquaredExponential(0.3), 1), (Matern(0.4, 1.5, nu=1.5), 1), (Matern([0.3, 0.5], nu=2.5), 2)],
)
def test_continuous_gp_predict_matches_dense_solve(kernel, d, rng):
    gp = ExactGP(kernel, 0.02)
    assert gp.candidates is None and gp.mean is None
    X = rng.uniform(size=(30, d))
    X[10:15] = X[0]  # exact repeats
    y = np.sin(5 * X.sum(axis=1)) + 0.1 * rng.standard_normal(30)
    for t, (x, v) in enumerate(zip(X, y), 1):
        gp.update(x if d > 1 else float(x[0]), v)
        if t in (1, 7, 30):
            for q in (2, 11):
                Xq = rng.uniform(-0.2, 1.2, size=(q, d))
                ref_mean, ref_cov = reference_posterior(kernel, 0.02, X[:t], y[:t], Xq)
                mean, var = gp.predict(Xq)
                assert_close(mean, ref_mean)
                assert_close(var, np.diag(ref_cov))
                mean, cov = gp.predict(Xq, full_cov=True)
                assert_close(cov, ref_cov)
    assert gp.mode == "cholesky"
    np.testing.assert_array_equal(gp.X, X)
    assert gp.info_gain == pytest.approx(log_det_gain(kernel, 0.02, X), rel=1e-10)


def test_continuous_gp_with_isotropic_kernel_in_two_dimensions():
    kernel = SquaredExponential(0.3)
    gp = ExactGP(kernel, 0.1)
    X = np.array([[0.1, 0.2], [0.5, 0.9]])
    gp.update(X[0], 1.0)
    gp.update(X[1], -1.0)
    ref_mean, _ = reference_posterior(kernel, 0.1, X, np.array([1.0, -1.0]), X)
    assert_close(gp.predict(X)[0], ref_mean)


def test_dense_method_noncandidate_point_as_first_observation():
    kernel, C = make_case("se")
    gp = ExactGP(kernel, 0.1, C, method="dense")
    gp.update([0.33], 1.0)
    assert_matches_reference(gp, np.array([[0.33]]), np.array([1.0]))


# -------------------------------------------------------------------------- information gain


def log_det_gain(kernel, noise, X):
    """½ ln det(I + K_t / λ): the information gain of the chosen points, in closed form."""
    sign, logdet = np.linalg.slogdet(np.eye(len(X)) + kernel(X) / noise)
    assert sign > 0
    return 0.5 * logdet


def sequential_gain(kernel, noise, X):
    """½ Σ_s ln(1 + σ²_{s-1}(x_s) / λ) with each σ² from a fresh dense solve on the first s-1 points."""
    total = 0.0
    for s in range(len(X)):
        _, cov = reference_posterior(kernel, noise, X[:s], np.zeros(s), X[s : s + 1])
        total += 0.5 * math.log1p(cov[0, 0] / noise)
    return total


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("noise", [1e-2, 0.5])
def test_info_gain_equals_sum_of_log_variance_terms_and_log_det(case, method, noise, rng):
    kernel, C = make_case(case)
    gp = ExactGP(kernel, noise, C, method=method, refresh_every=5)
    assert gp.info_gain == 0.0
    arms = bandit_arms(rng, N_ARMS, 30)
    for t, a in enumerate(arms, 1):
        gp.update_arm(a, float(rng.standard_normal()))
        if t in (1, N_ARMS - 1, N_ARMS, 30):
            X = C[arms[:t]]
            assert gp.info_gain == pytest.approx(sequential_gain(kernel, noise, X), rel=1e-9)
            assert gp.info_gain == pytest.approx(log_det_gain(kernel, noise, X), rel=1e-9)


def test_info_gain_does_not_depend_on_observed_values(rng):
    kernel, C = make_case("se")
    gps = [ExactGP(kernel, 0.1, C) for _ in range(2)]
    for a in bandit_arms(rng, N_ARMS, 25):
        gps[0].update_arm(a, 0.0)
        gps[1].update_arm(a, 100.0 * rng.standard_normal())
    assert gps[0].info_gain == pytest.approx(gps[1].info_gain, rel=1e-12)


# ---------------------------------------------------------------------- stability (10^4 updates)


def test_the_grouped_reference_is_the_dense_reference():
    """Repeated observations at a point tell what their mean tells with noise σ²/c: the grouped reference
    (used for the 10^4-update checks below) equals the one on every observation."""
    rng = np.random.default_rng(3)
    kernel, noise = SquaredExponential(0.3), 0.01
    C = rng.uniform(size=(6, 2))
    X = np.vstack([C[rng.integers(0, 6, size=300)], rng.uniform(size=(20, 2))])
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.standard_normal(len(X))
    Xq = np.vstack([C, rng.uniform(size=(4, 2))])
    mean, cov = reference_posterior(kernel, noise, X, y, Xq)
    gmean, gcov = reference_posterior_grouped(kernel, noise, X, y, Xq)
    np.testing.assert_allclose(gmean, mean, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(gcov, cov, rtol=1e-7, atol=1e-12)


def test_dense_path_stays_exact_over_10000_bandit_updates():
    rng = np.random.default_rng(2024)
    n, T, noise = 40, 10_000, 0.01
    C = rng.uniform(size=(n, 2))
    kernel = SquaredExponential(0.3)
    favourites = rng.choice(n, size=4, replace=False)
    arms = np.where(rng.uniform(size=T) < 0.9, rng.choice(favourites, size=T), rng.integers(0, n, size=T))
    y = np.sin(3 * C[arms, 0]) + 0.1 * rng.standard_normal(T)
    gp = ExactGP(kernel, noise, C)  # auto, default refresh schedule
    unrefreshed = ExactGP(kernel, noise, C, refresh_every=0)  # pure rank-one updates after the switch
    for a, v in zip(arms, y):
        gp.update_arm(a, v)
        unrefreshed.update_arm(a, v)
    assert gp.mode == unrefreshed.mode == "dense"
    mean, cov = reference_posterior_grouped(kernel, noise, C[arms], y, C)  # one fresh solve, 40 x 40
    for model in (gp, unrefreshed):
        np.testing.assert_allclose(model.mean, mean, rtol=1e-6, atol=1e-6 * np.abs(mean).max())
        np.testing.assert_allclose(model.var, np.diag(cov), rtol=1e-6)
        assert_close(model.covariance(), cov, rtol=1e-6, floor=1e-6 * np.diag(cov).max())


@pytest.mark.slow
def test_cholesky_path_stays_exact_over_10000_updates_at_arms_and_between_them():
    """10^4 rank-one Cholesky updates clustered like a bandit's: nine in ten at four favourite arms (the
    O(t) row from V), one in ten at a continuous point, half of them near those arms and half anywhere
    (the O(t^2) packed solve with L).

    Every continuous update reads all of L, so 10^4 of them would be about 1.3 TB of memory traffic
    (two minutes here); a tenth keeps both rows' arithmetic over the whole run at a tenth of the cost."""
    rng = np.random.default_rng(7)
    n, T, noise = 30, 10_000, 0.01
    C = rng.uniform(size=(n, 2))
    kernel = SquaredExponential(0.3)
    favourites = rng.choice(n, size=4, replace=False)
    arms = np.where(rng.uniform(size=T) < 0.9, rng.choice(favourites, size=T), -1)
    near = C[rng.choice(favourites, size=T)] + 0.01 * rng.standard_normal((T, 2))
    between = np.where(rng.uniform(size=(T, 1)) < 0.5, near, rng.uniform(size=(T, 2)))
    X = np.where(arms[:, None] >= 0, C[np.maximum(arms, 0)], between)
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.standard_normal(T)
    gp = ExactGP(kernel, noise, C, method="cholesky")
    for a, x, v in zip(arms, X, y):
        if a >= 0:
            gp.update_arm(int(a), v)
        else:
            gp.update(x, v)
    assert gp.mode == "cholesky" and gp.t == T and 800 < np.sum(arms < 0) < 1200
    Xq = rng.uniform(size=(3, 2))
    mean, cov = reference_posterior_grouped(kernel, noise, X, y, np.vstack([C, Xq]))  # ~1,000 distinct
    np.testing.assert_allclose(gp.mean, mean[:n], rtol=1e-6, atol=1e-6 * np.abs(mean).max())
    np.testing.assert_allclose(gp.var, np.diag(cov)[:n], rtol=1e-6)
    pm, pv = gp.predict(Xq)
    np.testing.assert_allclose(pm, mean[n:], rtol=1e-6, atol=1e-6 * np.abs(mean).max())
    np.testing.assert_allclose(pv, np.diag(cov)[n:], rtol=1e-6)


# --------------------------------------------------------------------------- Thompson sampling

N_DRAWS = 20_000


def sampling_gp(case, method, T, seed=0, noise=0.1):
    kernel, C = make_case(case, n=8)
    gp = ExactGP(kernel, noise, C, method=method, refresh_every=7)
    rng = np.random.default_rng(seed)
    arms = bandit_arms(rng, 8, T, hot=2)
    for a, v in zip(arms, observations(rng, arms, 8)):
        gp.update_arm(a, v)
    return gp


def assert_gaussian_moments(draws, mean, cov, n_se=5.0):
    """Empirical mean and covariance of ``draws`` (N x n) within ``n_se`` Monte-Carlo standard errors."""
    N = draws.shape[0]
    d = np.diag(cov)
    np.testing.assert_array_less(np.abs(draws.mean(axis=0) - mean), n_se * np.sqrt(d / N) + 1e-12)
    D = draws - mean
    emp = D.T @ D / N
    # Var(D_i D_j) = Σ_ii Σ_jj + Σ_ij² for a centred Gaussian
    se = np.sqrt((np.outer(d, d) + cov**2) / N)
    np.testing.assert_array_less(np.abs(emp - cov), n_se * se + 1e-12)


SAMPLING_SCENARIOS = [
    ("se", "auto", 0, "cholesky"),  # the prior
    ("se", "dense", 0, "dense"),  # the prior, dense form
    ("se", "auto", 3, "cholesky"),
    ("se", "cholesky", 30, "cholesky"),  # t > n in Cholesky form
    ("se", "auto", 30, "dense"),
    ("se", "dense", 6, "dense"),
    ("matern15", "auto", 30, "dense"),
    ("precomputed-lowrank", "auto", 30, "dense"),
    ("precomputed-lowrank", "cholesky", 30, "cholesky"),
]


@pytest.mark.parametrize("case, method, T, mode", SAMPLING_SCENARIOS)
def test_samples_have_posterior_mean_and_covariance(case, method, T, mode):
    gp = sampling_gp(case, method, T)
    assert gp.mode == mode and gp.t == T
    draws = gp.sample(np.random.default_rng(1), size=N_DRAWS)
    assert draws.shape == (N_DRAWS, gp.n)
    assert_gaussian_moments(draws, gp.mean, gp.covariance())


@pytest.mark.parametrize("method, T", [("cholesky", 20), ("auto", 20), ("auto", 0)])
def test_sample_scale_multiplies_the_deviation(method, T):
    gp = sampling_gp("se", method, T)
    base = gp.sample(np.random.default_rng(3), size=N_DRAWS)
    scaled = gp.sample(np.random.default_rng(3), size=N_DRAWS, scale=2.5)
    np.testing.assert_allclose(scaled - gp.mean, 2.5 * (base - gp.mean), rtol=1e-12, atol=1e-12)
    assert_gaussian_moments(scaled, gp.mean, 2.5**2 * gp.covariance())
    np.testing.assert_allclose(gp.sample(np.random.default_rng(4), scale=0.0), gp.mean, rtol=0, atol=0)


@pytest.mark.parametrize("method, mode", [("cholesky", "cholesky"), ("auto", "dense")])
def test_successive_samples_are_independent(method, mode):
    gp = sampling_gp("se", method, 20)
    assert gp.mode == mode
    rng = np.random.default_rng(5)
    D1 = gp.sample(rng, size=N_DRAWS) - gp.mean
    D2 = gp.sample(rng, size=N_DRAWS) - gp.mean
    d = gp.var
    cross = D1.T @ D2 / N_DRAWS  # E[D1 D2^T] = 0 for independent draws
    np.testing.assert_array_less(np.abs(cross), 5 * np.sqrt(np.outer(d, d) / N_DRAWS) + 1e-12)
    corr = np.sum(D1 * D2, axis=0) / np.sqrt(np.sum(D1**2, axis=0) * np.sum(D2**2, axis=0))
    np.testing.assert_array_less(np.abs(corr), 5 / np.sqrt(N_DRAWS))
    single = [gp.sample(rng) for _ in range(3)]
    assert single[0].shape == (gp.n,)
    assert not np.allclose(single[0], single[1]) and not np.allclose(single[1], single[2])


def test_sampling_with_a_noncandidate_observation_is_rejected(rng):
    gp = sampling_gp("se", "auto", 20)
    gp.update([0.123], 0.5)
    with pytest.raises(InvalidInputError, match="candidate"):
        gp.sample(rng)
    gp = ExactGP(SquaredExponential(0.3), 0.1, np.linspace(0, 1, 5)[:, None], method="cholesky")
    gp.update_arm(1, 0.0)
    gp.update(np.array([0.77]), 0.1)
    with pytest.raises(InvalidInputError, match="candidate"):
        gp.sample(rng, size=3)


def test_sampling_without_candidates_is_rejected(rng):
    gp = ExactGP(SquaredExponential(0.3), 0.1)
    with pytest.raises(InvalidInputError, match="candidate"):
        gp.sample(rng)


def test_prior_factor_is_a_square_root_of_the_kernel_matrix():
    C = np.linspace(0, 1, 150)[:, None]
    K = SquaredExponential(0.5)(C)  # numerically singular: many eigenvalues at round-off level
    assert np.linalg.eigvalsh(K)[0] < 1e-12
    F = PriorFactor(K)
    np.testing.assert_allclose(F.factor @ F.factor.T, K, rtol=0, atol=1e-12)
    assert F.draw(np.random.default_rng(0)).shape == (150,)
    assert F.draw(np.random.default_rng(0), size=4).shape == (150, 4)


def test_prior_factor_rejects_an_indefinite_matrix():
    with pytest.raises(NotPositiveDefiniteError, match="jitter"):
        PriorFactor(np.array([[1.0, 2.0], [2.0, 1.0]]))


def test_shared_prior_factor_gives_the_same_samples(rng):
    kernel, C = make_case("se", n=8)
    prior = PriorFactor(kernel(C))
    a = ExactGP(kernel, 0.1, C, prior=prior)
    b = ExactGP(kernel, 0.1, C)
    for g in (a, b):
        g.update_arm(3, 1.0)
    np.testing.assert_allclose(a.sample(np.random.default_rng(0)), b.sample(np.random.default_rng(0)))
    with pytest.raises(InvalidInputError, match="9 candidates"):
        ExactGP(kernel, 0.1, np.linspace(0, 1, 9)[:, None], prior=prior)


# ----------------------------------------------------------------------------- persistence

STATE_SCENARIOS = [  # (case, method, t at save, t at end)
    ("se", "cholesky", 10, 25),
    ("se", "auto", 2, 12),
    ("se", "auto", 3, 30),  # restored in Cholesky form, switches to dense afterwards
    ("se", "auto", 12, 30),  # restored in dense form
    ("se", "dense", 9, 30),
    ("precomputed", "auto", 6, 30),
    ("matern25-ard", "auto", 13, 25),
]


@pytest.mark.parametrize("case, method, t_save, t_end", STATE_SCENARIOS)
def test_state_dict_round_trip_continues_identically(case, method, t_save, t_end, rng):
    kernel, C = make_case(case, n=8)
    make = lambda: ExactGP(kernel, 0.05, C, method=method, refresh_every=7)
    gp = make()
    arms = bandit_arms(rng, 8, t_end, hot=2)
    y = observations(rng, arms, 8)
    for a, v in zip(arms[:t_save], y[:t_save]):
        gp.update_arm(a, v)
    state = copy.deepcopy(gp.state_dict())
    restored = make()
    restored.load_state_dict(state)
    assert restored.t == gp.t and restored.mode == gp.mode and restored.info_gain == gp.info_gain
    for a, v in zip(arms[t_save:], y[t_save:]):
        for g in (gp, restored):
            g.update_arm(a, v)
        assert restored.mode == gp.mode
        np.testing.assert_array_equal(restored.mean, gp.mean)
        np.testing.assert_array_equal(restored.var, gp.var)
    assert restored.info_gain == gp.info_gain
    np.testing.assert_array_equal(restored.covariance(), gp.covariance())
    np.testing.assert_array_equal(restored.X, gp.X)
    np.testing.assert_array_equal(restored.arms, gp.arms)
    Xq = C[[0, 2, 5]] if case == "precomputed" else nonarm_points(kernel, rng, 3)
    for full_cov in (False, True):
        for r, g in zip(restored.predict(Xq, full_cov=full_cov), gp.predict(Xq, full_cov=full_cov)):
            np.testing.assert_array_equal(r, g)
    np.testing.assert_array_equal(
        restored.sample(np.random.default_rng(8), size=5), gp.sample(np.random.default_rng(8), size=5)
    )
    assert restored.mode == expected_mode(method, t_end, 8)


def _continue_after_round_trip(t_save, t_end, seed):
    kernel, C = make_case("se", n=8)
    rng = np.random.default_rng(seed)
    arms, y = rng.integers(0, 8, size=t_end), rng.standard_normal(t_end)
    gp = ExactGP(kernel, 0.05, C, method="cholesky")
    for a, v in zip(arms[:t_save], y[:t_save]):
        gp.update_arm(a, v)
    restored = ExactGP(kernel, 0.05, C, method="cholesky")
    restored.load_state_dict(gp.state_dict())
    for a, v in zip(arms[t_save:], y[t_save:]):
        for g in (gp, restored):
            g.update_arm(a, v)
    return gp, restored


@pytest.mark.parametrize("t_save", [0, 1])
def test_state_dict_round_trip_at_t_0_and_1_continues_identically(t_save):
    gp, restored = _continue_after_round_trip(t_save, 12, 0)
    np.testing.assert_array_equal(restored.mean, gp.mean)
    np.testing.assert_array_equal(restored.var, gp.var)


def test_state_dict_is_a_snapshot(rng):
    kernel, C = make_case("se", n=8)
    for method, T in (("cholesky", 5), ("dense", 5)):
        gp = ExactGP(kernel, 0.1, C, method=method)
        for a in bandit_arms(rng, 8, T):
            gp.update_arm(a, 1.0)
        state = gp.state_dict()
        saved = copy.deepcopy(state)
        for a in bandit_arms(rng, 8, 4):
            gp.update_arm(a, -1.0)
        for key, value in saved.items():
            np.testing.assert_array_equal(state[key], value, err_msg=key)


def test_state_dict_round_trip_of_continuous_gp(rng):
    kernel = Matern([0.3, 0.5], nu=2.5)
    gp = ExactGP(kernel, 0.05)
    for x in rng.uniform(size=(7, 2)):
        gp.update(x, float(np.sin(x.sum())))
    restored = ExactGP(kernel, 0.05)
    restored.load_state_dict(gp.state_dict())
    for x in rng.uniform(size=(20, 2)):  # crosses the buffers' growth at 16
        for g in (gp, restored):
            g.update(x, float(np.cos(x.sum())))
    Xq = rng.uniform(size=(6, 2))
    for r, g in zip(restored.predict(Xq, full_cov=True), gp.predict(Xq, full_cov=True)):
        np.testing.assert_array_equal(r, g)
    assert restored.info_gain == gp.info_gain


def _round_trip_after_noncandidate_point():
    kernel, C = make_case("se", n=8)
    gp = ExactGP(kernel, 0.1, C)
    for a in range(10):
        gp.update_arm(a % 8, 0.1 * a)
    gp.update([0.45], 1.0)  # non-candidate after the switch: Cholesky form rebuilt, for good
    restored = ExactGP(kernel, 0.1, C)
    restored.load_state_dict(gp.state_dict())
    for a in (2, 5, 2):
        for g in (gp, restored):
            g.update_arm(a, 0.3)
    assert restored.mode == gp.mode == "cholesky"
    return gp, restored


def test_state_dict_round_trip_after_noncandidate_point_continues_identically(rng):
    gp, restored = _round_trip_after_noncandidate_point()
    np.testing.assert_array_equal(restored.mean, gp.mean)
    np.testing.assert_array_equal(restored.var, gp.var)
    with pytest.raises(InvalidInputError, match="candidate"):
        restored.sample(rng)


# ------------------------------------------------------------------------------- bad input


def _snapshot(gp):
    return (gp.t, gp.mode, gp.info_gain, gp.mean.copy(), gp.var.copy(), gp.covariance().copy())


def _assert_unchanged(gp, snap):
    t, mode, gain, mean, var, cov = snap
    assert gp.t == t and gp.mode == mode and gp.info_gain == gain
    np.testing.assert_array_equal(gp.mean, mean)
    np.testing.assert_array_equal(gp.var, var)
    np.testing.assert_array_equal(gp.covariance(), cov)


@pytest.mark.parametrize("T, mode", [(0, "cholesky"), (3, "cholesky"), (20, "dense")])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, "abc", None, [1.0, 2.0]])
def test_bad_observation_is_rejected_and_gp_unchanged(T, mode, bad, rng):
    kernel, C = make_case("se", n=8)
    gp = ExactGP(kernel, 0.1, C)
    for a in bandit_arms(rng, 8, T):
        gp.update_arm(a, 1.0)
    assert gp.mode == mode
    snap = _snapshot(gp)
    with pytest.raises(InvalidInputError, match="observation"):
        gp.update_arm(2, bad)
    _assert_unchanged(gp, snap)
    with pytest.raises(InvalidInputError, match="observation"):
        gp.update([0.31], bad)
    _assert_unchanged(gp, snap)
    # and it keeps working
    gp.update_arm(2, 0.5)
    assert gp.t == T + 1


@pytest.mark.parametrize("T", [3, 20])
def test_bad_point_is_rejected_and_gp_unchanged(T, rng):
    kernel, C = make_case("matern25-ard", n=8)
    gp = ExactGP(kernel, 0.1, C)
    for a in bandit_arms(rng, 8, T):
        gp.update_arm(a, 1.0)
    snap = _snapshot(gp)
    for x in ([0.1, np.nan], [0.1, 0.2, 0.3], [[0.1, 0.2], [0.3, 0.4]]):
        with pytest.raises(InvalidInputError):
            gp.update(x, 1.0)
        _assert_unchanged(gp, snap)


@pytest.mark.parametrize("index", [8, 100, -1, -8])
def test_arm_index_out_of_range_is_rejected(index, rng):
    kernel, C = make_case("se", n=8)
    for T in (2, 20):
        gp = ExactGP(kernel, 0.1, C)
        for a in bandit_arms(rng, 8, T):
            gp.update_arm(a, 1.0)
        snap = _snapshot(gp)
        with pytest.raises(OutOfDomainError, match=str(index)):
            gp.update_arm(index, 1.0)
        _assert_unchanged(gp, snap)


def test_non_integer_arm_index_is_rejected():
    kernel, C = make_case("se", n=8)
    gp = ExactGP(kernel, 0.1, C)
    with pytest.raises(InvalidInputError, match="2.5"):
        gp.update_arm(2.5, 1.0)
    assert gp.t == 0
    gp.update_arm(np.int64(2), 1.0)
    gp.update_arm(3.0, 1.0)
    np.testing.assert_array_equal(gp.arms, [2, 3])


@pytest.mark.parametrize("noise", [0.0, -0.1, np.nan, np.inf, "1"])
def test_non_positive_or_non_finite_noise_is_rejected(noise):
    with pytest.raises(InvalidInputError, match="noise"):
        ExactGP(SquaredExponential(0.3), noise, np.zeros((3, 1)))


def test_bad_constructor_arguments_are_rejected():
    kernel, C = make_case("se", n=8)
    with pytest.raises(InvalidInputError, match="'chol'"):
        ExactGP(kernel, 0.1, C, method="chol")
    with pytest.raises(InvalidInputError, match="candidate"):
        ExactGP(kernel, 0.1, None, method="dense")
    with pytest.raises(InvalidInputError, match="kernel"):
        ExactGP(lambda a, b: a @ b.T, 0.1, C)
    with pytest.raises(InvalidInputError, match="refresh_every"):
        ExactGP(kernel, 0.1, C, refresh_every=-1)
    with pytest.raises(InvalidInputError, match="dense_max_arms"):
        ExactGP(kernel, 0.1, C, dense_max_arms=2.5)
    with pytest.raises(InvalidInputError, match="finite"):
        ExactGP(kernel, 0.1, np.array([[0.0], [np.nan]]))
    with pytest.raises(InvalidInputError, match="column"):
        ExactGP(Matern([0.3, 0.6]), 0.1, np.zeros((4, 3)))


def test_candidate_only_operations_on_continuous_gp_are_rejected():
    gp = ExactGP(SquaredExponential(0.3), 0.1)
    with pytest.raises(InvalidInputError, match="update"):
        gp.update_arm(0, 1.0)
    with pytest.raises(InvalidInputError, match="predict"):
        gp.covariance()


def _observed_gp(method, rng, *, n, t, noise):
    """An SE GP on ``n`` random 2-D candidates after ``t`` observations at random arms:
    ``(kernel, candidates, gp, arms, targets)``."""
    kernel = SquaredExponential(0.3)
    C = rng.uniform(0, 1, (n, 2))
    gp = ExactGP(kernel, noise, C, method=method)
    arms = rng.integers(0, n, t)
    y = rng.normal(size=t)
    for a, v in zip(arms, y):
        gp.update_arm(int(a), float(v))
    return kernel, C, gp, arms, y


@pytest.mark.parametrize("method", ["cholesky", "dense"])
def test_relabel_gives_the_posterior_of_the_new_targets(method, rng):
    # Same points, new targets: mean at candidates and at new points equals a fresh dense solve;
    # variance and information gain are unchanged.
    kernel, C, gp, arms, _ = _observed_gp(method, rng, n=40, t=25, noise=0.5)
    var0, gain0 = gp.var.copy(), gp.info_gain
    y_new = rng.normal(size=25) * 3.0
    gp.relabel(y_new)
    mean, cov = dense_posterior(kernel, 0.5, C[arms], y_new, C)
    np.testing.assert_allclose(gp.mean, mean, atol=1e-9)
    np.testing.assert_allclose(gp.var, np.diag(cov), atol=1e-9)
    np.testing.assert_allclose(gp.var, var0, atol=1e-9)
    assert gp.info_gain == gain0
    Xq = rng.uniform(0, 1, (5, 2))
    mq, _ = dense_posterior(kernel, 0.5, C[arms], y_new, Xq)
    np.testing.assert_allclose(gp.predict(Xq)[0], mq, atol=1e-9)
    with pytest.raises(InvalidInputError, match="y"):
        gp.relabel(np.ones(24))


def test_relabel_on_a_continuous_gp(rng):
    kernel = Matern(0.5, nu=2.5)
    gp = ExactGP(kernel, 0.1)
    X = rng.uniform(0, 1, (12, 3))
    for x in X:
        gp.update(x, float(rng.normal()))
    y_new = rng.normal(size=12)
    gp.relabel(y_new)
    Xq = rng.uniform(0, 1, (4, 3))
    np.testing.assert_allclose(gp.predict(Xq)[0], dense_posterior(kernel, 0.1, X, y_new, Xq)[0], atol=1e-10)


@pytest.mark.parametrize("method", ["cholesky", "dense"])
def test_retarget_gives_the_posterior_of_the_new_targets(method, rng):
    """A few targets replaced (RPOL-CensoredUCB's late feedback) at a cost that does not grow with t: the
    same posterior as a fresh dense solve on the new targets, the variance unchanged."""
    kernel, C, gp, arms, y = _observed_gp(method, rng, n=40, t=60, noise=0.5)
    var0, gain0 = gp.var.copy(), gp.info_gain
    rows, values = np.array([41, 59, 50]), np.array([2.5, -1.0, 0.3])
    gp.retarget(rows, values)
    y[rows] = values
    mean, _ = dense_posterior(kernel, 0.5, C[arms], y, C)
    np.testing.assert_allclose(gp.mean, mean, atol=1e-9)
    np.testing.assert_allclose(gp.var, var0, atol=0)
    np.testing.assert_array_equal(gp.y, y)
    assert gp.info_gain == gain0
    Xq = rng.uniform(0, 1, (5, 2))
    np.testing.assert_allclose(gp.predict(Xq)[0], dense_posterior(kernel, 0.5, C[arms], y, Xq)[0], atol=1e-9)
    before = gp.mean.copy()
    gp.retarget([], [])  # nothing to change
    np.testing.assert_array_equal(gp.mean, before)
    with pytest.raises(InvalidInputError, match=r"rows must be indices of observations 0..59, got \[60\]"):
        gp.retarget([60], [1.0])
    with pytest.raises(InvalidInputError, match="y"):
        gp.retarget([1, 2], [np.nan, 1.0])
    np.testing.assert_array_equal(gp.mean, before)


@pytest.mark.parametrize("method", ["cholesky", "dense"])
def test_covariance_block_is_the_block_of_the_full_covariance(method, rng):
    """SafeOpt's expanders need the safe x uncertified block only; covariance_block gives it without the
    n x n matrix (O(t |rows| |cols|) in Cholesky form), equal to the dense posterior's block."""
    kernel, C, gp, arms, _ = _observed_gp(method, rng, n=30, t=12, noise=0.2)
    _, cov = dense_posterior(kernel, 0.2, C[arms], np.zeros(12), C)
    rows, cols = np.array([3, 17, 0, 29]), np.array([5, 3, 28])
    np.testing.assert_allclose(gp.covariance_block(rows, cols), cov[np.ix_(rows, cols)], atol=1e-12)
    np.testing.assert_allclose(
        gp.covariance_block(rows, cols), gp.covariance()[np.ix_(rows, cols)], atol=1e-13
    )
    assert gp.covariance_block([], cols).shape == (0, 3)
    with pytest.raises(OutOfDomainError, match="candidate index 30 is outside 0..29"):
        gp.covariance_block([30], cols)


def test_retarget_on_a_continuous_gp(rng):
    kernel = Matern(0.5, nu=2.5)
    gp = ExactGP(kernel, 0.1)
    X = rng.uniform(0, 1, (12, 3))
    y = rng.normal(size=12)
    for x, v in zip(X, y):
        gp.update(x, float(v))
    gp.retarget([11, 7], [3.0, -2.0])
    y[[11, 7]] = [3.0, -2.0]
    Xq = rng.uniform(0, 1, (4, 3))
    np.testing.assert_allclose(gp.predict(Xq)[0], dense_posterior(kernel, 0.1, X, y, Xq)[0], atol=1e-10)


def test_fit_equals_incremental_updates(rng):
    kernel = SquaredExponential(0.3)
    C = rng.uniform(0, 1, (30, 2))
    arms = rng.integers(0, 30, 12)
    y = rng.normal(size=12)
    inc = ExactGP(kernel, 0.7, C, method="cholesky")
    for a, v in zip(arms, y):
        inc.update_arm(int(a), float(v))
    fit = ExactGP(kernel, 0.7, C, method="cholesky")
    fit.update_arm(3, 5.0)  # replaced by fit()
    fit.fit(C[arms], y, arms=arms)
    np.testing.assert_allclose(fit.mean, inc.mean, atol=1e-10)
    np.testing.assert_allclose(fit.var, inc.var, atol=1e-10)
    assert fit.info_gain == pytest.approx(inc.info_gain, rel=1e-10)
    Xq = rng.uniform(0, 1, (4, 2))
    np.testing.assert_allclose(fit.predict(Xq)[0], inc.predict(Xq)[0], atol=1e-10)
    fit.update_arm(0, 1.0)  # keeps working incrementally afterwards
    inc.update_arm(0, 1.0)
    np.testing.assert_allclose(fit.mean, inc.mean, atol=1e-10)


@pytest.mark.parametrize("with_candidates", [True, False])
def test_remove_oldest_equals_the_posterior_of_the_remaining_points(with_candidates, rng):
    kernel = Matern(0.4, nu=2.5)
    C = rng.uniform(0, 1, (25, 2))
    gp = ExactGP(kernel, 0.3, C if with_candidates else None, method="cholesky")
    X = rng.uniform(0, 1, (15, 2))
    y = rng.normal(size=15)
    for x, v in zip(X, y):
        gp.update(x, float(v))
    for k in range(1, 6):  # a sliding window: drop the oldest five, one by one
        gp.remove_oldest()
        ref = ExactGP(kernel, 0.3, C if with_candidates else None, method="cholesky")
        ref.fit(X[k:], y[k:])
        Xq = rng.uniform(0, 1, (6, 2))
        np.testing.assert_allclose(gp.predict(Xq)[0], ref.predict(Xq)[0], atol=1e-9)
        np.testing.assert_allclose(gp.predict(Xq)[1], ref.predict(Xq)[1], atol=1e-9)
        assert gp.info_gain == pytest.approx(ref.info_gain, rel=1e-9)
        if with_candidates:
            np.testing.assert_allclose(gp.mean, ref.mean, atol=1e-9)
            np.testing.assert_allclose(gp.var, ref.var, atol=1e-9)
    np.testing.assert_array_equal(gp.X, X[5:])
    gp.update(X[0], 1.0)  # and it keeps updating
    ref.update(X[0], 1.0)
    np.testing.assert_allclose(gp.predict(X[:3])[0], ref.predict(X[:3])[0], atol=1e-9)


def test_a_prior_factor_that_cannot_fit_in_memory_is_refused_in_one_line(monkeypatch):
    """Thompson sampling over 20,000 arms built the n x n prior factor (about 17 GB) and ended, minutes
    later, in a bare MemoryError from numpy; the need is now checked against the memory available."""
    from ckb.surrogates import gp as gp_module

    gp = ExactGP(SquaredExponential(0.3), 0.1, np.linspace(0, 1, 50)[:, None])
    monkeypatch.setattr(gp_module, "available_memory", lambda: 10_000)
    with pytest.raises(InvalidInputError, match=r"n = 50 candidates needs their n x n prior factor.*ckb-ucb"):
        gp.sample(np.random.default_rng(0))
    monkeypatch.setattr(gp_module, "available_memory", lambda: None)  # unknown: no check
    assert gp.sample(np.random.default_rng(0)).shape == (50,)
