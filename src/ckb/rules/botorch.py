r"""Rule scores as BoTorch acquisition functions (imports torch and BoTorch; nothing else in
:mod:`ckb.rules` does).

- :class:`ScoreAcquisition`: any function of a batch of points ``X`` (b, d) -> (b,) as an
  ``AcquisitionFunction`` for ``optimize_acqf`` (q = 1); the optimizer's maximizer uses it.
- :class:`RuleAcquisition`: a rule's score on *any* BoTorch model whose posterior has m + 1 outputs
  ``[f, g_1, ..., g_m]`` (f maximized, :math:`g_j \le 0` feasible; e.g. a multi-output ``SingleTaskGP``
  or a ``ModelListGP``): from the posterior mean :math:`\mu` and standard deviation :math:`\sigma` at X it
  forms :math:`\hat f = \mu_f + \beta_f\sigma_f` and :math:`\check g_j = \mu_{g_j} - \beta_g\sigma_{g_j}` and
  returns ``score(f_hat, g_check)``: e.g. ``RuleAcquisition(model, rule.score, beta_f=2, beta_g=2)`` with a
  :class:`~ckb.rules.RPOLRule`, :class:`~ckb.rules.ConfigRule` or a UCB-type
  :class:`~ckb.rules.PrimalDualRule` (whose duals are then those of the rule's current state).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from botorch.acquisition import AcquisitionFunction


class ScoreAcquisition(AcquisitionFunction):
    """``fn(X)`` with X (b, d) -> (b,) as an acquisition function over (b, 1, d) batches."""

    def __init__(self, fn: Callable) -> None:
        super().__init__(model=torch.nn.Module())
        self.fn = fn

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return self.fn(X.squeeze(-2))


class RuleAcquisition(AcquisitionFunction):
    """A rule's score from a BoTorch model's posterior (module docstring)."""

    def __init__(self, model, score: Callable, beta_f: float, beta_g: float | list[float]) -> None:
        super().__init__(model=model)
        self.score = score
        self.beta_f = float(beta_f)
        self.register_buffer("beta_g", torch.as_tensor(beta_g, dtype=torch.float64))

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        post = self.model.posterior(X)
        mean = post.mean.squeeze(-2)
        sd = post.variance.clamp_min(1e-24).sqrt().squeeze(-2)
        f_hat = mean[..., 0] + self.beta_f * sd[..., 0]
        g_check = mean[..., 1:] - self.beta_g.to(mean) * sd[..., 1:]
        return self.score(f_hat, g_check)
