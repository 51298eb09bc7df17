"""The fitted GPs: posteriors against a dense reference with the fitted hyperparameters, pending-point
conditioning, and hyperparameter reuse."""

import numpy as np
import pytest
import torch

from ckb.optimizer.models import Models


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (12, 2))
    f = 3.0 + 2.0 * np.sin(4 * X[:, 0]) * X[:, 1]
    g = 10.0 + X[:, 0] - X[:, 1]  # a large offset: the per-target standardization must undo it
    return X, {"f": f, "g0": g}


@pytest.fixture(scope="module")
def models(data):
    X, targets = data
    return Models(X, targets)


def _reference(models, name, Xq):
    """Exact GP posterior of one target with the model's fitted RBF hyperparameters (numpy)."""
    j = models.index(name)
    m = models.model
    ls = m.covar_module.lengthscale.detach().numpy()[j].reshape(-1)
    noise = float(m.likelihood.noise.detach().numpy().reshape(-1)[j])
    c = float(m.mean_module.constant.detach().numpy().reshape(-1)[j])
    X, z = models.X, (models.V[:, j] - models.shift[j]) / models.scale[j]

    def k(A, B):
        d2 = (((A[:, None, :] - B[None, :, :]) / ls) ** 2).sum(-1)
        return np.exp(-0.5 * d2)

    K = k(X, X) + noise * np.eye(len(X))
    Ks = k(Xq, X)
    mu = c + Ks @ np.linalg.solve(K, z - c)
    var = 1.0 - np.einsum("ij,ji->i", Ks, np.linalg.solve(K, Ks.T))
    return models.shift[j] + models.scale[j] * mu, models.scale[j] * np.sqrt(var)


