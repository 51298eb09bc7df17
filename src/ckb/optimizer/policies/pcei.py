r"""``pcei``: pessimistic constrained EI, the optimizer's policy for the best-feasible goal
(:class:`ckb.rules.feasible_ei.PessimisticCEIRule`: constrained EI over the points whose pessimistic
violation the remaining violation budget can pay for; without a budget, over the points every
constraint's upper confidence bound says are feasible).

**At ask time**: the incumbent (best observed feasible objective), the allowance (``budget_pace``'s
share of what remains of ``violation_budget``, from the optimizer's accounting), the argmax. **At tell
time**: nothing but the data. Constants: ``kappa`` = 1.0 (the width of the constraints' upper confidence bounds, on the fitted
GPs of the policy units), ``explore_kappa`` = 0 (the exploration phase's width; ``kappa``: no exploration phase),
``endgame_ei`` (1e-3 standard deviations of the objective), and under a violation budget ``budget_alpha``
= 0.1 (the union-bound width over the asks left), ``budget_prior`` = "zero" (admissibility judged under
a zero prior mean of each constraint), ``budget_radius`` = 0.1 (new points within that
:math:`\ell_\infty` distance of an evaluated feasible point, in the unit cube; under a zero budget
shrunk around each point to what the constraints' observed slopes, times ``budget_lipschitz`` = 2.0,
certify cannot reach 0; ``budget_certify`` = "left": under a positive budget, to what the slopes, times
``budget_lipschitz_left`` = 1.0, certify cannot overdraw what is left of it, while something is left;
"zero": zero budgets only; "allowance": every constraint against what each ask may spend) and
``budget_pace`` =
"half" (one ask may spend at most half of what is left of the budget), ``budget_first`` = "anywhere"
(the search for a first feasible point looks anywhere; "admissible": first among the points the
allowance can pay for); ``leap_radius`` = None
(a radius r lets the endgame leap, when nothing admissible improves, to the constrained-EI maximizer
at least r from every evaluated point: more runs leave a local optimum, at more violation; see
:mod:`ckb.rules.feasible_ei`); ``leap_cost`` = None (a cost c prices each leap by its expected
violation: expected improvement per 1 + E[g]+/c, fewer violations for as many runs leaving a local
optimum); ``expand_kappa`` = 2.0 (a width k lets the endgame, when nothing admissible improves,
evaluate the admissible point nearest to the EI maximizer over the points whose constraints' lower
bounds at width k are feasible, where some constraint's standard deviation is at least ``expand_sd`` =
0.1, when that point's objective mean beats the incumbent by ``expand_margin`` = 3 of its standard
deviations: the admissible set grows toward a better region instead of leaping into it; None: no
expansion, the rule before; an ask that does not leap may expand, a combination the benchmark's leap
variants did not measure; see :mod:`ckb.rules.feasible_ei`); ``refine_radius`` = 0.1 (every endgame
ask searches the box of that radius around the incumbent first: finer final designs, fewer violations;
None: no refinement) and ``refine_last`` = None (a share q: only the last q of the asks refine);
``first_quantile`` = 0.5 (before any feasible observation, the point most likely feasible *and* better
than that quantile of the observed objective values; None: the probability of feasibility alone).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ckb.optimizer.policies.base import RuleOptimizerPolicy
from ckb.optimizer.policies.registry import OPTIMIZER_POLICIES
from ckb.rules.cei import log_cei
from ckb.rules.feasible_ei import FLOOR, PessimisticCEIRule
from ckb.violation import feasible_rows


@OPTIMIZER_POLICIES.register("pcei", aliases=("pessimistic-cei",))
class PessimisticCEI(RuleOptimizerPolicy):
    __doc__ = __doc__
    rule_class = PessimisticCEIRule
    reads_violation_budget = True
    #: a study stored before the expansion was the default (or before its margin) resumes without it, as
    #: it was run (:meth:`ckb.Optimizer._resume_constants`)
    legacy_constants: ClassVar[dict[str, Any]] = {"expand_kappa": None, "expand_margin": None}
    #: the GP fits stop at a relative improvement of 1e-6 (SciPy's default 2.2e-9; warm-started from the
    #: previous fit): the fits took about 60% of an ask, and this cuts their time 2-2.8x (Gramacy,
    #: Hartmann-6). Measured on six benchmark problems at 5 seeds: the same solved counts, violating
    #: evaluations after the design within 2 of the tight fits'.
    fit_tolerance = 1e-6
    #: the maximizer's L-BFGS-B takes at most 10 line-search steps per iteration (SciPy's 20; the
    #: optimizer's ``max_line_search=None``). The score jumps at the admissible set's edge, where its
    #: maximum often lies; a line search across the jump cannot meet the Wolfe conditions and used all
    #: 20 steps before giving up (on Gramacy's problem, seed 0: 263 of 900 restarts ended so, a median 21
    #: and up to 243 score evaluations per restart). 10 steps halve the score evaluations there and on
    #: Gardner 2 (8,163 -> 4,355 and 12,120 -> 4,586 per run); 5 stopped short of the edge (Hartmann-6 in
    #: the ball: 2 of 5 seeds solved instead of 4). The expansion's two searches keep SciPy's 20
    #: (:func:`~ckb.optimizer.acquisition.full_line_search`): with 10 they missed the goal on Gramacy's
    #: problem in seeds 5 and 8, which stayed at the local optimum (gap 0.25), and they are a small share
    #: of the evaluations. Measured on the eight benchmark problems at 20 seeds:
    #: docs/results-constrained-benchmark.md.
    max_line_search = 10
    #: the hyperparameters are refitted after every second result (the optimizer's ``refit_every=None``);
    #: in between, the last fit's hyperparameters are conditioned on all current data. Measured on six
    #: benchmark problems at 10 seeds: CPU seconds per iteration 10-30% lower (Hartmann-6 in the ball
    #: 0.32 -> 0.26, Gramacy 0.34 -> 0.28), the same number of solved runs in all (41 of 60 both), the
    #: median violating evaluations after the design within 1 per problem.
    refit_every = 2

    def decide(self, ctx):
        self._begin()
        rule = self.rule
        best = rule.incumbent(ctx.y, ctx.c)
        allowance, tau = self._allowance(ctx)
        rule.set_budgeted(self._budgeted(ctx), ctx.rounds_left)
        safe = None
        if best is not None and rule.trust_region:
            zero = None if ctx.violation_budget is None else np.asarray(ctx.violation_budget) <= 0.0
            cap = tau
            if getattr(rule, "budget_certify", "left") == "left" and ctx.violation_left is not None:
                cap = _thresholds(ctx.violation_left, ctx.c_to_raw, self.m)
            radii = rule.certified_radii(self._complete_points(ctx), ctx.c, zero, cap)
            safe = (self._feasible_points(ctx), radii)

        def pick(tau, region):  # the argmax in the region and its excess (> 0: not admissible)
            x = self._argmax(ctx, best, tau, region)
            return x, self._excess(ctx.models, x, tau, region)

        rule.local = best is not None and rule.refines(ctx.rounds_left)
        if rule.local:  # the refinement: the box around the incumbent first
            x, excess = pick(tau, (self._incumbent_point(ctx), rule.refine_radius))
            rule.local = excess <= 0.0
        if not rule.local:  # nothing admissible near it (or no refinement): the whole admissible set
            x, excess = pick(tau, safe)
            if excess > 0.0 and safe is not None and safe[1] is not None:  # certified boxes too small to hit
                x, excess = self._within(ctx, best, tau, safe, x, excess)
        relaxed = None if best is None else self._relaxed(tau)
        if relaxed is not None and excess > 0.0:  # nothing admissible at the first threshold: the relaxed one
            x, excess = pick(relaxed, safe)
        if best is None and excess > 0.0 and rule.first_admissible:  # nothing affordable: anywhere
            rule.first_anywhere = True
            try:
                x, excess = pick(tau, None)
            finally:
                rule.first_anywhere = False
        x, excess = self._expanded(ctx, best, tau, x, excess)
        rule.record(excess, best, allowance)
        return x, {**rule.internals(), "best_feasible_std": np.nan if best is None else best}

    def _expanded(self, ctx, best: float | None, tau, x: np.ndarray, excess: float):
        """The expansion (``expand_kappa``, :mod:`ckb.rules.feasible_ei`): when this endgame ask's point
        has an expected improvement below ``endgame_ei`` and did not leap, the point :meth:`_expansion`
        finds, with its excess; else ``x`` and ``excess`` unchanged. Searches that find none leave the
        generator as they found it, so a run replays the one without expansions until it first expands."""
        rule, models = self.rule, ctx.models
        rule.expanded = False
        if best is None or not rule.expands or rule.leapt:
            return x, excess
        if self._log_ei(models, x, best) >= rule.log_endgame_ei:
            return x, excess
        state = ctx.rng.bit_generator.state
        x_new = self._expansion(ctx, best)
        if x_new is None:
            ctx.rng.bit_generator.state = state
            return x, excess
        rule.expanded = True
        return x_new, self._excess(models, x_new, tau)

    def _expansion(self, ctx, best: float) -> np.ndarray | None:
        """The goal (the EI maximizer where every constraint is optimistically feasible) and, if its EI
        reaches ``endgame_ei`` and its mean beats ``best`` by the margin (:meth:`goal_improves`), the
        admissible point of some constraint deviation at least ``expand_sd`` nearest to it; else None."""
        import torch

        from ckb.optimizer.acquisition import full_line_search

        rule, models = self.rule, ctx.models

        @full_line_search  # both searches: see max_line_search
        def goal(X):
            mu_f, sd_f, mu_g, sd_g = self._split(models, X)
            return rule.goal_score(mu_f, sd_f, best, mu_g, sd_g)

        x_goal, value = ctx.maximize(goal)
        if float(value) < rule.log_endgame_ei:  # nothing to expand toward
            return None
        with torch.no_grad():
            mu_f, sd_f, _, _ = self._split(models, torch.as_tensor(np.asarray(x_goal)[None, :]))
        if not rule.goal_improves(mu_f.reshape(-1)[0], sd_f.reshape(-1)[0], best):  # an improvement in doubt
            return None

        @full_line_search
        def expander(X):
            return rule.expand_score(*self._split(models, X)[2:], X, x_goal)

        x_new, value = ctx.maximize(expander)
        return None if float(value) <= FLOOR else x_new  # FLOOR: no admissible point left to learn from

    def _within(self, ctx, best, tau, region, x, excess, n: int = 2048):
        """The best of ``n`` points drawn uniformly in the trust region's boxes (a centre at random, then
        a point of its box; boxes of radius 0 left out), or ``x`` and its ``excess`` when none of them
        scores higher. The maximizer's random starts rarely land in boxes a few thousandths of the cube
        wide in several dimensions (certified radii, :meth:`~PessimisticCEIRule.certified_radii`), and
        its search from outside them stops where the region's excess trades against the constraints'
        (the speed reducer, 7-D: a first ask 0.1 beyond every box, violating the constraint 5 - x1/x2
        that a box would have kept). On a candidate set the maximizer has scored every candidate and
        a drawn point would be replaced by its nearest candidate, an evaluated one as often as not (the
        centres are evaluated points): ``x`` and its ``excess`` stay."""
        centres, radii = region
        keep = np.asarray(radii) > 0.0
        if ctx.on_candidates or not np.any(keep):
            return x, excess
        C, R = centres[keep], np.asarray(radii)[keep]
        i = ctx.rng.integers(len(C), size=n)
        U = np.clip(C[i] + (2.0 * ctx.rng.random((n, C.shape[1])) - 1.0) * R[i, None], 0.0, 1.0)
        k = higher_scoring(self._score(ctx, best, tau, region), U, x)
        if k is None:
            return x, excess
        return U[k].copy(), self._excess(ctx.models, U[k], tau, region)

    @staticmethod
    def _complete_points(ctx) -> np.ndarray:
        """The complete evaluated points (unit cube, rows of ``ctx.y`` and ``ctx.c``): the models' first
        rows, in order."""
        return np.asarray(ctx.models.X)[: len(ctx.y)]

    @classmethod
    def _feasible_points(cls, ctx) -> np.ndarray:
        """The evaluated points (unit cube) whose every observed constraint value is <= 0: the centres of
        the trust region under a budget."""
        return cls._complete_points(ctx)[feasible_rows(ctx.c)]

    @classmethod
    def _incumbent_point(cls, ctx) -> np.ndarray:
        """The incumbent (unit cube, (1, d)): of the evaluated feasible points (:meth:`_feasible_points`),
        the first with the best observed objective (policy units, maximization sense)."""
        y = np.asarray(ctx.y, dtype=float)[feasible_rows(ctx.c)]
        return cls._feasible_points(ctx)[[int(np.argmax(y))]]

    def _argmax(self, ctx, best: float | None, tau, region=None) -> np.ndarray:
        """The rule's argmax at threshold ``tau`` (again under the endgame's width if it starts now);
        ``region``: ``(centres, radius)`` of a trust region (:meth:`~PessimisticCEIRule.region_excess`;
        radius None: ``budget_radius``), None: none."""
        rule, models = self.rule, ctx.models
        score = self._score(ctx, best, tau, region)
        x, _ = ctx.maximize(score)
        if (
            best is not None
            and not (rule.endgame or rule.local)
            and rule.check_endgame(self._log_ei(models, x, best))
        ):
            x, _ = ctx.maximize(score)  # the endgame starts now: this point already under its width
        rule.leapt = False
        if best is not None and rule.leaps and self._log_ei(models, x, best) < rule.log_endgame_ei:
            seen = np.asarray(models.X)  # complete, failed and pending points

            def leap(X):
                mu_f, sd_f, mu_g, sd_g = self._split(models, X)
                return rule.leap_score(mu_f, sd_f, best, mu_g, sd_g, X, seen)

            x_leap, value = ctx.maximize(leap)
            if float(value) >= rule.log_endgame_ei:
                x, rule.leapt = x_leap, True
        return x

    def _score(self, ctx, best: float | None, tau, region=None):
        """The rule's score at points ``X`` (torch, (..., d)), the function ``ctx.maximize`` maximizes:
        the constraints' means under a zero prior for admissibility when the rule asks for it, the
        trust region's excess with ``region``, the feasibility-first target without an incumbent. The
        rule's width and phase are read at each call."""
        rule, models = self.rule, ctx.models
        zero = rule.zero_prior
        target = rule.first_target(ctx.y) if best is None else None

        def score(X):
            mu, sd = models.mean_std(X)
            mu0 = models.mean_std(X, zero_prior_mean=True)[0][..., 1:] if zero else None
            out = None if region is None else rule.region_excess(X, *region)
            return rule.score(mu[..., 0], sd[..., 0], best, mu[..., 1:], sd[..., 1:], tau, mu0, out, target)

        return score

    def _relaxed(self, tau) -> np.ndarray | None:
        """A second threshold to try when no point is admissible at the first (None: the first is final,
        as a violation budget's is)."""
        return None

    def needs_rounds_left(self, budgeted: bool) -> bool:
        """Under a violation budget the width and pace read the asks left, and so does ``refine_last``."""
        return (
            super().needs_rounds_left(budgeted)
            or budgeted
            or getattr(self.rule, "refine_last", None) is not None
        )

    def _budgeted(self, ctx) -> bool:
        """Whether the allowance is the user's violation budget (then no exploration phase)."""
        return ctx.violation_left is not None

    def _allowance(self, ctx) -> tuple[np.ndarray | None, np.ndarray | None]:
        """What this ask may spend per constraint, in the constraints' own units and in the models'
        units: ``budget_pace``'s share of what remains of the violation budget (None without one:
        threshold 0)."""
        left = self.rule.paced(ctx.violation_left, ctx.rounds_left)
        return left, _thresholds(left, ctx.c_to_raw, self.m)

    def _excess(self, models, x: np.ndarray, tau, region=None) -> float:
        import torch

        with torch.no_grad():
            X = torch.as_tensor(x[None, :])
            mu, sd = models.mean_std(X, zero_prior_mean=True) if self.rule.zero_prior else models.mean_std(X)
            out = None if region is None else self.rule.region_excess(X, *region)
            return float(self.rule.excess(mu[..., 1:], sd[..., 1:], tau, out).reshape(-1)[0])

    @staticmethod
    def _log_ei(models, x: np.ndarray, best: float) -> float:
        """log EI of the objective at ``x`` (policy units, no constraint term: :func:`log_cei` over no
        constraints)."""
        import torch

        with torch.no_grad():
            mu, sd = models.mean_std(torch.as_tensor(x[None, :]))
            return float(log_cei(mu[..., 0], sd[..., 0], best, mu[..., :0], sd[..., :0]).reshape(-1)[0])


