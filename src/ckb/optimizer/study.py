r"""The study behind :class:`ckb.Optimizer`: its record, its transactions, its budget and its reports.

The optimizer is split as Optuna splits study, sampler and storage:

- :class:`~ckb.studies.StudyStorage` (:mod:`ckb.studies.storage`) is the SQLite file: tables, one
  transaction per operation, the fair queue of processes (:mod:`ckb.studies.turns`);
- :class:`Study` (this module) is one study in that file, as the optimizer sees it: its spec (the
  options that define it), the trials (history, pending ones, best feasible, metrics), the budget, and
  :meth:`Study.transact`, the only way the optimizer changes it;
- :class:`ckb.Optimizer` (:mod:`ckb.optimizer.core`) decides: it turns the trials into the policy's
  units, fits the models, wires the maximizer and calls the policy. It holds no record of its own:
  every decision starts from the state the study hands it and ends with the state it gives back.

**A transaction** (:meth:`Study.transact`) (1) waits for this process's turn at the study: first come,
first served among the processes sharing the file, so a worker that has just asked queues behind the
ones already waiting; (2) reads the trials and the latest stored state in one snapshot (a
:class:`Step`); (3) lets the optimizer decide and record its asks, tells, failures and new state on the
step; (4) writes them in one ``IMMEDIATE`` transaction that first checks that nothing changed the study
since (3) (:meth:`~ckb.studies.StudyStorage.revision`) and that the budget still holds; if something
did (a writer outside the queue), it goes back to (2). The write lock is held only for (4): deciding
(fitting, maximizing) happens outside it, so readers and other studies in the file are not held up.
A process killed at any moment leaves the study at its last completed transaction (every told result
and every recorded ask intact; its ticket in the queue is removed by the next waiter).

**The budget** is the number of trials: asked (by the optimizer) or told (a point nobody asked). An ask
is refused with :class:`BudgetExhaustedError` when no trial of the budget remains; the check sits in the
write transaction (4), so workers sharing a study never overshoot it, and ``metrics()["remaining"]``
(``budget`` minus the trials) is 0 exactly when the next ask would be refused. ``ask(k)`` with fewer
than ``k`` trials left asks the ones that remain. A tell is never refused for the budget: a result
is always kept.

**Violation metrics** use the vocabulary of :mod:`ckb.violation` on the observed constraint values:
``violation`` (soft, :math:`\|[\sum_s g(x_s)]^+\|_2`), ``positive_violation``
(:math:`\|\sum_s [g(x_s)]^+\|_2`), their ``_per_constraint`` sums and ``violating_evaluations``. The older
``cumulative_violation`` (:math:`\sum_s \sum_j [g_j(x_s)]^+`, an L1 norm no other report uses) and
``cumulative_violation_per_constraint`` (the same as ``positive_violation_per_constraint``) are kept
for existing code and warn (``DeprecationWarning``) when read.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import numpy as np

from ckb._validation import listed, short_repr
from ckb.errors import CKBError, InvalidInputError
from ckb.studies.storage import StudyFileError, StudyStorage, dumps, loads
from ckb.studies.turns import StudyBusyError, gone, process_mark
from ckb.violation import (
    euclidean_norm,
    positive_violation_per_constraint,
    soft_violation_per_constraint,
    violating_count,
)

T = TypeVar("T")

#: a transaction that found the study changed since its read starts again, at most this many times
_ATTEMPTS = 5


class BudgetExhaustedError(CKBError):
    """Every trial of the study's budget has been asked or told; nothing was recorded.

    ``ask`` raises it: a loop over workers ends with ``except ckb.BudgetExhaustedError: break``.
    """


class Metrics(dict):
    """The dict :meth:`ckb.Optimizer.metrics` returns; reading a deprecated key (``[]`` or ``get``) warns.

    The deprecated keys stay in the dict (``in``, iteration, ``json.dumps`` see them without a warning).
    """

    DEPRECATED: ClassVar[dict[str, str]] = {
        "cumulative_violation": (
            "an L1 sum of positive parts that no other ckb report uses; read 'positive_violation' "
            "(||sum_s [g(x_s)]+||_2) or 'violation' (soft: ||[sum_s g(x_s)]+||_2), see ckb.violation"
        ),
        "cumulative_violation_per_constraint": "it equals 'positive_violation_per_constraint'; read that",
    }

    def _warn(self, key: Any) -> None:
        if isinstance(key, str) and key in self.DEPRECATED:
            warnings.warn(
                f"metrics()[{key!r}] is deprecated: {self.DEPRECATED[key]}.", DeprecationWarning, stacklevel=3
            )

    def __getitem__(self, key: Any) -> Any:
        self._warn(key)
        return super().__getitem__(key)

    def get(self, key: Any, default: Any = None) -> Any:
        self._warn(key)
        return super().get(key, default)


class _Changed(Exception):
    """The study changed between a transaction's read and its write (internal: the transaction retries)."""


