r"""The rules of Guo, Zhu & Liu (RPOL, 2023) and the CONFIG baseline they compare with: both act on an
optimistic reward and optimistic (low) constraint estimates,

.. math::

    \hat f_t = \mu_f + \beta^f_t\sigma_f, \qquad \check g_{t,j} = \mu_{g_j} - \beta^g_t\sigma_{g_j},

with one constraint width :math:`\beta^g_t = \max_j` of the per-constraint schedules. Widths:
``beta`` / ``beta_g`` (default ``beta``) schedules, ``"theory"``:
:math:`B + R\sqrt{2(\hat\gamma + 1 + \ln(2/p))}` with ``B_f``, ``R_f`` for f and ``B_g``, ``R_g`` for
the constraints (``p``: failure probability, 0.05), times ``beta_scale``.

**RPOL** (:class:`RPOLRule`; rectified pessimistic-optimistic learning): Guo, Zhu & Liu's Condition 1
needs :math:`\check g_t \le g` (so :math:`\check g_t^+(x^*) = 0`): a lower bound, not a UCB. Deep-feasible
points earn no bonus (the rectifier), unlike CKB's signed penalty:

.. math::

    x_t = \arg\max_x\ \hat f_t(x) - \sum_j Q_{t,j}\,[\check g_{t,j}(x)]^+ ,
    \qquad Q_{t+1,j} = \max\big(Q_{t,j} + [c_{t,j}]^+,\ \sqrt t\big),\quad Q_{1,j} = Q_1 = 1,

with :math:`c_t` the *observed* (noisy) costs: Q never decreases and noise alone pushes it up. The sum
:math:`Q + [c]^+` happens at each tell (:meth:`RPOLRule.observe`, every cost revealed in the round), the
floor :math:`\sqrt{t-1}` at the next ask (:meth:`RPOLRule.begin_round`); with immediate feedback this is
exactly the recursion above. Guo, Zhu & Liu state one constraint and say the extension is easy; with
m > 1 there is one Q per constraint (our choice).

**CONFIG** (:class:`ConfigRule`; Xu, Jiang & Jones 2022): :math:`x_t = \arg\max \hat f_t(x)` subject to
:math:`\check g_{t,j}(x) \le 0` for all j (optimistic feasibility). When no point is optimistically
feasible the original declares the problem infeasible; a sequential loop must still act, so it plays
:math:`\arg\min_x \max_j \check g_{t,j}(x)` (the point the optimistic model finds closest to feasible;
recorded as ``fallback``). Both cases are one score, :math:`\hat f_t` where :math:`\max_j \check g_{t,j} \le 0`
and :math:`M - \max_j \check g_{t,j}` elsewhere with :math:`M` below every feasible value, whose
argmax is exactly this rule (over a finite set; on a box, the maximizer sees one piecewise-smooth score).
:math:`M` is ``CONFIG_FLOOR`` = :math:`-10^6` unless a feasible UCB is at or below it (an objective in the
millions, in raw units as the harness models it), where a fixed :math:`M` let an infeasible point win:

- numpy (the harness; :func:`config_score` over the candidates it is given): :math:`M` is lowered to
  :math:`\min(\hat f) - 10^6` over the call's feasible points (the next float below it where that
  rounds to it); the feasible scores are the UCBs themselves, their order exact.
  :class:`ConfigRule` keeps the lowest :math:`M` of the round (reset at :meth:`~ConfigRule.begin_round`),
  so the harness's local search on a box, which scores small batches around the best candidate after
  scoring all candidates, compares every batch on the candidates' :math:`M` (one gap left: with no
  feasible candidate, a feasible point below ``CONFIG_FLOOR`` that the local search finds cannot beat
  the infeasible start, whose score was fixed first).
- torch (``ckb.Optimizer``, whose models are standardized and never near :math:`-10^6`; the maximizer
  needs one fixed function): a feasible UCB at or below ``CONFIG_FLOOR + 1`` is mapped strictly
  increasingly into ``(CONFIG_FLOOR, CONFIG_FLOOR + 1]`` (:func:`ckb.rules.cei.above_floor`): feasible
  above infeasible, their order kept to float resolution, the gradient smaller but of the right sign.

Above ``CONFIG_FLOOR`` (numpy) or ``CONFIG_FLOOR + 1`` (torch) every score is unchanged to the bit.

**Feasibility first** (``feasibility_first``, off in these rules' defaults, as the papers have none;
``ckb.Optimizer``'s ``rpol-ucb`` turns it on; ``first_quantile`` 0.5): while no
evaluation has satisfied every constraint, the decision is instead the point most likely feasible and
better than that quantile of the observed objective values (:class:`ckb.rules.cei.FeasibilityFirst`,
torch only, so ``ckb.Optimizer`` only). It changes the decision only: RPOL's Q keeps its floor and its
sum of observed costs through the search, since those costs are spent.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from ckb.errors import InvalidInputError
from ckb.rules.base import NONNEGATIVE, Real, Rule, Width, like, named, positive_part, where
from ckb.rules.cei import FIRST_CONSTANTS, FeasibilityFirst, above_floor
from ckb.rules.primal_dual import _width

#: CONFIG's score on the optimistically infeasible region lies below this (lowered below a feasible UCB
#: at or under it: module docstring)
CONFIG_FLOOR = -1.0e6


class OptimisticRule(FeasibilityFirst, Rule):
    """UCB of f and LCBs of the constraints with settable widths (shared by RPOL and CONFIG), and the
    optional search for a first feasible point."""

    constants: ClassVar[dict[str, Any]] = {
        "B_f": NONNEGATIVE,
        "B_g": NONNEGATIVE,
        "R_f": NONNEGATIVE,
        "R_g": NONNEGATIVE,
        "p": Real(
            low=0.0, high=1.0, low_inclusive=False, high_inclusive=False, label="p (failure probability)"
        ),
        "beta": Width(),
        "beta_g": Width(),
        "beta_scale": NONNEGATIVE,
        **FIRST_CONSTANTS,
    }
    defaults: ClassVar[dict[str, Any]] = {
        "p": 0.05,
        "beta": "theory",
        "beta_g": None,
        "beta_scale": 1.0,
        "feasibility_first": False,
        "first_quantile": 0.5,
    }

    def check_rule(self) -> None:
        """Also: the rule defines ``score(ucb_f, lcb_g)`` (a rule without one failed at its first ask with
        an AttributeError naming no rule)."""
        super().check_rule()
        if not callable(getattr(self, "score", None)):
            raise InvalidInputError(
                f"rule {type(self).__name__} defines no score(ucb_f, lcb_g): the value of each point from the "
                "UCB of f (n,) and the LCBs of the constraints (n, m), one value per point."
            )

    def setup(self) -> None:
        # ln(2/p) in the widths = TheoryBeta's ln(1/alpha) with alpha = p/2
        self.beta_f = self.schedule(self.beta, self.B_f, self.R_f, self.p / 2, self.beta_scale)
        spec_g = self.beta if self.beta_g is None else self.beta_g
        self.beta_gs = self.schedule(spec_g, self.B_g, self.R_g, self.p / 2, self.beta_scale)
        self.last: dict[str, float] = {}

    def begin_round(self) -> None:
        self.t += 1

    def widths(self, model_of) -> tuple[float, float]:
        """f's width and the largest of the constraints' widths this round (``model_of`` as in
        :meth:`ckb.rules.primal_dual.PrimalDualRule.widths`)."""
        bf = _width(self.beta_f, self.t, model_of, "f")
        bg = max(_width(self.beta_gs, self.t, model_of, f"g{j}") for j in range(self.m))
        self.last = {"beta": bf, "beta_g": bg}
        return bf, bg

    def observe(self, c) -> None:
        """Tell-time update from the observed costs of a point the rule chose (default: none)."""

    def internals(self) -> dict[str, float]:
        return dict(self.last)


class RPOLRule(OptimisticRule):
    """RPOL's rectified penalty with non-decreasing weights Q (module docstring). Extra constant: ``Q1``."""

    constants: ClassVar[dict[str, Any]] = {**OptimisticRule.constants, "Q1": NONNEGATIVE}
    defaults: ClassVar[dict[str, Any]] = {**OptimisticRule.defaults, "Q1": 1.0}
    state_keys = ("Q", "Q_asked")
    nonnegative_state = ("Q", "Q_asked")

    def setup(self) -> None:
        super().setup()
        self.Q = np.full(self.m, float(self.Q1))
        self.Q_asked = self.Q.copy()

    def begin_round(self) -> None:
        """Round t: :math:`Q_t = \\max(Q_{t-1} + \\text{costs told}, \\sqrt{t-1})` for t > 1."""
        super().begin_round()
        if self.t > 1:
            self.Q = np.maximum(self.Q, math.sqrt(self.t - 1))
        self.Q_asked = self.Q.copy()

    def score(self, ucb_f, lcb_g):
        r""":math:`\hat f - \sum_j Q_j [\check g_j]^+`; ``ucb_f`` (...,), ``lcb_g`` (..., m)."""
        return rpol_score(ucb_f, lcb_g, self.Q_asked)

    def observe(self, c) -> None:
        """:math:`Q \\leftarrow Q + [c]^+` (observed costs, all m)."""
        self.Q = self.Q + np.maximum(np.asarray(c, dtype=float).reshape(self.m), 0.0)

    def internals(self) -> dict[str, float]:
        return {**self.last, **named("Q", self.Q_asked)}


