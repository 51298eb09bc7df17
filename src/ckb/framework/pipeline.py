"""One pipeline for every experiment kind: validate -> sweep -> summarize -> write -> plot -> finish.

Each step is a hook of the spec's kind (:class:`~ckb.framework.kinds.Kind`); the steps, their order and
the promises are the same for all: nothing runs (and no folder is created) before the whole spec, the
executor and the output folder are checked, the sweep reuses every finished task on disk and never
overwrites a task of another configuration (:func:`ckb.runner.sweep.run_sweep`), and the summary is
written before plots are drawn, so an interrupted or failing report loses no run.

An output folder holds the results of one experiment: ``OUT/spec.json`` (:data:`SPEC_RECORD`, written
before the sweep starts) records the spec they come from. A later run into that folder with a spec that
differs in what determines the results (anything but :attr:`SpecBase.NOT_RESULTS
<ckb.framework.spec.SpecBase.NOT_RESULTS>`: names, prose, the report's layout, the number of trials) is
refused before anything runs (:func:`check_results_folder`), so results of two experiments are never
mixed and a summary or plot is never replaced by another experiment's; the same spec resumes. A folder
written before this record existed is checked against the spec in its ``summary.json`` (``settings``).
A run refused by the sweep before any task was done or reused puts the record back as it was, so a refused
spec never claims the folder, and a folder holding only a record (a run killed before its first task
finished) holds no results: the next run, of any spec, replaces that record. A file the run would write
is never taken from someone else: in a folder no record claims, an existing ``summary.json`` that is not
a ckb summary, or any file the kind writes (:meth:`Kind.outputs <ckb.framework.kinds.Kind.outputs>`), is
refused before anything runs, and so is a folder (or other non-file) where a file is written, or a file
where the traces go (:func:`check_run_folder`)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ckb._validation import short_repr
from ckb.errors import CKBError
from ckb.framework.kinds import kind_of
from ckb.framework.spec import DEFAULT_KIND

#: the file in an output folder that records the spec its results come from
SPEC_RECORD = "spec.json"
#: what :data:`SPEC_RECORD` says a folder holds when :func:`run_pipeline` wrote it (a caller that lays out
#: a folder otherwise, e.g. a sweep with a folder per setting, records its own ``layout``)
EXPERIMENT = "single run"
#: what :data:`SPEC_RECORD` says a folder of ``ckb benchmark constrained``
#: (:func:`ckb.benchmarking.constrained.run_benchmark`) holds: runs of any methods, problems and seeds,
#: each checked by the file it is stored in, so the record names no spec; a ``summary.json`` with
#: ``runs_executed`` and no record is such a folder written before the record existed
BENCHMARK_RUNS = "constrained benchmark"


def _conflict(message: str) -> CKBError:
    """A :class:`ckb.runner.sweep.ResultsFolderConflictError` (so a :class:`SweepConflictError` too)."""
    from ckb.runner.sweep import ResultsFolderConflictError

    return ResultsFolderConflictError(message)


def check_output_dir(out: str | Path) -> Path:
    """``out`` if results can be saved there, checked before anything is computed: it is a folder or can
    be created (its nearest existing ancestor is a folder), and a file can be created in it (or in that
    ancestor) and in every existing folder of traces under it; else :class:`CKBError` naming it."""
    import tempfile

    if isinstance(out, str) and not out.strip():  # Path("") is the working folder: never meant
        raise CKBError(f"out must be a folder path, got {out!r}; nothing was computed.")
    out = Path(out)
    probe = out
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise CKBError(
            f"output folder {str(out)!r}: {str(probe)!r} is a file, expected a folder (or a path to create)."
        )
    folders = [probe]
    traces = out / "traces"
    if (traces.exists() or traces.is_symlink()) and not traces.is_dir():
        raise CKBError(
            f"output folder {str(out)!r}: {traces} is a file, expected the folder of traces; nothing was "
            "computed. Use another --out, or move that file away."
        )
    if traces.is_dir():
        folders += [traces] + [p for p in sorted(traces.iterdir()) if p.is_dir()]
    for folder in folders:
        try:
            with tempfile.TemporaryFile(dir=folder, prefix=".ckb-write-check-"):
                pass
        except OSError as exc:
            raise CKBError(
                f"output folder {str(out)!r} is not writable ({folder}: {exc.strerror or exc}); nothing was "
                "computed. Choose another --out or fix its permissions."
            ) from None
    return out


def _plain(obj: Any) -> Any:
    """``obj`` as it reads back from JSON (tuples as lists, other values as text), for comparing."""
    return json.loads(json.dumps(obj, default=str))


def _results_identity(spec_dict: dict[str, Any], not_results, per_algorithm=()) -> dict[str, Any]:
    """The part of a spec table that determines the results (its kind included): without the fields
    ``not_results``, nor the keys ``per_algorithm`` of each ``algorithms`` table."""
    identity = {k: v for k, v in spec_dict.items() if k not in not_results}
    identity["kind"] = spec_dict.get("kind", DEFAULT_KIND)
    algorithms = identity.get("algorithms")
    if per_algorithm and isinstance(algorithms, dict):
        identity["algorithms"] = {
            label: {k: v for k, v in body.items() if k not in per_algorithm}
            if isinstance(body, dict)
            else body
            for label, body in algorithms.items()
        }
    return _plain(identity)


def _same(a: Any, b: Any) -> bool:
    """Equal as the configuration hash sees them: by their JSON text, so 3 and 3.0 differ (a trace
    computed with one is refused for the other, :meth:`ckb._config.SeededConfig.config_hash`)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _differences(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    """Where the spec tables ``old`` (the folder's) and ``new`` differ, as dotted field names."""
    out = []
    for key in list(new) + [k for k in old if k not in new]:
        name = f"{prefix}{key}"
        if key not in old:
            out.append(f"{name} (only in this spec)")
        elif key not in new:
            out.append(f"{name} (only in the folder's)")
        elif isinstance(old[key], dict) and isinstance(new[key], dict):
            out += _differences(old[key], new[key], f"{name}.")
        elif not _same(old[key], new[key]):
            typed = "; the number's type counts: write it as there" if old[key] == new[key] else ""
            out.append(f"{name} ({short_repr(old[key], 40)} there, {short_repr(new[key], 40)} here{typed})")
    return out


def _describe(old: dict[str, Any], new: dict[str, Any], limit: int = 4) -> str:
    """At most ``limit`` differences, taken in turn from each differing top-level field."""
    groups = [_differences({k: old[k]} if k in old else {}, {k: new[k]} if k in new else {}) for k in new]
    groups += [_differences({k: old[k]}, {}) for k in old if k not in new]
    groups = [g for g in groups if g]
    total, shown = sum(len(g) for g in groups), []
    while groups and len(shown) < limit:
        shown += [g.pop(0) for g in groups][: limit - len(shown)]
        groups = [g for g in groups if g]
    return "; ".join(shown) + (f"; and {total - len(shown)} more" if total > len(shown) else "")


def _holds_results(out: Path) -> bool:
    """Whether ``out`` holds anything but :data:`SPEC_RECORD` files (in it or in its subfolders) and empty
    folders: a trace, a run, a summary, or any other file. A run killed before its first task finished
    leaves only its record, which claims no results."""
    for root, dirs, files in os.walk(out):
        if any(f != SPEC_RECORD for f in files) or any(os.path.islink(os.path.join(root, d)) for d in dirs):
            return True
    return False


def _stored_record(out: Path) -> tuple[str, dict[str, Any] | None, Path] | None:
    """``(layout, spec table or None when unknown, the file read)`` of what ``out`` holds; None for a
    folder that holds no recorded results (none at all, or only a ckb record of a run that finished no
    task: that record, ckb's own, is replaced by the next run's)."""
    record = out / SPEC_RECORD
    if record.exists():
        try:
            data = json.loads(record.read_text())
            if not isinstance(data, dict):  # before, a list said "list indices must be integers or slices"
                raise ValueError(
                    f"a JSON {type(data).__name__}, expected an object {{'layout': ..., 'spec': ...}}"
                )
            layout, spec = data["layout"], data["spec"]
            if not isinstance(layout, str) or not (spec is None or isinstance(spec, dict)):
                raise ValueError("expected {'layout': text, 'spec': table}")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            why = f"no {exc.args[0]!r} field" if isinstance(exc, KeyError) else exc  # not a bare "'layout'"
            raise _conflict(
                f"output folder {str(out)!r}: {record} does not say which spec its results come from ({why}); "
                "nothing was run. Use another --out, or remove that file if the results there are this spec's."
            ) from None
        return (layout, spec, record) if _holds_results(out) else None
    summary = out / "summary.json"
    if summary.is_file():  # a folder written before the record existed: its summary has the spec
        try:
            data = json.loads(summary.read_text())
        except (OSError, ValueError) as exc:
            data, why = None, f"not readable as JSON: {exc}"
        else:
            why = "no 'settings' (the spec) and no benchmark runs"
        if not isinstance(data, dict) or not (
            isinstance(data.get("settings"), dict) or "runs_executed" in data
        ):
            raise _conflict(
                f"output folder {str(out)!r}: {summary} is not a ckb summary ({short_repr(why, 80)}) and "
                f"no {SPEC_RECORD} says the folder holds ckb results; nothing was run. Use another --out, or "
                "move that file away."
            )
        if isinstance(data.get("settings"), dict):
            return EXPERIMENT, data["settings"], summary
        return BENCHMARK_RUNS, None, summary  # a benchmark's summary: no spec, its runs
    return None


def check_outputs(out: Path, names, recorded: bool) -> None:
    """Refuse (:class:`CKBError`, one line) to run into ``out`` when a file the run writes (``names``,
    relative to ``out``: :data:`SPEC_RECORD` and the kind's :meth:`~ckb.framework.kinds.Kind.outputs`)
    is a folder or another non-file there, or, in a folder no ckb record claims (``recorded`` False), is
    already a file: it is not ckb's to replace. Reads only; called before anything runs."""
    for name in [SPEC_RECORD, *names]:
        path = out / name
        if not (path.exists() or path.is_symlink()):
            continue
        if not path.is_file() or path.is_symlink():
            raise CKBError(
                f"output folder {str(out)!r}: {path} is not a regular file, but the run writes a file there; "
                "nothing was run. Use another --out, or move it away."
            )
        if not recorded:
            raise CKBError(
                f"output folder {str(out)!r} holds {name}, which the run would replace, and no {SPEC_RECORD} "
                "says the folder holds ckb results; nothing was run. Use another --out, or move that file away."
            )


def check_results_folder(spec, out: str | Path, layout: str = EXPERIMENT) -> None:
    """Refuse (:class:`~ckb.runner.sweep.ResultsFolderConflictError`, one line naming the folder and what
    differs) an output folder ``out`` that holds results of another experiment: its recorded spec
    (:data:`SPEC_RECORD`, else its ``summary.json``'s ``settings``) differs from ``spec`` in a field that
    determines the results (not in ``spec.NOT_RESULTS``), or it holds another ``layout``. A missing or
    empty folder, a folder holding only a record (:func:`_stored_record`), or the same spec, passes (the
    run resumes); ``spec`` None checks the layout only. Reads only; called before anything runs."""
    out = Path(out)
    stored = _stored_record(out) if out.is_dir() else None
    if stored is None:
        return
    had_layout, had_spec, source = stored
    if had_layout != layout:
        raise _conflict(
            f"output folder {str(out)!r} holds the results of a {had_layout} ({source.name}), not of a "
            f"{layout}. Nothing was run or written. Use another --out, or remove that folder to start over."
        )
    if had_spec is None or spec is None:
        return  # unknown spec: the sweep still refuses any task stored with another configuration
    not_results = getattr(spec, "NOT_RESULTS", ())
    per_algorithm = getattr(spec, "NOT_RESULTS_PER_ALGORITHM", ())
    view = type(spec).results_view
    old = _results_identity(view(had_spec), not_results, per_algorithm)
    new = _results_identity(view(spec.to_dict()), not_results, per_algorithm)
    if not _same(old, new):
        name = had_spec.get("name")
        whose = (
            f"a different configuration of {name!r} (recorded in {source.name})"
            if name == spec.to_dict().get("name")
            else f"another experiment ({name!r}, recorded in {source.name}) with a different configuration"
        )
        raise _conflict(
            f"output folder {str(out)!r} holds the results of {whose}: {_describe(old, new)}. Nothing was "
            "run or written. Use another --out, or remove that folder to start over."
        )


def check_run_folder(spec, out: str | Path) -> None:
    """:func:`check_results_folder` and :func:`check_outputs` for a run of ``spec`` (its kind's outputs)
    into ``out``: reads only, before anything runs."""
    check_results_folder(spec, out)
    if Path(out).is_dir():
        check_outputs(Path(out), kind_of(spec).outputs(spec), recorded=holds_record(out))


def holds_record(out: str | Path) -> bool:
    """Whether ``out`` holds a record of ckb results (:data:`SPEC_RECORD`, or a ckb ``summary.json`` of a
    folder written before that record existed)."""
    out = Path(out)
    return (out / SPEC_RECORD).exists() or (out / "summary.json").is_file()


def record_spec(spec, out: str | Path, layout: str = EXPERIMENT) -> None:
    """Write :data:`SPEC_RECORD` under ``out``: the spec (``to_dict``) its results come from (``spec``
    None: a ``layout`` whose record names no spec, e.g. :data:`BENCHMARK_RUNS`)."""
    from ckb.io import atomic_write

    kind, table = (None, None) if spec is None else (spec.kind, spec.to_dict())
    text = json.dumps({"layout": layout, "kind": kind, "spec": table}, indent=2, default=str)
    atomic_write(Path(out) / SPEC_RECORD, lambda fh: fh.write(text.encode()))


def sweep_recorded(
    sweep: Callable, spec, out: Path, on_done: Callable | None, layout: str = EXPERIMENT
) -> Any:
    """``sweep(done)`` (``done``: the ``on_done`` to pass on) with :data:`SPEC_RECORD` written first (an
    interrupted run's tasks are recorded as this spec's), and put back as it was if the sweep fails before
    any task is done or reused (e.g. a stored task of another configuration): a refused run never claims
    the folder for its spec."""
    from ckb.io import atomic_write

    record = out / SPEC_RECORD
    before = record.read_bytes() if record.is_file() else None
    touched = []

    def done(*args):
        touched.append(args)
        if on_done is not None:
            on_done(*args)

    record_spec(spec, out, layout)
    try:
        return sweep(done)
    except BaseException:
        if not touched:
            if before is None:
                record.unlink(missing_ok=True)
            else:
                atomic_write(record, lambda fh: fh.write(before))
        raise


def _sweep_recorded(kind, spec, out: Path, on_done: Callable | None, **options: Any) -> Any:
    """``kind.sweep`` under :func:`sweep_recorded`."""
    return sweep_recorded(lambda done: kind.sweep(spec, out, on_done=done, **options), spec, out, on_done)


def _say_fewer_trials(out: Path, spec) -> None:
    """Warn (one line) when the summary about to be replaced covered more trials than this run's: the
    number of trials does not determine the results, so a run with fewer resumes the folder and its
    summary covers only those (the other traces stay on disk)."""
    import warnings

    from ckb.runner.sweep import SweepWarning

    try:
        had = json.loads((out / "summary.json").read_text()).get("trials")
    except (OSError, ValueError, AttributeError):
        return
    now = getattr(spec, "trials", None)
    if isinstance(had, int) and isinstance(now, int) and had > now:
        warnings.warn(
            f"{out / 'summary.json'} covered {had} trials and now covers {now} (--trials {now}); the traces of "
            f"the others are kept: run with --trials {had} to summarize them all again (nothing is recomputed).",
            SweepWarning,
            stacklevel=3,
        )


def run_pipeline(
    spec,
    out: str | Path,
    *,
    workers: int | None = None,
    executor: str = "process",
    executor_options: Mapping[str, Any] | None = None,
    on_done: Callable | None = None,
    plots: bool = True,
) -> dict[str, Any]:
    """Validate ``spec``, ``executor`` and ``out`` (:func:`check_output_dir`, :func:`check_results_folder`),
    record the spec under ``out``, run every task not yet on disk there, and write its report.

    ``executor``: ``process``, ``serial`` or ``ray`` (``executor_options``: ``address``, ``runtime_env``);
    ``on_done(task, skipped)`` is called once per task (``task.algorithm``, ``task.trial``: for progress
    bars). Returns the summary (also written under ``out``), with ``plots`` (their paths) if drawn.
    """
    from ckb.runner.executors import check_executor

    kind = kind_of(spec)
    check_executor(executor, **(executor_options or {}))
    spec.check_size()
    out = check_output_dir(out)
    spec.validate()  # a bad spec is named first, whatever the folder holds
    check_run_folder(spec, out)
    created = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CKBError(f"cannot create the output folder {str(out)!r}: {exc}") from None
    options = {"workers": workers, "executor": executor, "executor_options": executor_options}
    try:
        return _run_locked(kind, spec, out, on_done, plots, options)
    except BaseException:
        if created:  # a run that failed before writing anything (Ray unreachable) leaves no empty folder
            try:
                out.rmdir()
            except OSError:  # not empty: what the run wrote stays
                pass
        raise


def _run_locked(kind, spec, out: Path, on_done, plots: bool, options: dict[str, Any]) -> dict[str, Any]:
    """The part of :func:`run_pipeline` that writes into ``out``, under its :func:`folder_lock`."""
    with folder_lock(out):
        check_run_folder(spec, out)  # again: another run may have recorded its spec before the lock
        results = _sweep_recorded(kind, spec, out, on_done, **options)
        summary, curves = kind.summarize(spec, results)
        _say_fewer_trials(out, spec)
        with report_writes(out, "the summary"):
            kind.write(out, spec, summary)
        if plots:
            with report_writes(out, "the plots"):
                summary["plots"] = [str(p) for p in kind.plot(out, spec, summary, curves)]
        else:
            _say_stale_plots(out, kind.outputs(spec))
        with report_writes(out, "the report"):
            kind.finish(out, spec, summary)
    return summary


@contextmanager
def report_writes(
    out: Path,
    what: str,
    then: str = "the trials are saved there: fix the cause and re-run the same command to write it.",
):
    """An ``OSError`` while writing ``what`` under ``out`` after the computation (a full disk, a file the
    user may not replace) as one :class:`CKBError` line naming the file and the cause, then ``then`` (what
    is kept and how to write it). Before, it ended in a traceback of the PNG writer's internals, and
    nothing said that summary.json no longer matched the traces."""
    try:
        yield
    except OSError as exc:
        where = exc.filename2 or exc.filename
        raise CKBError(
            f"cannot write {what} under {str(out)!r} ({exc.strerror or exc}{f': {where}' if where else ''}); {then}"
        ) from None


def _say_stale_plots(out: Path, names) -> None:
    """With ``--no-plots``, warn (one line) when plots of an earlier run stay beside the new summary: they
    show what that run summarized, not this one's (say, fewer trials)."""
    import warnings

    from ckb.runner.sweep import SweepWarning

    old = sorted(n for n in names if n.endswith(".png") and (out / n).is_file())
    if old:
        warnings.warn(
            f"{out} still holds {len(old)} plot(s) of an earlier run ({old[0]}{', ...' if len(old) > 1 else ''}), "
            "which --no-plots left as they were: run without --no-plots to draw them from this summary.",
            SweepWarning,
            stacklevel=4,
        )


@contextmanager
def folder_lock(out: Path):
    """Hold an exclusive lock on the folder ``out`` while a run writes there; a second run into the same
    folder is refused at once, in one line. Before, two runs with different seeds into one folder could
    both finish, leaving a summary that mixed their trials, and the same command started twice ran every
    trial twice. An advisory ``flock`` on the folder itself (no file is added): the system releases it
    when the process ends, kill -9 included, so a stale lock never blocks a later run. Where the folder
    cannot be locked (no ``fcntl`` on Windows, a file system without ``flock``) runs are not locked."""
    try:
        import fcntl

        fd = os.open(out, os.O_RDONLY)
    except (ImportError, OSError):  # pragma: no cover - Windows, or a folder that cannot be opened so
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CKBError(
                f"output folder {str(out)!r} is in use by another ckb run; nothing was run. Wait for it to "
                "finish, or use another --out."
            ) from None
        except OSError:  # pragma: no cover - a file system without flock: run unlocked
            pass
        yield
    finally:
        os.close(fd)  # releases the lock


def check_folder_free(out: str | Path) -> None:
    """Refuse at once a folder another run holds (:func:`folder_lock`), before the command prints its
    header and progress bar; the run still takes the lock itself (this only looks). Not to be called
    while this process holds the lock."""
    out = Path(out)
    if out.is_dir():
        with folder_lock(out):
            pass
