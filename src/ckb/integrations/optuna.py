r"""``CKBSampler``: ckb's optimizer policies as an Optuna sampler (``pip install -e '.[optuna]'``).

::

    import optuna
    from ckb.integrations.optuna import CKBSampler

    def objective(trial):
        x = trial.suggest_float("x", 0.0, 6.0)
        y = trial.suggest_float("y", 0.0, 6.0)
        trial.set_user_attr("g", [math.cos(x + y) - 0.5])      # feasible where <= 0
        return math.cos(2 * x) * math.cos(y) + math.sin(x)

    sampler = CKBSampler(constraints_func=lambda t: t.user_attrs["g"], seed=0)
    study = optuna.create_study(sampler=sampler, storage="sqlite:///tune.db", study_name="tune",
                                load_if_exists=True)          # re-running resumes the study
    study.optimize(objective, n_trials=60, n_jobs=2)

``python -m ckb.integrations.optuna --demo`` runs this study end to end.

**What it does.** Each trial's float and int parameters come from one decision of a
:mod:`ckb.optimizer.policies` policy, made as :class:`ckb.Optimizer` makes it, from the same pieces
(:mod:`ckb.optimizer.core`): outcomes in the policies' units (``outcome_transform``, "auto" by default:
:class:`~ckb.optimizer.models.OutcomeUnits` fitted on the complete trials with the initial design's as
the reference, so that a heavy-tailed constraint gets the log map as in the optimizer), the fitted GPs of
:mod:`ckb.optimizer.models` with their refit schedule and warm start (``exact=True``: the optimizer's
noise floor, and no evaluated point again), pending-point fantasies and batch separation, the
:class:`~ckb.optimizer.acquisition.Maximizer`, and the policy's state and generator. A study whose
sampler settings predate ``outcome_transform`` was decided in plain RMS units (objective standardized,
constraints divided by their RMS) and resumes only with ``outcome_transform="rms"``; one stored with
``"auto"`` before the bound map joined ``auto`` resumes with ``outcome_transform="auto-no-bounds"``.
Objective from the study's direction, constraints in Optuna's convention
(feasible where every value is ``<= 0``), from ``constraints_func`` (called in :meth:`after_trial`, as
Optuna's own samplers do) or from ``trial.set_constraint`` (Optuna >= 5), read from the trial's
system attributes. ``policy=None`` takes the optimizer's default policy for ``goal``
(:data:`ckb.optimizer.policies.GOAL_POLICIES`); ``violation_budget`` is handed to violation-aware
policies (``pcei``) as in the optimizer (with its two notes, logged once per study: a budget while no
complete trial is feasible, and a constraint whose values look like violation amounts ``max(g, 0)``).

- *Initial design*: trial ``n < n_startup_trials`` (default ``2d + 2``) is point ``n`` of the scrambled
  Sobol design :func:`ckb.optimizer.initial_design` over the search space's unit cube (the optimizer's
  design for the same ``seed``), and so is any trial asked while no trial has completed. Trial 0, and
  any trial asked before a trial has completed, has no search space yet (Optuna infers it from completed
  trials) and draws each parameter uniformly (seeded by ``seed``, the trial number and the parameter's
  name), as Optuna's GP and QMC samplers do. Enqueued trials keep their values; a trial whose searched
  parameters are all enqueued is not a decision, one with some of them enqueued samples the others as
  trial 0 does. An enqueued value outside its parameter's range (Optuna keeps it, with a warning)
  leaves that trial's result out of the model, with one warning naming the trial: the unit cube has no
  place for it.
- *Parameters*: ``FloatDistribution`` and ``IntDistribution``. A log-scale parameter is modelled and
  optimized in log space; an int (or a float with ``step``) is optimized on its continuous relaxation
  ``[low, high]`` and rounded to the nearest point of its grid (the GP sees the rounded value; a rounded
  point may repeat an evaluated one). Categorical parameters: ``categorical="error"`` (default) raises an
  error naming the parameter (encode it as an int, or use another sampler);
  ``categorical="independent"`` draws them uniformly at random, outside the model. Parameters outside
  the relative search space (Optuna's intersection of the completed trials' parameters) are drawn
  uniformly, with a warning naming the reason: a parameter missing from some completed trial (dynamic
  search space), or one whose range changed (the warning names the old and the new range): such a
  parameter is drawn at random from then on, the others stay the policy's, and the initial design's
  size stays the study's (it does not follow the smaller space's ``2d + 2``).
- *Trials*: complete trials with finite values are the data; failed and pruned trials, and trials with
  a non-finite value, condition the models like the optimizer's failed points (no value; the next
  decisions move away from them); running and waiting trials are pending points (their fantasies shrink
  the variance and a new point keeps ``batch_separation`` lengthscales from them, as ``ask(k)`` does).
  ``constraints_func``'s result is checked where the sampler receives it (:meth:`CKBSampler.after_trial`):
  a flat sequence of real numbers, as many as the study's other trials have, or a one-line error; an
  infinite value is kept (Optuna takes it) and the trial is a failed evaluation, with a one-line warning;
  NaN is an error, as in Optuna's samplers. A refused result leaves the trial (which Optuna records as it
  finished) without constraint values (None, as Optuna stores them then): a failed evaluation, so the
  study continues once ``constraints_func`` is fixed. A decision with no complete trial to model (every
  one non-finite, say) is a one-line error saying so.

**Policy state across threads, processes and resumes.** A stateful rule (the primal-dual duals, RPOL's
Q, the penalty's multipliers and epochs, the round counter) must see each of its decisions once and each
result once, in one order, whatever ``n_jobs``, the number of processes on one storage, and restarts.
ckb.Optimizer achieves this with a study file it owns; here Optuna owns the storage, which offers no
lock and no compare-and-swap, only reads and writes of attributes. So:

1. *Decisions are serialized by Lamport's bakery algorithm over trial attributes* (correct with plain
   reads and writes). A decision writes a claim ``ckb:claim`` on its own trial (``choosing``), reads
   every trial, takes the ticket ``1 +`` the largest ticket it sees, writes it, and waits while a running
   trial with a live claim is still choosing or holds a smaller ``(ticket, trial number)``. Threads of
   one process also take a lock first. A claim stops counting when its trial has its record (below) or
   a release mark, is no longer running (failed by Optuna's heartbeat, for instance), or belongs to a
   dead process of this host (pid, start time, as :mod:`ckb.studies.turns`); a claim of another host
   that is not released within ``decision_timeout`` seconds stops the waiting decision with
   :class:`DecisionTimeoutError`, naming it (nothing is written).
2. *Each decision's record holds the policy's whole state after it* (``ckb:decision``, JSON on the
   trial, keyed by trial number: the policy's state, the numpy generator, the GP hyperparameters, the
   ticket, the previous decision's number ``prev``, the point, the policy's internals). The decisions,
   ordered by ticket, form a chain; a decision starts from the state of the chain's last record.
3. *Each result is folded into the chain once.* Before deciding, a decision makes the tell-time updates
   (``observe``) of every complete trial chosen by an earlier decision whose result no record has
   folded yet, in order of completion, with the units of the outcomes at that completion (the
   optimizer's "scales at the time of the tell"), and lists them in its record (``folded``).

So the state is a function of the storage alone: any process (or a resumed study with a new sampler)
continues from the last record, and two processes on one RDB file never apply a decision's or a
result's update twice. The generator starts as ``default_rng(seed)`` advanced once per trial before the
first decision (ckb.Optimizer's advances once per ask), so a sequential study that starts with ckb's
Sobol design (enqueued: trial 0 is otherwise drawn at random) makes ckb.Optimizer's decisions bit for
bit (tested for ``ckb-ucb``, ``penalty-noisy`` and ``pcei``). :meth:`CKBSampler.decisions` lists the
chain, :meth:`CKBSampler.policy_state` gives the state after every result told so far. The randomness
lives in the records, so :meth:`reseed_rng` (called by Optuna for ``n_jobs > 1``) changes nothing.

**Settings.** The study's settings (policy, its constants, seed, design size, ``n_trials``, violation
budget, units, ``exact``, direction, number of constraints) are stored at the sampler's first trial
(``ckb:sampler`` in the study's system attributes): those known only later (the number of constraints,
the default design's size ``2d + 2``, the policy's constants) are added with the first decision. A
sampler with other settings is refused in :meth:`CKBSampler.before_trial`, before its trial runs, from
the study's second trial on (a one-line error naming the setting). Optuna creates a trial before it
calls any sampler hook, and no storage can delete one, so the refused trial goes back to the queue
(``WAITING``, without parameters or attributes): the next ``ask`` (with the right sampler) takes it
with its number, and nothing else is written (no failed trial, no attribute, no shifted numbers).
Caveat: Optuna 5.0 on an SQLite storage can hand one ``WAITING`` trial to two threads of
``optimize(n_jobs > 1)`` (its own race, seen with plain ``enqueue_trial`` and RandomSampler too: the
objective runs twice and Optuna raises that it cannot tell a finished trial). After a refused resume,
run the queued trial with ``n_jobs=1`` (``optimize(..., n_trials=1)``) before going parallel. Caveat:
two processes that create a new SQLite storage at the same instant (each ``create_study(...,
load_if_exists=True)`` on a file that does not exist yet) can collide in Optuna's own schema setup
(``sqlite3.IntegrityError: UNIQUE constraint failed: alembic_version.version_num``, before any trial);
create the study once before starting the processes. A trial whose process was killed stays
``RUNNING`` in Optuna, and the sampler models it as a pending point in every later decision; an
``optuna.storages.RDBStorage(url, heartbeat_interval=..., grace_period=...)`` lets Optuna fail such
trials (``optimize`` calls ``fail_stale_trials``), after which they condition the models as failed points.

**Horizon.** Some policies set constants from the number of rounds T (CKB's ``V = G sqrt(T) / rho``,
the penalty's epoch length) or spread a quantity over the rounds left (slack-cei's slack; pcei's
violation budget and ``refine_last``): pass ``n_trials`` (the trials the study will run; T = ``n_trials -
n_startup_trials``); they refuse to start without it. Optuna does not tell a sampler its
``optimize(n_trials=...)``, so this is how the sampler learns the horizon. The design must fit in it, as
ckb.Optimizer's in its budget: an ``n_trials`` smaller than the design is an error, not a warning (a
warning would leave the policy with the constants of T = 1, every decision affected), at construction
when the design's size is known (``n_startup_trials`` given, or below 4, the smallest ``2d + 2``), else
before the trial after the first complete one (whose parameters give d); an ``n_trials`` so refused was
never used, so a resume may correct it. A decision past ``n_trials`` warns once (the policy keeps the
constants of its horizon).
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import socket
import sys
import threading
import time
import warnings
import weakref
import zlib
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

try:
    import optuna
    from optuna.distributions import (
        BaseDistribution,
        CategoricalDistribution,
        FloatDistribution,
        IntDistribution,
    )
    from optuna.samplers import BaseSampler
    from optuna.samplers._base import _CONSTRAINTS_KEY
    from optuna.study import StudyDirection
    from optuna.trial import FrozenTrial, TrialState
except ImportError as exc:  # pragma: no cover - the optuna extra is missing
    _MISSING = (
        "ckb.integrations.optuna needs Optuna, which is not installed: pip install -e '.[optuna]' in your ckb "
        f"checkout (ckb is not on PyPI) ({exc})."
    )
    if __name__ == "__main__":  # python -m ckb.integrations.optuna --demo: one line, not a traceback
        sys.exit(f"error: {_MISSING}")
    raise ImportError(_MISSING) from exc

from ckb._validation import check_bool, check_scalar, did_you_mean, listed, short_repr
from ckb.errors import CKBError, InvalidInputError
from ckb.optimizer.core import (
    EXACT_NOISE_FLOOR,
    SEARCH_OPTIONS,
    _check_outcome_transform,
    _check_violation_budget,
    _fit_models,
    _import_models,
    _kept_message,
    _maximizer,
    _plain_units,
    _require_botorch,
    _restored,
    _set_search_options,
    _snapshot,
    _stored_params,
    _torch_threads,
    _unknown_keyword,
    kept_constants,
    resumed_transform,
    units_transform,
)
from ckb.optimizer.models import UNITS_VERSION, OutcomeUnits, violation_amounts_note
from ckb.optimizer.space import initial_design
from ckb.studies.storage import dumps, loads
from ckb.studies.turns import _alive, _start_token, _wait_in_line
from ckb.violation import feasible_rows

__all__ = ["CKBSampler", "DecisionTimeoutError"]

_logger = logging.getLogger(__name__)

#: trial system attributes written by the sampler
CLAIM_KEY = "ckb:claim"
RECORD_KEY = "ckb:decision"
RELEASED_KEY = "ckb:released"
#: study system attribute: the settings of the study's sampler (written with the first decision)
SPEC_KEY = "ckb:sampler"
_VERSION = 1
_HOST = socket.gethostname()
#: the settings of a study whose sampler predates them: its decisions were made in plain RMS units
#: (``outcome_transform="rms"``), and nothing was declared exact
_SPEC_BEFORE_UNITS = {"outcome_transform": "rms", "exact": False}


class DecisionTimeoutError(CKBError, TimeoutError):
    """Another process kept its claim on the next decision longer than ``decision_timeout``."""


# ------------------------------------------------------------------------------------ search space
class _Space:
    """The relative search space (float and int parameters, names sorted) and its unit cube: a log-scale
    parameter maps ``log v`` linearly, any other ``v``; back in the cube, ints and stepped floats round
    to their grid and every value is clipped to its bounds."""

    def __init__(self, search_space: dict[str, BaseDistribution]) -> None:
        self.names = sorted(search_space)
        self.dists = [search_space[n] for n in self.names]
        lo, hi = [], []
        for name, dist in zip(self.names, self.dists):
            if not isinstance(dist, (FloatDistribution, IntDistribution)):
                raise InvalidInputError(
                    f"CKBSampler models float and int parameters; {name!r} is {type(dist).__name__}."
                )
            _check_width(name, dist)
            a, b = float(dist.low), float(dist.high)
            lo.append(math.log(a) if dist.log else a)
            hi.append(math.log(b) if dist.log else b)
        self.lower, self.upper = np.array(lo), np.array(hi)
        self.width = self.upper - self.lower
        self.d = len(self.names)

    def outside(self, params: dict[str, Any]) -> str | None:
        """The first parameter of ``params`` outside its range, as ``name = value (range ...)`` (an
        enqueued value: Optuna keeps it, with a warning); None when each one is inside."""
        for n, d in zip(self.names, self.dists):
            if n in params and not d.low <= params[n] <= d.high:
                return f"{n} = {params[n]!r} (range [{d.low:g}, {d.high:g}])"
        return None

    def to_unit(self, params: dict[str, Any]) -> np.ndarray | None:
        """The unit-cube point of ``params``; None if a parameter is missing or outside its range (the
        cube has no place for it, and clipping it would credit its result to the boundary)."""
        if any(n not in params for n in self.names) or self.outside(params) is not None:
            return None
        v = np.array(
            [math.log(params[n]) if d.log else float(params[n]) for n, d in zip(self.names, self.dists)]
        )
        return np.clip((v - self.lower) / self.width, 0.0, 1.0)

    def from_unit(self, u: np.ndarray) -> dict[str, Any]:
        v = self.lower + np.asarray(u, dtype=float) * self.width
        return {n: _to_value(d, float(x)) for n, d, x in zip(self.names, self.dists, v)}

    @property
    def gridded(self) -> bool:
        """Whether some parameter takes values on a grid (an int, or a float with a step)."""
        return any(isinstance(d, IntDistribution) or d.step is not None for d in self.dists)

    def snap(self, U: np.ndarray) -> np.ndarray:
        """The unit-cube points ``U`` (n, d) moved to the values they stand for (grids, bounds)."""
        return np.array([self.to_unit(self.from_unit(u)) for u in np.atleast_2d(U)])


def _never_twice_on_grid(maximize, opts, space: _Space, rng, taken: np.ndarray):
    """``exact=True`` on a space with grids: ``maximize``, but a pick whose parameter values (rounded to
    their grids) are those of a ``taken`` point (evaluated or pending, unit cube) is replaced by the best
    of up to 4 x ``raw_samples`` Sobol points moved to their grid values that no taken point has (the
    maximizer excludes points only within 1e-6 in the cube, so an int parameter's pick rounded back onto
    an evaluated value: 9 distinct points in 16 trials of a 5 x 5 grid). When every such point is taken
    (a small grid evaluated through), repeats are allowed, as on a candidate set."""
    from ckb.optimizer.acquisition import Maximizer
    from ckb.optimizer.space import _sobol_unit

    taken = space.snap(taken) if len(taken) else np.zeros((0, space.d))

    def maximize_fresh(fn):
        x, v = maximize(fn)
        if not Maximizer._taken(space.snap(x)[0], taken):
            return x, v
        grid = np.unique(
            space.snap(_sobol_unit(space.d, 4 * opts.raw_samples, int(rng.integers(2**31)))), axis=0
        )
        grid = np.array([g for g in grid if not Maximizer._taken(g, taken)]).reshape(-1, space.d)
        if not len(grid):
            return x, v
        return Maximizer(space.d, rng, candidates=grid)(fn)

    return maximize_fresh


def _to_value(dist: BaseDistribution, x: float) -> Any:
    """A parameter's value from its (log-)coordinate ``x``: rounded to its grid, inside its bounds."""
    v = math.exp(x) if dist.log else x
    if dist.step is not None:  # ints always have one (1 for log ints)
        v = dist.low + round((v - dist.low) / dist.step) * dist.step
    if isinstance(dist, IntDistribution):
        return int(min(max(round(v), dist.low), dist.high))
    return float(min(max(v, dist.low), dist.high))