def test_posterior_in_target_units_matches_a_dense_reference(models):
    Xq = np.random.default_rng(1).uniform(0, 1, (7, 2))
    mu, sd = models.mean_std(torch.as_tensor(Xq))
    for j, name in enumerate(models.names):
        ref_mu, ref_sd = _reference(models, name, Xq)
        np.testing.assert_allclose(mu[:, j].detach().numpy(), ref_mu, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(sd[:, j].detach().numpy(), ref_sd, rtol=1e-5, atol=1e-8)


def test_fit_explains_the_data(models, data):
    X, targets = data
    mu, _ = models.mean_std(torch.as_tensor(X))
    assert np.max(np.abs(mu[:, 1].detach().numpy() - targets["g0"])) < 0.05  # g is smooth and noiseless
    assert models.fit_ok


def test_conditioning_on_pending_points_keeps_the_mean_and_shrinks_the_variance(models):
    P = np.array([[0.5, 0.5], [0.9, 0.1]])
    cond = models.condition(P)
    Xq = torch.as_tensor(np.vstack([P, np.random.default_rng(2).uniform(0, 1, (20, 2))]))
    mu0, sd0 = models.mean_std(Xq)
    mu1, sd1 = cond.mean_std(Xq)
    np.testing.assert_allclose(mu1.detach().numpy(), mu0.detach().numpy(), atol=1e-8)
    assert np.all(sd1.detach().numpy() <= sd0.detach().numpy() + 1e-12)
    assert np.all(sd1.detach().numpy()[:2] < 0.9 * sd0.detach().numpy()[:2])
    assert models.X.shape == (12, 2) and cond.X.shape == (14, 2)  # the original is untouched


def test_stored_hyperparameters_reproduce_the_model_without_refitting(models, data):
    X, targets = data
    again = Models(X, targets, hyper=models.hyper, fit=False)
    Xq = torch.as_tensor(np.random.default_rng(3).uniform(0, 1, (5, 2)))
    for a, b in zip(models.mean_std(Xq), again.mean_std(Xq)):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert set(models.hyper) == {
        "likelihood.noise_covar.raw_noise", "mean_module.raw_constant", "covar_module.raw_lengthscale"
    }  # fmt: skip


def test_sample_paths_are_differentiable_and_seeded(models):
    Xq = torch.as_tensor(np.random.default_rng(4).uniform(0, 1, (6, 2)), dtype=torch.float64).requires_grad_()
    torch.manual_seed(0)
    a = models.sample_path()(Xq)
    torch.manual_seed(0)
    b = models.sample_path()(Xq)
    assert a.shape == (6, 2) and torch.equal(a, b)
    a.sum().backward()
    assert Xq.grad is not None and torch.all(torch.isfinite(Xq.grad))
    # a path stays within a few posterior standard deviations of the mean
    mu, sd = models.mean_std(Xq.detach())
    assert torch.all(((a.detach() - mu) / sd).abs() < 6)


def test_view_reports_information_gain_and_noise(models):
    v = models.view("f")
    m = models.model
    K = m.covar_module(torch.as_tensor(models.X)).to_dense().detach().numpy()[0]
    noise = float(m.likelihood.noise.detach().numpy().reshape(-1)[0])
    assert v.noise == pytest.approx(noise)
    assert v.info_gain == pytest.approx(0.5 * np.linalg.slogdet(np.eye(12) + K / noise)[1])


def test_cached_posterior_equals_gpytorchs(models):
    Xq = torch.as_tensor(np.random.default_rng(5).uniform(0, 1, (3, 4, 2)))  # any batch shape
    mu, sd = models.mean_std(Xq)
    post = models.model.posterior(Xq)
    ref_mu = torch.as_tensor(models.shift) + torch.as_tensor(models.scale) * post.mean
    ref_sd = torch.as_tensor(models.scale) * post.variance.sqrt()
    assert mu.shape == (3, 4, 2)
    np.testing.assert_allclose(mu.detach().numpy(), ref_mu.detach().numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(sd.detach().numpy(), ref_sd.detach().numpy(), rtol=1e-8, atol=1e-10)
    cond = models.condition(np.array([[0.3, 0.3]]))
    post = cond.model.posterior(Xq)
    np.testing.assert_allclose(
        cond.mean_std(Xq)[1].detach().numpy(),
        (torch.as_tensor(models.scale) * post.variance.sqrt()).detach().numpy(),
        rtol=1e-8,
        atol=1e-10,
    )


def test_lengthscales_are_the_kernels_per_target(models):
    ls = models.lengthscales()
    assert ls.shape == (models.k, 2) and np.all(ls > 0)
    for j in range(models.k):
        ref = models.model.covar_module.lengthscale.detach().numpy()[j].reshape(-1)
        np.testing.assert_array_equal(ls[j], ref)


def test_a_noise_floor_bounds_the_fitted_noise_and_survives_conditioning(data):
    X, targets = data
    low = Models(X, targets, noise_floor=1e-6)
    for m in (low, low.condition(np.array([[0.5, 0.5]]))):
        lik = m.model.likelihood
        assert lik.noise_covar.raw_noise_constraint.lower_bound.item() == pytest.approx(1e-6)
        assert torch.all(lik.noise >= 1e-6)
    default = Models(X, targets)
    assert default.model.likelihood.noise_covar.raw_noise_constraint.lower_bound.item() == pytest.approx(1e-4)
    assert set(low.hyper) == set(default.hyper)


def test_huge_targets_are_standardized_without_overflow():
    from ckb.optimizer.models import _mean_sd

    V = np.array([[1e300, 1.0], [-1e300, 2.0], [1.7e308, 3.0]])
    mean, sd = _mean_sd(V)
    assert np.all(np.isfinite(mean)) and np.all(np.isfinite(sd)) and sd[0] > 1e300
    assert mean[1] == 2.0 and sd[1] == 1.0  # the plain formulas where they do not overflow


def test_a_failed_fit_is_reported_and_keeps_the_previous_hyperparameters(data, monkeypatch, models):
    import botorch.fit
    from botorch.exceptions import ModelFittingError

    X, targets = data

    def fails(mll, **kw):
        raise ModelFittingError("All attempts to fit the model have failed.")

    monkeypatch.setattr(botorch.fit, "fit_gpytorch_mll", fails)
    again = Models(X, targets, hyper=models.hyper)
    assert not again.fit_ok and len(again.failures) == 2
    assert (
        again.failures[0] == "fit of f failed: ModelFittingError: All attempts to fit the model have failed."
    )
    for k, v in models.hyper.items():
        np.testing.assert_array_equal(again.hyper[k], v)


def _mll_per_target(models) -> list[float]:
    """The fitted objective (marginal log likelihood per point, with the priors) of each target's GP."""
    from gpytorch.mlls import ExactMarginalLogLikelihood

    from ckb.optimizer.models import _build, _load_hyper

    X = torch.as_tensor(models.X)
    Z = torch.as_tensor((models.V - models.shift) / models.scale)
    out = []
    for j in range(models.k):
        mj = _build(X, Z[:, j : j + 1])
        _load_hyper(mj, {n: np.asarray(v)[j] for n, v in models.hyper.items()})
        mj.train()
        with torch.no_grad():
            out.append(float(ExactMarginalLogLikelihood(mj.likelihood, mj)(mj(X), Z[:, j])))
    return out


def test_a_fit_tolerance_stops_the_fit_near_the_same_optimum(data, monkeypatch):
    import ckb.optimizer.models as M

    X, targets = data
    seen = []
    fit_one = M._fit_one
    monkeypatch.setattr(M, "_fit_one", lambda m, tol=None: seen.append(tol) or fit_one(m, tol))
    exact = Models(X, targets)
    loose = Models(X, targets, fit_tolerance=1e-6)
    assert seen == [None, None, 1e-6, 1e-6]  # reaches every target's fit
    assert loose.fit_ok
    # from the same start, stopping at a relative improvement of 1e-6 per iteration leaves the objective
    # within 1e-4 of the tight fit's
    for a, b in zip(_mll_per_target(exact), _mll_per_target(loose)):
        assert b == pytest.approx(a, abs=1e-4)


def test_zero_prior_mean_posterior_matches_a_dense_reference(models):
    # the same kernel hyperparameters, prior mean 0 in the targets' units (c0 = -shift/scale standardized)
    Xq = np.vstack([np.random.default_rng(2).uniform(0, 1, (5, 2)), [[40.0, -40.0]]])  # and one far away
    mu0, sd0 = models.mean_std(torch.as_tensor(Xq), zero_prior_mean=True)
    _, sd = models.mean_std(torch.as_tensor(Xq))
    np.testing.assert_array_equal(sd0.numpy(), sd.numpy())
    m = models.model
    for j in range(models.k):
        ls = m.covar_module.lengthscale.detach().numpy()[j].reshape(-1)
        noise = float(m.likelihood.noise.detach().numpy().reshape(-1)[j])
        c0 = -models.shift[j] / models.scale[j]
        z = (models.V[:, j] - models.shift[j]) / models.scale[j]
        k = lambda A, B, ls=ls: np.exp(-0.5 * ((((A[:, None, :] - B[None, :, :]) / ls) ** 2).sum(-1)))
        K = k(models.X, models.X) + noise * np.eye(len(models.X))
        ref = models.shift[j] + models.scale[j] * (c0 + k(Xq, models.X) @ np.linalg.solve(K, z - c0))
        np.testing.assert_allclose(mu0[:, j].numpy(), ref, rtol=1e-6, atol=1e-8)
    assert abs(float(mu0[-1, 1])) < 1e-8  # far from the data: 0, not the data's average (about 10)
