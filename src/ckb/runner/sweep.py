"""The sweep every experiment kind runs: many tasks in parallel, each kept on disk when it finishes.

A *store* says where a task's result lives and what identifies its configuration: single- and
multi-agent trials are ``OUT/traces/<label>/trial-<k>.npz`` identified by the configuration hash and the
trial index in their metadata (:data:`TRACES`; the worker writes the trace; the hash covers the content
digest of every data file the problem reads, so a trace computed from other data, or filed under another
trial number, is never reused), the benchmark's runs are JSON records
(``ckb.benchmarking.constrained``; the driver writes what the worker returns). Before anything runs,
every task is checked against the disk (:func:`plan_sweep`): a result with the same identity is reused,
a missing one is done, and one of a *different* configuration stops the sweep with
:class:`SweepConflictError` naming the file; nothing is ever overwritten. A file the store cannot read
(a corrupt or foreign file: writes are atomic, so a crash leaves none) is redone, but not silently and
not by deleting it: just before the sweep runs it is renamed to ``<file>.corrupt`` (``.corrupt-1``, ...
if taken) and named in one :class:`SweepWarning` line. So an interrupted sweep re-run with the same
command loses nothing and redoes nothing.
"""

from __future__ import annotations

import functools
import os
import traceback
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from ckb._validation import one_line
from ckb.errors import CKBError
from ckb.io import load_state
from ckb.runner.executors import get_executor
from ckb.runner.metrics import final_metrics
from ckb.runner.trace import Trace
from ckb.runner.trial import Trial, TrialConfig


class SweepConflictError(CKBError, FileExistsError):
    """The output directory holds a task of a different configuration."""


class ResultsFolderConflictError(SweepConflictError):
    """The output directory holds the results of another experiment: its recorded spec differs in what
    determines the results (:func:`ckb.framework.pipeline.check_results_folder`)."""


class SweepWarning(UserWarning):
    """Something under the output directory needed attention but lost nothing (e.g. an unreadable
    result file kept aside and redone); the message is one line naming the file."""


class Store(Protocol):
    """Where a sweep keeps its tasks' results, and how it recognizes a finished one."""

    noun: str  # what a task is called in messages ("trial", "run")

    def path(self, out: Path, config) -> Path: ...

    def identity(self, config) -> Any:
        """What a stored result must match to be reused."""

    def stored(self, path: Path) -> Any:
        """The identity stored at ``path``; None when unreadable (the task is redone), or raise."""

    def task(self, config, path: Path) -> tuple:
        """The worker's (picklable) input."""

    def finish(self, path: Path, result: Any) -> None:
        """On the driver, after the worker returned ``result``."""


def trace_path(out: Path, config: TrialConfig) -> Path:
    """``OUT/traces/<label>/trial-<k>.npz``; a label that would leave ``OUT`` (a path separator, ``..``)
    is refused."""
    label = config.algorithm
    if not label or label in (".", "..") or "/" in label or "\\" in label or "\0" in label:
        raise CKBError(f"algorithm label {label!r} cannot name a folder under {out}: use a plain name.")
    return Path(out) / "traces" / label / f"trial-{config.trial:04d}.npz"


def _stored_meta(path: Path, trace_cls=None) -> dict | None:
    """The trace's ``meta`` (with its ``config_hash``), or None for a file that is not a readable trace
    (with ``trace_cls``: not a finished one, by ``trace_cls.check_finished``)."""
    try:
        state = load_state(path)
        meta = state["meta"]
        if trace_cls is not None:
            trace_cls.check_finished(state)
        return meta if isinstance(meta, dict) and "config_hash" in meta else None
    except Exception:  # unreadable, partial or inconsistent: redone (the file is kept aside)
        return None


def stored_hash(path: Path) -> str | None:
    meta = _stored_meta(path)
    return None if meta is None else meta["config_hash"]


def _stored_trial(meta: dict) -> int | None:
    config = meta.get("config")
    trial = config.get("trial") if isinstance(config, dict) else None
    return trial if isinstance(trial, int) else None


