r"""``ckb.Optimizer``: ask/tell constrained Bayesian optimization over a box, persisted in a study file.

::

    opt = ckb.Optimizer(lower, upper, m=1, budget=60, storage="study.db", study_name="pump",
                        goal="best-feasible", violation_budget=[0.5], exact=True)
    x = opt.ask()                       # (d,) in original units
    opt.tell(x, objective, [g1])        # feasible where g <= 0
    opt.tell(x2, failed=True, note="simulator crashed")
    opt.best_feasible(); opt.metrics(); opt.history()

**Steps.** The first ``n_init`` asks return the initial design: the user's (``initial_design=``, an
array or a callable ``f(n_init, rng)``) or the scrambled Sobol design (:func:`ckb.optimizer.initial_design`,
``2d + 2`` points, the same for every policy and seed); later asks come from the policy
(:mod:`ckb.optimizer.policies`; by default the one of the ``goal``), as do further Sobol points while no
evaluation has completed. An ask (a) reads the complete observations, (b) converts them to policy units
(:class:`~ckb.optimizer.models.OutcomeUnits`, below), (c) fits the GPs (:mod:`ckb.optimizer.models`;
hyperparameters refitted when ``refit_every`` new results (None: the policy's interval) arrived since the
last fit, when the policy's targets changed meaning or when the units of a target changed, else reused),
(d) conditions them on every pending and failed point (posterior-mean fantasies: the next points move
away from those; a failed point carries no value), (e) lets the policy decide (multi-start gradient
ascent of its score over the unit cube, or enumeration of ``candidates``) from a :class:`~ckb.optimizer.policies.Decision`
that also carries what is left of the violation budget, the map back to raw constraint units, whether
evaluations are exact and the rounds left, and make its ask-time updates. ``ask(k)`` repeats (d)-(e) k
times, each pick conditioning the next, so the k points differ. A tell records the result and, for a
point the policy chose, makes the policy's tell-time updates.

**Units** (``outcome_transform``). Policies see the objective in the maximization sense and each
constraint scaled but not shifted (0 stays the threshold). ``"rms"``: the objective standardized by
its mean and standard deviation, each constraint divided by the root mean square of its observed
values (the units of every study before this option; the RMS, unlike the standard deviation, keeps
values O(1) when a constraint is far from 0 everywhere, so the clip G does not flatten it).
``"bilog"``: each constraint :math:`B(c_j/s_j)` with :math:`B(v) = \mathrm{sign}(v)\log(1 + |v|)`
(BoTorch's Bilog) and :math:`s_j` the median of the distinct nonzero :math:`|c_j|` of the initial design,
applied twice (:math:`B(B(c_j/s_j))`) when :math:`\max|c_j|/s_j > 10^3`; the objective by the normal
scores of its ranks. ``"auto"`` (default): first, a constraint whose values crowd against one side
far from 0 (such as :math:`1 - r(x)` with a ratio :math:`r` spanning decades: values of 0.99-1 over
most of the box) is modelled as the log of its distance to a bound just past them, for the policies
that allow it (:attr:`~ckb.optimizer.policies.OptimizerPolicy.bound_map`); otherwise, per target:
``rms`` units unless the target is heavy-tailed -- its moments overflow, or its largest magnitude
exceeds 30 robust scales of the design's values for a constraint (:math:`\max|c_j| / s_j`), :math:`10^3` for the objective (:math:`\max|u - m| / s` with
:math:`m` the design's median and :math:`s` the median distinct nonzero :math:`|u - m|` there) -- then
the robust map. Measured choices (:mod:`ckb.optimizer.models` gives the numbers): the thresholds
separate six shipped benchmarks (every constraint within 10.1 robust scales in every stored run; the
largest objective ratio 84, Hartmann-6's) from the constraints whose RMS a few values set (the tension
spring's reach 128, the welded beam's 2.5e4, a simulator's 1e10 or DBL_MAX sentinel far more), so the
six problems' asked points stay bit for bit what they were; the scale comes from the design because
a run that converges on an active constraint puts most values near 0 (on all observations the ratio
reached 7e3 on Gardner 2 with CEI). ``"auto-no-bounds"``: ``"auto"`` without the bound map, the
default before it; a study stored with ``"auto"`` before then resumes with it (its decisions keep their
units; a policy with ``bound_map = False`` sees those units under ``"auto"`` anyway and resumes with
it). The raw values stay in the study untouched; :meth:`Optimizer.units` gives the map in use, and
its ``c_to_raw`` (the exact inverse, monotone, 0 -> 0) is what a policy gets to compare a violation
with a budget in the constraint's own units. Nothing overflows: moments are
scaled before squaring.

**Violation budget** (``violation_budget``, per constraint, in its own units): spent_j is
:math:`\sum_t [g_j(x_t)]^+` over the complete evaluations that are not initial-design points (the design
is not the policy's decision; user points count, but not those told before the first ask: data the
user had, as a design of theirs); ``metrics()`` shows budget, spent and left
(:math:`\max(0, b_j - \text{spent}_j)`), and every decision gets the left amount before that ask
(pending points count nothing). The policy decides how to spend it.

**Exact evaluations** (``exact=True``): a repeated exact evaluation teaches nothing, so no point is
evaluated twice: a pick within ``SAME_POINT`` (1e-6, unit-cube max-norm) of a complete or failed point
is replaced by the maximization with those points excluded too (on a candidate set, once every
candidate is evaluated, repeats are allowed). The GPs' noise floor is then ``EXACT_NOISE_FLOOR``
(1e-6 on standardized targets instead of BoTorch's 1e-4: once 40-60 exact evaluations pin a target
down, its fitted noise sits at the floor, and 1e-6 cut the GPs' held-out error 1.4-8x and CEI's median
final gap on Gramacy from 5.9e-4 to 3.2e-5; the measurement is at the constant).

**Numerics.** Warnings of fitting the GPs and of maximizing the acquisition are captured (not
ignored) and counted in each trial's ``info["numerics"]`` (``fit_warnings``, ``acq_warnings``,
``fit_failed``, the first distinct ``messages``; the fit of ``ask(k)`` in its first point), totalled in
``metrics()["numerics"]`` and shown by ``ckb study show``; ``strict_numerics=True`` turns any of them
into a one-line :class:`NumericsError` (nothing recorded). Deprecation warnings of the libraries are
not numerics and pass through. A fit fails when BoTorch gives up after its retries from prior samples
(``ModelFittingError``) or ends with non-finite hyperparameters; the previous hyperparameters are
kept. (``fit_failed`` used to be invisible: BoTorch's retries hide all but total failures, their
warnings were suppressed, and the benchmark read an optimizer attribute, ``fit_failures``, that did not
exist; it does now.)

**Structure.** The optimizer decides; its :class:`~ckb.optimizer.study.Study` keeps the record (as Optuna
separates sampler, study and storage). The study owns the trials, the pending asks, the budget, the
reports (``history``, ``pending``, ``best_feasible``, ``metrics``) and the transactions; the optimizer
owns the units of the outcomes, the models, the maximizer and the policy. An ask or a tell is one
:meth:`Study.transact <ckb.optimizer.study.Study.transact>`: the study hands over a snapshot (the trials
and the state after the last step: policy state, numpy generator, GP hyperparameters), the optimizer
restores the policy from it, decides, and records its asks or tells and the new state on the snapshot,
which the study writes in one transaction. The optimizer therefore keeps nothing between calls that the
file does not hold, and several processes can work on one study.

**Storage.** Every ask, tell and failure, and the state after each step, is a row of a SQLite study
file (:mod:`ckb.studies.storage`; no pickle). Processes sharing a study take turns first come, first
served (:mod:`ckb.studies.turns`), and each step's writes are one transaction, so a process killed at
any moment leaves the file at its last completed step (every told result and recorded ask intact):
constructing an ``Optimizer`` on an existing study resumes it (the identity options -- box, m, goal,
policy, budget, design, violation budget, transform, exact, ... -- must match the stored ones; a study
written before an option existed has its default). The spec also stores the policy's constants as
resolved (``policy_constants``, defaults included), and a resumed study keeps them where a later
version's defaults differ, with a warning (:meth:`Optimizer._resume_constants`). Without ``storage``
the study lives in memory. The
budget is checked where an ask is written: once ``budget`` trials are asked or told,
:meth:`Optimizer.ask` raises :class:`BudgetExhaustedError`, so workers sharing a study stop at exactly
``budget`` trials::

    while True:
        try:
            x = opt.ask()
        except ckb.BudgetExhaustedError:
            break
        opt.tell(x, *evaluate(x))

**Choices the continuous, fitted setting forces** (the papers assume a known kernel, known bounds
and a finite or exactly maximized domain):

- *units*: every constant of a policy is on the policy units above. The scales move as data arrive;
  tell-time updates (RPOL's Q, the penalty's epoch sums) use the units at the time of the tell;
- *the policy's clock* starts after the initial design: the design's results feed the models but not
  the duals, Q or epochs (the design is not the policy's decision), and the horizon is stated once,
  ``opt.horizon = budget - n_init`` (at least 1), stored with the study and given to every policy;
  points told without an ask (source ``user``) likewise feed only the models, and do not change the
  horizon (they use trials of the budget, so fewer policy asks may remain: ``Decision.rounds_left``
  counts the asks the budget still allows). A design point told without an ask (results already on
  disk) counts as that design point (source ``init``), in any order; the asks skip it;
- *pending and failed points* condition the posterior variance with posterior-mean fantasies; a failed
  point carries no value, but the next asks move away from it instead of repeating it;
- *batch separation*: fantasies alone (GP-BUCB's hallucination) let a batch collapse once the posterior
  width near the optimum is small next to the slope of the mean: on Gardner 1 after 20 evaluations,
  CKB-UCB's ``ask(4)`` returned four points within 1e-3 of each other (unit-cube max-norm) in two of four
  seeds, at a boundary optimum. So a new point also keeps ``batch_separation`` (default 0.1) lengthscales
  from every pending point (correlation <= 0.995 under the RBF kernel); 0 restores fantasies alone.
- *maximization*: multi-start L-BFGS-B (``optimize_acqf``) replaces the exact argmax; random tie-breaking
  happens only on a candidate set (on the box the restarts pick among tied points);
- *Thompson sampling* on a box draws sample paths by random Fourier features with a Matheron update
  (BoTorch's pathwise sampling), an approximation of the exact joint sample the papers use on a finite set.

**Randomness.** The policy's numpy generator (TS draws, RandGP's Z, restart seeds, tie-breaking) is
stored with the state; torch's generator is seeded from it at every decision, so the same calls give the
same points. Torch runs in double precision with ``torch_threads`` threads (default 1: the models are
small, and several workers may share the machine).
"""

