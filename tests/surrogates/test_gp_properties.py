"""Property-based tests of the exact GP engine (hypothesis): random kernels, noise levels and data."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ckb.kernels import Matern, SquaredExponential
from ckb.surrogates import ExactGP
from tests.surrogates.gp_reference import reference_posterior

EPS = np.finfo(float).eps

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def models(draw, min_log_noise=-6.0):
    """A kernel (SE / Matérn 3/2 / Matérn 5/2, random lengthscale and variance), noise λ and 1-D candidates."""
    kind = draw(st.sampled_from(["se", "m15", "m25"]))
    ls = 10 ** draw(st.floats(-1.3, 0.3))
    v = 10 ** draw(st.floats(-1.0, 0.7))
    noise = 10 ** draw(st.floats(min_log_noise, 1.0))
    kernel = SquaredExponential(ls, v) if kind == "se" else Matern(ls, v, nu=1.5 if kind == "m15" else 2.5)
    n = draw(st.integers(2, 10))
    C = np.sort(np.array(draw(st.lists(st.floats(0, 1), min_size=n, max_size=n, unique=True))))[:, None]
    return kernel, noise, C


@st.composite
def arm_sequences(draw, n, max_size=60):
    """Arm indices with many repeats: drawn from a small random subset of the arms."""
    pool = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4))
    return draw(st.lists(st.sampled_from(pool) | st.integers(0, n - 1), min_size=0, max_size=max_size))


@SETTINGS
@given(
    model=models(),
    method=st.sampled_from(["auto", "cholesky", "dense"]),
    refresh_every=st.integers(0, 9),
    data=st.data(),
)
def test_variances_are_never_negative_and_match_dense_solve(model, method, refresh_every, data):
    kernel, noise, C = model
    n = len(C)
    arms = np.array(data.draw(arm_sequences(n)), dtype=int)
    y = np.array(data.draw(st.lists(st.floats(-3, 3), min_size=len(arms), max_size=len(arms))))
    gp = ExactGP(kernel, noise, C, method=method, refresh_every=refresh_every)
    for a, v in zip(arms, y):
        gp.update_arm(int(a), v)
    v0 = kernel.variance
    var = gp.var
    assert np.all(np.isfinite(var)) and np.all(var >= 0.0)
    assert np.all(var <= v0 * (1 + 1e-12))  # conditioning never increases the variance
    # the unclipped diagonal of the maintained covariance is >= 0 up to round-off
    assert np.diag(gp.covariance()).min() >= -1e-12 * v0
    Xq = np.linspace(-0.2, 1.2, 7)[:, None]
    _, pvar = gp.predict(Xq)
    assert np.all(pvar >= 0.0) and np.all(pvar <= v0 * (1 + 1e-12))
    _, pcov = gp.predict(Xq, full_cov=True)
    assert np.diag(pcov).min() >= -1e-12 * v0
    # agreement with the dense reference, to a round-off bound that scales with cond(K_t + λI)
    mean, cov = reference_posterior(kernel, noise, C[arms], y, C)
    kappa = np.linalg.cond(kernel(C[arms]) + noise * np.eye(len(arms))) if len(arms) else 1.0
    tol = 1e3 * EPS * kappa
    np.testing.assert_allclose(var, np.diag(cov), rtol=0, atol=tol * v0)
    np.testing.assert_allclose(gp.mean, mean, rtol=0, atol=tol * max(1.0, np.abs(mean).max()))


@SETTINGS
@given(
    model=models(min_log_noise=-3.0),
    method=st.sampled_from(["auto", "cholesky", "dense"]),
    data=st.data(),
)
def test_posterior_is_invariant_to_the_order_of_observations(model, method, data):
    kernel, noise, C = model
    n = len(C)
    arms = data.draw(arm_sequences(n, max_size=40))
    y = data.draw(st.lists(st.floats(-3, 3), min_size=len(arms), max_size=len(arms)))
    perm = np.array(data.draw(st.permutations(range(len(arms)))), dtype=int)
    arms, y = np.array(arms, dtype=int), np.array(y)
    gps = []
    for order in (np.arange(len(arms)), perm):
        gp = ExactGP(kernel, noise, C, method=method, refresh_every=5)
        for i in order:
            gp.update_arm(int(arms[i]), y[i])
        gps.append(gp)
    a, b = gps
    mean, cov = reference_posterior(kernel, noise, C[arms], y, C)
    floor = 1e-10 * max(1.0, np.abs(mean).max())
    for g in (a, b):
        np.testing.assert_allclose(g.mean, mean, rtol=1e-8, atol=floor)
        np.testing.assert_allclose(g.covariance(), cov, rtol=1e-8, atol=1e-10 * kernel.variance)
    np.testing.assert_allclose(a.mean, b.mean, rtol=1e-8, atol=floor)
    np.testing.assert_allclose(a.var, b.var, rtol=1e-8, atol=1e-10 * kernel.variance)
    # the information gain ½ ln det(I + K_t/λ) is a function of the set of points too
    np.testing.assert_allclose(a.info_gain, b.info_gain, rtol=1e-9, atol=1e-12)


@st.composite
def mixed_observations(draw, n, d):
    """A list of ('arm', index, y) and ('point', x, y) observations."""
    arm = st.tuples(st.just("arm"), st.integers(0, n - 1), st.floats(-3, 3))
    point = st.tuples(
        st.just("point"), st.lists(st.floats(0, 1), min_size=d, max_size=d).map(np.array), st.floats(-3, 3)
    )
    return draw(st.lists(arm | point, min_size=1, max_size=25))


@SETTINGS
@given(method=st.sampled_from(["auto", "cholesky", "dense"]), noise_exp=st.floats(-3, 0), data=st.data())
def test_mixed_arm_and_point_observations_in_any_order_match_dense_solve(method, noise_exp, data):
    kernel = Matern([0.3, 0.5], 1.2, nu=2.5)
    noise = 10**noise_exp
    C = np.random.default_rng(0).uniform(size=(6, 2))
    obs = data.draw(mixed_observations(6, 2))
    perm = data.draw(st.permutations(range(len(obs))))
    X = np.array([C[o[1]] if o[0] == "arm" else o[1] for o in obs])
    y = np.array([o[2] for o in obs])
    mean, cov = reference_posterior(kernel, noise, X, y, C)
    Xq = np.array([[0.5, 0.5], [1.5, -0.5]])
    pmean, pcov = reference_posterior(kernel, noise, X, y, Xq)
    for order in (range(len(obs)), perm):
        gp = ExactGP(kernel, noise, C, method=method, refresh_every=4)
        for i in order:
            kind, where, v = obs[i]
            if kind == "arm":
                gp.update_arm(where, v)
            else:
                gp.update(where, v)
        floor = 1e-10 * max(1.0, np.abs(mean).max())
        np.testing.assert_allclose(gp.mean, mean, rtol=1e-8, atol=floor)
        np.testing.assert_allclose(gp.covariance(), cov, rtol=1e-8, atol=1e-10)
        m, c = gp.predict(Xq, full_cov=True)
        np.testing.assert_allclose(m, pmean, rtol=1e-8, atol=floor)
        np.testing.assert_allclose(c, pcov, rtol=1e-8, atol=1e-10)
