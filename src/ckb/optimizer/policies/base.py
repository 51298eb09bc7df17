r"""The interface of a practical policy (:class:`OptimizerPolicy`) and what it receives at an ask.

A practical policy is one decision rule of the papers on a continuous box with fitted GPs. It owns its
explicit state (round counter, duals, penalties, epochs: JSON-able, stored after every step) and nothing
else: the optimizer (:mod:`ckb.optimizer.core`) owns the data, the models, the random generator and the
study file. Per step:

- :meth:`OptimizerPolicy.targets`: which functions to model, from the complete observations in policy
  units (``y``: the standardized objective in the maximization sense, ``c``: (n, m) scaled constraints);
- :meth:`OptimizerPolicy.decide` (at an ask, after the initial design): the next point in the unit cube
  from a :class:`Decision` (models conditioned on the pending points, the maximizer, the generator), and
  every update the rule makes at ask time;
- :meth:`OptimizerPolicy.observe` (at a tell of a point the policy chose): the updates fed by observed
  values.

Beta schedules: ``beta`` is a number (constant width, the default) or a schedule of
:mod:`ckb.exploration.beta` (``"theory"``: :math:`B + R\sqrt{2(\hat\gamma + 1 + \ln(1/\alpha))}` with
:math:`\hat\gamma = \tfrac12\log\det(I + K/\sigma_n^2)` of the fitted GP on its data; ``"log"``; a dict).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ckb._validation import check_scalar
from ckb.rules.base import RuleAdapter


@dataclass
class Decision:
    """What a policy sees at an ask: ``models`` (conditioned on pending points), ``maximize(score)`` ->
    ``(x_unit, value)``, the generator ``rng``, and the complete observations in policy units ``y``
    (n,), ``c`` (n, m).

    For violation-aware rules: ``violation_left`` (m,), what remains of the user's violation budget in
    each constraint's own units (None: no budget was set); ``c_to_raw(v)`` maps constraint values in
    policy units (array or tensor, last axis m) back to the constraints' own units (monotone, 0 -> 0);
    ``exact``: the evaluations are noise-free (a point evaluated once teaches nothing new the second
    time; the maximizer already excludes evaluated points then); ``rounds_left``: the policy's asks
    left in the budget after this one (0: this is the last; None: unknown); ``violation_budget`` (m,), the user's whole violation budget
    (None: no budget was set); ``on_candidates``: ``maximize`` enumerates a finite candidate set (it
    scores every candidate, and a point a policy returns from elsewhere is replaced by the nearest
    candidate, which may be an evaluated or pending one: such a policy should return ``maximize``'s)."""

    models: Any
    maximize: Any
    rng: np.random.Generator
    y: np.ndarray
    c: np.ndarray
    violation_left: np.ndarray | None = None
    c_to_raw: Any = None
    exact: bool = False
    rounds_left: int | None = None
    violation_budget: np.ndarray | None = None
    on_candidates: bool = False


class OptimizerPolicy:
    """Base class: state ``t`` (the policy's rounds so far)."""

    name: ClassVar[str] = ""
    #: default constant width on standardized outcomes
    default_beta: ClassVar[float] = 2.0
    #: the decisions depend on ``Decision.rounds_left`` (the asks left), so a caller must know the horizon
    uses_rounds_left: ClassVar[bool] = False
    #: the decisions read ``Decision.violation_left`` (the user's violation budget); an optimizer given a
    #: budget for a policy that does not warns that its asks ignore it
    reads_violation_budget: ClassVar[bool] = False
    #: the GP fits' relative tolerance (L-BFGS-B's ``ftol`` on the marginal log likelihood; None:
    #: SciPy's 2.2e-9)
    fit_tolerance: ClassVar[float | None] = None
    #: refit the GP hyperparameters after this many new results when the optimizer's ``refit_every`` is
    #: None (its default); in between, the stored hyperparameters are conditioned on all current data
    refit_every: ClassVar[int] = 1
    #: the line-search steps the acquisition maximizer's L-BFGS-B may take per iteration when the
    #: optimizer's ``max_line_search`` is None (its default; None here: SciPy's 20)
    max_line_search: ClassVar[int | None] = None
    #: whether ``outcome_transform="auto"`` may model a constraint by the log of its distance to a bound
    #: (:mod:`ckb.optimizer.models`). False for the rules whose score weighs the signed constraint
    #: estimates together (a dual, queue or penalty times g, summed over the constraints): that map
    #: stretches a constraint's crowded side into decades and compresses its far side, so one
    #: constraint's stretched margin can buy another's compressed violation. Measured on the tension
    #: spring (10 seeds): with the map CKB-UCB/TS/Rand, Shi & Eryilmaz's penalty method and queue-ucb
    #: went back again and again to the corner (d, D, N) = (0.05, 1.3, 15), where g1 = -72 maps to -3.8
    #: against +5 to +11 over the design and g2 = 2.5 to 1.1 against values down to -7.8 (192-303
    #: repeated evaluations over the 10 runs against 29-74, scaled [sum g]+ 25-63 against 0), while
    #: CONFIG and RPOL-UCB, which see each constraint's violation or feasibility alone, gained (scaled
    #: sum [g]+ 8.2-8.5 against 23-29, median final gap 0.19-0.22 against 0.38-0.84)
    bound_map: ClassVar[bool] = True
    #: whether ``outcome_transform="auto"`` models a minimized positive objective whose values span more
    #: than two decades by its log (:data:`ckb.optimizer.models.LOG_OBJECTIVE_SPAN`); a policy may make it
    #: a constant of its own (``slack-cei``)
    objective_log: bool = False
    #: constants added after studies were stored without them, with the values that reproduce those
    #: studies' decisions: a resumed study that stores no value of one gets this one
    legacy_constants: ClassVar[dict[str, Any]] = {}

    def needs_rounds_left(self, budgeted: bool) -> bool:
        """Whether this policy's decisions read ``Decision.rounds_left`` (so a caller must know the
        horizon), under a violation budget (``budgeted``) or not: :attr:`uses_rounds_left` here."""
        return bool(type(self).uses_rounds_left)

    def __init__(self, m: int, horizon: int) -> None:
        self.m = check_scalar(m, "m (number of constraints)", low=1, integer=True)
        self.horizon = check_scalar(horizon, "horizon (policy rounds T)", low=1, integer=True)
        self.t = 0

    # -------------------------------------------------------------------------------- protocol
    def targets(self, y: np.ndarray, c: np.ndarray) -> dict[str, np.ndarray]:
        """Functions to model: by default the objective ``f`` and each constraint ``g0, g1, ...``."""
        out = {"f": np.asarray(y, dtype=float)}
        for j in range(self.m):
            out[f"g{j}"] = np.asarray(c, dtype=float)[:, j]
        return out

    def model_tag(self) -> str:
        """Changes when the modeled targets change meaning (forces a refit), e.g. a new penalty epoch."""
        return ""

    def decide(self, ctx: Decision) -> tuple[np.ndarray, dict[str, float]]:  # pragma: no cover
        raise NotImplementedError

    def observe(self, y: float, c: np.ndarray) -> None:
        """Tell-time update from one observation of a point this policy chose (policy units)."""

    def internals(self) -> dict[str, float]:
        """The current state as scalars (for metrics())."""
        return {}

    # ----------------------------------------------------------------------------- persistence
    def state_dict(self) -> dict[str, Any]:
        return {"t": self.t, **self._state()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.t = int(state["t"])
        self._load(state)

    def _state(self) -> dict[str, Any]:
        return {}

    def _load(self, state: dict[str, Any]) -> None:
        return None

    # ------------------------------------------------------------------------------ rule plumbing
    def _make_rule(self, rule_class, defaults: dict[str, Any], params: dict[str, Any]):
        """The policy's rule, with this world's defaults (on standardized outcomes) under ``params``."""
        rule = rule_class(self.m, self.horizon, **{**defaults, **params})
        rule.t = self.t
        return rule

    @staticmethod
    def _split(models, X):
        """Posterior mean/std of f and of the constraints at X: (mu_f, sd_f, mu_g, sd_g)."""
        mu, sd = models.mean_std(X)
        return mu[..., 0], sd[..., 0], mu[..., 1:], sd[..., 1:]


#: the confidence constants of the optimizer's rules on standardized outcomes (unit variance): a norm
#: bound B of 5, a noise level R of 0.1, a confidence 1 - alpha of 0.95 and a fixed beta of 2 (the harness
#: derives its values from the problem instead), with the feasibility-first phase on
STANDARDIZED_DEFAULTS: dict[str, Any] = {
    "B": 5.0,
    "R": 0.1,
    "alpha": 0.05,
    "beta": 2.0,
    "feasibility_first": True,
}


class RuleOptimizerPolicy(RuleAdapter, OptimizerPolicy):
    """An optimizer policy around a :mod:`ckb.rules` rule: ``rule_class`` built with ``rule_defaults``
    (this world's values on standardized outcomes) under the user's keywords. Its state is the rule's
    (the keys of earlier versions of the study file load too)."""

    rule_class: ClassVar[Any] = None
    rule_defaults: ClassVar[dict[str, Any]] = {}

    def __init__(self, m: int, horizon: int, **params: Any) -> None:
        super().__init__(m, horizon)
        self.rule = self._make_rule(self.rule_class, self.rule_defaults, params)

    def constants(self) -> dict[str, Any]:
        """The policy's constants as resolved (the rule's, defaults included; arrays as lists): what a
        study stores, so that it resumes under the rule it was started with when a later version of
        ckb changes a default. Building the policy with them as keywords gives the same policy."""
        return {key: _plain(getattr(self.rule, key)) for key in self.rule.constants}

    def _begin(self) -> None:
        self.rule.begin_round()
        self.t = self.rule.t

    def _first_feasible(self, ctx: Decision) -> np.ndarray | None:
        """The feasibility-first phase's point (the rule's ``first_score`` maximized at its objective
        target, :class:`ckb.rules.cei.FeasibilityFirst`), or None when the rule is not searching."""
        rule = self.rule
        if not rule.searching_feasible(ctx.c):
            return None
        target = rule.first_target(ctx.y)

        def score(X):
            return rule.first_score(*self._split(ctx.models, X), target)

        x, _ = ctx.maximize(score)
        return x

    def _state(self) -> dict[str, Any]:
        state = self.rule.state_dict()
        state.pop("t")
        return state

    def _load(self, state: dict[str, Any]) -> None:
        self.rule.load_state_dict(state)


def _plain(value: Any) -> Any:
    """A constant's value as JSON stores it (numpy scalars and arrays as Python numbers and lists)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value