from __future__ import annotations

import inspect
import math
import sys
import time
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from ckb._validation import (
    as_real_array,
    check_bool,
    check_scalar,
    closest,
    did_you_mean,
    listed,
    short_repr,
    suggestion,
)
from ckb.errors import CKBError, InvalidInputError
from ckb.optimizer.models import (
    OUTCOME_TRANSFORMS,
    UNITS_VERSION,
    NumericsError,
    OutcomeUnits,
    capture_warnings,
    first_distinct,
    stored_transform,
    violation_amounts_note,
)
from ckb.optimizer.space import Space, nearest_unused
from ckb.optimizer.space import initial_design as sobol_design
from ckb.optimizer.study import (
    BudgetExhaustedError,
    Metrics,
    Step,
    Study,
    complete_arrays,
    is_design,
    is_space_filling,
    violation_spent,
)
from ckb.studies.storage import StudyFileError, StudyStorage, dumps, loads
from ckb.violation import feasible_rows

__all__ = ["BotorchNotInstalledError", "BudgetExhaustedError", "NumericsError", "Optimizer", "policy_units"]

#: options that define a study; resuming with different values is an error
_IDENTITY = (
    "lower",
    "upper",
    "m",
    "goal",
    "policy",
    "budget",
    "minimize",
    "initial_design",  # before n_init, which it sets: a resume without the design names the design
    "n_init",
    "seed",
    "candidates",
    "violation_budget",
    "outcome_transform",
    "exact",
    "policy_params",
)
#: the values of identity options added after version 1, for studies written before them
_LEGACY = {
    "goal": "best-feasible",
    "initial_design": None,
    "violation_budget": None,
    "outcome_transform": "auto",
    "exact": False,
}
#: run-time settings: stored with the study, but Optimizer.load may override them
_RUNTIME = (
    "refit_every",
    "num_restarts",
    "raw_samples",
    "maxiter",
    "batch_separation",
    "torch_threads",
    "strict_numerics",
    "max_line_search",
)
#: the GPs' noise floor (variance on standardized targets) with exact=True; BoTorch's default is 1e-4.
#: Measured on the shipped (exact) benchmark problems: the fitted noise stays above 1e-4 until 40-60
#: evaluations, then reaches that floor for the targets the data pin down (Gardner 1 and 2, Gramacy,
#: Branin-disk, the tension spring); for those, a floor of 1e-6 cut the held-out mean absolute error
#: of GPs on 40-60 Sobol points 1.4 to 8 times (e.g. Gramacy's objective 0.0009 -> 0.0002 target
#: sd, Branin-disk's constraint 0.0057 -> 0.0015), 2-sd coverage moved by at most 3 points (0.98 ->
#: 0.95), no fit warned; targets above the floor did not change. In runs (CEI, exact=True, 40
#: evaluations, seeds 0-2) the final gaps went from 5.9e-4 to 3.2e-5 (median, Gramacy), 2.6e-5 to
#: 1.4e-5 (Gardner 2) and stayed at 2e-6 (Branin-disk), with no warning. 1e-8 gained little more and
#: once refitted a tension-spring constraint to a worse optimum (error 0.12 -> 0.14), so 1e-6.
EXACT_NOISE_FLOOR = 1e-6
#: relative (to the box width) distance within which a told point is a point told before (the warning
#: that it is recorded as a new evaluation of it)
_MATCH_TOL = 1e-9
#: a told point answers a pending trial (or is a design point not yet asked) when each coordinate is
#: within this many times (box width + |coordinate|) of it: a float32 copy (relative error 6e-8) or a
#: copy rounded to 6 or more significant digits is the point that was asked (at 1e-9 it was recorded as
#: a new user trial, the asked one left pending for good and a design point charged to the budget) --
#: but never farther than _NEAR_TOL of the box width: in a box narrow next to its distance from 0
#: ([1e6, 1e6 + 10]) a band relative to |coordinate| covered other points of the box, and results were
#: stored against other trials' points
_ANSWER_TOL = 1e-6
#: a told point this close (relative to the box width) to a pending trial but not within _ANSWER_TOL of
#: it is recorded as new, with a warning naming the trial
_NEAR_TOL = 1e-3


def _copy_band(asked: np.ndarray, width: np.ndarray) -> np.ndarray:
    """Per coordinate, how far a float32 copy or a rounding of ``asked`` may lie from it
    (``_ANSWER_TOL`` of box width + |coordinate|), before the cap of :func:`_answer_gap`."""
    return _ANSWER_TOL * (width + np.abs(asked))


def _answer_gap(asked: np.ndarray, x: np.ndarray, width: np.ndarray) -> float:
    """How far the told ``x`` is from the point ``asked``, in units of the answering tolerance (the
    largest over the coordinates; <= 1: ``x`` is ``asked``, up to a float32 copy or a rounding)."""
    tol = np.minimum(_copy_band(asked, width), _NEAR_TOL * width)
    return float(np.max(np.abs(asked - x) / tol))


def _nearest_answered(points: list[tuple[int, np.ndarray]], x: np.ndarray, width: np.ndarray):
    """Of ``(key, point)`` pairs, the key of the point that ``x`` answers (:func:`_answer_gap` <= 1),
    the nearest if several do (the first of equals), or None."""
    gaps = [(_answer_gap(p, x, width), i) for i, (_, p) in enumerate(points)]
    gap, i = min(gaps, default=(np.inf, -1))
    return points[i][0] if gap <= 1.0 else None


#: the version of an optimizer study's spec this ckb writes, and those it reads: 1 (the first release:
#: box, m, policy, budget, minimize, n_init, seed, candidates, policy_params, options) and 2 (goal,
#: horizon, initial_design, violation_budget, outcome_transform, units, exact, policy_constants added)
SPEC_VERSION = 2
SPEC_VERSIONS = (1, 2)
#: every key of an optimizer study's spec in the versions this ckb reads (:meth:`Optimizer._spec`)
SPEC_KEYS = frozenset(
    (
        "kind",
        "version",
        "lower",
        "upper",
        "candidates",
        "horizon",
        "units",
        "policy_constants",
        "options",
        *_IDENTITY,
    )
)


def stored_spec_problem(spec: dict[str, Any]) -> str | None:
    """What in an optimizer study's spec this ckb cannot read faithfully, or None: a ``version`` other
    than :data:`SPEC_VERSIONS` (a newer ckb wrote it), a key no such version has, a run-time option this
    ckb does not have, or an outcome ``units`` version it does not know."""
    version = spec.get("version")
    if type(version) is not int or version not in SPEC_VERSIONS:
        return (
            f"has spec version {short_repr(version)}; this ckb reads versions "
            f"{' and '.join(map(str, SPEC_VERSIONS))} (a newer ckb wrote it?)"
        )
    unknown = sorted(set(spec) - SPEC_KEYS)
    options = spec.get("options")
    unknown += sorted(
        f"options.{k}" for k in (options if isinstance(options, dict) else ()) if k not in _RUNTIME
    )
    if unknown:
        return (
            f"has spec key(s) {', '.join(map(short_repr, unknown))} that spec version {version} does not have "
            "(a newer ckb wrote it?)"
        )
    units = spec.get("units", 1)
    if type(units) is not int or not 1 <= units <= UNITS_VERSION:
        return (
            f"has outcome units version {short_repr(units)}; this ckb knows versions 1 to {UNITS_VERSION} "
            "(a newer ckb wrote it?)"
        )
    return None


def check_stored_spec(spec: dict[str, Any], name: str, path: Any) -> None:
    """Refuse, in one line, an optimizer study whose spec this ckb cannot read faithfully
    (:func:`stored_spec_problem`): resuming it would write to it with a meaning its writer did not give it."""
    problem = stored_spec_problem(spec)
    if problem is not None:
        raise StudyFileError(
            f"study {name!r} in {path} {problem}: resume it with the ckb that wrote it (`ckb study show` and "
            "`export` can read it); nothing was changed."
        )


def _check_resumable(store: StudyStorage, name: str, spec: dict[str, Any]) -> None:
    """A stored optimizer study resumes only if this ckb reads its spec (:func:`check_stored_spec`) and
    each of its trials records where its point came from (``info``; ckb.Optimizer has written it for
    every trial since its first release): without it the design would be asked again from its first
    point, whatever was evaluated already."""
    check_stored_spec(spec, name, store.path)
    # read inside Study.open's transaction, which may add an older file's info column: a refusal here
    # rolls that back (the trials are read once more after the open, where a refusal would come too late)
    blind = [t["number"] for t in store.trials(name) if t["info"] is None]
    if blind:
        cause = "its file has no info column" if not store.has_trial_info else "their info is empty"
        raise StudyFileError(
            f"study {name!r} in {store.path}: trial(s) {listed(blind)} do not record where their points came from "
            f"({cause}; ckb.Optimizer records it for every trial, so the file was altered or written by "
            "other code), and resuming would ask the initial design again; `ckb study show` and `export` "
            "can read it; nothing was changed."
        )


