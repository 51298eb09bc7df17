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


def test_rule_acquisition_refuses_what_it_would_score_wrong():
    """Before, a model with more or fewer outputs than the rule's m + 1 was scored silently (a rule for
    m = 2 weighed one constraint by both duals), a CEI-family score failed at the first call with a
    TypeError, q = 2 gave a (b, q) result, and a NaN width gave NaN scores."""
    from ckb.errors import InvalidInputError
    from ckb.rules.cei import ConstrainedEIRule

    rule = RPOLRule(2, 20, B_f=1.0, B_g=1.0, R_f=0.1, R_g=0.1)
    with pytest.raises(
        InvalidInputError, match=r"the model has 2 outputs, but this rule has m = 2 .* m \+ 1 = 3"
    ):
        RuleAcquisition(_model(n_out=2), rule.score, beta_f=2.0, beta_g=1.0)
    with pytest.raises(InvalidInputError, match="1 output"):
        RuleAcquisition(_model(n_out=1), rule.score, beta_f=2.0, beta_g=1.0)
    with pytest.raises(
        InvalidInputError, match=r"needs a score of \(f_hat, g_check\); .*takes \(mu_f, sd_f, best"
    ):
        RuleAcquisition(_model(), ConstrainedEIRule.score, beta_f=2.0, beta_g=1.0)
    for bad, what in ((float("nan"), "beta_f"), (-1.0, "beta_f"), ("2", "beta_f")):
        with pytest.raises(InvalidInputError, match=f"{what} must be a number >= 0, got"):
            RuleAcquisition(_model(), rule.score, beta_f=bad, beta_g=1.0)
    with pytest.raises(
        InvalidInputError, match=r"beta_g must be a number >= 0 or m = 2 of them, got \[1.0, 2.0, 3.0\]"
    ):
        RuleAcquisition(_model(), rule.score, beta_f=2.0, beta_g=[1.0, 2.0, 3.0])
    acq = RuleAcquisition(_model(), rule.score, beta_f=2.0, beta_g=[1.0, 0.5])
    with pytest.raises(AssertionError, match="q=1"):
        acq(torch.rand(4, 2, 2, dtype=torch.float64))
    x = torch.rand(1, 2, dtype=torch.float64)
    assert acq(x).shape == (1,)  # one point, one value (a 0-dim tensor before)
    np.testing.assert_allclose(acq(x).detach().numpy(), acq(x[None]).detach().numpy())


def test_a_rules_torch_score_follows_the_device_of_its_input():
    """The rule's state (duals, Q) was put on the CPU whatever the input's device: a GPU model failed with
    a device error. The meta device stands in for a GPU here."""
    from ckb.rules import PrimalDualRule
    from ckb.rules.base import like

    ref = torch.zeros(3, dtype=torch.float32, device="meta")
    out = like([1.0, 2.0], ref)
    assert out.device.type == "meta" and out.dtype == torch.float32
    rule = PrimalDualRule(2, 20, B=1.0, G=1.0, R=0.1, delta=0.5)
    rule.begin_round()
    f = torch.zeros(4, dtype=torch.float64, device="meta")
    g = torch.zeros(4, 2, dtype=torch.float64, device="meta")
    assert rule.score(f, g).device.type == "meta"