def is_design(trial: dict) -> bool:
    """Whether a trial is an initial-design point (source ``init``: asked from the design, or told at a
    design point that was not asked)."""
    return (trial.get("info") or {}).get("source") == "init"


def is_space_filling(trial: dict) -> bool:
    """Whether a trial is a design point or one of the Sobol points asked after the design while no
    result was in (source ``sobol``): the points the outcome units take their robust scales from."""
    return (trial.get("info") or {}).get("source") in ("init", "sobol")


def violation_spent(trials: list[dict], m: int) -> np.ndarray:
    r"""Per constraint, :math:`\sum_t [g_j(x_t)]^+` in raw units over the complete trials that are not
    initial-design points (what a violation budget is charged); pending and failed trials count
    nothing, and neither do the user's own points told before the study's first ask: data the user had
    before the run, as a design of theirs (charging them let one old violating measurement use up the
    budget before the search began). Design results told without an ask (results already on disk) do
    not start the run: before, a user's point told after one was charged and told before it was not.
    ``trials`` in number order."""
    spent = np.zeros(m)
    before_run = True
    for t in trials:
        before_run = before_run and not _asked(t)
        if t["state"] == "complete" and not is_design(t) and not before_run:
            spent += np.maximum(np.asarray(t["constraints"], dtype=float), 0.0)
    return spent


def _asked(trial: dict) -> bool:
    """Whether the optimizer asked the trial: the asking process is recorded (``asked_by``), or its
    source is neither the user's (told without an ask) nor the design (asked, or told at a design point
    not yet asked; a study written before ``asked_by`` has no mark on its asked design points)."""
    info = trial.get("info") or {}
    return "asked_by" in info or info.get("source") not in ("user", "init")


def numerics_totals(trials: list[dict], k: int = 5) -> dict[str, Any]:
    """Totals of the trials' ``info["numerics"]``: warnings while fitting and while maximizing the
    acquisition, failed fits, and the first ``k`` distinct messages."""
    out: dict[str, Any] = {"fit_warnings": 0, "acq_warnings": 0, "fit_failed": 0}
    messages: list[str] = []
    for t in trials:
        info = t.get("info") or {}
        num = info.get("numerics") or {}
        for key in out:
            out[key] += int(num.get(key, 0))
        if not num and info.get("fit_failed"):  # studies written before the numerics record
            out["fit_failed"] += 1
        messages += list(num.get("messages", []))
    out["messages"] = list(dict.fromkeys(messages))[:k]
    return out