#: the most constraints a study takes: each gets a GP of its own, fitted at every decision, so a count
#: far beyond this is a mistake (a memory error in the first report) rather than a problem to model
_MAX_M = 1000


def _policy_registry():
    from ckb.optimizer.policies import OPTIMIZER_POLICIES

    return OPTIMIZER_POLICIES


def units_transform(transform: str, policy: Any) -> str:
    """The outcome transform a policy's decisions use: ``transform``, except that ``"auto"`` leaves out
    the bound map for a policy (class or instance) with ``bound_map = False`` (its ``"auto-no-bounds"``)
    and models a minimized objective spanning decades by its log for one with ``objective_log`` true
    (``"auto-log-objective"``)."""
    if transform == "auto" and not getattr(policy, "bound_map", True):
        return "auto-no-bounds"
    if transform == "auto" and getattr(policy, "objective_log", False):
        return "auto-log-objective"
    return transform


def _check_outcome_transform(value: Any) -> str:
    """One of :data:`~ckb.optimizer.models.OUTCOME_TRANSFORMS` (the optimizer's and the sampler's check)."""
    if value not in OUTCOME_TRANSFORMS:
        raise InvalidInputError(
            f"outcome_transform must be one of {', '.join(map(repr, OUTCOME_TRANSFORMS))}, got {value!r}."
        )
    return value


class BotorchNotInstalledError(CKBError, ImportError):
    """``ckb.Optimizer`` needs torch and BoTorch (the ``botorch`` extra), which are not installed."""


def _require_botorch(who: str = "ckb.Optimizer", extra: str = "botorch") -> None:
    """A clear error naming ``who``, the missing packages and the extra to install (from the checkout)."""
    import importlib.util

    missing = [name for name in ("torch", "botorch", "gpytorch") if importlib.util.find_spec(name) is None]
    if missing:
        raise BotorchNotInstalledError(
            f"{who} fits its GPs with BoTorch, but {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not installed. Install ckb's {extra} extra from "
            f"the folder of your ckb checkout: pip install -e '.[{extra}]' (ckb is not on PyPI; install "
            "torch first if you want a particular build of it)."
        )


def policy_units(y: np.ndarray, c: np.ndarray, minimize: bool, m: int) -> tuple[np.ndarray, np.ndarray, dict]:
    """Outcomes in the ``rms`` units (:class:`~ckb.optimizer.models.OutcomeUnits` with
    ``transform="rms"``): the objective in the maximization sense, standardized by the mean and (ddof=1)
    standard deviation of the observations (sd 1 for fewer than two observations or a constant
    objective); each constraint divided by the root mean square of its observed values (not shifted, so
    0 stays the threshold; 1 for a constraint observed only at 0), without overflow. Returns ``(y_p,
    c_p, scales)`` with ``scales = {"y_mean", "y_sd", "c_rms"}``."""
    units = OutcomeUnits(y, c, minimize=minimize, m=m, transform="rms")
    return units.y(y), units.c(c), units.scales


def _goal_policies() -> dict[str, str]:
    from ckb.optimizer.policies import GOAL_POLICIES

    return GOAL_POLICIES


def _check_violation_budget(value: Any, m: int | None) -> list[float] | None:
    """None, or m finite numbers >= 0 (a number applies to every constraint). With ``m=None`` (the Optuna
    sampler, which learns m from the first trial) a number stays one entry and a list may have any
    length >= 1; the sampler checks the length against the trials later."""
    if value is None:
        return None
    many = "one number >= 0 per constraint" if m is None else f"m = {m} numbers >= 0 (one per constraint)"
    what = f"violation_budget must be None, a number >= 0 or {many}"
    if isinstance(value, (bool, np.bool_, str, bytes, dict)):
        raise InvalidInputError(f"{what}, got {short_repr(value, 60)}.")
    if isinstance(value, (list, tuple)) and any(v is None for v in value):
        j = next(k for k, v in enumerate(value) if v is None)
        raise InvalidInputError(
            f"violation_budget[{j}] is None; each entry must be a finite number >= 0 (no limit on one "
            "constraint: a number larger than any violation it can have)."
        )
    arr = as_real_array(value, "violation_budget")
    if arr.ndim == 0:
        arr = np.full(1 if m is None else m, float(arr))
    if arr.ndim != 1 or (arr.size == 0 if m is None else arr.shape != (m,)):
        raise InvalidInputError(f"{what}, got {arr.size} value(s): {short_repr(value, 60)}.")
    bad = np.flatnonzero(~np.isfinite(arr) | (arr < 0))
    if bad.size:
        j = int(bad[0])
        raise InvalidInputError(
            f"violation_budget[{j}] is {arr[j]}; each entry must be a finite number >= 0, in constraint "
            f"{j}'s own units (0: avoid every violation you can; no limit on one constraint: a number "
            "larger than any violation it can have)."
        )
    return [float(v) + 0.0 for v in arr]  # + 0.0: -0.0 is 0