def higher_scoring(score, U: np.ndarray, x: np.ndarray) -> int | None:
    """The row of ``U`` (n, d) with the highest ``score`` (torch, as ``ctx.maximize`` takes it) when
    it scores higher than ``x`` (d,), else None: a maximizer's choice checked against points it may
    have missed."""
    import torch

    with torch.no_grad():
        v = score(torch.as_tensor(U)).numpy().reshape(-1)
        v_x = float(score(torch.as_tensor(x[None, :])).reshape(-1)[0])
    k = int(np.argmax(v))
    return k if v[k] > v_x else None


def _thresholds(allowance, to_raw, m: int) -> np.ndarray | None:
    """The allowance (constraints' own units) in the models' units: the largest v >= 0 with
    ``to_raw(v) <= allowance`` per constraint (bisection; ``to_raw`` is monotone with 0 -> 0); +inf
    where no model value maps beyond the allowance (a bound map's cap below it: every value is
    affordable). None when there is no budget (threshold 0)."""
    if allowance is None:
        return None
    a = np.asarray(allowance, dtype=float).reshape(m)
    if to_raw is None:
        return a.copy()
    lo, hi = np.zeros(m), np.ones(m)
    over = np.zeros(m, dtype=bool)
    for _ in range(200):  # grow hi until it maps beyond the allowance
        over = np.asarray(to_raw(hi[None, :]), dtype=float).reshape(m) > a
        if np.all(over | (a <= 0)):
            break
        hi = np.where(over, hi, hi * 2.0)
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        ok = np.asarray(to_raw(mid[None, :]), dtype=float).reshape(m) <= a
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    return np.where(a <= 0, 0.0, np.where(over, lo, np.inf))


def _signed_thresholds(allowance: np.ndarray, to_raw, m: int) -> np.ndarray:
    """:func:`_thresholds` for a signed allowance: a negative entry maps to the smallest-magnitude v <= 0
    with ``to_raw(v) <= allowance`` (by the same bisection on the mirrored map), -inf where no model
    value maps that low (a bound map's floor above it)."""
    a = np.asarray(allowance, dtype=float).reshape(m)
    if to_raw is None:
        return a.copy()
    pos = _thresholds(np.maximum(a, 0.0), to_raw, m)
    neg = _thresholds(np.maximum(-a, 0.0), lambda w: -np.asarray(to_raw(-np.asarray(w))), m)
    return np.where(a >= 0.0, pos, -neg)