def make_folder(folder: Path, what: str) -> Path:
    """Create ``folder`` (and its parents); :class:`CKBError` (one line naming it) if a file stands in
    the way or it cannot be created."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise CKBError(
            f"{folder} is a file, expected {what}; nothing was run. Move that file away."
        ) from None
    except OSError as exc:
        raise CKBError(f"cannot create {folder} ({what}): {exc.strerror or exc}.") from None
    return folder


class TraceStore:
    """Trials (single- or multi-agent) as ``.npz`` traces written by the worker, identified by the
    configuration's ``config_hash()`` (a config needs ``algorithm``, ``trial``, ``config_hash()`` and
    ``to_dict()``; the worker gets ``(config dict, trace path)``). A stored trace whose arrays are not a
    finished trial's (``trace_cls.check_finished``: rounds missing, wrong shapes, non-finite values) is
    redone as an unreadable one (kept aside, one warning), never summarized."""

    noun = "trial"

    def __init__(self, trace_cls=Trace) -> None:
        #: the class whose ``check_finished(state)`` a stored trace must pass to be reused
        self.trace_cls = trace_cls

    def path(self, out: Path, config) -> Path:
        return trace_path(out, config)

    def identity(self, config) -> tuple[str, int]:
        return config.config_hash(), config.trial

    def stored(self, path: Path) -> tuple[str, int | None] | None:
        meta = _stored_meta(path, self.trace_cls)
        return None if meta is None else (meta["config_hash"], _stored_trial(meta))

    def explain(self, path: Path, config) -> str:
        """Why the trace at ``path`` is not ``config``'s (for the conflict message)."""
        meta = _stored_meta(path) or {}
        stored = meta.get("config") if isinstance(meta.get("config"), dict) else {}
        if _stored_trial(meta) != config.trial:
            return f"it records trial {_stored_trial(meta)}, not trial {config.trial}"
        want = getattr(config, "inputs", None) or {}
        had = stored.get("inputs") or {}
        for name in sorted(set(want) | set(had)):
            if want.get(name) != had.get(name):
                return (
                    f"the data file {name} changed since it was computed (SHA-256 {had.get(name)} then, "
                    f"{want.get(name)} now)"
                )
        mine = config.to_dict()
        changed = sorted(k for k in set(mine) | set(stored) if k != "trial" and mine.get(k) != stored.get(k))
        if changed:
            return "its " + ", ".join(f"{k} = {stored.get(k)!r} (now {mine.get(k)!r})" for k in changed[:3])
        return f"configuration hash {meta.get('config_hash')}, expected {config.config_hash()}"

    def task(self, config, path: Path) -> tuple[dict, str]:
        make_folder(path.parent, f"the folder of {config.algorithm!r}'s traces")
        return config.to_dict(), str(path)

    def finish(self, path: Path, result: Any) -> None:
        pass  # the worker saved the trace


TRACES = TraceStore()


def run_one(task: tuple[dict, str]) -> dict[str, float]:
    """Worker entry point: run one trial from its config dict and save its trace at ``path``."""
    config_dict, path = task
    trial = Trial(TrialConfig(**config_dict))
    trace = trial.run()
    trace.save(path)
    return final_metrics(trace)


def plan_sweep(configs: Sequence, out: str | Path, store: Store = TRACES) -> tuple[list, list]:
    """``(todo, reused)``: the configs to run as ``(config, path)`` pairs, and those finished with the
    same identity. Raises :class:`SweepConflictError` (before anything runs) for a stored result of
    another configuration."""
    todo, reused = [], []
    for cfg in configs:
        path = store.path(Path(out), cfg)
        stored = store.stored(path) if path.exists() else None
        if stored is None:
            todo.append((cfg, path))
            continue
        expected = store.identity(cfg)
        if stored != expected:
            why = store.explain(path, cfg) if hasattr(store, "explain") else f"{stored}, expected {expected}"
            raise SweepConflictError(
                f"{path} holds a {store.noun} of a different configuration ({why}); nothing was "
                "overwritten. Use another --out directory or remove that file."
            )
        reused.append(cfg)
    return todo, reused


def set_aside(path: Path, noun: str = "result") -> Path:
    """Rename the unreadable file ``path`` to ``<name>.corrupt`` (``.corrupt-1``, ``-2``, ... when taken,
    so an earlier one is never replaced) and warn (:class:`SweepWarning`, one line naming both); returns
    the new path. The task is then redone as if the file were missing."""
    path = Path(path)
    aside = path.with_name(f"{path.name}.corrupt")
    k = 0
    while aside.exists() or aside.is_symlink():
        k += 1
        aside = path.with_name(f"{path.name}.corrupt-{k}")
    try:
        os.rename(path, aside)
    except OSError as exc:
        raise CKBError(
            f"{path} cannot be read as a {noun} and cannot be kept aside as {aside.name} ({exc.strerror or exc}); "
            "move or remove it, then re-run."
        ) from None
    warnings.warn(
        f"{path} is not a readable {noun} (a corrupt or foreign file): kept aside as {aside}; the {noun} is "
        "run again.",
        SweepWarning,
        stacklevel=3,
    )
    return aside


class TaskFailedError(CKBError):
    """A task of a sweep raised: the message names the task and the error (type, message and where);
    the finished tasks stay on disk."""