def _check_width(name: str, dist: BaseDistribution) -> None:
    """A float or int parameter's range must be narrower than the largest float (as ckb.Optimizer's box)."""
    if isinstance(dist, (FloatDistribution, IntDistribution)) and not dist.log:
        if not math.isfinite(float(dist.high) - float(dist.low)):
            raise InvalidInputError(
                f"CKBSampler cannot model parameter {name!r} on [{dist.low:g}, {dist.high:g}]: its width is "
                "beyond the largest float; rescale the parameter (e.g. in units of 1e300)."
            )


def _independent_value(dist: BaseDistribution, rng: np.random.Generator, name: str = "") -> Any:
    if isinstance(dist, CategoricalDistribution):
        return dist.choices[int(rng.integers(len(dist.choices)))]
    _check_width(name, dist)
    a, b = float(dist.low), float(dist.high)
    if dist.log:
        a, b = math.log(a), math.log(b)
    return _to_value(dist, float(rng.uniform(a, b)))


# ------------------------------------------------------------------------------------ trials' data
def _is_real(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _named_constraints(trial: FrozenTrial) -> list[Any]:
    """The values set with ``trial.set_constraint``, sorted by name."""
    attrs, prefix = trial.system_attrs, f"{_CONSTRAINTS_KEY}:"
    return [attrs[k] for k in sorted(k for k in attrs if k.startswith(prefix))]


def _constraints_of(trial: FrozenTrial) -> list[float] | None:
    """The trial's constraint values: Optuna's list (``constraints_func``), then the named ones
    (``trial.set_constraint``, sorted by name). None: the trial has no usable values (``constraints_func``
    raised, or its result was refused, and Optuna stores None then; or an older sampler stored values
    that are not numbers): a failed evaluation."""
    listed = trial.system_attrs.get(_CONSTRAINTS_KEY, ())
    if not isinstance(listed, (list, tuple)):
        return None
    values = [*listed, *_named_constraints(trial)]
    return [float(v) for v in values] if all(map(_is_real, values)) else None


def _trials_text(numbers: Sequence[int]) -> str:
    """``trial 3``, ``trials 0-6`` (consecutive) or ``trials 0, 2, 5`` (at most five listed)."""
    nums = sorted(numbers)
    if len(nums) == 1:
        return f"trial {nums[0]}"
    if nums == list(range(nums[0], nums[-1] + 1)):
        return f"trials {nums[0]}-{nums[-1]}"
    return "trials " + listed(nums, most=5)


def _describe(dist: BaseDistribution, other: BaseDistribution) -> str:
    """A parameter's range, ``[0, 6]`` (``int [0, 6]`` where ``other`` is a float, and the reverse; log
    scale and step added)."""
    text = f"[{dist.low:g}, {dist.high:g}]"
    if type(dist) is not type(other):
        text = f"{'int' if isinstance(dist, IntDistribution) else 'float'} {text}"
    extras = ["log"] if dist.log else []
    if dist.step is not None and not (isinstance(dist, IntDistribution) and dist.step == 1):
        extras.append(f"step {dist.step:g}")
    return text + (f" ({', '.join(extras)})" if extras else "")


def _completion_key(t: FrozenTrial) -> tuple:
    return (t.datetime_complete.timestamp() if t.datetime_complete is not None else -math.inf, t.number)


class _Data:
    """What a decision reads from the trials: the complete observations (trial-number order), the
    busy points (failed, pruned, non-finite) and the pending points, in the unit cube."""

    def __init__(
        self,
        trials: Sequence[FrozenTrial],
        space: _Space,
        minimize: bool,
        me: int,
        design,
        n_startup: int,
        late: Callable[[FrozenTrial], list[float] | None] | None = None,
    ) -> None:
        """``late``: the constraint values of a complete trial that has none stored (one another sampler
        completed), None where they are unusable; without it such a trial is an error."""
        self.minimize = minimize
        complete, busy, pending, m_of, done, unusable = [], [], [], {}, [], []
        #: the finished trials left out of the model for a value outside its range: (number, which)
        self.outside = []
        for t in trials:
            if t.number == me:
                continue
            u = space.to_unit(t.params)
            far = space.outside(t.params)
            if far is not None and t.state.is_finished():
                self.outside.append((t.number, far))
            if t.state == TrialState.COMPLETE:
                if u is None:
                    continue
                c = _constraints_of(t)
                if c == [] and late is not None:
                    c = late(t)
                if c is not None:
                    m_of[t.number] = len(c)
                finite_y = t.value is not None and math.isfinite(t.value)
                if finite_y and c and all(map(math.isfinite, c)):
                    complete.append((t, u, float(t.value), np.array(c)))
                else:  # not a result to model: a failed evaluation
                    busy.append((t.number, u))
                    why = "unusable" if c is None else "objective" if not finite_y else "constraint"
                    unusable.append((t.number, why))
                done.append((t.number, u))
            elif t.state in (TrialState.FAIL, TrialState.PRUNED):
                if u is not None:
                    busy.append((t.number, u))
                    done.append((t.number, u))
            elif t.state in (TrialState.RUNNING, TrialState.WAITING):
                u = _pending_point(t, space, design, n_startup) if u is None else u
                if u is not None:
                    busy.append((t.number, u))
                    pending.append(u)
        ms = sorted(set(m_of.values()))
        if ms and ms[0] == 0:
            bad = min(n for n, k in m_of.items() if k == 0)
            raise InvalidInputError(
                f"trial {bad} completed without constraint values (another sampler's trial?); CKBSampler "
                "needs them for every trial: pass constraints_func= (values <= 0 feasible), which it also "
                "applies to such trials, or call trial.set_constraint(name, value)."
            )
        if len(ms) > 1:
            first = next(iter(m_of.values()))
            bad = min(n for n, k in m_of.items() if k != first)
            raise InvalidInputError(
                f"trial {bad} has {m_of[bad]} constraint value(s) where earlier trials have {first}; every "
                "complete trial needs the same constraints."
            )
        self.m = ms[0] if ms else 0
        #: the complete trials that are failed evaluations, and why: "constraint" (a non-finite constraint
        #: value), "objective" (a non-finite objective), "unusable" (no usable constraint values)
        self.unusable = unusable
        self.complete = complete
        self.numbers = [t.number for t, *_ in complete]
        self.X = np.array([u for _, u, _, _ in complete]).reshape(-1, space.d)
        self.y = np.array([y for _, _, y, _ in complete], dtype=float)
        self.c = np.array([c for *_, c in complete], dtype=float).reshape(len(complete), self.m)
        self.busy = np.array([u for _, u in sorted(busy, key=lambda row: row[0])]).reshape(-1, space.d)
        self.pending = np.array(pending).reshape(-1, space.d)
        #: the evaluated points (complete, failed, pruned), trial-number order: never again with ``exact``
        self.done = np.array([u for _, u in sorted(done, key=lambda row: row[0])]).reshape(-1, space.d)
        #: the complete trials of the initial design: the reference of the robust scales, as the
        #: optimizer's design trials are
        self.design = np.array([t.number < n_startup for t, *_ in self.complete], dtype=bool)

    def no_result(self, number: int) -> InvalidInputError:
        """The error of a decision (trial ``number``) with no complete trial to model."""
        whys = {why for _, why in self.unusable}
        what = {
            "constraint": "has a non-finite constraint value",
            "objective": "has a non-finite objective value",
            "unusable": "has no usable constraint values (constraints_func raised, or its result was refused)",
        }
        return InvalidInputError(
            f"CKBSampler has no result to model at trial {number}: every complete trial "
            f"({_trials_text([n for n, _ in self.unusable])}) "
            + (what[whys.pop()] if len(whys) == 1 else "has a non-finite or no usable value")
            + ", and such a trial counts as a failed evaluation, not a result; return finite numbers (a "
            "large one marks an infeasible point)."
        )

    def units(self, transform: str, rows: Any = None) -> OutcomeUnits:
        """The outcome units (:class:`~ckb.optimizer.models.OutcomeUnits`) fitted on the complete trials
        (``rows`` of them: default all), with the initial design's as the reference, as
        :meth:`ckb.Optimizer.units` fits them."""
        rows = slice(None) if rows is None else rows
        return OutcomeUnits(
            self.y[rows],
            self.c[rows],
            minimize=self.minimize,
            m=self.m,
            transform=transform,
            reference=self.design[rows],
        )

    def units_at(self, number: int, transform: str) -> OutcomeUnits:
        """The outcome units when trial ``number`` completed: from the complete trials that completed no
        later (by completion time, then number), in trial-number order."""
        key = next(_completion_key(t) for t, *_ in self.complete if t.number == number)
        rows = [i for i, (t, *_) in enumerate(self.complete) if _completion_key(t) <= key]
        return self.units(transform, rows)


def _pending_point(t: FrozenTrial, space: _Space, design, n_startup: int) -> np.ndarray | None:
    """Where a running or waiting trial without all its parameters will be evaluated, if known: its
    decision's point, its enqueued values, or its design point."""
    attrs = t.system_attrs
    if RECORD_KEY in attrs:
        return np.asarray(loads(attrs[RECORD_KEY])["x"], dtype=float)
    fixed = attrs.get("fixed_params") or {}
    u = space.to_unit({**fixed, **t.params})
    if u is not None:
        return u
    return design(t.number) if not fixed and t.number < n_startup else None


# --------------------------------------------------------------------------------------- the chain
def _chain(trials: Sequence[FrozenTrial], cache: dict) -> list[dict[str, Any]]:
    """The decision records, ordered by (ticket, number): the chain of policy states."""
    out = []
    for t in trials:
        text = t.system_attrs.get(RECORD_KEY)
        if text is None:
            continue
        rec = cache.get((t._trial_id, text))  # the text too: a sampler may serve several storages
        if rec is None:
            rec = loads(text)
            rec["number"] = t.number
            cache[(t._trial_id, text)] = rec
        out.append(rec)
    return sorted(out, key=lambda r: (r["ticket"], r["number"]))


def _active_claim(t: FrozenTrial) -> dict[str, Any] | None:
    """The trial's claim on a decision if it still counts (see the module docstring)."""
    attrs = t.system_attrs
    claim = attrs.get(CLAIM_KEY)
    if claim is None or t.state != TrialState.RUNNING or RECORD_KEY in attrs or RELEASED_KEY in attrs:
        return None
    if claim.get("host") == _HOST and not _alive(int(claim["pid"]), claim.get("token", "")):
        return None
    return claim


# -------------------------------------------------------------------------------------------- sampler
class CKBSampler(BaseSampler):
    """ckb's optimizer policies as an Optuna sampler (see the module docstring).

    Parameters
    ----------
    policy : an optimizer policy (``ckb.optimizer.OPTIMIZER_POLICIES``: ``cei``, ``config``, ``pcei``,
        ``ckb-ucb``, ``rpol-ucb``, ...); None: the optimizer's default for ``goal``.
    goal : ``"best-feasible"`` (default) or ``"cumulative"``: picks the default policy.
    constraints_func : ``FrozenTrial -> sequence of floats`` (feasible where every value is <= 0), called
        after each complete or pruned trial, as in Optuna's samplers, and checked (:meth:`after_trial`);
        None: constraints set with ``trial.set_constraint``.
    n_trials : the number of trials the study will run; sets the horizon T = ``n_trials -
        n_startup_trials`` of policies whose constants depend on it (required for them, and at least the
        initial design's size).
    n_startup_trials : size of the initial Sobol design (default ``2d + 2``, d the search space's size).
    seed : seeds the design, the independent draws and the policy's generator (default 0, as
        ckb.Optimizer: the same study gives the same trials).
    violation_budget : for violation-aware policies (``pcei``; another policy warns that it does not
        read it): per constraint, the largest sum of positive parts (a finite number >= 0 or one per
        constraint, in the constraints' units) the trials after the initial design (trial numbers >=
        ``n_startup_trials``) may spend. Unlike ckb.Optimizer, which charges every point it did not ask
        from its design, a user's enqueued or added trial whose number lies inside the design takes that
        number's design slot and is not charged (Optuna numbers trials; this sampler knows the design by
        number). pcei paces it over the trials left, so it needs ``n_trials``. A budget is not used
        before the first decision: a resume in the design may change it.
    outcome_transform : the units the policy sees, as in ckb.Optimizer (``"auto"``, ``"rms"``,
        ``"bilog"``, ``"bilog-constraints"``, ``"auto-no-bounds"``, ``"auto-bounds"``); the study keeps
        the raw values.
    exact : the evaluations are noise-free, as in ckb.Optimizer: the GPs' noise floor is 1e-6 and no
        evaluated point (complete, failed or pruned) is proposed again; on int and stepped parameters,
        no evaluated (or pending) point's values, the initial design included, while the grid has
        values left.
    categorical : ``"error"`` (default) or ``"independent"`` (uniform draws, outside the model).
    decision_timeout : seconds to wait for another host's claim on the next decision.
    **params : the search options of :class:`ckb.Optimizer` (``refit_every``, ``num_restarts``,
        ``raw_samples``, ``maxiter``, ``max_line_search``, ``batch_separation``, ``torch_threads``: same
        names, meanings and defaults) and the policy's constants (``beta=``, ``kappa=``, ...).
    """

    def __init__(
        self,
        *,
        policy: str | None = None,
        goal: str = "best-feasible",
        constraints_func: Callable[[FrozenTrial], Sequence[float]] | None = None,
        n_trials: int | None = None,
        n_startup_trials: int | None = None,
        seed: int = 0,
        violation_budget: float | Sequence[float] | None = None,
        outcome_transform: str = "auto",
        exact: bool = False,
        categorical: str = "error",
        decision_timeout: float = 600.0,
        **params: Any,
    ) -> None:
        _require_botorch("CKBSampler", "optuna")
        from ckb.optimizer.policies import GOAL_POLICIES, OPTIMIZER_POLICIES

        if goal not in GOAL_POLICIES:
            raise InvalidInputError(f"Unknown goal {goal!r}.{did_you_mean(str(goal), GOAL_POLICIES)}")
        self.goal = goal
        self.policy_name = OPTIMIZER_POLICIES.canonical(GOAL_POLICIES[goal] if policy is None else policy)
        self._policy_cls = OPTIMIZER_POLICIES.get(self.policy_name)
        if constraints_func is not None and not callable(constraints_func):
            raise InvalidInputError(
                f"constraints_func must be a function of the trial, got {constraints_func!r}."
            )
        self._constraints_func = constraints_func
        self.n_trials = None if n_trials is None else check_scalar(n_trials, "n_trials", low=1, integer=True)
        self.n_startup_trials = (
            None
            if n_startup_trials is None
            else check_scalar(n_startup_trials, "n_startup_trials", low=0, integer=True)
        )
        self.seed = check_scalar(seed, "seed", low=0, integer=True)
        self.outcome_transform = _check_outcome_transform(outcome_transform)
        self.exact = check_bool(exact, "exact")
        if categorical not in ("error", "independent"):
            raise InvalidInputError(f"categorical must be 'error' or 'independent', got {categorical!r}.")
        self.categorical = categorical
        self.violation_budget = _check_violation_budget(violation_budget, None)
        policy_params = dict(params)
        _set_search_options(self, **{k: policy_params.pop(k) for k in SEARCH_OPTIONS if k in policy_params})
        self.decision_timeout = check_scalar(decision_timeout, "decision_timeout", low=0.0)
        self.policy_params = _stored_params(policy_params)
        #: the keywords the policy is built with: ``policy_params``, and where a resumed study's stored
        #: ``policy_constants`` differ from this version's defaults, those (:meth:`_check_spec`)
        self._policy_kwargs = dict(self.policy_params)
        self._check_policy()
        # one intersection search space per study: storage -> study id -> its cache
        self._spaces: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self._records: dict[int, dict[str, Any]] = {}
        self._warned: set[Any] = set()

    # --------------------------------------------------------------------------- construction
    def _make_policy(self, m: int, horizon: int):
        try:
            return self._policy_cls(m, horizon, **self._policy_kwargs)
        except (TypeError, InvalidInputError) as exc:  # a keyword neither it nor its rule takes
            _unknown_keyword(
                exc, self._policy_cls, self._policy_kwargs, self.policy_name, type(self), SEARCH_OPTIONS
            )
            if isinstance(exc, InvalidInputError):
                raise
            raise InvalidInputError(f"policy {self.policy_name!r}: {exc}.") from None

    def _check_policy(self) -> None:
        """Build the policy now (its constants are checked) and refuse a horizon-dependent one without
        ``n_trials``."""
        lists = [v for v in [*self.policy_params.values(), self.violation_budget] if isinstance(v, list)]
        m = max([len(v) for v in lists], default=1)
        policy = self._make_policy(m, 10)
        short, long = _numbers(policy), _numbers(self._make_policy(m, 10_000))
        # a constant that differs, but not a mere copy of the horizon (the primal-dual's epoch length)
        self._needs_horizon = any(
            short[k] != long[k] and (short[k], long[k]) != (repr(10.0), repr(10_000.0)) for k in short
        ) or policy.needs_rounds_left(
            self.violation_budget is not None
        )  # spreads a quantity (a slack, a violation budget) over the asks left
        if self.violation_budget is not None and not getattr(
            self._policy_cls, "reads_violation_budget", False
        ):
            warnings.warn(
                f"policy {self.policy_name!r} does not read violation_budget: its decisions are the same "
                "without a budget (pcei spends it; goal='best-feasible' uses pcei).",
                UserWarning,
                stacklevel=3,
            )
        if self.n_trials is None and self._needs_horizon:
            raise InvalidInputError(
                f"policy {self.policy_name!r} sets constants from the number of rounds or spreads its slack "
                "or violation budget over the rounds left; pass n_trials= (the trials the study will run)."
            )
        # the design must fit in n_trials, as ckb.Optimizer's in its budget; the default design's size
        # (2d + 2) is known once a trial has completed (:meth:`_check_design_fits`), but is at least 4
        design = 4 if self.n_startup_trials is None else self.n_startup_trials
        if self._needs_horizon and self.n_trials < design:
            what = "(2d + 2 trials, at least 4)" if self.n_startup_trials is None else f"of {design} trials"
            raise InvalidInputError(
                f"n_trials = {self.n_trials} is smaller than the initial design {what}; the design must fit: "
                f"pass n_trials >= {design} (the policy's horizon is T = n_trials - n_startup_trials)."
            )

    def _check_design_fits(self, n_startup: int | None, d: int | None) -> None:
        """A horizon-dependent policy's ``n_trials`` must hold the initial design (as ckb.Optimizer's
        budget must): refused, with the design's size, once that size is known."""
        if not self._needs_horizon or n_startup is None or not d or self.n_trials >= n_startup:
            return
        what = f"of {n_startup} trials"
        if self.n_startup_trials is None and n_startup == 2 * d + 2:
            what = f"of 2d + 2 = {n_startup} trials (d = {d} parameters)"
        raise InvalidInputError(
            f"n_trials = {self.n_trials} is smaller than the initial design {what}; the design must fit: "
            f"pass n_trials >= {n_startup} (the policy's horizon is T = n_trials - {n_startup})."
        )

    def __repr__(self) -> str:
        return f"CKBSampler(policy={self.policy_name!r}, seed={self.seed}, n_trials={self.n_trials})"

    def reseed_rng(self) -> None:
        """Nothing to reseed: the policy's generator lives in the study's records, the rest is seeded."""

    # ------------------------------------------------------------------------------ Optuna API
    def before_trial(self, study, trial: FrozenTrial) -> None:
        """Check this sampler's settings against the study's (stored at its first trial; the first
        sampler stores them) before the trial runs. Optuna creates the trial before it calls any sampler
        hook, and no storage can delete one: a refused trial goes back to the queue (``WAITING``, as it
        came or as created, without parameters), where the next ``ask`` takes it with its number, so a
        refused resume records nothing else (no failed trial, no attribute)."""
        try:
            _single_objective(study)
            self._check_spec(study, study.direction == StudyDirection.MINIMIZE, self._known_d(study))
        except CKBError:
            try:
                study._storage.set_trial_state_values(trial._trial_id, TrialState.WAITING)
            except Exception:  # pragma: no cover - finished meanwhile (another process): nothing to undo
                pass
            raise

    def _space(self, study) -> dict[str, BaseDistribution]:
        """The intersection search space of ``study``'s completed trials, cached per study. (One cache for
        the sampler, as Optuna's samplers keep, served a second study the first one's space: every
        parameter of the second was drawn at random, since every in-memory study has the same id; with
        two studies in one database it raised "cannot handle multiple studies".)"""
        per_storage = self._spaces.setdefault(study._storage, {})
        if study._study_id not in per_storage:
            per_storage[study._study_id] = optuna.search_space.IntersectionSearchSpace()
        return per_storage[study._study_id].calculate(study)

    def infer_relative_search_space(self, study, trial: FrozenTrial) -> dict[str, BaseDistribution]:
        _single_objective(study)
        space = {}
        for name, dist in self._space(study).items():
            if dist.single():
                continue
            if isinstance(dist, CategoricalDistribution):
                if self.categorical == "error":
                    raise _categorical_error(name, dist)
                continue
            space[name] = dist
        return dict(sorted(space.items()))

    def _known_d(self, study) -> int | None:
        """The size of the modelled search space (float and int parameters), None while no trial has
        completed (Optuna infers the space from the completed trials)."""
        space = self._space(study)
        if not space:
            return None
        return sum(
            isinstance(v, (FloatDistribution, IntDistribution)) and not v.single() for v in space.values()
        )

    def sample_independent(self, study, trial: FrozenTrial, param_name: str, param_distribution) -> Any:
        if isinstance(param_distribution, CategoricalDistribution) and self.categorical == "error":
            raise _categorical_error(param_name, param_distribution)
        if (
            not isinstance(param_distribution, CategoricalDistribution)
            and (id(study._storage), study._study_id, param_name) not in self._warned
            and not trial.system_attrs.get("fixed_params")
        ):
            done = study._get_trials(deepcopy=False, use_cache=True, states=(TrialState.COMPLETE,))
            if done:
                self._warned.add((id(study._storage), study._study_id, param_name))
                _logger.warning(
                    self._independent_note(study, trial.number, param_name, param_distribution, done)
                )
        key = zlib.crc32(param_name.encode())
        rng = np.random.default_rng([self.seed, trial.number, key])
        return _independent_value(param_distribution, rng, param_name)

    def _note_data(self, study, data: _Data) -> None:
        """Warn once per trial that its result is left out of the model for a value outside its range,
        and once per study when a constraint looks told as a violation amount, or a violation budget
        meets no feasible trial (as ckb.Optimizer does)."""
        study_key = (id(study._storage), study._study_id)
        note = violation_amounts_note(data.c)
        if note is not None:
            self._log_once((*study_key, "amounts"), f"CKBSampler: {note}")
        budgeted = self.violation_budget is not None and getattr(
            self._policy_cls, "reads_violation_budget", False
        )
        if budgeted and len(data.c) and not np.any(feasible_rows(data.c)):
            self._log_once(
                (*study_key, "infeasible"),
                f"CKBSampler: violation_budget = {short_repr(self.violation_budget)}, but none of the "
                f"{len(data.c)} complete trials is feasible: until one is, each decision searches for a "
                "feasible point and may violate, whatever the budget (a known-feasible point enqueued first, "
                "study.enqueue_trial, lets the budget be kept from the start).",
            )
        for number, far in data.outside:
            self._log_once(
                (*study_key, "outside", number),
                f"CKBSampler leaves trial {number} out of its model: its value {far} lies outside "
                "the search space (an enqueued value, which Optuna keeps); enqueue values inside the "
                "ranges, or widen the ranges in a new study.",
            )

    def _log_once(self, key: Any, message: str) -> None:
        """Log ``message`` as a warning the first time ``key`` comes, and never again for it."""
        if key not in self._warned:
            self._warned.add(key)
            _logger.warning(message)

    def _independent_note(self, study, number: int, name: str, dist, done: Sequence[FrozenTrial]) -> str:
        """Why parameter ``name`` of trial ``number`` is drawn outside the model, and what follows."""
        others = {}  # each other range of the parameter in the completed trials -> their numbers
        for t in done:
            if name in t.distributions and t.distributions[name] != dist:
                others.setdefault(t.distributions[name], []).append(t.number)
        since = min([t.number for t in done if t.distributions.get(name) == dist], default=number)
        if not others:
            return (
                f"CKBSampler draws parameter {name!r} of trial {number} uniformly at random: it is not in "
                "every completed trial (dynamic search space), so the model does not cover it."
            )
        old = "; ".join(f"{_describe(d, dist)} ({_trials_text(n)})" for d, n in others.items())
        rest = [
            k
            for k, v in self._space(study).items()
            if k != name and isinstance(v, (FloatDistribution, IntDistribution)) and not v.single()
        ]
        then = (
            "the other parameters stay the policy's"
            if rest
            else "no other parameter is modelled, so every trial is now drawn at random (random search)"
        )
        new = _describe(dist, next(iter(others)))
        return (
            f"CKBSampler draws parameter {name!r} of trial {number} uniformly at random: its range changed "
            f"from {old} to {new} at trial {since}, and the model covers a parameter only while every "
            f"completed trial has it with one range (Optuna's intersection search space); from now on "
            f"{name!r} is drawn at random in every trial, outside the model, and {then}. Keep a parameter's "
            "range fixed within a study."
        )

    def sample_relative(self, study, trial: FrozenTrial, search_space) -> dict[str, Any]:
        if not search_space:
            return {}
        _single_objective(study)
        space = _Space(search_space)
        fixed = trial.system_attrs.get("fixed_params") or {}
        if any(n in fixed for n in space.names):
            return {}  # enqueued values are not the policy's decision
        n_startup = self._design_size(study, space.d)
        trials = study._storage.get_all_trials(study._study_id, deepcopy=False)
        has_data = any(t.state == TrialState.COMPLETE and space.to_unit(t.params) is not None for t in trials)
        if trial.number < n_startup or not has_data:
            return space.from_unit(self._design(space.d, space)(trial.number))
        return self._decide(study, trial, space)

    def after_trial(self, study, trial: FrozenTrial, state: TrialState, values) -> None:
        """Store ``constraints_func``'s values for a complete or pruned trial, as Optuna's samplers do
        (:func:`optuna.samplers._base._process_constraints_after_trial`), checked first: a flat sequence
        of real numbers, as many as the study's other trials have (with those set by
        ``trial.set_constraint``), and no NaN (which Optuna refuses too). A refused result is a one-line
        error, and the trial, which Optuna records as it finished, keeps None (Optuna's mark of values it
        could not take): CKBSampler counts it as a failed evaluation. An infinite value is kept (Optuna
        takes it), with a one-line warning that the trial is a failed evaluation, as any non-finite one."""
        if state not in (TrialState.COMPLETE, TrialState.PRUNED):
            return
        stored = _constraints_of(trial)  # None: values it cannot use (a failed evaluation, not a missing one)
        values = stored or []
        if self._constraints_func is not None:
            kept = None
            try:
                kept = self._checked_constraints(self._constraints_func(trial), study, trial)
            finally:
                study._storage.set_trial_system_attr(trial._trial_id, _CONSTRAINTS_KEY, kept)
            values = stored = [*kept, *_named_constraints(trial)]
        if state == TrialState.COMPLETE and stored is not None:  # what a decision would refuse, said now
            self._check_constraint_count(trial.number, len(values))
        bad = [j for j, v in enumerate(values) if not math.isfinite(v)]
        if state == TrialState.COMPLETE and bad:
            _logger.warning(
                f"CKBSampler: constraint {bad[0]} of trial {trial.number} is {values[bad[0]]}: a non-finite "
                f"value is not a result to model, so trial {trial.number} counts as a failed evaluation (not "
                "modelled; the next decisions move away from its point). Return finite numbers (a large one "
                "marks an infeasible point)."
            )

    def _late(self, study) -> Callable[[FrozenTrial], list[float] | None] | None:
        """For a decision: ``constraints_func`` applied to a complete trial that has no constraint values
        stored (another sampler completed it and did not call it; Optuna does not update a finished trial,
        so the values are computed at each decision, not stored). None (a failed evaluation, with a
        warning) where it raises or returns what :meth:`after_trial` would refuse."""
        if self._constraints_func is None:
            return None

        def late(trial: FrozenTrial) -> list[float] | None:
            try:
                kept = self._checked_constraints(self._constraints_func(trial), study, trial)
            except Exception as exc:
                _logger.warning(
                    f"CKBSampler: trial {trial.number} was completed without constraint values and "
                    f"constraints_func fails on it ({type(exc).__name__}: {' '.join(str(exc).split())}); "
                    "it counts as a failed evaluation."
                )
                return None
            return [*kept, *_named_constraints(trial)]

        return late

    def _check_constraint_count(self, number: int, m: int) -> None:
        """A one-line error when trial ``number`` completed with ``m`` = 0 constraint values, or
        ``violation_budget`` has neither one value nor ``m``: raised by :meth:`after_trial` once the trial is
        recorded (Optuna keeps it and stops the study), not after the whole initial design."""
        if m == 0:
            raise InvalidInputError(
                f"trial {number} completed without constraint values; CKBSampler needs them for every trial: "
                "pass constraints_func= (values <= 0 feasible) or call trial.set_constraint(name, value). "
                f"Trial {number} is kept."
            )
        if self.violation_budget is not None and len(self.violation_budget) not in (1, m):
            raise InvalidInputError(
                f"violation_budget has {len(self.violation_budget)} values but trial {number} has {m} "
                f"constraint(s); give one number, or one per constraint. Trial {number} is kept."
            )

    def _checked_constraints(self, raw: Any, study, trial: FrozenTrial) -> tuple[float, ...]:
        """``constraints_func``'s result for ``trial`` as the floats to store, or a one-line error."""
        what = f"constraints_func returned {short_repr(raw)} for trial {trial.number}"
        items = raw.tolist() if isinstance(raw, np.ndarray) and raw.ndim == 1 else raw
        if not isinstance(items, (list, tuple)) or not all(map(_is_real, items)):
            raise InvalidInputError(
                f"{what}; it must return a flat sequence of real numbers, one per constraint (feasible "
                "where <= 0), e.g. [0.3]."
            )
        values = tuple(float(v) for v in items)
        named = len(_named_constraints(trial))
        if not values and not named:
            raise InvalidInputError(
                f"{what}; CKBSampler needs at least one constraint value (feasible where <= 0) per trial."
            )
        m = self._study_m(study, trial.number)
        if m is not None and len(values) + named != m:
            also = f" (with {named} from trial.set_constraint)" if named else ""
            raise InvalidInputError(
                f"{what}: {len(values) + named} value(s){also} where the study's trials have {m}; every "
                "trial needs the same constraints."
            )
        nan = [j for j, v in enumerate(values) if math.isnan(v)]
        if nan:
            raise InvalidInputError(
                f"{what}: constraint {nan[0]} of trial {trial.number} is NaN, which Optuna does not store, so "
                f"trial {trial.number} keeps no constraint values and counts as a failed evaluation (not "
                "modelled). Return finite numbers (a large one marks an infeasible point)."
            )
        return values

    def _study_m(self, study, number: int) -> int | None:
        """The number of constraints of the study: its stored settings', else its first trial's with
        usable values (other than trial ``number``); None before any."""
        spec = self._stored_spec(study)
        if spec is not None and spec.get("m") is not None:
            return int(spec["m"])
        states = (TrialState.COMPLETE, TrialState.PRUNED)
        for t in study._storage.get_all_trials(study._study_id, deepcopy=False, states=states):
            c = _constraints_of(t) if t.number != number else None
            if c:
                return len(c)
        return None

    # ---------------------------------------------------------------------------- the decision
    def _n_startup(self, d: int) -> int:
        return 2 * d + 2 if self.n_startup_trials is None else self.n_startup_trials

    def _design(self, d: int, space: _Space | None = None):
        """Design point ``n`` (unit cube): the scrambled Sobol sequence's ``n``-th point; with ``exact=True``
        on a space with grids, the ``n``-th of its points (``n`` >= 1; trial 0 is drawn independently,
        before the search space is known) whose values (rounded to the grids) neither an earlier one nor
        trial 0 has: a function of ``n`` alone, so parallel workers agree; while the grid has values left."""

        def point(n: int) -> np.ndarray:
            return initial_design(np.zeros(d), np.ones(d), n + 1, self.seed)[n]

        if not (self.exact and space is not None and space.gridded):
            return point

        def distinct(n: int) -> np.ndarray:
            U = initial_design(np.zeros(d), np.ones(d), 64 * (n + 1), self.seed)
            first = {
                name: _independent_value(
                    dist, np.random.default_rng([self.seed, 0, zlib.crc32(name.encode())])
                )
                for name, dist in zip(space.names, space.dists)
            }
            seen, kept = [space.snap(space.to_unit(first))[0]], 0
            for u in U:  # snapped one by one: the walk usually ends long before U does
                v = space.snap(u)[0]
                if not any(np.array_equal(v, w) for w in seen):
                    seen.append(v)
                    kept += 1
                    if kept == max(n, 1):  # trial 0 took the first value: trial n the n-th new one
                        return u
            return point(n)  # fewer distinct grid values than design points: repeats allowed

        return distinct

    def _spec(self, m: int | None, n_startup: int | None, minimize: bool) -> dict[str, Any]:
        """The settings the study stores (:data:`SPEC_KEY`); ``m``, ``n_startup`` (the default design's
        size, ``2d + 2``) and the policy's constants are None until they are known."""
        known = m is not None and n_startup is not None
        constants = self._make_policy(m, self._horizon(n_startup)).constants() if known else None
        return {
            "version": _VERSION,
            "policy": self.policy_name,
            "policy_params": self.policy_params,
            "policy_constants": None if constants is None else _stored_params(constants),
            "seed": self.seed,
            "n_startup_trials": n_startup,
            "n_trials": self.n_trials if self._needs_horizon else None,
            "violation_budget": self.violation_budget,
            "outcome_transform": self.outcome_transform,
            "units": UNITS_VERSION,
            "exact": self.exact,
            "m": m,
            "minimize": minimize,
        }

    @staticmethod
    def _stored_spec(study) -> dict[str, Any] | None:
        attrs = study._storage.get_study_system_attrs(study._study_id)
        return loads(attrs[SPEC_KEY]) if SPEC_KEY in attrs else None

    def _design_size(self, study, d: int) -> int:
        """The study's initial design size: the one it stores once known (it stays the study's when the
        search space changes size), else this sampler's (``2d + 2`` by default)."""
        spec = self._stored_spec(study)
        if spec is not None and spec.get("n_startup_trials") is not None:
            return int(spec["n_startup_trials"])
        return self._n_startup(d)

    def _horizon(self, n_startup: int) -> int:
        return max(1, (self.n_trials if self.n_trials is not None else n_startup + 1) - n_startup)

    def _initial_state(self, m: int, n_startup: int, number: int = 0) -> dict[str, Any]:
        """The state before the first decision (trial ``number``): the generator seeded by ``seed`` and
        advanced by one draw per earlier trial, as ckb.Optimizer's advances once per ask."""
        rng = np.random.default_rng(self.seed)
        for _ in range(number):
            rng.integers(2**63 - 1)
        return _snapshot(self._make_policy(m, self._horizon(n_startup)), rng)

    def _decide(self, study, trial: FrozenTrial, space: _Space) -> dict[str, Any]:
        _import_models()  # a process's first decision imports them before its turn, not while others wait
        with self._lock, self._turn(study, trial) as ticket:
            storage = study._storage
            trials = storage.get_all_trials(study._study_id, deepcopy=False)  # everything before our turn
            minimize = study.direction == StudyDirection.MINIMIZE
            n_startup = self._design_size(study, space.d)
            design = self._design(space.d, space)
            data = _Data(trials, space, minimize, trial.number, design, n_startup, self._late(study))
            self._note_data(study, data)
            if data.m == 0 and data.unusable and not data.complete:
                raise data.no_result(trial.number)
            if data.m == 0:
                raise InvalidInputError(
                    "no complete trial has constraint values; pass constraints_func= (values <= 0 feasible) "
                    "or call trial.set_constraint(name, value) in the objective."
                )
            if not data.complete:
                raise data.no_result(trial.number)
            if self.violation_budget is not None and len(self.violation_budget) not in (1, data.m):
                raise InvalidInputError(
                    f"violation_budget has {len(self.violation_budget)} values but the trials have "
                    f"{data.m} constraint(s); give one number, or one per constraint."
                )
            self._check_spec(study, minimize, space.d, data.m)
            if self._needs_horizon and trial.number >= self.n_trials and "n_trials" not in self._warned:
                self._warned.add("n_trials")
                warnings.warn(
                    f"CKBSampler: trial {trial.number} is past n_trials = {self.n_trials}, the number of trials "
                    f"the policy's horizon T = {self._horizon(n_startup)} was set for; it keeps deciding with "
                    "the constants of that horizon (Optuna does not tell a sampler its n_trials: pass the "
                    "study's total trials as CKBSampler's n_trials).",
                    UserWarning,
                    stacklevel=2,
                )
            chain = _chain(trials, self._records)
            start = time.perf_counter()
            policy, rng, models_state = self._restore(
                chain[-1]["state"] if chain else self._initial_state(data.m, n_startup, trial.number),
                data.m,
                n_startup,
            )
            folded = self._fold(policy, chain, data)
            x, info, models_state = self._next(
                policy, rng, models_state, data, space, trial.number, n_startup
            )
            info["seconds"] = time.perf_counter() - start
            params = space.from_unit(x)
            record = {
                "version": _VERSION,
                "ticket": ticket,
                "prev": chain[-1]["number"] if chain else None,
                "folded": folded,
                "x": space.to_unit(params),
                "params": params,
                "info": info,
                "pid": os.getpid(),
                "state": _snapshot(policy, rng, models_state),
            }
            storage.set_trial_system_attr(trial._trial_id, RECORD_KEY, dumps(record))
        return params

    def _check_spec(self, study, minimize: bool, d: int | None, m: int | None = None) -> int | None:
        """Store this sampler's settings with the study at its first trial, or compare them with the
        stored ones: a difference is a one-line error naming the setting. Those known only later (the
        number of constraints ``m``; the default design's size, ``2d + 2``, with ``d`` the search space's
        size, None before a trial completed) are compared once both sides know them, and stored with the
        first decision (``m`` given), with the policy's constants. Returns the study's design size (None
        while unknown)."""
        storage, sid = study._storage, study._study_id
        raw = self._stored_spec(study)
        if raw is None:
            n_startup = self.n_startup_trials if d is None else self._n_startup(d)
            self._check_design_fits(n_startup, d)
            storage.set_study_system_attr(sid, SPEC_KEY, dumps(self._spec(m, n_startup, minimize)))
            return n_startup
        stored = {**_SPEC_BEFORE_UNITS, **raw}
        # "auto" stored before the bound map joined it is "auto-no-bounds" today (for the policies that
        # take the map under "auto")
        stored.update(outcome_transform=resumed_transform(stored, "rms"), units=UNITS_VERSION)
        decided = stored.get("m") is not None  # the settings are complete from the first decision on
        design = stored.get("n_startup_trials")
        if design is None and d is not None:  # stored with the default before the space was known
            design = 2 * d + 2
        # a sampler with the default design size takes the study's; one that gives it must match it
        n_startup = design if self.n_startup_trials is None else self.n_startup_trials
        if not decided:
            self._check_design_fits(n_startup, d)
        m = stored.get("m") if m is None else m
        ours = self._spec(m, n_startup, minimize)
        # an n_trials refused as too small for the design (so never used) may be corrected on resume
        unused = not decided and stored.get("n_trials") is not None and design is not None
        unused = unused and stored["n_trials"] < design
        for key, value in ours.items():
            have = design if key == "n_startup_trials" else stored.get(key)
            if key == "policy_constants" or (key == "n_trials" and unused):
                continue
            if key == "violation_budget" and not decided:  # not used before the first decision
                continue
            if key in ("m", "n_startup_trials") and (have is None or value is None):
                continue  # not known on one side yet
            if dumps(have) != dumps(value):
                raise InvalidInputError(
                    f"study {study.study_name!r} was run by CKBSampler with {key}={have!r}; this sampler "
                    f"has {key}={value!r}. Resume it with the same settings, or use a new study."
                )
        if decided:
            self._keep_constants(
                study.study_name,
                stored.get("policy_constants"),
                ours["policy_constants"],
                m,
                self._horizon(n_startup),
            )
        elif ours["m"] is not None and ours["n_startup_trials"] is not None:  # the first decision
            storage.set_study_system_attr(sid, SPEC_KEY, dumps(ours))
        return n_startup

    def _keep_constants(self, name: str, stored: Any, ours: dict[str, Any], m: int, horizon: int) -> None:
        """A study resumed under a version whose policy defaults differ from those it was started with
        keeps its constants (:func:`ckb.optimizer.core.kept_constants`), with one warning naming them,
        as :class:`ckb.Optimizer` does; a stored constant this version lacks or refuses is an error."""
        where = f"study {name!r} (run by CKBSampler with {self.policy_name})"
        changed = kept_constants(stored, ours, self._policy_cls, where)
        if not changed:
            return
        kwargs = {**self._policy_kwargs, **changed}
        try:
            self._policy_cls(m, horizon, **kwargs)
        except (CKBError, TypeError) as exc:
            raise InvalidInputError(
                f"{where} has constants this version of ckb does not accept ({exc}); resume it with the "
                "version that wrote it, or use a new study."
            ) from None
        self._policy_kwargs = kwargs
        if "policy_constants" not in self._warned:
            self._warned.add("policy_constants")
            warnings.warn(_kept_message(name, self.policy_name, changed, ours), UserWarning, stacklevel=2)

    def _restore(self, state: dict[str, Any], m: int, n_startup: int):
        return _restored(self._make_policy(m, self._horizon(n_startup)), state)

    def _fold(self, policy, chain: list[dict[str, Any]], data: _Data) -> list[int]:
        """Tell-time updates of the chain's complete, not yet folded decisions, in completion order."""
        done = {k for rec in chain for k in rec["folded"]}
        mine = {rec["number"] for rec in chain}
        todo = [(t, y, c) for t, _, y, c in data.complete if t.number in mine and t.number not in done]
        todo.sort(key=lambda row: _completion_key(row[0]))
        for t, y, c in todo:  # in the units of the data with this result, as the optimizer's tell
            units = data.units_at(t.number, units_transform(self.outcome_transform, policy))
            policy.observe(float(units.y(y)), units.c(c))
        return [t.number for t, _, _ in todo]

    def _next(self, policy, rng, models_state, data: _Data, space: _Space, number: int, n_startup: int):
        """One decision, as :meth:`ckb.Optimizer._next` makes it (units, fits, fantasies, maximizer)."""
        import torch

        from ckb.optimizer.policies import Decision

        with _torch_threads(self.torch_threads), torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(rng.integers(2**63 - 1)))
            units = data.units(units_transform(self.outcome_transform, policy))
            y_p, c_p = units.y(data.y), units.c(data.c)
            models, models_state = _fit_models(
                policy,
                data.X,
                y_p,
                c_p,
                models_state,
                self.refit_every,
                noise_floor=EXACT_NOISE_FLOOR if self.exact else None,
                same={"space": (space.names, None)},
                # new units (auto switched a target's map) make the stored hyperparameters stale
                stale={"units": (units.describe(), _plain_units(data.m))},
            )
            fit_ok = models.fit_ok
            conditioned = models.condition(data.busy) if len(data.busy) else models
            done = data.done if self.exact else None
            maximize = _maximizer(self, space.d, rng, models, data.pending, done=done)
            if self.exact and space.gridded:  # never an evaluated point's values again (a grid's)
                taken = np.vstack([data.done, data.pending]).reshape(-1, space.d)
                maximize = _never_twice_on_grid(maximize, self, space, rng, taken)
            left = None
            if self.violation_budget is not None:  # spent by the evaluations after the design
                after = np.array([k >= n_startup for k in data.numbers], dtype=bool)
                spent = np.maximum(data.c[after], 0.0).sum(axis=0)
                left = np.maximum(np.broadcast_to(self.violation_budget, (data.m,)) - spent, 0.0)
            rounds_left = None if self.n_trials is None else max(0, self.n_trials - number - 1)
            u, internals = policy.decide(
                Decision(
                    conditioned,
                    maximize,
                    rng,
                    y_p,
                    c_p,
                    violation_left=left,
                    c_to_raw=units.c_to_raw,
                    exact=self.exact,
                    rounds_left=rounds_left,
                    violation_budget=None
                    if self.violation_budget is None
                    else np.broadcast_to(self.violation_budget, (data.m,)).copy(),
                )
            )
        info = {
            "source": "policy",
            "round": int(policy.t),
            "pending": len(data.pending),
            **{k: float(v) for k, v in internals.items()},
        }
        if not fit_ok:
            info["fit_failed"] = 1.0
        info["units"] = units.describe()
        return np.clip(np.asarray(u, dtype=float), 0.0, 1.0), info, models_state

    # --------------------------------------------------------------------------------- turns
    @contextmanager
    def _turn(self, study, trial: FrozenTrial):
        """Lamport's bakery over trial attributes: wait until this trial's ticket is the smallest live one;
        yields the ticket. The record (written in the block) or a release mark ends the turn."""
        storage, tid = study._storage, trial._trial_id
        me = {"pid": os.getpid(), "host": _HOST, "token": _start_token(os.getpid())}
        storage.set_trial_system_attr(tid, CLAIM_KEY, {**me, "choosing": True, "ticket": None})
        released = False
        try:
            trials = storage.get_all_trials(study._study_id, deepcopy=False)
            tickets = [
                int(t.system_attrs[CLAIM_KEY].get("ticket") or 0)
                for t in trials
                if CLAIM_KEY in t.system_attrs
            ]
            ticket = 1 + max(tickets, default=0)
            storage.set_trial_system_attr(tid, CLAIM_KEY, {**me, "choosing": False, "ticket": ticket})
            self._wait(study, trial.number, ticket)
            yield ticket
            released = True  # the record is written
        finally:
            if not released:
                try:
                    storage.set_trial_system_attr(tid, RELEASED_KEY, "no decision (an error or an interrupt)")
                except Exception:  # pragma: no cover - the trial was finished meanwhile: nobody waits for it
                    pass

    def _wait(self, study, number: int, ticket: int) -> None:
        mine = (ticket, number)

        def first_ahead():
            running = study._storage.get_all_trials(
                study._study_id, deepcopy=False, states=(TrialState.RUNNING,)
            )
            for t in running:
                if t.number == number:
                    continue
                claim = _active_claim(t)
                if claim is not None and (claim["choosing"] or (int(claim["ticket"]), t.number) < mine):
                    return t.number, claim
            return None

        def timed_out(blocker: int, claim) -> DecisionTimeoutError:
            return DecisionTimeoutError(
                f"trial {number} waited {self.decision_timeout:g} s for trial {blocker}'s decision (pid "
                f"{claim['pid']} on host {claim['host']}); if that process is gone, fail its trial "
                "(optuna.storages.fail_stale_trials with a heartbeat, or study.tell(n, state=FAIL))."
            )

        _wait_in_line(first_ahead, self.decision_timeout, timed_out, delay=0.002)

    # ------------------------------------------------------------------------------- reports
    def decisions(self, study) -> list[dict[str, Any]]:
        """The policy's decisions in chain order: ``number``, ``ticket``, ``prev``, ``folded`` (the
        results folded in before it), ``params``, ``x`` (in the unit cube), ``info`` (round, the policy's internals, seconds),
        ``pid`` (the process that decided)."""
        trials = study._storage.get_all_trials(study._study_id, deepcopy=False)
        keys = ("number", "ticket", "prev", "folded", "params", "x", "info", "pid")
        return [{k: rec[k] for k in keys} for rec in _chain(trials, self._records)]

    def policy_state(self, study) -> dict[str, Any] | None:
        """The policy's state after the last decision and every result told since (what the next decision
        starts from), without writing anything: ``policy``, ``decisions``, ``observed`` (results folded),
        ``state`` (its ``state_dict``) and ``internals``. None before the first decision. A sampler whose
        settings differ from the study's (another policy, seed, budget, ...) is refused with the one-line
        error a resume gives: the state is the study's policy's, which another sampler cannot rebuild."""
        attrs = study._storage.get_study_system_attrs(study._study_id)
        if SPEC_KEY not in attrs:
            return None
        spec = loads(attrs[SPEC_KEY])
        if spec.get("m") is None:  # stored at the first trial, completed at the first decision
            return None
        trials = study._storage.get_all_trials(study._study_id, deepcopy=False)
        chain = _chain(trials, self._records)
        space = _Space(self.infer_relative_search_space(study, trials[-1]))
        minimize = study.direction == StudyDirection.MINIMIZE
        m, n_startup = int(spec["m"]), int(spec["n_startup_trials"])
        self._check_spec(study, minimize, space.d, m)  # decided: compares, never writes
        data = _Data(trials, space, minimize, -1, self._design(space.d, space), n_startup, self._late(study))
        policy, _, _ = self._restore(
            chain[-1]["state"] if chain else self._initial_state(m, n_startup), m, n_startup
        )
        late = self._fold(policy, chain, data)
        return {
            "policy": self.policy_name,
            "decisions": len(chain),
            "observed": sum(len(r["folded"]) for r in chain) + len(late),
            "state": policy.state_dict(),
            "internals": policy.internals(),
        }


