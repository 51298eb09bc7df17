r"""Constrained expected improvement (Gardner et al., ICML 2014; Gelbart, Snoek & Adams, UAI 2014), the
conventional reference:

.. math::

    x_t = \arg\max_x\ \mathrm{EI}(x)\prod_j P(g_j(x) \le 0), \qquad
    \mathrm{EI}(x) = \sigma_f(x)\,h\big((\mu_f(x) - y^*)/\sigma_f(x)\big),\ h(u) = \varphi(u) + u\Phi(u),

in log form, :math:`\log h(u) + \log\sigma_f + \sum_j \log\Phi(-\mu_{g_j}/\sigma_{g_j})`, with :math:`y^*` the
best observed feasible objective (all observed constraints <= 0); before any feasible observation, the
probability of feasibility alone. Independent models of f and each g. No constants, no state.

:math:`\log h` is BoTorch's numerically stable helper (the one ``LogExpectedImprovement`` uses; BoTorch
exposes it only through that class, so it is imported from there, and a test pins the two together).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ckb.rules.base import Flag, Real, Rule
from ckb.violation import feasible_rows


class ConstrainedEIRule(Rule):
    """Constrained EI in log form (module docstring); torch only (the optimizer's world)."""

    constants: ClassVar[dict[str, Any]] = {}

    def begin_round(self) -> None:
        self.t += 1

    @staticmethod
    def incumbent(y: np.ndarray, c: np.ndarray) -> float | None:
        """The best observed feasible objective (maximization sense), None if nothing feasible yet."""
        feasible = feasible_rows(c)
        return float(np.asarray(y)[feasible].max()) if np.any(feasible) else None

    @staticmethod
    def score(mu_f, sd_f, best: float | None, mu_g, sd_g):
        """Log of EI over ``best`` (None: omitted) plus the log probabilities of feasibility."""
        return log_cei(mu_f, sd_f, best, mu_g, sd_g)


def log_cei(mu_f, sd_f, best: float | None, mu_g, sd_g):
    """Log of EI over ``best`` (None: omitted) plus the log probabilities :math:`P(g_j \\le 0)` (torch)."""
    import torch
    from botorch.acquisition.analytic import _log_ei_helper

    log_pof = torch.special.log_ndtr(-mu_g / sd_g).sum(-1)
    if best is None:
        return log_pof
    u = (mu_f - best) / sd_f
    return _log_ei_helper(u) + sd_f.log() + log_pof


def quantile_target(y, q: float | None) -> float | None:
    """The ``q`` quantile of the finite values of ``y`` (the models' units, maximization sense): the
    objective target of a search for a first feasible point; None when ``q`` is None or no value is
    finite (then the search seeks feasibility alone)."""
    y = np.asarray(y, dtype=float).ravel()
    y = y[np.isfinite(y)]
    if q is None or y.size == 0:
        return None
    return float(np.quantile(y, q))


def log_first_feasible(mu_f, sd_f, mu_g, sd_g, target: float | None = None):
    r"""The search for a first feasible point (torch): :math:`\sum_j \log\Phi(-\mu_{g_j}/\sigma_{g_j})`,
    plus :math:`\log\Phi((\mu_f - y_q)/\sigma_f)`, the probability of beating the target :math:`y_q`
    (:func:`quantile_target`), when ``target`` is given."""
    import torch

    value = log_cei(mu_f, sd_f, None, mu_g, sd_g)
    if target is None:
        return value
    return value + torch.special.log_ndtr((mu_f - target) / sd_f)


#: the constants of :class:`FeasibilityFirst`, merged into a rule's ``constants``
FIRST_CONSTANTS: dict[str, Any] = {
    "feasibility_first": Flag(),
    "first_quantile": Real(low=0.0, high=1.0, optional=True),
}


class FeasibilityFirst:
    """A rule's search for a first feasible point (constants ``feasibility_first`` and
    ``first_quantile``, :data:`FIRST_CONSTANTS`): while ``feasibility_first`` is on and no observed row
    of constraint values is <= 0 everywhere, the decision is the argmax of :func:`log_first_feasible`
    at the ``first_quantile`` quantile of the observed objective values (None: feasibility alone)."""

    def searching_feasible(self, c_seq) -> bool:
        """Whether this decision is in the feasibility-first phase: ``feasibility_first`` and no row of the
        observed constraint values ``c_seq`` (n, m) is <= 0 everywhere."""
        c = np.asarray(c_seq, dtype=float).reshape(-1, self.m)
        return bool(self.feasibility_first) and not bool(np.any(feasible_rows(c)))

    def first_target(self, y) -> float | None:
        """The feasibility-first phase's objective target: the ``first_quantile`` quantile of the observed
        objective values ``y`` (the models' units; None: no target)."""
        return quantile_target(y, self.first_quantile)

    @staticmethod
    def first_score(mu_f, sd_f, mu_g, sd_g, target=None):
        r"""The feasibility-first phase's score (torch): the log probability of feasibility, plus
        :math:`\log\Phi((\mu_f - y_q)/\sigma_f)` for a ``target`` :math:`y_q`
        (:func:`log_first_feasible`, pcei's first step)."""
        return log_first_feasible(mu_f, sd_f, mu_g, sd_g, target)