class ConfigRule(OptimisticRule):
    """CONFIG: the UCB of f on the optimistically feasible set, else the least optimistically infeasible
    point (module docstring)."""

    def setup(self) -> None:
        super().setup()
        #: this round's floor under the infeasible scores (numpy; module docstring)
        self.floor = CONFIG_FLOOR

    def begin_round(self) -> None:
        super().begin_round()
        self.floor = CONFIG_FLOOR

    def score(self, ucb_f, lcb_g):
        """:func:`config_score`; with numpy arrays the floor is this round's lowest so far (module
        docstring), so that every call of a round ranks its feasible points above its infeasible ones
        and above those of the calls before it."""
        if isinstance(lcb_g, np.ndarray):
            self.floor = config_floor(ucb_f, lcb_g.max(-1), self.floor)
            return config_score(ucb_f, lcb_g, self.floor)
        return config_score(ucb_f, lcb_g)

    def record_choice(self, lcb_g_at_x) -> None:
        """Record the chosen point's largest LCB and whether it came from the fallback."""
        worst = float(np.max(lcb_g_at_x))
        self.last.update({"worst_lcb_g": worst, "fallback": float(worst > 0.0)})


def rpol_score(ucb_f, lcb_g, Q):
    r"""RPOL's score :math:`\hat f - \sum_j Q_j [\check g_j]^+`; ``ucb_f`` (...,), ``lcb_g`` (..., m), ``Q`` (m,)."""
    return ucb_f - (like(Q, lcb_g) * positive_part(lcb_g)).sum(-1)