class Optimizer:
    """Constrained Bayesian optimization by ask/tell (see the module docstring).

    Parameters
    ----------
    lower, upper : the box (d,); ``upper > lower``.
    m : number of constraints (>= 1), feasible where ``g_j(x) <= 0``.
    goal : ``"best-feasible"`` (default: the best feasible design at the end, with few violating
        evaluations) or ``"cumulative"`` (every evaluation counts: regret and violation summed over the
        run, the papers' setting). It picks the default policy
        (:data:`ckb.optimizer.policies.GOAL_POLICIES`) and is stored with the study.
    policy : a registered policy (``ckb-ucb``, ``ckb-ts``, ``ckb-rand``, ``rpol-ucb``, ``config``,
        ``penalty-noisy``, ``cei``, ...; None: the goal's); its constants as extra keywords (``beta=``,
        ``B=``, ``delta=``, ...; see each policy).
    budget : the number of evaluations T (trials asked or told). Once it is used, :meth:`ask` raises
        :class:`BudgetExhaustedError`.
    minimize : minimize the objective instead of maximizing it.
    n_init : size of the initial design (default ``2d + 2``; with ``initial_design``, its size).
    initial_design : the first points to evaluate: an ``(n0, d)`` array of points in the box, or a
        callable ``f(n_init, rng) -> (n, d)`` (``rng = numpy.random.default_rng(seed)``; called when the
        optimizer is built, its points stored). None: the scrambled Sobol design. The first asks return
        them in order (source ``init``); a design point told without an ask counts as that design point.
    violation_budget : None, a number or m numbers >= 0: per constraint, the largest
        sum_t [g_j(x_t)]+ (own units, over the evaluations after the initial design) the run
        may spend, the user's own points told after the first ask included (those told before it are
        data the user had, not charged); 0: avoid every violation you can. Policies that read it see
        what is left (``metrics()["violation_budget_left"]``).
    outcome_transform : ``"auto"`` (default: a constraint whose values crowd against one side far from
        0, such as ``1 - r(x)`` with a ratio r spanning decades, as the log of its distance to that
        bound, unless the policy's ``bound_map`` is False; a heavy-tailed target by ``"bilog"``'s
        robust map: a constraint by the double log, the objective by the normal scores of its ranks;
        the others in RMS units), ``"rms"``, ``"bilog"``,
        ``"bilog-constraints"`` (the constraints as ``"bilog"``, the objective as ``"auto"``),
        ``"auto-log-objective"`` (``"auto"``, but a minimized positive objective spanning decades by its
        log: :mod:`ckb.optimizer.models`) or
        ``"auto-no-bounds"`` (``"auto"`` without the bound map, the default before it) or
        ``"auto-bounds"`` (the bound map wherever values crowd, near 0 too, for every policy; measured
        as an option): the units the policies see
        (:class:`~ckb.optimizer.models.OutcomeUnits`); the study keeps the raw values.
    exact : the evaluations are noise-free: no point is evaluated twice (on a candidate set, until every
        candidate is evaluated: then an ask repeats one and warns), and the GPs' noise floor is
        ``EXACT_NOISE_FLOOR`` (1e-6) instead of 1e-4.
    seed : seeds the design and the policy's generator.
    storage : a SQLite file path or a :class:`~ckb.studies.StudyStorage` (None: in memory). A new path
        is created; an existing file must be a ckb study file (any other file is refused, unchanged).
    study_name : the study in that file (default ``"study"``); an existing study is resumed.
    candidates : optional (n, d) points in the box: the optimizer then only proposes candidates.
    refit_every : refit the GP hyperparameters after this many new results (1: at every ask; None, the
        default: the policy's own interval, 2 for ``pcei`` and ``slack-cei`` and 1 for the others).
    num_restarts, raw_samples, maxiter : the acquisition maximizer (``optimize_acqf``) settings.
    max_line_search : the line-search steps L-BFGS-B may take per iteration of that maximizer (None, the
        default: the policy's own, 10 for ``pcei`` and SciPy's 20 for the others).
    batch_separation : while points are pending (``ask(k)``, or other workers' asks), a new point keeps
        at least this many lengthscales (scaled Euclidean distance, each dimension by the smallest
        fitted lengthscale of the models) from every pending point where the box has such a point (else
        only exact repeats are avoided, as with 0).
    torch_threads : torch's intra-op threads during asks.
    strict_numerics : raise :class:`NumericsError` (nothing recorded) when fitting the GPs or maximizing
        the acquisition warns or a fit fails, instead of counting it in the trial's ``numerics``.
    """

    def __init__(
        self,
        lower: Any,
        upper: Any,
        m: int = 1,
        *,
        goal: str = "best-feasible",
        policy: str | None = None,
        budget: int = 60,
        minimize: bool = False,
        n_init: int | None = None,
        seed: int = 0,
        storage: str | Path | StudyStorage | None = None,
        study_name: str | None = None,
        candidates: Any = None,
        initial_design: Any = None,
        violation_budget: Any = None,
        outcome_transform: str = "auto",
        exact: bool = False,
        refit_every: int | None = None,
        num_restarts: int = 10,
        raw_samples: int = 256,
        maxiter: int = 100,
        batch_separation: float = 0.1,
        torch_threads: int = 1,
        strict_numerics: bool = False,
        max_line_search: int | None = None,
        **policy_params: Any,
    ) -> None:
        _require_botorch()
        self.space = Space(lower, upper, candidates)
        self.m = check_scalar(m, "m (number of constraints)", low=1, high=_MAX_M, integer=True)
        self.budget = check_scalar(budget, "budget", low=1, integer=True)
        self.minimize = check_bool(minimize, "minimize")
        self.exact = check_bool(exact, "exact")
        self.strict_numerics = check_bool(strict_numerics, "strict_numerics")
        self.seed = check_scalar(seed, "seed", low=0, integer=True)
        goals = _goal_policies()
        if not isinstance(goal, str) or goal not in goals:
            raise InvalidInputError(
                f"goal must be one of {', '.join(map(repr, goals))}, got {goal!r}."
                + (did_you_mean(goal, goals) if isinstance(goal, str) else "")
            )
        self.goal = goal
        self.outcome_transform = _check_outcome_transform(outcome_transform)
        self.violation_budget = _check_violation_budget(violation_budget, self.m)
        self._user_design, self.n_init = self._check_design(initial_design, n_init)
        search = (refit_every, num_restarts, raw_samples, maxiter, batch_separation, torch_threads)
        _set_search_options(self, *search, max_line_search)
        self._set_policy(goals[goal] if policy is None else policy, policy_params)
        self.study_name = "study" if study_name is None else study_name
        if not isinstance(self.study_name, str) or not self.study_name:
            raise InvalidInputError(f"study_name must be a non-empty string, got {study_name!r}.")
        self.study = Study.open(
            storage,
            self.study_name,
            self._spec(),
            self._initial_state,
            _IDENTITY,
            defaults=_LEGACY,
            upgrade=_upgrade_spec,
            check=_check_resumable,
        )
        try:
            self._resume_constants()
            self._load_latest()
            self.study.trials()  # every trial read and checked now: a damaged one is said here, not at ask
        except BaseException:
            self.study.close()
            raise
        # after the study opened: a refused resume says only why
        self._warn_unread_budget(goals["best-feasible"])
        self._warn_unused_refinement()
        self._warn_gone_asks()

    # ----------------------------------------------------------------------------- construction
    def _warn_unread_budget(self, default: str) -> None:
        """Warn when a violation budget is given to a policy that does not read it."""
        if self.violation_budget is not None and not type(self.policy).reads_violation_budget:
            reg = _policy_registry()
            readers = [n for n in reg.names() if getattr(reg.get(n), "reads_violation_budget", False)]
            warnings.warn(
                f"policy {self.policy_name!r} does not read violation_budget: metrics() reports what is spent "
                f"and left, but its asks are the same without a budget (policies that spend it: "
                f"{', '.join(map(repr, readers))}; goal='best-feasible' uses {default!r}).",
                UserWarning,
                stacklevel=3,
            )

    def _warn_unused_refinement(self) -> None:
        """Warn when ``refine_radius`` or ``refine_last`` is given where it never acts: with ``leap_radius``
        (a leap leaves the incumbent's region) or a violation budget (whose own trust region applies)."""
        given = [k for k in ("refine_radius", "refine_last") if self.policy_params.get(k) is not None]
        why = [
            w
            for w, on in (
                ("leap_radius", self.policy_params.get("leap_radius") is not None),
                ("violation_budget", self.violation_budget is not None),
            )
            if on
        ]
        if given and why:
            warnings.warn(
                f"{' and '.join(given)} {'has' if len(given) == 1 else 'have'} no effect with "
                f"{' and '.join(why)}: the endgame does not "
                "refine near the incumbent then (help(ckb.rules.feasible_ei)).",
                UserWarning,
                stacklevel=3,
            )

    def _warn_gone_asks(self) -> None:
        """Warn, on opening a study, of pending asks whose process (on this host) has ended: they hold
        part of the budget until told, and the README's loop would otherwise end short without a word."""
        lost = [p for p in self.study.pending() if p["gone"]]
        if not lost:
            return
        pids = ", ".join(sorted({str(p["asked_by"]["pid"]) for p in lost})[:5])
        warnings.warn(
            f"study {self.study_name!r} has {len(lost)} pending ask(s) of a process on this host that has ended "
            f"(trial(s) {listed(p['trial'] for p in lost)}; pid {pids}): they hold {len(lost)} of the budget's {self.budget} evaluations "
            "until told; tell their results (opt.pending() lists them, with 'gone': True) or tell them as "
            "failed.",
            UserWarning,
            stacklevel=3,
        )

    def _check_design(self, design: Any, n_init: Any) -> tuple[np.ndarray | None, int]:
        """The user's initial design (validated, in the box, on the candidates if any) and its size."""
        d = self.space.d
        if n_init is not None:
            n_init = check_scalar(n_init, "n_init", low=0, integer=True)
            if n_init > self.budget:
                raise InvalidInputError(
                    f"n_init = {n_init} exceeds the budget of {self.budget} evaluations; the design must fit."
                )
        if n_init is None and 2 * d + 2 > self.budget:
            raise InvalidInputError(
                f"the default initial design has 2d + 2 = {2 * d + 2} points, more than the budget of "
                f"{self.budget} evaluations; pass n_init <= {self.budget} (or a larger budget)."
            )
        if design is None:
            return None, 2 * d + 2 if n_init is None else n_init
        n_req = 2 * d + 2 if n_init is None else n_init
        what = "initial_design"
        if callable(design):
            what = f"initial_design({n_req}, rng)"
            try:
                design = design(n_req, np.random.default_rng(self.seed))
            except CKBError:
                raise
            except Exception as exc:
                raise InvalidInputError(
                    f"{what} raised {type(exc).__name__}: {exc}; nothing was stored."
                ) from exc
        if design is None:  # a callable that returned nothing
            raise InvalidInputError(
                f"{what} returned None; it must return an (n, d) array of points with d = {d}."
            )
        D = as_real_array(design, what, "be an (n, d) array of points (real numbers)").copy()
        if D.size == 0:  # [] or an empty array: no design point, as np.zeros((0, d))
            D = D.reshape(0, d)
        if D.ndim == 1 and d == 1:
            D = D[:, None]
        if D.ndim != 2 or D.shape[1] != d:
            raise InvalidInputError(
                f"{what} must be an (n, d) array of points with d = {d}, got shape {D.shape}."
            )
        for i, row in enumerate(D):
            D[i] = self.space.check_point(row, f"{what} point {i}")
            if self.space.candidates is not None:
                C = self.space.candidates
                hit = np.flatnonzero(np.max(np.abs(C - row) / self.space.width, axis=1) <= _MATCH_TOL)
                if not hit.size:
                    raise InvalidInputError(
                        f"{what} point {i} {row.tolist()} is not one of the candidates (the optimizer "
                        "only proposes candidates)."
                    )
                D[i] = C[hit[0]]
            twin = np.flatnonzero(np.max(np.abs(D[:i] - D[i]) / self.space.width, axis=1) <= _MATCH_TOL)
            if self.exact and twin.size:
                raise InvalidInputError(
                    f"{what} point {i} {D[i].tolist()} repeats point {int(twin[0])}; with exact=True no point "
                    "is evaluated twice."
                )
        if n_init is not None and len(D) != n_init:
            raise InvalidInputError(
                f"n_init = {n_init} but {what} has {len(D)} points; give one of them, or both consistent."
            )
        if len(D) > self.budget:
            raise InvalidInputError(
                f"{what} has {len(D)} points but the budget is {self.budget} evaluations; the design must fit."
            )
        return D, len(D)

    def _set_policy(self, policy: str, policy_params: dict[str, Any]) -> None:
        """Resolve the policy's name and check its constants (by building it) before anything is stored."""
        reg = _policy_registry()
        self.policy_name = reg.canonical(policy)  # UnknownNameError with a did-you-mean
        self._policy_cls = reg.get(self.policy_name)
        self.policy_params = _stored_params(policy_params)
        #: the policies' horizon T: the budget minus the initial design (at least 1), stated once here,
        #: stored with the study and given to every policy; points told without an ask do not change it
        self.horizon = max(1, self.budget - self.n_init)
        try:
            self._policy_kwargs = dict(self.policy_params)
            self.policy = self._make_policy()  # the policy checks its constants now
        except (TypeError, InvalidInputError) as exc:  # a keyword neither it nor its rule takes
            _unknown_keyword(exc, self._policy_cls, policy_params, self.policy_name)
            raise

    @classmethod
    def load(cls, storage: str | Path | StudyStorage, study_name: str, **options: Any) -> Optimizer:
        """Resume a stored study with its stored options (``options``: run-time settings such as
        ``refit_every``, ``num_restarts``, ``raw_samples``, ``maxiter``, ``max_line_search``,
        ``batch_separation``, ``torch_threads``). A missing file is an error (nothing is created)."""
        if not isinstance(study_name, str) or not study_name:
            raise InvalidInputError(f"study_name must be a non-empty string, got {study_name!r}.")
        bad = set(options) - set(_RUNTIME)
        if bad:
            raise InvalidInputError(
                f"Optimizer.load takes run-time settings only, got {sorted(bad)}; the study's options are stored."
            )
        store, own = Study.storage(storage, create=False)
        try:
            spec = store.spec(study_name)  # StudyNotFoundError with a did-you-mean
            if spec.get("kind") != "ckb.Optimizer":
                raise InvalidInputError(
                    f"study {study_name!r} in {store.path} was not written by ckb.Optimizer."
                )
            check_stored_spec(spec, study_name, store.path)
            args, kwargs = _stored_options(spec, study_name, store.path)
            opt = cls(*args, storage=store, study_name=study_name, **{**kwargs, **options})
        except BaseException:
            if own:
                store.close()
            raise
        opt.study.own_store = own
        return opt

    def _make_policy(self):
        return self._policy_cls(self.m, self.horizon, **self._policy_kwargs)

    def _resume_constants(self) -> None:
        """A resumed study keeps the policy constants it was started with where this version's defaults
        differ (:func:`kept_constants`), with a warning naming them; a stored constant this version no
        longer takes is an error."""
        stored = self.store.spec(self.study_name).get("policy_constants")
        where = f"study {self.study_name!r} in {self.store.path}"
        ours = self.policy.constants()
        changed = kept_constants(stored, ours, self._policy_cls, where)
        if not changed:
            return
        try:
            self._policy_kwargs = {**self._policy_kwargs, **changed}
            self.policy = self._make_policy()
        except CKBError as exc:
            raise InvalidInputError(
                f"{where} was started with {self.policy_name} constants this version of ckb does not "
                f"accept ({exc}); resume it with the version that wrote it, or start a new study."
            ) from None
        warnings.warn(
            _kept_message(self.study_name, self.policy_name, changed, ours), UserWarning, stacklevel=3
        )

    def _spec(self) -> dict[str, Any]:
        return {
            "kind": "ckb.Optimizer",
            "version": SPEC_VERSION,
            **self.space.to_dict(),
            "m": self.m,
            "goal": self.goal,
            "policy": self.policy_name,
            "budget": self.budget,
            "minimize": self.minimize,
            "n_init": self.n_init,
            "horizon": self.horizon,
            "seed": self.seed,
            "initial_design": None if self._user_design is None else self._user_design.tolist(),
            "violation_budget": self.violation_budget,
            "outcome_transform": self.outcome_transform,
            "units": UNITS_VERSION,
            "exact": self.exact,
            "policy_params": self.policy_params,
            "policy_constants": _stored_params(self.policy.constants()),
            "options": {key: getattr(self, key) for key in _RUNTIME},
        }

    def _initial_state(self) -> dict[str, Any]:
        return _snapshot(self.policy, np.random.default_rng(self.seed))

    @property
    def store(self) -> StudyStorage:
        """The study file (:class:`~ckb.studies.StudyStorage`)."""
        return self.study.store

    def close(self) -> None:
        self.study.close()

    def __enter__(self) -> Optimizer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------------------------ state
    def _load_latest(self) -> int:
        step, state = self.study.latest_state()
        self._restore(state)
        return step

    def _restore(self, state: dict[str, Any]) -> None:
        """The policy, the generator and the model state as stored after a step."""
        try:
            self.policy, self.rng, self._models_state = _restored(self._make_policy(), state)
        except (KeyError, TypeError) as exc:
            raise StudyFileError(
                f"study {self.study_name!r} in {self.store.path} holds a damaged optimizer state "
                f"({type(exc).__name__}: {exc})."
            ) from exc

    def _state(self) -> dict[str, Any]:
        return _snapshot(self.policy, self.rng, self._models_state)

    def _transact(self, decide):
        """One step: the study's snapshot restores the policy, ``decide(step)`` records on it, and the
        state after it is written with what it recorded (:meth:`Study.transact`)."""

        def run(step: Step):
            with _torch_threads(self.torch_threads):
                self._restore(step.state)
                result = decide(step)
            step.new_state = self._state()
            return result

        return self.study.transact(run)

    # -------------------------------------------------------------------------------------- ask
    def ask(self, k: int | None = None) -> np.ndarray:
        """The next point ``(d,)``, or ``k`` distinct points ``(k, d)`` to evaluate in parallel.

        Raises :class:`BudgetExhaustedError` when the budget is used (``metrics()["remaining"] == 0``);
        ``ask(k)`` with fewer than ``k`` trials left returns the ``remaining`` points that are left. With a
        ``violation_budget``, no point beyond the initial design is asked while no result is in and some
        ask is pending (such a point is drawn blind, by Sobol, and charged to the budget): ``ask(k)``
        returns the design points left, and an ask with none left is an :class:`InvalidInputError`
        asking for a result first.
        """
        n = 1 if k is None else check_scalar(k, "k (number of points)", low=1, integer=True)
        _import_models()  # a process's first ask imports them before its turn, not while others wait
        points = self._transact(lambda step: self._ask_step(step, n))
        return points[0] if k is None else np.stack(points)

    def _ask_step(self, step: Step, n: int) -> list[np.ndarray]:
        import torch

        step.check_budget()
        points = []
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(self.rng.integers(2**63 - 1)))  # fits, sample paths: reproducible
            ctx = None
            for _ in range(min(n, step.remaining)):
                start = time.perf_counter()
                x, info, ctx = self._next(step, ctx)
                if x is None:  # nothing but a blind point to ask under a violation budget
                    if not points:
                        raise InvalidInputError(
                            f"ask: no result is in and {sum(t['state'] == 'pending' for t in step.trials)} "
                            "ask(s) are pending; with a "
                            "violation_budget a point beyond the initial design is chosen from results, not "
                            "drawn blind (a Sobol point would be charged to the budget): tell a result first."
                        )
                    break
                # seconds of this point's decision (a batch's model fit is counted in its first point)
                info["seconds"] = time.perf_counter() - start
                step.ask(x, info)
                points.append(x)
        return points

    def _next(self, step: Step, ctx):
        trials = step.trials
        used = {int(t["info"]["design_index"]) for t in trials if "design_index" in (t["info"] or {})}
        n_complete = sum(1 for t in trials if t["state"] == "complete")
        free = next((i for i in range(self.n_init) if i not in used), None)
        if free is not None or n_complete == 0:  # the design, then Sobol points while no result is in
            pending = any(t["state"] == "pending" for t in trials)
            if free is None and self.violation_budget is not None and pending:
                return None, None, ctx  # a blind point while results are out: not under a budget
            index = free if free is not None else max(used | {self.n_init - 1}) + 1
            # past the design, a Sobol point is no design point: a violation budget is charged for it
            source = "init" if index < self.n_init else "sobol"
            return self._design_point(trials, index), {"source": source, "design_index": index}, ctx
        fit_log: list[str] = []
        failures: list[str] = []
        if ctx is None:  # one fit per ask(k): counted in its first point
            ctx = self._context(trials)
            fit_log, failures = ctx["models"].warnings, ctx["models"].failures
            self._check_numerics("fitting the GPs", failures + fit_log)
            self._note_violation_amounts(ctx["c_raw"])
            self._note_budget_before_feasible(ctx["c_raw"])
        unit = {
            s: [self.space.to_unit(t["x"]) for t in trials if t["state"] == s] for s in ("pending", "failed")
        }
        busy = unit["pending"] + unit["failed"]
        models = ctx["models"].condition(np.array(busy)) if busy else ctx["models"]
        build_log = models.warnings if busy else []
        pending = np.array(unit["pending"]).reshape(-1, self.space.d)
        from ckb.optimizer.policies import Decision

        C = None if self.space.candidates is None else self.space.to_unit(self.space.candidates)
        done = None
        if self.exact:
            done = np.array([self.space.to_unit(t["x"]) for t in trials if t["state"] != "pending"])
            done = done.reshape(-1, self.space.d)
        maximize = _maximizer(self, self.space.d, self.rng, ctx["models"], pending, candidates=C, done=done)
        decision = Decision(
            models,
            maximize,
            self.rng,
            ctx["y"],
            ctx["c"],
            violation_left=None if ctx["left"] is None else ctx["left"].copy(),
            c_to_raw=ctx["units"].c_to_raw,
            exact=self.exact,
            rounds_left=max(0, step.remaining - 1),
            violation_budget=None if self.violation_budget is None else np.array(self.violation_budget),
            on_candidates=C is not None,
        )
        with capture_warnings() as acq_log:
            u, internals = self.policy.decide(decision)
        self._check_numerics("building the conditioned GPs", build_log)
        self._check_numerics("maximizing the acquisition", acq_log)
        x = self.space.from_unit(u)
        if self.space.candidates is not None:  # exactly the candidate (no round-off from unit scaling)
            x = self.space.candidates[int(np.argmin(np.sum((C - u) ** 2, axis=1)))].copy()
        info = {"source": "policy", "round": self.policy.t, **{k: float(v) for k, v in internals.items()}}
        from ckb.optimizer.acquisition import Maximizer

        if done is not None and len(done) and Maximizer._taken(self.space.to_unit(x), done):
            info["repeat"] = 1.0  # exact=True on a candidate set whose every candidate is evaluated
            warnings.warn(
                f"exact=True: every candidate has been evaluated, so this ask repeats the evaluated point "
                f"{x.tolist()}; a larger candidate set or a smaller budget avoids it.",
                UserWarning,
                stacklevel=_outside_ckb(),
            )
        if failures:
            info["fit_failed"] = 1.0
        info["numerics"] = {
            "fit_warnings": len(fit_log) + len(build_log),
            "acq_warnings": len(acq_log),
            "fit_failed": int(bool(failures)),
            "messages": first_distinct(failures + fit_log + build_log + acq_log),
        }
        info["units"] = ctx["units"].describe()
        return x, info, ctx

    def _note_violation_amounts(self, c: np.ndarray) -> None:
        """Warn once per optimizer when a constraint's told values ``c`` (the complete trials', raw) look
        like violation amounts (:func:`ckb.optimizer.models.violation_amounts`)."""
        if getattr(self, "_noted_amounts", False) or self.m == 0:
            return
        note = violation_amounts_note(c)
        if note is not None:
            self._noted_amounts = True
            warnings.warn(note, UserWarning, stacklevel=_outside_ckb())

    def _note_budget_before_feasible(self, c: np.ndarray) -> None:
        """Warn once per optimizer when a violation budget meets a study with no feasible result (``c``:
        the complete trials' raw constraint values): the search for a first feasible point cannot be
        certified by any feasible point's neighbourhood."""
        if getattr(self, "_noted_infeasible", False) or self.violation_budget is None or self.m == 0:
            return
        if not type(self.policy).reads_violation_budget:
            return
        if len(c) and not np.any(feasible_rows(c)):
            self._noted_infeasible = True
            none = "the one result is not" if len(c) == 1 else f"none of the {len(c)} results is"
            warnings.warn(
                f"violation_budget = {short_repr(self.violation_budget)}, but {none} feasible: until one "
                "is, each ask searches for a feasible point and may violate, whatever the budget (a "
                "known-feasible point told before the first ask, or passed in initial_design=, lets the "
                "budget be kept from the start).",
                UserWarning,
                stacklevel=_outside_ckb(),
            )

    def _check_numerics(self, what: str, messages: list[str]) -> None:
        """``strict_numerics``: any warning or failure of ``what`` is an error (the step records nothing)."""
        if self.strict_numerics and messages:
            more = f" (and {len(messages) - 1} more)" if len(messages) > 1 else ""
            raise NumericsError(f"strict_numerics: {what} warned: {messages[0]}{more}; nothing was recorded.")

    def _design(self) -> np.ndarray:
        """The initial design, (n_init, d): the user's, else the Sobol design (on the candidates, each
        point the nearest candidate not taken by an earlier design point)."""
        if self._user_design is not None:
            return self._user_design
        if getattr(self, "_sobol", None) is None:
            lo, hi = self.space.lower, self.space.upper
            self._sobol = sobol_design(lo, hi, self.n_init, self.seed, self.space.candidates)
        return self._sobol

    def _design_point(self, trials: list[dict], index: int) -> np.ndarray:
        if self._user_design is not None and index < self.n_init:
            return self._user_design[index].copy()
        if self.space.candidates is None:
            return sobol_design(self.space.lower, self.space.upper, index + 1, self.seed)[index]
        from ckb.optimizer.space import _sobol_unit

        C = self.space.to_unit(self.space.candidates)
        used = [int(np.argmin(np.sum((C - self.space.to_unit(t["x"])) ** 2, axis=1))) for t in trials]
        U = _sobol_unit(self.space.d, index + 1, self.seed)[index : index + 1]
        return self.space.candidates[nearest_unused(C, U, used)[0]].copy()

    def _design_match(self, x: np.ndarray, trials: list[dict]) -> int | None:
        """The index of a design point not yet asked or told that ``x`` is (up to a float32 copy or a
        rounding: :func:`_answer_gap`; the nearest if several are), or None."""
        used = {
            int(t["info"]["design_index"]) for t in trials if is_design(t) and "design_index" in t["info"]
        }
        free = [(i, p) for i, p in enumerate(self._design()) if i not in used]
        return _nearest_answered(free, x, self.space.width)

    def units(self, trials: list[dict] | None = None) -> OutcomeUnits:
        """The outcome units fitted on the complete trials (default: the study's now)."""
        trials = self.study.trials() if trials is None else trials
        _, y, c = complete_arrays(trials)
        ref = [is_space_filling(t) for t in trials if t["state"] == "complete"]
        return OutcomeUnits(
            y,
            c,
            minimize=self.minimize,
            m=self.m,
            transform=units_transform(self.outcome_transform, self.policy),
            reference=ref,
        )

    def _context(self, trials: list[dict]) -> dict[str, Any]:
        """Data in policy units, the fitted models (hyperparameters per the refit schedule) and what is
        left of the violation budget."""
        X, y, c = complete_arrays(trials)
        units = self.units(trials)
        y_p, c_p = units.y(y), units.c(c)
        models, self._models_state = _fit_models(
            self.policy,
            self.space.to_unit(X),
            y_p,
            c_p,
            self._models_state,
            self.refit_every,
            noise_floor=EXACT_NOISE_FLOOR if self.exact else None,
            # new units (auto switched a target's map) make the stored hyperparameters stale
            stale={"units": (units.describe(), _plain_units(self.m))},
        )
        left = None
        if self.violation_budget is not None:
            left = np.maximum(np.array(self.violation_budget) - violation_spent(trials, self.m), 0.0)
        return {"models": models, "y": y_p, "c": c_p, "c_raw": c, "units": units, "left": left}

    # ------------------------------------------------------------------------------------- tell
    def tell(
        self,
        x: Any = None,
        objective: float | None = None,
        constraints: Any = None,
        *,
        trial: int | None = None,
        failed: bool = False,
        note: str = "",
    ) -> int:
        """Record the evaluation of ``x`` (a point from :meth:`ask`, or its trial number; or name the trial
        by ``trial=``); returns the trial number. A point that was not asked is recorded as a new trial
        (even past the budget: a result is always kept): a point of the initial design that was not asked
        or told yet as that design point (source ``init``: results already
        on disk need no ask, and the asks skip it), any other point as the user's (source ``user``; it
        informs the models but not the policy's clock, its horizon or its tell-time updates; a point
        already told is such a new evaluation too, with a warning). In a 1-D box an integer inside the box
        could be a point or a trial number and is refused: pass ``[3]`` or ``3.0`` for the point,
        ``trial=3`` for the trial. ``failed=True`` keeps a failed evaluation and takes no values.
        Values must be finite; ``constraints`` has m entries (<= 0: feasible). ``note`` is kept with the
        trial (``history()``), failed or not.
        """
        failed = check_bool(failed, "failed")
        if (x is None) == (trial is None):
            raise InvalidInputError(
                "tell needs the point x or trial= (its trial number), one of them"
                + (f", got x = {x!r} and trial = {trial!r}." if x is not None else ", got neither.")
            )
        if trial is not None:
            x = check_scalar(trial, "trial", low=0, integer=True)
        elif isinstance(x, (int, np.integer)) and not isinstance(x, bool):
            self._check_unambiguous(int(x))
        y, c = None, None
        if failed:
            if objective is not None or constraints is not None:
                raise InvalidInputError(
                    f"a failed evaluation (failed=True) takes no values, got objective = {objective!r} and "
                    f"constraints = {constraints!r}; tell a result without failed=True. Nothing was recorded."
                )
        else:
            y, c = self._check_values(objective, constraints)
        note = "" if note is None else str(note)  # None: no note (not the text "None")
        return self._transact(lambda step: self._tell_step(step, x, y, c, failed, note))

    def _check_unambiguous(self, number: int) -> None:
        """In a 1-D box an integer inside the box may mean the point or the trial number: refused."""
        lo, hi = float(self.space.lower[0]), float(self.space.upper[0])
        if self.space.d == 1 and lo <= number <= hi:
            raise InvalidInputError(
                f"tell({number}, ...) is ambiguous in a 1-D box: {number} is a point of [{lo}, {hi}] and may "
                f"be a trial number; pass the point as [{number}] (or {float(number)}), or the trial as "
                f"trial={number}. Nothing was recorded."
            )

    def _tell_step(
        self, step: Step, x: Any, y: float | None, c: np.ndarray | None, failed: bool, note: str
    ) -> int:
        number = self._resolve(x, step.trials)
        if number is None:  # not asked: a design point not yet asked or told, else the user's own point
            index = self._design_match(self.space.as_point(x), step.trials)
            # the design point itself, not the told copy of it (which may lie a few ulps outside the box)
            x = self.space.check_point(x) if index is None else self._design()[index].copy()
            info = {"source": "user"} if index is None else {"source": "init", "design_index": index}
            number = step.ask(x, info, budgeted=False)
        trial = next(t for t in step.trials if t["number"] == number)
        if trial["state"] != "pending":
            raise InvalidInputError(
                f"trial {number} of study {self.study_name!r} is already {trial['state']}; nothing was changed."
            )
        if failed:
            step.fail(number, note)
            return number
        step.tell(number, y, c, note)
        if (trial.get("info") or {}).get("source") == "policy":  # in the units of the data with this result
            units = self.units(step.trials)
            self.policy.observe(float(units.y(y)), units.c(c))
        return number

    def _check_values(self, objective: Any, constraints: Any) -> tuple[float, np.ndarray]:
        if objective is None:
            raise InvalidInputError(
                "tell needs the objective value (or failed=True for a failed evaluation)."
            )
        y = as_real_array(objective, "objective", "be a real number")
        if y.ndim:
            raise InvalidInputError(f"objective must be one real number, got {objective!r}.")
        y = float(y)
        if constraints is None:
            raise InvalidInputError(
                f"tell needs m = {self.m} constraint value(s) (feasible where <= 0), got None."
            )
        c = np.atleast_1d(as_real_array(constraints, "constraints"))
        if c.ndim > 1:  # [[0.1]]: a nested list is a mistake to name, not a value to flatten
            raise InvalidInputError(
                f"expected m = {self.m} constraint value(s) as a flat list, got shape {c.shape}: "
                f"{short_repr(np.asarray(constraints).tolist())}."
            )
        if c.shape != (self.m,):
            raise InvalidInputError(
                f"expected m = {self.m} constraint value(s), got {c.size}: {np.asarray(constraints).tolist()}."
            )
        if not math.isfinite(y):
            raise InvalidInputError(
                f"objective is {y}; values must be finite. Tell a failed evaluation with "
                "tell(x, failed=True, note=...). Nothing was recorded."
            )
        if not np.all(np.isfinite(c)):
            j = int(np.flatnonzero(~np.isfinite(c))[0])
            raise InvalidInputError(
                f"constraint {j} is {c[j]}; values must be finite. Tell a failed evaluation with "
                "tell(x, failed=True, note=...). Nothing was recorded."
            )
        return y, c

    def _resolve(self, x: Any, trials: list[dict]) -> int | None:
        """The trial ``x`` answers: a trial number, or the oldest pending trial at that point; None: new."""
        if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
            if not any(t["number"] == int(x) for t in trials):
                raise InvalidInputError(
                    f"study {self.study_name!r} has no trial number {int(x)} "
                    + (f"(trials 0..{len(trials) - 1})." if trials else "(it has no trials yet).")
                )
            return int(x)
        raw = self.space.as_point(x)  # shape and finiteness: a copy a few ulps outside the box still answers
        pending = [(int(t["number"]), t["x"]) for t in trials if t["state"] == "pending"]
        number = _nearest_answered(pending, raw, self.space.width)  # the nearest: ask(k)'s in any order
        if number is not None:
            return number
        x = self.space.check_point(x)
        gaps = [(float(np.max(np.abs(p - x) / self.space.width)), n) for n, p in pending]
        copy = any(np.all(np.abs(p - x) <= _copy_band(p, self.space.width)) for _, p in pending)
        if gaps and (min(gaps)[0] <= _NEAR_TOL or copy):
            warnings.warn(
                f"x = {x.tolist()} is {min(gaps)[0]:.1e} of the box width from pending trial {min(gaps)[1]} "
                "but not that point: it is recorded as a new trial (to answer the pending one, tell its point "
                f"as asked or trial={min(gaps)[1]}).",
                UserWarning,
                stacklevel=4,
            )
        near = [
            t
            for t in trials
            if t["state"] != "failed" and np.max(np.abs(t["x"] - x) / self.space.width) <= _MATCH_TOL
        ]
        if near and self._design_match(x, trials) is None:  # a repeated design point is that design point
            warnings.warn(
                f"x = {x.tolist()} was told already (trial {near[0]['number']}); it is recorded as a new "
                "evaluation of the point.",
                UserWarning,
                stacklevel=4,
            )
        return None

    # ---------------------------------------------------------------------------------- reports
    def history(self) -> list[dict[str, Any]]:
        """Every trial in number order: ``number``, ``state`` (pending/complete/failed), ``x``,
        ``objective``, ``constraints``, ``feasible``, ``note``, ``source`` (init/policy/user), ``info``
        (the policy's internals at the ask), ``asked_at``, ``told_at``."""
        return self.study.history()

    def pending(self) -> list[dict[str, Any]]:
        """The trials asked and not yet told (e.g. by a process that crashed): ``[{"trial", "x",
        "asked_by", "gone"}, ...]``, ``asked_by`` the asking process (pid, host, start time; None for a
        trial asked by a ckb before it was stored) and ``gone`` whether that process has ended (None when
        unknown: another host); tell them by point or trial number."""
        return self.study.pending()

    def best_feasible(self) -> dict[str, Any] | None:
        """The best complete trial with every constraint <= 0: ``{"x", "objective", "constraints",
        "trial"}``, or None."""
        return self.study.best_feasible()

    def metrics(self) -> Metrics:
        """Running metrics on the observed values (:mod:`ckb.violation`'s vocabulary):

        ``evaluations`` (complete), ``failed``, ``pending``, ``violating_evaluations`` (some constraint
        > 0), ``violation`` (soft: the norm over constraints of the positive part of each constraint's sum)
        and ``violation_per_constraint``, ``positive_violation`` (the norm of each constraint's sum of
        positive parts) and ``positive_violation_per_constraint``, ``best_feasible`` (value or None),
        ``budget``, ``remaining`` (budget minus trials asked or told; :meth:`ask` raises when it is 0),
        ``goal``, ``policy``, ``horizon`` and the policy's current state (``policy_state``: duals, Q, ...).

        ``violation_spent`` (per constraint: sum_t [g_j(x_t)]+ in raw units over the complete
        evaluations that are not initial-design points), ``violation_budget`` and
        ``violation_budget_left`` (budget minus spent, at least 0; both None without a budget).
        ``numerics``: totals of the trials' ``numerics`` (``fit_warnings``, ``acq_warnings``,
        ``fit_failed``, the first distinct ``messages``). ``outcome_units``: the maps the next ask will
        use (``{"objective": "standardize"|"rank"|"log", "constraints": ["rms"|"bilog"|"bilog2"|"bound",
        ...]}``; None before any result).

        Deprecated (reading them warns): ``cumulative_violation``, the sum over evaluations and
        constraints of the positive parts (an L1 norm; use ``positive_violation``), and
        ``cumulative_violation_per_constraint`` (equal to ``positive_violation_per_constraint``).
        """
        trials = self.study.trials()
        met = self.study.metrics(trials)
        self._load_latest()  # a read; WAL gives it a consistent snapshot
        done = any(t["state"] == "complete" for t in trials)
        met.update(
            goal=self.goal,
            policy=self.policy_name,
            horizon=self.horizon,
            policy_state=self.policy.internals(),
            outcome_units=self.units(trials).describe() if done else None,
        )
        return met

    @property
    def fit_failures(self) -> int:
        """Asks whose GP fit failed (``metrics()["numerics"]["fit_failed"]``)."""
        return int(self.study.metrics()["numerics"]["fit_failed"])

    @property
    def trials_told(self) -> int:
        return sum(t["state"] != "pending" for t in self.study.trials())

    def __repr__(self) -> str:
        return (
            f"Optimizer(d={self.space.d}, m={self.m}, goal={self.goal!r}, policy={self.policy_name!r}, "
            f"budget={self.budget}, "
            f"study={self.study_name!r} in {self.store.path})"
        )