def _guarded(worker: Callable, task: Any) -> tuple[bool, Any]:
    """``(True, worker(task))``, or ``(False, what went wrong)`` as one line (a :class:`CKBError`'s
    message; else the exception's type, message and the file and line it came from), so the driver can
    name the task that failed."""
    try:
        return True, worker(task)
    except Exception as exc:
        if isinstance(exc, CKBError):
            return False, one_line(exc)
        frames = traceback.extract_tb(exc.__traceback__)
        where = f", at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
        return False, f"{type(exc).__name__}: {one_line(exc)}{where}"


def _describe_task(cfg: Any, path: Path, noun: str) -> str:
    label, trial = getattr(cfg, "algorithm", None), getattr(cfg, "trial", None)
    return f"{noun} {trial} of {label!r}" if label is not None and trial is not None else f"{noun} {path}"


def execute(
    todo: list,
    worker: Callable,
    store: Store = TRACES,
    *,
    workers: int | None = None,
    executor: str = "process",
    executor_options: Mapping[str, Any] | None = None,
) -> Iterator[tuple[Any, Path, Any]]:
    """Run the ``(config, path)`` pairs of ``todo`` on the executor (one worker if there is one task);
    yield ``(config, path, worker result)`` as each finishes, after ``store.finish``. A task that raises
    stops the sweep with :class:`TaskFailedError`, one line naming it and its error; finished tasks stay."""
    ex = get_executor(executor, workers if len(todo) > 1 else 1, **(executor_options or {}))
    for _, path in todo:
        if path.exists() or path.is_symlink():  # unreadable (or a dangling link): kept aside, said, redone
            set_aside(path, store.noun)
    by_path = {str(path): (cfg, path) for cfg, path in todo}
    tasks = [store.task(cfg, path) for cfg, path in todo]
    for task, (ok, result) in ex.map_unordered(functools.partial(_guarded, worker), tasks):
        cfg, path = by_path[task[1]]
        if not ok:
            raise TaskFailedError(
                f"{_describe_task(cfg, path, store.noun)} failed ({result}); the finished {store.noun}s are "
                "kept: fix the cause and re-run the same command to resume."
            )
        store.finish(path, result)  # its atomic_write removed the temporaries a killed earlier run left
        yield cfg, path, result


def run_sweep(
    configs: Sequence,
    out: str | Path,
    *,
    workers: int | None = None,
    executor: str = "process",
    executor_options: Mapping[str, Any] | None = None,
    on_done: Callable[[Any, bool], None] | None = None,
    worker: Callable[[tuple], Any] = run_one,
    store: Store = TRACES,
) -> dict[tuple[str, int], Path]:
    """Run every config not already on disk; return ``{(algorithm, trial): path}`` for every config.

    ``executor_options`` go to the executor (``ray``: ``address``, ``runtime_env``).
    ``on_done(config, skipped)`` is called once per config (for progress bars). ``worker`` runs one task
    (``store.task(config, path)``) in a worker process: a picklable top-level function (the multi-agent
    harness passes its own).
    """
    folders = _trace_folders(configs, out, store)
    new = [f for f in folders if not f.exists()]
    todo, reused = plan_sweep(configs, out, store)
    for cfg in reused:
        if on_done:
            on_done(cfg, True)
    runs = execute(todo, worker, store, workers=workers, executor=executor, executor_options=executor_options)
    try:
        for cfg, _, _ in runs:  # a generator: the executor starts at the first result asked for
            if on_done:
                on_done(cfg, False)
    except BaseException:
        _remove_empty(new)  # a run that failed to start (Ray unreachable) leaves no empty trace folders
        raise
    return {(cfg.algorithm, cfg.trial): store.path(Path(out), cfg) for cfg in configs}


def _trace_folders(configs, out, store) -> list[Path]:
    """The folders the sweep's traces go in, and their parents below ``out``, deepest first."""
    out = Path(out)
    found = set()
    for cfg in configs:
        folder = store.path(out, cfg).parent
        while folder != out and out in folder.parents:
            found.add(folder)
            folder = folder.parent
    return sorted(found, key=lambda f: len(f.parts), reverse=True)


def _remove_empty(folders: list[Path]) -> None:
    """Remove those of ``folders`` (deepest first) that are empty; any other is left as it is."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            pass


def load_traces(paths: dict[tuple[str, int], Path], trace_cls=Trace) -> dict[str, list]:
    """Load traces (``trace_cls.load``) grouped by algorithm, the algorithms in the order ``paths`` first
    names them (a spec's order, as :func:`run_sweep` returns them), each one's traces in trial order.
    Before, the algorithms came out sorted by name, so summaries, tables and legends ignored the spec's
    order (the multi-agent kind kept it)."""
    out: dict[str, list] = {alg: [] for alg, _ in paths}
    for (alg, _), path in sorted(paths.items(), key=lambda kv: kv[0][1]):
        out[alg].append(trace_cls.load(path))
    return out
