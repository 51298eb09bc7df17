r"""``penalty-noisy``: Shi & Eryilmaz's epoch-based penalty method for noisy constraints (001, Algorithm 3).

Policy rounds are split into epochs of ``S`` rounds. Within epoch :math:`l` the multipliers
:math:`\kappa^l` are frozen and the rule is GP-UCB on the penalized objective
:math:`G_l = f - \sum_j \kappa^l_j g_j`, modeled by one GP fitted to the penalized observations
:math:`\tilde y - \sum_j \kappa^l_j \tilde c_j` of every complete point (001's relabel mode,
:mod:`ckb.policies.penalty`'s default: earlier points are re-expressed under the current multipliers);
the GP is refitted whenever the multipliers change. :math:`x = \arg\max \mu_{G_l} + \beta\sigma_{G_l}`.
After S observed rounds: :math:`\kappa^{l+1}_j = [\kappa^l_j + \mu\,\tfrac1S\sum_s c^s_j]^+`, :math:`\kappa^1 = 0`.

**At ask time**: only the argmax. **At tell time** (a point the policy chose): the epoch's sum of observed
constraint values; at the S-th tell of the epoch the multiplier update (this is where the rule needs
observations: it waits for the tells, so with pending points the epoch closes when its S-th result
arrives). Failed evaluations do not count.

Defaults on standardized outcomes: ``beta`` = 2.0 (``"theory"``: IGP-UCB's
:math:`B + R_l\sqrt{2(\hat\gamma + 1 + \ln(2L/\alpha))}` with :math:`R_l = \sqrt{1 + \|\kappa^l\|^2} R`,
``B`` = 5.0, ``R`` = 0.1, ``alpha`` = 0.05); ``S`` = :math:`\lceil\sqrt T\rceil` (T = policy rounds; the
paper's S = 20 was for T = 350; with a budget of 60 it would leave 2 multiplier updates, and S ≈ L ≈ √T
balances the within-epoch and across-epoch terms of the bound); ``mu`` = 0.5 (the paper's experiments;
``mu_scaling="sqrt-L"`` uses :math:`\mu/\sqrt L`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ckb._validation import check_scalar
from ckb.errors import InvalidInputError
from ckb.optimizer.acquisition import penalty_update
from ckb.optimizer.policies.base import OptimizerPolicy
from ckb.optimizer.policies.registry import OPTIMIZER_POLICIES


@OPTIMIZER_POLICIES.register("penalty-noisy", aliases=("shi-alg3",))
class PenaltyNoisy(OptimizerPolicy):
    __doc__ = __doc__

    def __init__(
        self,
        m: int,
        horizon: int,
        *,
        S: int | None = None,
        mu: float = 0.5,
        mu_scaling: str = "constant",
        beta: Any = None,
        B: float = 5.0,
        R: float = 0.1,
        alpha: float = 0.05,
    ) -> None:
        super().__init__(m, horizon)
        self.S = check_scalar(
            math.ceil(math.sqrt(self.horizon)) if S is None else S, "S (epoch length)", low=1, integer=True
        )
        self.L = math.ceil(self.horizon / self.S)
        if mu_scaling not in ("constant", "sqrt-L"):
            raise InvalidInputError(f"mu_scaling must be 'constant' or 'sqrt-L', got {mu_scaling!r}.")
        mu0 = check_scalar(mu, "mu", low=0.0)
        self.mu = mu0 / math.sqrt(self.L) if mu_scaling == "sqrt-L" else mu0
        self.B = check_scalar(B, "B", low=0.0)
        self.R = check_scalar(R, "R", low=0.0)
        self.alpha = check_scalar(
            alpha, "alpha", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False
        )
        self._beta_spec = beta
        self.kappa = np.zeros(self.m)
        self.epoch = 1
        self.in_epoch = 0
        self.epoch_sum = np.zeros(self.m)

    def targets(self, y, c):
        return {"pen": np.asarray(y, dtype=float) - np.asarray(c, dtype=float) @ self.kappa}

    def model_tag(self) -> str:
        return f"epoch-{self.epoch}"

    def decide(self, ctx):
        self.t += 1
        R_l = math.sqrt(1.0 + float(self.kappa @ self.kappa)) * self.R
        schedule = self._beta(self._beta_spec, self.B, R_l, self.alpha / (2 * self.L), "beta")
        models = ctx.models
        b = self._width(schedule, self.t, models, "pen")

        def ucb(X):
            mu, sd = models.mean_std(X)
            return mu[..., 0] + b * sd[..., 0]

        x, _ = ctx.maximize(ucb)
        return x, {"beta": b, "epoch": float(self.epoch), **self._named("kappa", self.kappa)}

    def observe(self, y: float, c: np.ndarray) -> None:
        self.in_epoch += 1
        self.epoch_sum = self.epoch_sum + np.asarray(c, dtype=float)
        if self.in_epoch == self.S:
            self.kappa = penalty_update(self.kappa, self.epoch_sum / self.S, self.mu)
            self.epoch += 1
            self.in_epoch = 0
            self.epoch_sum = np.zeros(self.m)

    def internals(self) -> dict[str, float]:
        return {"epoch": float(self.epoch), **self._named("kappa", self.kappa)}

    def _state(self) -> dict[str, Any]:
        return {
            "kappa": self.kappa.copy(),
            "epoch": self.epoch,
            "in_epoch": self.in_epoch,
            "epoch_sum": self.epoch_sum.copy(),
        }

    def _load(self, state: dict[str, Any]) -> None:
        self.kappa = np.asarray(state["kappa"], dtype=float).reshape(self.m).copy()
        self.epoch = int(state["epoch"])
        self.in_epoch = int(state["in_epoch"])
        self.epoch_sum = np.asarray(state["epoch_sum"], dtype=float).reshape(self.m).copy()