def resumed_transform(spec: dict[str, Any], default: str) -> str:
    """The ``outcome_transform`` a stored study (optimizer or sampler spec, ``default`` where it stores
    none) resumes with, in today's names: ``"auto"`` stored before the bound map joined it is
    ``"auto-no-bounds"`` (:func:`~ckb.optimizer.models.stored_transform`), except for a policy that
    sees those units under today's ``"auto"`` too (``bound_map = False``), which resumes with ``"auto"``."""
    name = stored_transform(spec, default)
    if name != spec.get("outcome_transform", default):  # a former "auto"
        reg, policy = _policy_registry(), spec.get("policy")
        policy_cls = reg.get(policy) if isinstance(policy, str) and policy in reg else None
        if policy_cls is not None and units_transform("auto", policy_cls) == name:
            return "auto"
    return name


def _upgrade_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """A stored optimizer spec in today's names: its ``outcome_transform`` as the units its decisions
    were made in (:func:`resumed_transform`)."""
    return {**spec, "outcome_transform": resumed_transform(spec, _LEGACY["outcome_transform"])}


def _stored_options(spec: dict[str, Any], name: str, path: Path) -> tuple[tuple, dict[str, Any]]:
    """The constructor's arguments stored in an optimizer study's spec."""
    spec = _upgrade_spec(spec)
    try:
        args = (spec["lower"], spec["upper"], spec["m"])
        kwargs = {key: spec[key] for key in ("policy", "budget", "minimize", "n_init", "seed", "candidates")}
        kwargs.update({key: spec.get(key, value) for key, value in _LEGACY.items()})
        return args, {**kwargs, **spec.get("options", {}), **spec["policy_params"]}
    except (KeyError, TypeError) as exc:
        raise StudyFileError(
            f"study {name!r} in {path} has a damaged spec (missing {exc}); it cannot be resumed."
        ) from exc


