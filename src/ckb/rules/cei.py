r"""Constrained expected improvement (Gardner et al., ICML 2014; Gelbart, Snoek & Adams, UAI 2014), the
conventional reference:

.. math::

    x_t = \arg\max_x\ \mathrm{EI}(x)\prod_j P(g_j(x) \le 0), \qquad
    \mathrm{EI}(x) = \sigma_f(x)\,h\big((\mu_f(x) - y^*)/\sigma_f(x)\big),\ h(u) = \varphi(u) + u\Phi(u),

in log form, :math:`\log h(u) + \log\sigma_f + \sum_j \log\Phi(-\mu_{g_j}/\sigma_{g_j})`, with :math:`y^*` the
best observed feasible objective (all observed constraints <= 0); before any feasible observation, the
probability of feasibility alone. Independent models of f and each g. No constants, no state.

At a zero standard deviation the model is certain and the terms are their limits: :math:`\mathrm{EI} =
[\mu_f - y^*]^+`, so :math:`\log(\mu_f - y^*)` when :math:`\mu_f > y^*` and :math:`-\infty` otherwise;
:math:`P(g_j \le 0) = 1` when :math:`\mu_{g_j} \le 0` and 0 otherwise (the formula gave NaN for
:math:`\sigma_f = 0` with :math:`\mu_f > y^*` and for :math:`\sigma_{g_j} = 0` with :math:`\mu_{g_j} = 0`).
Every value at a positive standard deviation is the formula's, to the bit, and so is its gradient.

:math:`\log h` is BoTorch's numerically stable helper (the one ``LogExpectedImprovement`` uses; BoTorch
exposes it only through that class, so it is imported from there, and a test pins the two together).
"""

from __future__ import annotations

import math
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
    """Log of EI over ``best`` (None: omitted) plus the log probabilities :math:`P(g_j \\le 0)` (torch);
    a zero standard deviation gives the certain model's limits (module docstring)."""
    import torch
    from botorch.acquisition.analytic import _log_ei_helper

    # zero widths: the limits, and a width of 1 in the formula's (unused) branch, so that no NaN enters
    # the gradient; elsewhere the formula's values and gradients unchanged
    certain_g = sd_g == 0.0
    limit_g = torch.where(mu_g <= 0.0, 0.0, torch.where(mu_g > 0.0, -math.inf, mu_g.detach()))  # NaN: NaN
    log_pof = torch.where(
        certain_g, limit_g, torch.special.log_ndtr(-mu_g / torch.where(certain_g, 1.0, sd_g))
    )
    log_pof = log_pof.sum(-1)
    if best is None:
        return log_pof
    certain_f = sd_f == 0.0
    sd, gain = torch.where(certain_f, 1.0, sd_f), mu_f - best
    limit_f = torch.where(certain_f, gain, 1.0).clamp_min(0.0).log()  # log [mu_f - best]^+
    return torch.where(certain_f, limit_f, _log_ei_helper(gain / sd) + sd.log()) + log_pof


def above_floor(value, floor: float, band: float = 1.0):
    r"""``value`` (torch) kept above ``floor``: unchanged where it exceeds :math:`F + b` (``floor`` plus
    ``band``), and at or below that mapped by the strictly increasing

    .. math::

        v \mapsto F + b / \big(1 + \log(1 + F + b - v)\big) \in (F, F + b]

    (continuous at :math:`F + b`; :math:`-\infty` goes to the smallest float above :math:`F`, NaN stays
    NaN). A rule whose score is a value on its allowed set and ``floor`` minus a distance elsewhere keeps
    its promise that every allowed point outranks every other with it, whatever the value's scale, and the
    order among allowed points (to the float resolution at :math:`F`, 1.2e-10 at 1e6: two values whose
    depths below the floor differ by a relative 1e-7 stay apart down to :math:`-10^{12}`, by 1e-4 down
    to :math:`-10^{300}`; closer ones tie). A clamp would tie them all instead and
    give a maximizer no gradient there; this map's gradient is the value's, times
    :math:`b / ((1 + \ell)^2 (1 + F + b - v))` with :math:`\ell` the logarithm: small but of the right sign.
    Values above :math:`F + b` and their gradients are returned to the bit."""
    import torch

    top = floor + band
    squeezed = floor + band / (1.0 + torch.log1p((top - value).clamp_min(0.0)))
    return torch.where(value > top, value, squeezed.clamp_min(math.nextafter(floor, math.inf)))


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