def _numbers(policy) -> dict[str, str]:
    """The numeric attributes of a policy and its rule (but the horizon itself), for comparison."""
    out = {}
    objects = [("", policy)] + ([("rule.", policy.__dict__["rule"])] if "rule" in policy.__dict__ else [])
    for prefix, obj in objects:
        for k, v in vars(obj).items():
            if k == "horizon":
                continue
            if isinstance(v, (bool, int, float, np.integer, np.floating)):
                out[prefix + k] = repr(float(v))
            elif isinstance(v, np.ndarray) and v.dtype.kind in "fiub":
                out[prefix + k] = repr(v.astype(float).tolist())
    return out


def _single_objective(study) -> None:
    if len(study.directions) != 1:
        raise InvalidInputError(
            f"CKBSampler optimizes one objective; study {study.study_name!r} has {len(study.directions)}."
        )


def _categorical_error(name: str, dist: CategoricalDistribution) -> InvalidInputError:
    return InvalidInputError(
        f"CKBSampler models float and int parameters; {name!r} is categorical {list(dist.choices)!r}: encode "
        "it as an int parameter, or pass categorical='independent' to draw it at random outside the model."
    )


# ------------------------------------------------------------------------------------------ demo
def _demo_objective(trial) -> float:
    """Gardner et al. (2014)'s problem 1, the README's example: minimum -2 at (3 pi / 2, 0)."""
    x0 = trial.suggest_float("x0", 0.0, 6.0)
    x1 = trial.suggest_float("x1", 0.0, 6.0)
    trial.set_user_attr("g", [math.cos(x0) * math.cos(x1) - math.sin(x0) * math.sin(x1) - 0.5])
    return math.cos(2 * x0) * math.cos(x1) + math.sin(x0)