#: other libraries' names for an Optimizer parameter (BoTorch, Optuna, scikit-optimize, hyperopt)
_SYNONYMS = {
    "n_constraints": "m",
    "num_constraints": "m",
    "n_trials": "budget",
    "n_calls": "budget",
    "max_evals": "budget",
    "n_iter": "budget",
    "maximize": "minimize",
    "direction": "minimize",
    "bounds": "lower",
    "random_state": "seed",
}


def _unknown_keyword(
    exc: Exception, cls: type, params: dict[str, Any], name: str, owner: type | None = None, extra=()
) -> None:
    """Raise "no such argument" if ``exc`` is the policy (or its rule) refusing one of ``params``.

    The keywords ckb.Optimizer (or ``owner``, e.g. CKBSampler, whose parameters are its constructor's
    and ``extra``) does not take itself go to the policy, which validates them when built (before
    anything is stored): its constructor refuses an unknown keyword with a TypeError (keyword-only
    parameters), its rule with an error tagged ``unknown_constant``. Either way the keyword may be a typo
    of an owner's parameter (``violation_budgt``), so the error names both sets and the closest names
    in either.
    """
    import inspect

    key = getattr(exc, "unknown_constant", None)
    valid = set(getattr(exc, "known_constants", ()))
    if isinstance(exc, TypeError) and "unexpected keyword" in str(exc):
        key = next((k for k in params if f"argument '{k}'" in str(exc)), None)
        for klass in cls.__mro__:
            if "__init__" in vars(klass):
                for p in inspect.signature(klass.__init__).parameters.values():
                    if p.kind is p.KEYWORD_ONLY:
                        valid.add(p.name)
    if key is None or key not in params:
        return
    owner = owner or Optimizer
    own = [
        p.name
        for p in inspect.signature(owner.__init__).parameters.values()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"
    ]
    own += [k for k in extra if k not in own]
    synonym = _SYNONYMS.get(key)
    hits = [synonym] if synonym in own else closest(key, [*own, *sorted(valid)])
    hint = suggestion(hits)
    if key in ("policy_params", "params", "constants"):
        hint = " Pass the policy's constants as keywords themselves (kappa=2.0), not as a dict."
    title = "ckb.Optimizer" if owner is Optimizer else owner.__name__
    raise InvalidInputError(
        f"{key!r} is neither a parameter of {title} nor a constant of policy {name!r}.{hint} "
        f"{title} parameters: {', '.join(own)}; {name!r} constants: {', '.join(sorted(valid)) or 'none'}."
    ) from None


