r"""``penalty-noisy``: the epoch-based penalty method for noisy constraints of Shi & Eryilmaz (2022),
Algorithm 3.

Policy rounds are split into epochs of ``S`` rounds. Within epoch :math:`l` the multipliers
:math:`\kappa^l` are frozen and the rule is GP-UCB on the penalized objective
:math:`G_l = f - \sum_j \kappa^l_j g_j`, modeled by one GP fitted to the penalized observations
:math:`\tilde y - \sum_j \kappa^l_j \tilde c_j` of every complete point (the relabel mode,
:mod:`ckb.policies.penalty`'s default, a choice the paper leaves open: earlier points are re-expressed
under the current multipliers); the GP is refitted whenever the multipliers change.
:math:`x = \arg\max \mu_{G_l} + \beta\sigma_{G_l}`.
After S observed rounds (except after the last epoch, as in the harness): :math:`\kappa^{l+1}_j = [\kappa^l_j + \mu\,\tfrac1S\sum_s c^s_j]^+`, :math:`\kappa^1 = 0`.

**At ask time**: only the argmax. **At tell time** (a point the policy chose): the epoch's sum of observed
constraint values; at the S-th tell of the epoch the multiplier update (this is where the rule needs
observations: it waits for the tells, so with pending points the epoch closes when its S-th result
arrives). Failed evaluations do not count.

**Feasibility first** (``feasibility_first``, on by default here; ``False`` gives Algorithm 3 as
written, which has none): while no evaluation has satisfied every constraint, the policy models the
objective and each constraint instead of the penalized objective and asks the point most likely feasible
and better than the ``first_quantile`` (0.5) quantile of the observed objective values (phase 0 in the
trial's info), as the optimizer's other policies do; the epochs and multipliers go on counting the
observed constraint values meanwhile. Without it Algorithm 3 evaluated no feasible point on Gardner's
second problem and the tension/compression spring in any of 5 seeds (0-4) at 60 evaluations.

Defaults on standardized outcomes: ``beta`` = 2.0 (``"theory"``: IGP-UCB's
:math:`B + R_l\sqrt{2(\hat\gamma + 1 + \ln(2L/\alpha))}` with :math:`R_l = \sqrt{1 + \|\kappa^l\|^2} R`,
``B`` = 5.0, ``R`` = 0.1, ``alpha`` = 0.05); ``S`` = :math:`\lceil\sqrt T\rceil` (T = policy rounds; the
paper's S = 20 was for T = 350; with a budget of 60 it would leave 2 multiplier updates, and S ≈ L ≈ √T
balances the within-epoch and across-epoch terms of the bound); ``mu`` = 0.5 (the paper's experiments;
``mu_scaling="sqrt-L"`` uses :math:`\mu/\sqrt L`).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from ckb.optimizer.policies.base import STANDARDIZED_DEFAULTS, RuleOptimizerPolicy
from ckb.optimizer.policies.registry import OPTIMIZER_POLICIES
from ckb.rules import named
from ckb.rules.penalty import PenaltyNoisyRule


@OPTIMIZER_POLICIES.register("penalty-noisy", aliases=("shi-alg3",))
class PenaltyNoisy(RuleOptimizerPolicy):
    __doc__ = __doc__
    rule_class = PenaltyNoisyRule
    bound_map = False  # the penalty weighs the signed constraint estimates (OptimizerPolicy.bound_map)
    rule_defaults: ClassVar[dict[str, Any]] = {**STANDARDIZED_DEFAULTS, "mu": 0.5}

    def __init__(self, m: int, horizon: int, **params: Any) -> None:
        if params.get("S") is None:  # ceil(sqrt T) epochs of ceil(sqrt T) rounds
            params["S"] = math.ceil(math.sqrt(horizon)) if isinstance(horizon, int) and horizon > 0 else 1
        super().__init__(m, horizon, **params)

    def targets(self, y, c):
        if self.rule.searching_feasible(c):  # the search for a first feasible point: f and each g
            return super().targets(y, c)
        return {"pen": self.rule.target(y, c)}

    def model_tag(self) -> str:
        return f"epoch-{self.rule.epoch}"

    def decide(self, ctx):
        if self.rule.searching_feasible(ctx.c):
            self.rule.begin_round(None)
            self.t = self.rule.t
            return self._first_feasible(ctx), {**self.internals(), "phase": 0.0}
        models = ctx.models
        b = self.rule.begin_round(models.view)
        self.t = self.rule.t

        def ucb(X):
            mu, sd = models.mean_std(X)
            return mu[..., 0] + b * sd[..., 0]

        x, _ = ctx.maximize(ucb)
        return x, self.rule.internals()

    def observe(self, y: float, c: np.ndarray) -> None:
        self.rule.observe(c)

    def internals(self) -> dict[str, float]:
        return {"epoch": float(self.rule.epoch), **named("kappa", self.rule.kappa)}