def complete_arrays(trials: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``X`` (n, d), ``y`` (n,), ``c`` (n, m) of the complete trials, in trial order."""
    done = [t for t in trials if t["state"] == "complete"]
    if not done:
        return np.zeros((0, 0)), np.zeros(0), np.zeros((0, 0))
    X = np.stack([t["x"] for t in done])
    y = np.array([t["objective"] for t in done], dtype=float)
    c = np.stack([np.asarray(t["constraints"], dtype=float) for t in done])
    return X, y, c


class Step:
    """One transaction's view of the study: the trials and the state read at its start, and the changes
    the optimizer records on it (written together by :meth:`Study.transact`).

    ``trials`` follows the changes (a new ask is appended as pending, a tell completes its trial in
    place), so a decision sees what it has recorded so far. ``state`` is the latest stored state;
    set ``new_state`` to the state after this step (default: unchanged). ``number`` is the step's number.
    """

    def __init__(self, trials: list[dict], step: int, state: dict, revision: tuple, budget: int) -> None:
        self.trials = trials
        self.state = state
        self.new_state: dict | None = None
        self.number = step + 1
        self.revision = revision
        self.budget = budget
        self.ops: list[tuple] = []
        self._next = max((int(t["number"]) for t in trials), default=-1) + 1

    @property
    def remaining(self) -> int:
        """Trials of the budget not yet asked or told (counting this step's asks)."""
        return max(0, self.budget - len(self.trials))

    def check_budget(self) -> None:
        """Raise :class:`BudgetExhaustedError` if no trial of the budget remains."""
        if self.remaining == 0:
            pending = [int(t["number"]) for t in self.trials if t["state"] == "pending"]
            more = ""
            if pending:  # asks still out, maybe of a process that is gone: say which, and what to do
                more = (
                    f" {len(pending)} of them pending (trial(s) {listed(pending)}), asked by this or another process: "
                    "tell their results (opt.pending() lists them) or tell them as failed."
                )
            raise BudgetExhaustedError(
                f"the budget of {self.budget} evaluations is used ({len(self.trials)} trials asked or told); "
                f"nothing was asked.{more} To go past it, start a study with a larger budget."
            )

    def ask(self, x: np.ndarray, info: dict[str, Any], *, budgeted: bool = True) -> int:
        """Record an asked point as a pending trial; its number. ``budgeted``: refused once the budget
        is used (False: a point told without an ask, which is never refused)."""
        if budgeted:  # an ask: which process asked it, so that a pending ask of one that is gone shows
            self.check_budget()
            info = {**(info or {}), "asked_by": process_mark()}
        number = self._next
        self._next += 1
        self.trials.append({"number": number, "state": "pending", "x": x, "info": info})
        self.ops.append(("ask", number, x, info, budgeted))
        return number

    def tell(self, number: int, objective: float, constraints: np.ndarray, note: str = "") -> None:
        """Record the result of pending trial ``number`` (with the user's ``note``, if any)."""
        trial = self._pending(number)
        trial.update(state="complete", objective=float(objective), constraints=np.asarray(constraints))
        if note:
            trial["note"] = note
        self.ops.append(("tell", number, objective, constraints, note))

    def fail(self, number: int, note: str) -> None:
        """Record that the evaluation of pending trial ``number`` failed."""
        self._pending(number).update(state="failed", note=note)
        self.ops.append(("fail", number, note))

    def _pending(self, number: int) -> dict:
        trial = next(t for t in self.trials if t["number"] == number)
        if trial["state"] != "pending":
            raise InvalidInputError(f"trial {number} is already {trial['state']}; nothing was changed.")
        return trial


class Study:
    """One study of a study file, as :class:`ckb.Optimizer` sees it (see the module docstring).

    ``Study.open(storage, name, spec, ...)`` creates or resumes it; the spec's ``budget``, ``m`` and
    ``minimize`` define the budget and the reports.
    """

    def __init__(self, store: StudyStorage, name: str, spec: dict[str, Any], *, own_store: bool) -> None:
        self.store = store
        self.name = name
        self.spec = spec
        self.own_store = own_store
        self.budget = int(spec["budget"])
        self.m = int(spec["m"])
        self.minimize = bool(spec["minimize"])
        self.closed = False

    # ------------------------------------------------------------------------------ opening
    @staticmethod
    def storage(
        storage: str | Path | StudyStorage | None, *, create: bool = True
    ) -> tuple[StudyStorage, bool]:
        """``(store, own)``: the storage to use and whether the study opened it (and closes it)."""
        if isinstance(storage, StudyStorage):
            return storage, False
        if storage is None:
            return StudyStorage(":memory:"), True
        if not isinstance(storage, (str, os.PathLike)):
            raise InvalidInputError(
                f"storage must be a file path (str or pathlib.Path), a StudyStorage or None, got {storage!r} "
                f"({type(storage).__name__})."
            )
        return StudyStorage(storage, create=create), True

    @classmethod
    def open(
        cls,
        storage: str | Path | StudyStorage | None,
        name: str,
        spec: dict[str, Any],
        initial_state: Callable[[], dict[str, Any]],
        identity: tuple[str, ...],
        *,
        defaults: dict[str, Any] | None = None,
        upgrade: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        check: Callable[[StudyStorage, str, dict[str, Any]], None] | None = None,
    ) -> Study:
        """Create study ``name`` with ``spec`` and state ``initial_state()`` (step 0), or resume it if it
        exists (its stored ``identity`` options must equal ``spec``'s; ``defaults``: the value of an
        option a study written before it existed does not store; ``upgrade``: maps a stored spec to
        today's names before the comparison; ``check(store, name, stored spec)``: raises if the stored
        study may not be resumed). Everything is checked before anything is written: a refused study
        leaves the file as it was. A new study whose name differs from one in the file only in case,
        spaces, ``-`` or ``_`` is created with a warning naming that one (a typo would start afresh)."""
        store, own = cls.storage(storage)
        try:
            with store.atomic():
                names = store.study_names()
                if name in names:
                    stored = store.spec(name)
                    if check is not None and stored.get("kind") == spec.get("kind"):
                        check(store, name, stored)
                    stored = upgrade(stored) if upgrade is not None else stored
                    _check_spec(store, name, stored, spec, identity, defaults or {})
                else:
                    _warn_similar(store, name, names)
                    store.create_study(name, spec)
                    store.save_policy_state(name, 0, initial_state())
            return cls(store, name, spec, own_store=own)
        except BaseException:
            if own:
                store.close()
            raise

    def close(self) -> None:
        if self.own_store and not self.closed:
            self.store.close()
        self.closed = True

    def _check_open(self) -> None:
        if self.closed:
            path = str(self.store.path)
            again = (
                "an in-memory study is gone once closed (give storage= a file to keep one)"
                if path == ":memory:"
                else f"open it again with ckb.Optimizer.load({path!r}, {self.name!r})"
            )
            raise InvalidInputError(f"study {self.name!r} in {path} was closed; {again}.")

    # -------------------------------------------------------------------------- transactions
    def transact(self, decide: Callable[[Step], T]) -> T:
        """Run ``decide(step)`` on a snapshot taken in this process's turn and write what it recorded in
        one transaction (checked against changes since the snapshot, and against the budget); returns
        what ``decide`` returns. If ``decide`` raises, nothing is written."""
        self._check_open()
        with self.store.turn(self.name):
            for _ in range(_ATTEMPTS):
                step = self._snapshot()
                result = decide(step)
                try:
                    self._commit(step)
                except _Changed:
                    continue
                return result
        raise StudyBusyError(
            f"study {self.name!r} in {self.store.path} changed under {_ATTEMPTS} transactions in a row (a "
            "process writing to it without ckb.Optimizer?); nothing was changed."
        )

    def _snapshot(self) -> Step:
        with self.store.reading():
            trials = self.store.trials(self.name)
            step, state = self.latest_state()
            revision = self.store.revision(self.name)
        return Step(trials, step, state, revision, self.budget)

    def _commit(self, step: Step) -> None:
        with self.store.atomic():
            if self.store.revision(self.name) != step.revision:
                raise _Changed
            n = step.revision[1]
            for op in step.ops:
                if op[0] == "ask":
                    _, number, x, info, budgeted = op
                    if budgeted and n >= self.budget:  # the budget, checked where the ask is written
                        raise _Changed
                    if self.store.ask(self.name, x, info) != number:
                        raise _Changed
                    n += 1
                elif op[0] == "tell":
                    self.store.tell(self.name, op[1], op[2], op[3], note=op[4] or None)
                else:
                    self.store.fail(self.name, op[1], op[2])
            state = step.state if step.new_state is None else step.new_state
            self.store.save_policy_state(self.name, step.number, state)

    def latest_state(self) -> tuple[int, dict[str, Any]]:
        """``(step, state)``: the state the last transaction wrote."""
        self._check_open()
        latest = self.store.latest_policy_state(self.name)
        if latest is None or not isinstance(latest[1], dict):
            raise StudyFileError(
                f"study {self.name!r} in {self.store.path} has no stored optimizer state (the file is "
                "truncated or damaged, or the study was not written by ckb.Optimizer)."
            )
        return latest

    # ------------------------------------------------------------------------------ reports
    def trials(self, state: str | None = None) -> list[dict[str, Any]]:
        self._check_open()
        return self.store.trials(self.name, state=state)

    def history(self) -> list[dict[str, Any]]:
        """Every trial in number order, with ``feasible`` and ``source`` (see ``Optimizer.history``)."""
        out = []
        for t in self.trials():
            info = t.get("info") or {}
            feas = None if t["constraints"] is None else bool(np.all(t["constraints"] <= 0))
            out.append({**t, "feasible": feas, "source": info.get("source", "user"), "info": info})
        return out

    def pending(self) -> list[dict[str, Any]]:
        """``{"trial", "x", "asked_by", "gone"}`` per pending trial: the asking process's mark
        (:func:`ckb.studies.turns.process_mark`, None for a trial asked without one) and whether that
        process has ended (None: unknown, e.g. another host)."""
        out = []
        for t in self.trials(state="pending"):
            mark = (t.get("info") or {}).get("asked_by")
            out.append({"trial": t["number"], "x": t["x"], "asked_by": mark, "gone": gone(mark)})
        return out

    def best_feasible(self, trials: list[dict] | None = None) -> dict[str, Any] | None:
        """The best complete trial with every constraint <= 0 (the first of equal ones), or None."""
        best = None
        for t in self.trials(state="complete") if trials is None else trials:
            if t["state"] != "complete" or not np.all(t["constraints"] <= 0):
                continue
            y = t["objective"]
            if best is None or (y < best["objective"] if self.minimize else y > best["objective"]):
                best = {"x": t["x"], "objective": y, "constraints": t["constraints"], "trial": t["number"]}
        return best

    def metrics(self, trials: list[dict] | None = None) -> Metrics:
        """Counts, violations (:mod:`ckb.violation`), best feasible value, budget, violation budget and
        numerics of the trials (default: the study's now)."""
        trials = self.trials() if trials is None else trials
        _, y, c = complete_arrays(trials)
        g = c if len(c) else np.zeros((0, self.m))
        soft, pos = soft_violation_per_constraint(g), positive_violation_per_constraint(g)
        best = self.best_feasible(trials)
        return Metrics(
            evaluations=len(y),
            failed=sum(t["state"] == "failed" for t in trials),
            pending=sum(t["state"] == "pending" for t in trials),
            violating_evaluations=violating_count(g),
            violation=euclidean_norm(soft),
            violation_per_constraint=soft.tolist(),
            positive_violation=euclidean_norm(pos),
            positive_violation_per_constraint=pos.tolist(),
            cumulative_violation=float(pos.sum()),
            cumulative_violation_per_constraint=pos.tolist(),
            best_feasible=None if best is None else best["objective"],
            budget=self.budget,
            remaining=max(0, self.budget - len(trials)),
            **self._violation_budget(trials),
            numerics=numerics_totals(trials),
        )

    def _violation_budget(self, trials: list[dict]) -> dict[str, Any]:
        spent = violation_spent(trials, self.m)
        budget = self.spec.get("violation_budget")
        left = None if budget is None else np.maximum(np.asarray(budget, dtype=float) - spent, 0.0).tolist()
        return {
            "violation_budget": None if budget is None else [float(b) for b in budget],
            "violation_spent": spent.tolist(),
            "violation_budget_left": left,
        }


def _loose(name: str) -> str:
    return "".join(c for c in name.casefold() if c not in " -_\t")


def _warn_similar(store: StudyStorage, name: str, names: list[str]) -> None:
    """Warn that a new study ``name`` looks like one the file holds (the same up to case, spaces, ``-``
    and ``_``): a mistyped name starts a new, empty study instead of resuming."""
    if not isinstance(name, str):
        return
    similar = [n for n in names if isinstance(n, str) and _loose(n) == _loose(name)]
    if similar:
        warnings.warn(
            f"a new study {name!r} is created in {store.path}, which holds {' and '.join(map(repr, similar))} "
            f"(the same name but for case, spaces, '-' or '_'); to resume that one, pass "
            f"study_name={similar[0]!r}.",
            UserWarning,
            stacklevel=4,
        )


def _beyond_constants(stored_params: Any, given: Any, constants: Any) -> Any:
    """The policy parameters ``given`` without those the study did not pass but started with at that very
    value (its resolved ``policy_constants``): ``kappa=1.0`` written out where the study took the default
    1.0 resumes the same policy."""
    if not (isinstance(given, dict) and isinstance(stored_params, dict) and isinstance(constants, dict)):
        return given
    return {k: v for k, v in given.items() if k in stored_params or k not in constants or constants[k] != v}


def _check_spec(
    store: StudyStorage,
    name: str,
    stored: dict[str, Any],
    given: dict[str, Any],
    identity: tuple[str, ...],
    defaults: dict[str, Any],
) -> None:
    """The stored study must be an optimizer's, created with the same identity options (an option it
    does not store has its value in ``defaults``)."""
    if stored.get("kind") != "ckb.Optimizer":
        raise InvalidInputError(
            f"study {name!r} in {store.path} was not written by ckb.Optimizer; use another name."
        )
    for key in identity:
        a, b = loads(dumps(stored.get(key, defaults.get(key)))), loads(dumps(given.get(key)))
        if key == "policy_params":
            b = _beyond_constants(a, b, stored.get("policy_constants"))
        if a != b:
            raise InvalidInputError(
                f"study {name!r} in {store.path} was created with {key} = {short_repr(a, tail=' ...]')}, but this Optimizer was "
                f"given {key} = {short_repr(b, tail=' ...]')}. Pass the stored options to resume it (Optimizer.load(path, "
                f"{name!r}) reads them), or use another study_name."
            )
