r"""Rule scores as BoTorch acquisition functions (imports torch and BoTorch; nothing else in
:mod:`ckb.rules` does).

- :class:`ScoreAcquisition`: any function of a batch of points ``X`` (b, d) -> (b,) as an
  ``AcquisitionFunction`` for ``optimize_acqf`` (q = 1); the optimizer's maximizer uses it.
- :class:`RuleAcquisition`: the score of a rule that decides on estimates of f and g (:class:`~ckb.rules.RPOLRule`,
  :class:`~ckb.rules.ConfigRule`, a UCB-type :class:`~ckb.rules.PrimalDualRule`,
  :class:`~ckb.rules.virtual_queue.VirtualQueueRule`: ``rule.score(f_hat, g_check)``) on *any* BoTorch
  model whose posterior has m + 1 outputs ``[f, g_1, ..., g_m]`` (f maximized: model ``-f`` for a
  minimized objective; :math:`g_j \le 0` feasible; e.g. a multi-output ``SingleTaskGP`` or a
  ``ModelListGP``). From the posterior mean :math:`\mu` and standard deviation :math:`\sigma` at X it
  forms :math:`\hat f = \mu_f + \beta_f\sigma_f` and :math:`\check g_j = \mu_{g_j} - \beta_g\sigma_{g_j}`
  and returns ``score(f_hat, g_check)``, one value per point (q = 1, as BoTorch's analytic acquisition
  functions: X of shape ``batch x 1 x d``), e.g. ``RuleAcquisition(model, rule.score, beta_f=2,
  beta_g=2)``.

  The widths are ``beta_f`` and ``beta_g`` given here (the rule's own width settings serve the harness
  and the optimizer, not this class), and the rule's state is yours to drive between rounds, as
  :mod:`ckb.optimizer.policies` does: e.g. ``rule.begin_round()`` before the round and
  ``rule.dual_step(g_check_at_x)`` after it for the primal-dual rule, whose duals stay 0 (the
  constraints ignored) otherwise; ``rule.observe(c)`` for RPOL's Q. The rules of the CEI family (their
  score needs the incumbent and the standard deviations) and the penalty methods (which model a
  penalized objective) have no score of (f_hat, g_check): wrap a function of X in
  :class:`ScoreAcquisition` for them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import numpy as np
import torch
from botorch.acquisition import AcquisitionFunction
from botorch.utils.transforms import t_batch_mode_transform

from ckb.errors import InvalidInputError


class ScoreAcquisition(AcquisitionFunction):
    """``fn(X)`` with X (b, d) -> (b,) as an acquisition function over ``batch x 1 x d`` batches (q = 1)."""

    def __init__(self, fn: Callable) -> None:
        super().__init__(model=torch.nn.Module())
        self.fn = fn

    @t_batch_mode_transform(expected_q=1)
    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return self.fn(X.squeeze(-2))


class RuleAcquisition(AcquisitionFunction):
    """A rule's score from a BoTorch model's posterior (module docstring). Checked when built: the score
    takes (f_hat, g_check); the model has m + 1 outputs (m: the rule's number of constraints when
    ``score`` is a rule's method); the widths are finite and >= 0 (``beta_g``: one, or one per
    constraint)."""

    def __init__(self, model, score: Callable, beta_f: float, beta_g: float | list[float]) -> None:
        super().__init__(model=model)
        _check_score(score)
        m = _check_outputs(model, score)
        self.score = score
        self.beta_f = float(_check_widths(beta_f, "beta_f", 1)[0])
        beta_g = _check_widths(beta_g, "beta_g", m)
        self.register_buffer("beta_g", torch.as_tensor(beta_g, dtype=torch.float64))

    @t_batch_mode_transform(expected_q=1)
    def forward(self, X: torch.Tensor) -> torch.Tensor:
        post = self.model.posterior(X)
        mean = post.mean.squeeze(-2)
        sd = post.variance.clamp_min(1e-24).sqrt().squeeze(-2)
        f_hat = mean[..., 0] + self.beta_f * sd[..., 0]
        g_check = mean[..., 1:] - self.beta_g.to(mean) * sd[..., 1:]
        return self.score(f_hat, g_check)


def _check_score(score: Callable) -> None:
    """A score of (f_hat, g_check): a rule of the CEI family's score (mu_f, sd_f, best, mu_g, sd_g) or a
    rule with no score (the penalty methods) is refused here, not at the first call."""
    if not callable(score):
        raise InvalidInputError(
            f"RuleAcquisition takes a rule's score function, got {type(score).__name__}: pass rule.score."
        )
    try:
        params = inspect.signature(score).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: trust it
        return
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required = [p.name for p in params if p.kind in kinds and p.default is inspect.Parameter.empty]
    if len(required) != 2:
        name = getattr(score, "__qualname__", repr(score))
        raise InvalidInputError(
            f"RuleAcquisition needs a score of (f_hat, g_check); {name} takes ({', '.join(required)}). "
            "Wrap a function of X in ScoreAcquisition instead (rules of the CEI family)."
        )


def _check_outputs(model, score: Callable) -> int | None:
    """The number of constraints: the model's outputs less f, checked against the rule's ``m``."""
    outputs = getattr(model, "num_outputs", None)
    m = getattr(getattr(score, "__self__", None), "m", None)
    if outputs is None:
        return m
    if outputs < 2:
        raise InvalidInputError(
            f"the model has {outputs} output(s); RuleAcquisition needs [f, g_1, ..., g_m]: m + 1 >= 2 outputs."
        )
    if m is not None and outputs != m + 1:
        raise InvalidInputError(
            f"the model has {outputs} outputs, but this rule has m = {m} constraints: it needs m + 1 = {m + 1} "
            "([f, g_1, ..., g_m])."
        )
    return outputs - 1


def _check_widths(value, name: str, m: int | None) -> np.ndarray:
    """A width: finite numbers >= 0, one or ``m``."""
    try:
        arr = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        arr = None
    if isinstance(value, (str, bytes, bool)) or arr is None or not arr.size:
        raise InvalidInputError(f"{name} must be a number >= 0, got {value!r}.")
    sizes = (1,) if m is None or name == "beta_f" else (1, m)
    if arr.size not in sizes or not np.all(np.isfinite(arr)) or np.any(arr < 0):
        what = "a number >= 0" if sizes == (1,) else f"a number >= 0 or m = {m} of them"
        raise InvalidInputError(f"{name} must be {what}, got {np.asarray(value).tolist()!r}.")
    return arr if arr.size > 1 else arr[:1]