def _plain_units(m: int) -> dict[str, Any]:
    """The units every study used before outcome transforms existed."""
    return {"objective": "standardize", "constraints": ["rms"] * m}


def _outside_ckb() -> int:
    """The ``stacklevel`` that points a warning raised deep inside ckb (under a transaction and a batch)
    at the caller's line: its caller's frame is level 1, and each ckb frame above it one more."""
    root = str(Path(__file__).resolve().parent.parent)
    level, frame = 1, sys._getframe(1)
    while frame is not None and str(Path(frame.f_code.co_filename).resolve()).startswith(root):
        frame, level = frame.f_back, level + 1
    return level


def _never_twice(maxi, pending: np.ndarray, sep, done: np.ndarray):
    """``exact=True``: the maximizer, but a point within ``SAME_POINT`` of an evaluated one (complete or
    failed) is never returned: the pick is made as usual (pending points excluded, with the batch
    separation); if it repeats an evaluated point, the maximization is made again with the evaluated
    points excluded too (the ``SAME_POINT`` rule only; on a candidate set, every candidate evaluated
    allows repeats of evaluated points, but not of pending ones while a candidate is not pending)."""
    from ckb.optimizer.acquisition import Maximizer

    def maximize(fn):
        x, v = maxi(fn, exclude=pending, separation=sep)
        if len(done) and Maximizer._taken(x, done):
            taken = np.vstack([pending, done])
            again, score = maxi(fn, exclude=taken, separation=None)
            if not Maximizer._taken(again, taken):
                return again, score
            # every candidate evaluated or pending: repeat an evaluated point, never a pending one (an
            # ask(k) on evaluated candidates gave the same point k times); _next says so
        return x, v

    return maximize