def config_floor(ucb_f, worst, floor: float = CONFIG_FLOOR) -> float:
    """The floor under CONFIG's infeasible scores for numpy arrays (module docstring): ``floor`` when every
    feasible UCB (``worst`` <= 0; NaN left out) is above it, else the lowest feasible UCB minus 1e6 (the
    next float below it where that rounds to it)."""
    ucb_f, worst = np.broadcast_arrays(np.asarray(ucb_f, dtype=float), np.asarray(worst, dtype=float))
    lo = float(np.min(ucb_f, where=(worst <= 0.0) & ~np.isnan(ucb_f), initial=np.inf))
    if lo > floor:
        return floor
    lowered = lo + CONFIG_FLOOR
    return lowered if lowered < lo else math.nextafter(lo, -math.inf)


def config_score(ucb_f, lcb_g, floor: float = CONFIG_FLOOR):
    """CONFIG's score: the UCB where every LCB <= 0, else the floor minus the worst LCB: ``floor``
    (``CONFIG_FLOOR``) lowered below the feasible UCBs with numpy arrays (:func:`config_floor`); with
    torch, feasible UCBs at or below ``CONFIG_FLOOR + 1`` squeezed above it (module docstring)."""
    if isinstance(lcb_g, np.ndarray):
        worst = lcb_g.max(-1)
        return where(worst <= 0.0, ucb_f, config_floor(ucb_f, worst, floor) - worst)
    worst = lcb_g.max(dim=-1).values
    return where(worst <= 0.0, above_floor(ucb_f, CONFIG_FLOOR), CONFIG_FLOOR - worst)
