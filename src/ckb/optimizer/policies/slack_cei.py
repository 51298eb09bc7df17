r"""``slack-cei``: constrained EI that spends the cumulative constraint's slack, and exploits once the
asks left cannot earn back an exploration (:class:`ckb.rules.feasible_ei.SlackCEIRule`), the
optimizer's policy for the cumulative goal: each ask may use the running sum's slack spread over the
asks left, :math:`a_t = -\sum_{s<t} c_s / R_t` per constraint (observed values of every complete
evaluation, in the constraints' own units), as the threshold of
:mod:`~ckb.optimizer.policies.pcei`'s admissible set; at each ask it plays either constrained EI
(exploring) or the best posterior mean the models are confident is affordable (exploiting), exploring
only while the asks left can earn back what exploring costs now (``exploit = "horizon"``; ``"endgame"``:
explore until the expected improvement falls below ``endgame_ei``, then exploit for good).

``objective_log`` = True (this policy's own constant, read by the optimizer's units): under
``outcome_transform="auto"`` a minimized objective whose observed values are positive and span more
than two decades is modelled by its log, standardized (``"auto-log-objective"``,
:mod:`ckb.optimizer.models`); False: by ``"auto"``'s standardization. In the cumulative regime every
evaluation's objective counts; the tension/compression spring's weight spans three decades over its
design, and in standardized units its model could not tell 0.01 from 0.5, so explorations far from the
data at values of 1-22 (f* = 0.0127) looked promising. With it and ``first_value = "improvement"``
(:class:`~ckb.rules.feasible_ei.SlackCEIRule`), measured at 20 seeds of the eight benchmark problems:
median cumulative regret 7.43e3 on the spring against 8.05e3 (qLogNEI 8.0e3, ``cei`` 7.6e3), 1.58
against 1.62 on Branin-disk (where the log applies too), lower or the same on the others. A study
stored before these constants resumes with the former values (``legacy_constants``).

**At ask time**: the incumbent, the allowance from the observed running sum and the asks left, the
two argmaxes and the choice between them. **At tell time**: nothing but the data. Constants as ``pcei``
but ``kappa`` = 2.0 (pcei: 1.0), ``explore_kappa`` = 0, ``endgame_ei`` = 1e-3 (read by ``"endgame"``
only), ``exploit`` = "horizon", ``exploit_seen`` = True, ``first_value`` = "improvement",
``objective_log`` = True. The optimizer's ``violation_budget`` (a limit on the sum of positive parts)
is not read: this policy keeps the signed running sum at or below zero.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ckb._validation import check_bool
from ckb.optimizer.acquisition import Maximizer
from ckb.optimizer.policies.pcei import PessimisticCEI, _signed_thresholds, higher_scoring
from ckb.optimizer.policies.registry import OPTIMIZER_POLICIES
from ckb.rules.cei import log_cei
from ckb.rules.feasible_ei import SlackCEIRule

#: the models'-units threshold of a credit no model value can use up (a bound map's cap below it)
FAR_THRESHOLD = 1.0e6


@OPTIMIZER_POLICIES.register("slack-cei", aliases=("cumulative-cei",))
class SlackCEI(PessimisticCEI):
    __doc__ = __doc__
    rule_class = SlackCEIRule
    uses_rounds_left = True
    #: the running sum's slack is its allowance (:meth:`_budgeted`), not the user's violation budget
    reads_violation_budget = False
    #: SciPy's 20 line-search steps, not pcei's 10: slack-cei's runs were measured with them
    max_line_search = None
    #: the values that reproduce a study stored before these constants were (``policy_constants``):
    #: such a study resumes with them (:meth:`ckb.Optimizer._resume_constants`)
    legacy_constants: ClassVar[dict[str, Any]] = {
        "first_value": "probability",
        "objective_log": False,
        "exploit_seen": False,
    }

    def __init__(self, m: int, horizon: int, *, objective_log: bool = True, **params: Any) -> None:
        super().__init__(m, horizon, **params)
        self.objective_log = check_bool(objective_log, "objective_log")

    def constants(self) -> dict[str, Any]:
        """The rule's constants and ``objective_log``."""
        return {**super().constants(), "objective_log": self.objective_log}

    def _argmax(self, ctx, best: float | None, tau, region=None) -> np.ndarray:
        """With a feasible incumbent and ``exploit = "horizon"``: the exploring and the exploiting argmax,
        and the one :meth:`~ckb.rules.feasible_ei.SlackCEIRule.explores` picks (the rule's ``endgame``
        flag says which, for the width the admissibility check uses); otherwise pcei's."""
        rule = self.rule
        if best is None or rule.exploit != "horizon":
            return super()._argmax(ctx, best, tau, region)
        models, score = ctx.models, self._score(ctx, best, tau, region)
        choice = {}
        for endgame in (False, True):
            rule.endgame = endgame
            x, _ = ctx.maximize(score)
            if endgame and rule.exploit_seen:
                x = self._best_seen(ctx, score, x)
            choice[endgame] = (x, self._excess(models, x, tau, region) <= 0.0)
        (x_e, ok_e), (x_m, ok_m) = choice[False], choice[True]
        explore = ok_e and (
            not ok_m or rule.explores(*self._weigh(models, x_e, x_m, best, tau), ctx.rounds_left)
        )
        rule.endgame, rule.leapt = not explore, False
        return x_e if explore else x_m

    @classmethod
    def _best_seen(cls, ctx, score, x: np.ndarray) -> np.ndarray:
        """``exploit_seen``: the exploiting choice ``x`` (the maximizer's), or the complete evaluated point
        that scores higher (not one pending, and none with exact evaluations, which are never repeated).
        The exploiting choice is the best posterior mean on the admissible set; in many dimensions with
        many constraints the maximizer's random starts mostly fall outside that set and its restarts end
        at points worse than one already evaluated there (the speed reducer: exploiting asks at 0.02-0.04
        scales of regret per ask while an evaluated admissible point cost 0.001)."""
        if ctx.exact:
            return x
        done = cls._complete_points(ctx)
        pending = np.asarray(ctx.models.X)[len(ctx.y) :]
        done = done[[not Maximizer._taken(p, pending) for p in done]]
        k = higher_scoring(score, done, x) if len(done) else None
        return x if k is None else done[k].copy()

    def _weigh(
        self, models, x_e: np.ndarray, x_m: np.ndarray, best: float, tau
    ) -> tuple[float, float, float]:
        """log constrained EI at ``x_e`` against the threshold ``tau`` (None: 0; the rule's
        probabilities of feasibility), and the posterior means of the objective at ``x_e`` and ``x_m``
        (the models' units)."""
        import torch

        with torch.no_grad():
            mu, sd = models.mean_std(torch.as_tensor(np.stack([x_e, x_m])))
            mu_g = self.rule._pof_means(mu[:1, 1:], tau)
            log_ei = log_cei(mu[:1, 0], sd[:1, 0], best, mu_g, sd[:1, 1:])
        return float(log_ei.reshape(-1)[0]), float(mu[0, 0]), float(mu[1, 0])

    def _budgeted(self, ctx) -> bool:
        """The running sum's slack is not a violation budget: the exploration phase stays."""
        return False

    def _allowance(self, ctx) -> tuple[np.ndarray, np.ndarray]:
        """:math:`a_t = -S_t / R_t` (own units, signed) and its value in the models' units."""
        c = np.asarray(ctx.c, dtype=float).reshape(-1, self.m)
        raw = c if ctx.c_to_raw is None else np.asarray(ctx.c_to_raw(c), dtype=float).reshape(-1, self.m)
        a = -raw.sum(axis=0) / self.rule._asks_left(ctx.rounds_left)
        tau = _signed_thresholds(a, ctx.c_to_raw, self.m)
        # a debt's margin below what the constraint's model can reach at all (the floor of its bound
        # map) is repaid by no point: merely feasible, as when no point is admissible (_relaxed); a
        # credit beyond its cap admits every value: P(g <= FAR) = 1 to double precision. Infinite
        # thresholds would make the gradient of P(g <= tau) NaN (inf / sd times a zero density).
        return a, np.where(np.isneginf(tau), 0.0, np.where(np.isposinf(tau), FAR_THRESHOLD, tau))

    def _relaxed(self, tau) -> np.ndarray | None:
        """In debt (some threshold < 0) with no point the models are confident repays it at this rate:
        threshold 0, i.e. feasibility (a debt the problem cannot repay is not chased at any price)."""
        tau = np.asarray(tau, dtype=float)
        return np.maximum(tau, 0.0) if np.any(tau < 0.0) else None