def kept_constants(stored: Any, ours: dict[str, Any], policy_cls: Any, where: str) -> dict[str, Any]:
    """The policy constants a resumed study keeps where they differ from this version's (``ours``):
    those it stores (``stored``, its spec's ``policy_constants``, resolved when it was started), and for
    a constant it does not store (a study written before that constant, or before constants were
    stored at all) the policy class's ``legacy_constants`` value, the one that reproduces its decisions;
    any other constant takes this version's value. A stored constant this version does not have is a
    one-line error naming ``where`` (the study)."""
    base = stored if isinstance(stored, dict) else {}
    unknown = sorted(set(base) - set(ours))
    if unknown:
        raise InvalidInputError(
            f"{where} was started with the constant {unknown[0]!r} = {base[unknown[0]]!r}, which this "
            "version of ckb does not have; resume it with the version that wrote it, or start a new study."
        )
    legacy = getattr(policy_cls, "legacy_constants", {})
    kept = {**base, **{key: value for key, value in legacy.items() if key not in base and key in ours}}
    return {key: value for key, value in kept.items() if ours[key] != value}


def _kept_message(study: str, policy: str, changed: dict[str, Any], ours: dict[str, Any]) -> str:
    listed = ", ".join(f"{key}={value!r} (now {ours[key]!r})" for key, value in changed.items())
    return (
        f"study {study!r} resumes with the {policy} constants it was started with where this version's "
        f"defaults differ: {listed}."
    )


def _stored_params(policy_params: dict[str, Any]) -> dict[str, Any]:
    """The policy's constants as the study stores them (a JSON round trip: numbers, strings, lists and
    dicts only, else an error)."""
    try:
        return loads(dumps(policy_params))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"policy parameters must be numbers, strings, lists or dicts: {exc}"
        ) from None


def _set_search_options(
    obj: Any,
    refit_every=None,
    num_restarts=10,
    raw_samples=256,
    maxiter=100,
    batch_separation=0.1,
    torch_threads=1,
    max_line_search=None,
) -> None:
    """Check the model and search options that :class:`Optimizer` and
    :class:`~ckb.integrations.optuna.CKBSampler` share (same names and defaults), and set them on ``obj``."""
    obj.refit_every = (
        None if refit_every is None else check_scalar(refit_every, "refit_every", low=1, integer=True)
    )
    obj.num_restarts = check_scalar(num_restarts, "num_restarts", low=1, integer=True)
    obj.raw_samples = check_scalar(raw_samples, "raw_samples", low=1, integer=True)
    obj.maxiter = check_scalar(maxiter, "maxiter", low=1, integer=True)
    obj.batch_separation = check_scalar(batch_separation, "batch_separation", low=0.0)
    obj.torch_threads = check_scalar(torch_threads, "torch_threads", low=1, integer=True)
    obj.max_line_search = (
        None
        if max_line_search is None
        else check_scalar(max_line_search, "max_line_search", low=1, integer=True)
    )


#: the names of the search options (:func:`_set_search_options`): the sampler takes them as keywords
#: beside the policy's constants
SEARCH_OPTIONS: tuple[str, ...] = tuple(inspect.signature(_set_search_options).parameters)[1:]


def _snapshot(policy, rng: np.random.Generator, models: dict[str, Any] | None = None) -> dict[str, Any]:
    """The state a decision leaves (and the next one starts from): the policy's state, the numpy
    generator's and the stored model state (hyperparameters and what they were fitted on)."""
    return {"policy": policy.state_dict(), "rng": rng.bit_generator.state, "models": models}


def _restored(policy, state: dict[str, Any]) -> tuple[Any, np.random.Generator, dict[str, Any] | None]:
    """``(policy, rng, models)`` from a :func:`_snapshot`: ``policy`` (freshly built) with its stored
    state loaded, the generator in its stored state, and the stored model state."""
    policy.load_state_dict(state["policy"])
    rng = np.random.default_rng()
    rng.bit_generator.state = state["rng"]
    return policy, rng, state.get("models")


def _fit_models(
    policy,
    X: np.ndarray,
    y_p: np.ndarray,
    c_p: np.ndarray,
    state: dict[str, Any] | None,
    refit_every: int | None,
    *,
    noise_floor: float | None = None,
    same: dict[str, tuple[Any, Any]] | None = None,
    stale: dict[str, tuple[Any, Any]] | None = None,
):
    """The policy's GPs (:class:`~ckb.optimizer.models.Models`) of its targets of ``y_p``, ``c_p`` (policy
    units) at ``X`` (unit cube), with the refit schedule; returns ``(models, state)``.

    ``state`` is the stored model state (None before the first fit). Its hyperparameters are the warm
    start when the targets have the same names and every entry of ``same`` (``key: (value, default)``,
    the default standing for a state without the key) matches; they are refitted when they are not
    reused, when the policy's model tag changed, when ``refit_every`` results (None: the policy's
    ``refit_every``) arrived since the last fit, or when an entry of ``stale`` (likewise) changed. After a
    refit the new state holds the names, tag, number of results and hyperparameters, and the entries of
    ``same`` and ``stale`` that differ from their defaults."""
    from ckb.optimizer.models import Models

    same, stale = same or {}, stale or {}
    targets = policy.targets(y_p, c_p)
    names, tag, n = list(targets), policy.model_tag(), len(y_p)
    st = state
    warm = st is not None and st["names"] == names
    warm = warm and all(st.get(k, d) == v for k, (v, d) in same.items())
    refit = (
        not warm
        or st["tag"] != tag
        or n - int(st["n_fit"]) >= (policy.refit_every if refit_every is None else refit_every)
        or any(st.get(k, d) != v for k, (v, d) in stale.items())
    )
    models = Models(
        X,
        targets,
        st["hyper"] if warm else None,
        fit=refit,
        noise_floor=noise_floor,
        fit_tolerance=policy.fit_tolerance,
    )
    if refit:
        state = {"names": names, "tag": tag, "n_fit": n, "hyper": models.hyper}
        state.update({k: v for k, (v, d) in {**same, **stale}.items() if v != d})
    return models, state


def _maximizer(opts, d: int, rng, models, pending: np.ndarray, *, candidates=None, done=None):
    """``maximize(fn)`` for a decision: the :class:`~ckb.optimizer.acquisition.Maximizer` with the search
    options of ``opts`` (an :class:`Optimizer` or a ``CKBSampler``), excluding the ``pending`` points and
    keeping ``batch_separation`` times the ``models``' shortest lengthscale per dimension from them;
    with ``done`` (``exact=True``), never an evaluated point (:func:`_never_twice`)."""
    from ckb.optimizer.acquisition import Maximizer

    maxi = Maximizer(
        d,
        rng,
        candidates=candidates,
        num_restarts=opts.num_restarts,
        raw_samples=opts.raw_samples,
        maxiter=opts.maxiter,
        max_line_search=(
            opts._policy_cls.max_line_search if opts.max_line_search is None else opts.max_line_search
        ),
    )
    sep = None
    if opts.batch_separation > 0 and len(pending):
        sep = opts.batch_separation * models.lengthscales().min(axis=0)
    if done is not None:
        return _never_twice(maxi, pending, sep, done)
    return lambda fn: maxi(fn, exclude=pending, separation=sep)


def _import_models() -> None:
    """Import torch, BoTorch and GPyTorch (about 1 s the first time in a process, nothing after). An ask
    decides in its process's turn on the study (:meth:`ckb.optimizer.study.Study.transact`), which the
    other processes sharing the study wait for: a first import inside it made every other worker wait
    that second too, at each process's first ask."""
    import botorch.models
    import botorch.optim  # noqa: F401
    import gpytorch.mlls  # noqa: F401
    import torch  # noqa: F401


@contextmanager
def _torch_threads(n: int):
    import torch

    old = torch.get_num_threads()
    if old != n:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        if old != n:
            torch.set_num_threads(old)
