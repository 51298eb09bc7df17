"""Shared by rpol-ucb and config: UCB of f and LCBs of the constraints, widths from the rule.

``feasibility_first`` (on for ``rpol-ucb``, off for ``config``, whose fallback already seeks
feasibility): while no evaluation has satisfied every constraint, the ask is the point most likely
feasible and better than the ``first_quantile`` (0.5) quantile of the observed objective values (phase 0
in the trial's info), as the optimizer's other policies do. The papers' rules have no such step; RPOL
without it evaluated no feasible point on the speed reducer in 5 of 5 seeds at 60 evaluations, nor on
Gardner 2 in 3 of 5 (``docs/results-constrained-benchmark.md``)."""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np

from ckb.optimizer.policies.base import RuleOptimizerPolicy


class UcbLcb(RuleOptimizerPolicy):
    """``beta`` (2.0) widens f's UCB, ``beta_g`` (default ``beta``) the constraints' LCBs; ``"theory"``
    uses ``B_f`` (5.0), ``B_g`` (5.0), ``R_f`` = ``R_g`` (0.1) and ``p`` (0.05, as RPOL's ln(2/p)).
    ``R`` (one level for both) is deprecated: use ``R_f`` and ``R_g``, the names the harness uses."""

    rule_defaults: ClassVar[dict[str, Any]] = {
        "B_f": 5.0,
        "B_g": 5.0,
        "R_f": 0.1,
        "R_g": 0.1,
        "p": 0.05,
        "beta": 2.0,
        "beta_g": None,
        "feasibility_first": True,
    }

    def __init__(self, m: int, horizon: int, *, R: float | None = None, **params: Any) -> None:
        if R is not None:
            warnings.warn(
                f"{self.name or 'this policy'}: R is deprecated; pass R_f and R_g (R sets both).",
                DeprecationWarning,
                stacklevel=3,
            )
            params.setdefault("R_f", R)
            params.setdefault("R_g", R)
        super().__init__(m, horizon, **params)

    def decide(self, ctx):
        """A rule whose score takes (UCB of f, LCBs of g): its argmax, and :meth:`_decision_info`."""
        self._begin()
        x = self._first_feasible(ctx)
        if x is not None:  # no feasible evaluation yet: the search for one
            return x, {**self.internals(), "phase": 0.0}
        _, _, bounds = self._bounds(ctx)
        x, _ = ctx.maximize(lambda X: self.rule.score(*bounds(X)))
        return x, self._decision_info(bounds, x)

    def _decision_info(self, bounds, x: np.ndarray) -> dict[str, Any]:
        """What the trial records of the decision at ``x`` (``bounds``: X -> (UCB_f, LCB_g)): the rule's
        internals."""
        return self.rule.internals()

    def observe(self, y: float, c: np.ndarray) -> None:
        self.rule.observe(c)

    def _bounds(self, ctx):
        """Widths for this round and a function X -> (UCB_f (b,), LCB_g (b, m)), one posterior call."""
        models = ctx.models
        bf, bg = self.rule.widths(models.view)

        def bounds(X):
            mu, sd = models.mean_std(X)
            return mu[..., 0] + bf * sd[..., 0], mu[..., 1:] - bg * sd[..., 1:]

        return bf, bg, bounds

    @staticmethod
    def _lcb_at(bounds, x: np.ndarray) -> np.ndarray:
        import torch

        with torch.no_grad():
            return bounds(torch.as_tensor(x[None, :]))[1].numpy().reshape(-1)
