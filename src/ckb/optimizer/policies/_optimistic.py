"""Shared by rpol-ucb and config: UCB of f and LCBs of the constraints with settable widths."""

from __future__ import annotations

from typing import Any

import numpy as np

from ckb._validation import check_scalar
from ckb.optimizer.policies.base import OptimizerPolicy


class UcbLcb(OptimizerPolicy):
    """``beta`` (2.0) widens f's UCB, ``beta_g`` (default ``beta``) the constraints' LCBs; ``"theory"``
    uses ``B_f`` (5.0), ``B_g`` (5.0), ``R`` (0.1) and ``p`` (0.05, as RPOL's ln(2/p))."""

    def __init__(
        self,
        m: int,
        horizon: int,
        *,
        beta: Any = None,
        beta_g: Any = None,
        B_f: float = 5.0,
        B_g: float = 5.0,
        R: float = 0.1,
        p: float = 0.05,
    ) -> None:
        super().__init__(m, horizon)
        self.B_f = check_scalar(B_f, "B_f", low=0.0)
        self.B_g = check_scalar(B_g, "B_g", low=0.0)
        self.R = check_scalar(R, "R", low=0.0)
        self.p = check_scalar(
            p, "p (failure probability)", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False
        )
        self.beta_f = self._beta(beta, self.B_f, self.R, self.p / 2, "beta")
        self.beta_g = self._beta(beta if beta_g is None else beta_g, self.B_g, self.R, self.p / 2, "beta_g")

    def _bounds(self, ctx):
        """Widths for this round and a function X -> (UCB_f (b,), LCB_g (b, m)), one posterior call."""
        models = ctx.models
        bf = self._width(self.beta_f, self.t, models, "f")
        bg = max(self._width(self.beta_g, self.t, models, f"g{j}") for j in range(self.m))

        def bounds(X):
            mu, sd = models.mean_std(X)
            return mu[..., 0] + bf * sd[..., 0], mu[..., 1:] - bg * sd[..., 1:]

        return bf, bg, bounds

    @staticmethod
    def _lcb_at(bounds, x: np.ndarray) -> np.ndarray:
        import torch

        with torch.no_grad():
            return bounds(torch.as_tensor(x[None, :]))[1].numpy().reshape(-1)
