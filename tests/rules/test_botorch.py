"""A rule's score as a BoTorch acquisition function on an ordinary BoTorch model, and the CEI helper
pinned to BoTorch's public LogExpectedImprovement."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("botorch")

from botorch.acquisition.analytic import LogExpectedImprovement  # noqa: E402
from botorch.models import SingleTaskGP  # noqa: E402
from botorch.optim import optimize_acqf  # noqa: E402

from ckb.rules import RPOLRule  # noqa: E402
from ckb.rules.botorch import RuleAcquisition, ScoreAcquisition  # noqa: E402
from ckb.rules.cei import log_cei  # noqa: E402


def _model(n_out=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(12, 2, generator=g, dtype=torch.float64)
    Y = torch.stack([torch.sin(3 * X[:, 0]), X.sum(-1) - 1.0, X[:, 0] - X[:, 1]][:n_out], dim=-1)
    return SingleTaskGP(X, Y)


def test_rule_acquisition_is_the_rule_score_of_the_posterior_bounds():
    model = _model()
    rule = RPOLRule(2, 20, B_f=1.0, B_g=1.0, R_f=0.1, R_g=0.1)
    rule.begin_round()
    rule.Q_asked = np.array([2.0, 0.5])
    acq = RuleAcquisition(model, rule.score, beta_f=2.0, beta_g=1.5)
    X = torch.rand(7, 1, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        got = acq(X)
        post = model.posterior(X)
        mu, sd = post.mean.squeeze(-2), post.variance.sqrt().squeeze(-2)
    ucb = (mu[:, 0] + 2.0 * sd[:, 0]).numpy()
    lcb = (mu[:, 1:] - 1.5 * sd[:, 1:]).numpy()
    want = ucb - (np.array([2.0, 0.5]) * np.maximum(lcb, 0.0)).sum(-1)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10)
    # usable by optimize_acqf as any acquisition function
    x, v = optimize_acqf(
        acq,
        bounds=torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64),
        q=1,
        num_restarts=2,
        raw_samples=16,
    )
    assert x.shape == (1, 2) and torch.isfinite(v)


def test_score_acquisition_wraps_a_function_of_points():
    acq = ScoreAcquisition(lambda X: -((X - 0.25) ** 2).sum(-1))
    X = torch.tensor([[[0.25, 0.25]], [[0.0, 1.0]]], dtype=torch.float64)
    np.testing.assert_allclose(acq(X).numpy(), [0.0, -(0.0625 + 0.5625)])


def test_log_cei_without_constraints_terms_is_botorch_log_ei():
    model = _model(n_out=1)
    X = torch.rand(9, 1, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        post = model.posterior(X)
        mu, sd = post.mean.squeeze(-2)[:, 0], post.variance.sqrt().squeeze(-2)[:, 0]
        want = LogExpectedImprovement(model, best_f=0.3)(X)
        got = log_cei(
            mu, sd, 0.3, torch.full((9, 1), -50.0, dtype=torch.float64), torch.ones(9, 1, dtype=torch.float64)
        )
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)  # posterior paths differ at ~1e-8