def _demo_constraints(trial) -> list[float]:
    return trial.user_attrs["g"]


def demo(
    n_trials: int = 30, storage: str | None = None, policy: str | None = None, seed: int = 0, n_jobs: int = 1
):
    """Run the constrained demo study (Gardner's problem 1) and return it. ``storage`` must not be a ckb
    study file (Optuna would add its tables to it), and a storage Optuna cannot open is a one-line error."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or not (n_jobs == -1 or n_jobs >= 1):
        raise InvalidInputError(f"n_jobs must be an integer >= 1 (or -1: every core), got {n_jobs!r}.")
    _not_a_ckb_study_file(storage)
    sampler = CKBSampler(policy=policy, constraints_func=_demo_constraints, seed=seed, n_trials=n_trials)
    try:
        study = optuna.create_study(
            sampler=sampler, storage=storage, study_name="ckb-demo", load_if_exists=True, direction="minimize"
        )
    except CKBError:
        raise
    except Exception as exc:  # sqlalchemy's and Optuna's errors for a bad URL or an unusable file
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        hint = "" if "://" in str(storage) else f" (a database URL is expected, e.g. sqlite:///{storage})"
        raise InvalidInputError(
            f"cannot open the Optuna storage {storage!r}{hint}: {type(exc).__name__}: {first[:200]}"
        ) from None
    left = n_trials - len(study.trials)
    if left > 0:
        study.optimize(_demo_objective, n_trials=left, n_jobs=n_jobs)
    return study


def _not_a_ckb_study_file(storage: Any) -> None:
    """Refuse ``sqlite:///PATH`` when PATH is a ckb study file (read-only check: the file is not changed)."""
    if not isinstance(storage, str) or not storage.startswith("sqlite:///"):
        return
    path = Path(storage[len("sqlite:///") :])
    if not path.is_file():
        return
    from ckb.studies import StudyStorage

    try:
        StudyStorage(path, read_only=True).close()
    except CKBError:
        return  # not a ckb study file: Optuna's own, or one Optuna will judge
    raise InvalidInputError(
        f"{storage!r} is a ckb study file (ckb.Optimizer's); Optuna would add its tables to it. Give "
        "another file; nothing was changed."
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m ckb.integrations.optuna", description="CKBSampler: ckb's policies in Optuna."
    )
    ap.add_argument("--demo", action="store_true", help="run a constrained Optuna study end to end")
    ap.add_argument("--trials", type=int, default=30, help="trials of the demo study (default 30)")
    ap.add_argument("--storage", default=None, help="an Optuna storage URL, e.g. sqlite:///demo.db (resumes)")
    ap.add_argument("--policy", default=None, help="an optimizer policy (default: the best-feasible goal's)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1, help="Optuna's n_jobs")
    args = ap.parse_args(argv)
    if not args.demo:
        ap.print_help()
        return 2
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            study = demo(args.trials, args.storage, args.policy, args.seed, args.jobs)
    except CKBError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    done = [t for t in study.trials if t.state == TrialState.COMPLETE]
    feasible = [t for t in done if all(v <= 0 for v in t.user_attrs["g"])]
    sampler = study.sampler
    state = sampler.policy_state(study) if isinstance(sampler, CKBSampler) else None
    print(
        f"Gardner's problem 1 (min cos(2 x0) cos(x1) + sin(x0) s.t. cos(x0 + x1) <= 0.5 on [0, 6]^2; "
        f"optimum -2 at (4.712, 0)), policy {sampler.policy_name!r}, {len(done)} trials "
        f"in {time.perf_counter() - start:.0f} s:"
    )
    if feasible:
        best = min(feasible, key=lambda t: t.value)
        print(
            f"  best feasible: trial {best.number}, f = {best.value:.4f} at "
            f"({best.params['x0']:.3f}, {best.params['x1']:.3f})"
        )
    else:
        print("  no feasible trial")
    print(f"  violating trials: {len(done) - len(feasible)} of {len(done)}")
    if state is not None:
        print(f"  policy decisions: {state['decisions']}, results folded into its state: {state['observed']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
