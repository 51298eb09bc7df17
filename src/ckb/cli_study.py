"""``ckb study list|show|export``: inspect a SQLite study file written by :class:`ckb.Optimizer`.

``list FILE``: every study with its policy, dimensions, trial counts and best feasible value.
``show FILE NAME``: a table of the trials (a pending ask whose process on this host has ended noted as
such), a summary (evaluations, violations, best feasible value, the
violation budget and what is left of it, and the numerical trouble of the fits and acquisition
maximizations: warnings counted per trial by :class:`ckb.Optimizer`, failed fits, the first messages)
and a PNG plot of the best feasible value and the violation
(:mod:`ckb.violation`: soft ``violation`` and ``positive_violation``, on the observed values) against
evaluations (``--plot PATH``: the format follows PATH's extension, one matplotlib writes, and a PATH
without one gets ``.png``: the path printed is the one written). The plot is written first, so a reader
that stops early (``| head``) still gets it.

The default plot path, beside FILE: ``FILE-NAME.png`` (FILE without its extension) when NAME holds only
letters, digits, ``.``, ``_`` and ``-`` and the file name is at most 160 bytes; otherwise
``FILE-SAFE-HASH.png``, SAFE the name with every other character replaced by ``_`` (cut short if need
be) and HASH 8 hex digits of the file's and the study's names: studies ``a b``, ``a/b`` and ``a_b`` get
three files, and a 300-character name a short one. The PNG records which study it shows; at the default
path, ``show`` replaces only its own earlier plot of this study (or an empty file): anything else there
(a user's file, an older plot, the plot of another study whose default path is the same, e.g. ``x.db``
study ``y-z`` and ``x-y.db`` study ``z``) is refused with one line, and ``--plot PATH`` writes it
elsewhere or replaces it, as asked. In a folder the user may not write (a shared or read-only study),
the default plot is skipped with a line saying so, and the table is shown all the same.
``export FILE NAME --out x.csv``: every trial as CSV (stdout without ``--out``).

Reading only: the file is opened with SQLite's ``mode=ro`` (:class:`~ckb.studies.StudyStorage` with
``read_only=True``), so none of these commands creates, converts or changes it (it may belong to running
workers, or not be a ckb file at all). A missing file, a file that is not a ckb study (a foreign SQLite
database, not SQLite, truncated or damaged) and an unknown study name are one-line errors naming the
file or the name (exit code 2), and so is a damaged trial row or spec (naming the trial and the field).
Files written (plot, CSV) get the usual mode: ``0o666`` minus the umask; a ``--plot`` or ``--out`` that
is the study file itself (or its ``-wal``/``-shm`` file, by any spelling or link) is refused before
anything is read or written, as is a plot format matplotlib cannot write, a device, FIFO or socket, an
existing SQLite database (another study file, say) and, for ``--out``, an existing file that is not a CSV
export. Both are written to a temporary file renamed into place: an interrupted or failed write leaves the
old file as it was. A study file we may not read, and a study in a directory we may not write to, are
read as :class:`~ckb.studies.StudyStorage` says (a one-line error naming the file and the cause, or an
``immutable`` read). A stdout closed by its reader (``| head``) ends the command quietly with exit code
141, as a command killed by SIGPIPE.
"""

from __future__ import annotations

import csv
import errno
import hashlib
import io
import math
import os
import re
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import numpy as np
import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ckb._validation import one_line
from ckb.cli_errors import fail as _fail
from ckb.errors import CKBError, DataFileError
from ckb.io import atomic_write
from ckb.studies.turns import gone

study_app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Inspect a study file of ckb.Optimizer: list its studies, show one (table + plot), export CSV.",
    pretty_exceptions_enable=False,
)


#: the exit code when the reader of stdout goes away early (``ckb study show ... | head``): that of a
#: command killed by SIGPIPE, as ``cat`` or ``grep`` would give
PIPE_CLOSED = 141


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so that Python's last flush of what could not be written is quiet."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # no real file descriptor (a test's captured stdout)
        pass


def _pipe_closed() -> NoReturn:
    """stdout was closed by its reader: quiet it (:func:`_quiet_stdout`) and exit with
    :data:`PIPE_CLOSED`, nothing on stderr."""
    _quiet_stdout()
    raise typer.Exit(PIPE_CLOSED)


class _Console(Console):
    """rich's console, but a closed stdout ends the command as :func:`_pipe_closed` says (rich's own
    handling exits with 1, which reads as a failure)."""

    def on_broken_pipe(self) -> None:
        _pipe_closed()


def _out(width: int | None = None) -> Console:
    """stdout's console: created per command, so the terminal's width (COLUMNS) is read when it runs."""
    return _Console(width=width)


#: ``readable=False``: an unreadable file is the storage's one-line error (naming the permission), not
#: click's usage box
FileArg = Annotated[Path, typer.Argument(help="The SQLite study file.", readable=False)]
NameArg = Annotated[str, typer.Argument(help="The study's name (see `ckb study list FILE`).")]


def _open(path: Path):
    """The study file, read-only (a missing or foreign file is a :class:`~ckb.studies.StudyFileError`)."""
    from ckb.studies import StudyStorage

    return StudyStorage(path, read_only=True)


def _study(file: Path, name: str) -> tuple[dict[str, Any], list[dict]]:
    """The spec and the trials of study NAME in FILE (read-only); a one-line error if either is missing."""
    try:
        with _open(file) as store:
            spec, trials = store.spec(name), store.trials(name)
    except (CKBError, KeyError) as exc:
        _fail(exc)
    _newer_note(file, name, spec)
    return spec, trials


def _newer_note(file: Path, name: str, spec: dict[str, Any]) -> None:
    """A one-line warning on stderr when an optimizer study's spec is one this ckb cannot read faithfully
    (a newer ckb wrote it: :func:`ckb.optimizer.core.stored_spec_problem`): it is shown as this ckb reads
    it, and ckb.Optimizer refuses to resume it."""
    if spec.get("kind") != "ckb.Optimizer":
        return
    from ckb.cli_errors import err
    from ckb.optimizer.core import stored_spec_problem

    problem = stored_spec_problem(spec)
    if problem is not None:
        err.print("[bold yellow]warning:[/]", end=" ", soft_wrap=True)
        err.print(
            f"study {name!r} in {file} {problem}; shown as this ckb reads it (ckb.Optimizer will not resume it).",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def _minimize(spec: dict[str, Any]) -> bool:
    return bool(spec.get("minimize", spec.get("direction") == "minimize"))


def _curves(trials: list[dict], minimize: bool, m: int) -> dict[str, np.ndarray]:
    """Per complete evaluation (in trial order): best feasible value so far (NaN before the first
    feasible one), and :func:`ckb.violation.violation_curves` of the observed constraint values:
    ``violation`` (soft), ``positive_violation``, ``violating`` (count)."""
    from ckb.violation import POSITIVE_VIOLATION, VIOLATING, VIOLATION, violation_curves

    best, g = [], []
    b = math.nan
    for t in trials:
        if t["state"] != "complete":
            continue
        c = np.asarray(t["constraints"], dtype=float)
        if np.all(c <= 0):
            y = float(t["objective"])
            if math.isnan(b) or (y < b if minimize else y > b):
                b = y
        best.append(b)
        g.append(c)
    curves = violation_curves(np.array(g).reshape(len(g), m))
    return {
        "best": np.array(best),
        "violation": curves[VIOLATION],
        "positive_violation": curves[POSITIVE_VIOLATION],
        "violating": curves[VIOLATING],
    }


#: the longest default plot file name (bytes): atomic_write's temporary name adds about 15 to it, and
#: file systems allow 255
PLOT_NAME_MAX = 160
_SAFE_NAME = re.compile(r"[A-Za-z0-9._-]+")


def _plot_tag(file: Path, name: str) -> str:
    """Which study a plot shows, written into the PNG (its ``ckb-study`` text chunk): a hash of the study
    file's name and the study's name."""
    return hashlib.sha256(f"{file.name}\0{name}".encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _plot_name(file: Path, name: str) -> Path:
    """The default plot path, beside the file: ``FILE-NAME.png`` (FILE without its extension) when NAME
    is made only of letters, digits, ``.``, ``_`` and ``-`` and the whole is at most
    :data:`PLOT_NAME_MAX` bytes long; otherwise ``FILE-SAFE-HASH.png``: SAFE the name with every other
    character replaced by ``_``, cut short if need be, and HASH 8 hex digits of the file's and the study's
    names, so studies ``a b``, ``a/b`` and ``a_b`` get three files and a long name a short one."""
    plain = f"{file.stem}-{name}.png"
    if _SAFE_NAME.fullmatch(name) and len(os.fsencode(plain)) <= PLOT_NAME_MAX:
        return file.parent / plain
    head = f"{file.stem}-{re.sub(r'[^A-Za-z0-9._-]', '_', name)}"[:PLOT_NAME_MAX]
    while len(os.fsencode(head)) > PLOT_NAME_MAX - 13:  # a long FILE: its name's bytes count
        head = head[:-1]
    return file.parent / f"{head}-{_plot_tag(file, name)[:8]}.png"


def _png_tag(path: Path) -> str | None:
    """The ``ckb-study`` text chunk of a PNG (:func:`_plot_tag`; matplotlib writes it before the image
    data), or None for a PNG without one and a file that is not a PNG."""
    with path.open("rb") as fh:
        head = fh.read(8192)
    if not head.startswith(b"\x89PNG\r\n\x1a\n"):
        return None
    i = 8
    while i + 8 <= len(head) and head[i + 4 : i + 8] != b"IDAT":
        size, kind = int.from_bytes(head[i : i + 4], "big"), head[i + 4 : i + 8]
        key, _, value = head[i + 8 : i + 8 + size].partition(b"\0")
        if kind == b"tEXt" and key == b"ckb-study":
            return value.decode("latin-1")
        i += 12 + size
    return None


def _ours(out: Path, file: Path, name: str) -> None:
    """The default plot path (the user named no file) may only replace what ``ckb study show`` wrote there
    for this study (its PNG's :func:`_plot_tag`) or an empty file: anything else is refused, one line."""
    try:
        if out.is_symlink() or out.is_dir():
            what = "a symbolic link" if out.is_symlink() else "a directory"
        elif not out.exists() or out.stat().st_size == 0:
            return
        else:
            tag = _png_tag(out)
            if tag == _plot_tag(file, name):
                return
            what = "the plot of another study" if tag else f"not a plot ckb wrote for study {name!r}"
    except OSError as exc:
        what = f"not readable ({exc.strerror or exc})"
    _fail(
        DataFileError(
            f"the default plot path {str(out)!r} exists and is {what}: pass --plot PATH to write the plot "
            "elsewhere (or to replace that file), or delete it first; nothing was written."
        )
    )


#: errors of a folder one may not write: permission, read-only file system
_NOT_WRITABLE = (errno.EACCES, errno.EPERM, errno.EROFS)


def _plot_target(file: Path, name: str, plot: Path | None) -> tuple[Path, str]:
    """The file the plot goes to and its format, checked before any work: ``--plot`` by matplotlib's
    rule (no extension: PNG, with ``.png`` appended) or the default :func:`_plot_name`; a format
    matplotlib cannot write and the study file itself are one-line errors."""
    ext = "" if plot is None else os.path.splitext(str(plot))[1][1:]
    if plot is None:
        out, fmt = _plot_name(file, name), "png"
    elif not ext:
        out, fmt = Path(str(plot).rstrip(".") + ".png"), "png"
    else:
        from matplotlib.figure import Figure

        formats = Figure().canvas.get_supported_filetypes()
        if ext.lower() not in formats:
            _fail(
                DataFileError(
                    f"cannot write the plot {str(plot)!r}: matplotlib does not write '.{ext}' files (it writes "
                    f"{', '.join('.' + f for f in sorted(formats))}); nothing was written."
                )
            )
        out, fmt = plot, ext.lower()
    _not_the_study(file, out)
    _not_foreign(out)
    if plot is None:
        _ours(out, file, name)
    return out, fmt


def _not_the_study(file: Path, out: Path) -> None:
    """Refuse to write ``out`` if it is the study file (or its ``-wal``/``-shm``/``-journal`` file): the
    study would be lost."""
    try:
        study, target = file.resolve(), out.resolve()
        suffix = next((s for s in ("", "-wal", "-shm", "-journal") if target == Path(f"{study}{s}")), None)
        if suffix is None and target.exists() and file.exists() and os.path.samefile(target, study):
            suffix = ""  # a hard link to it
    except (OSError, RuntimeError):  # cannot be resolved: writing it fails on its own
        return
    if suffix is not None:
        what = f"the {suffix} file of the study file" if suffix else "the study file"
        _fail(
            DataFileError(f"{str(out)!r} is {what} {str(file)!r}: choose another path; nothing was written.")
        )


def _not_foreign(out: Path, csv_export: bool = False) -> None:
    """Refuse to replace an existing file that holds something else: a SQLite database (another study
    file, say) and, for a CSV export, a non-empty file that is not one (its first line is not an export's
    header). A plot or an export written before is replaced, as asked."""
    try:
        if out.exists() and not out.is_file() and not out.is_dir():
            _fail(
                DataFileError(
                    f"{str(out)!r} exists and is not a regular file (a device, FIFO or socket): choose a "
                    "file path; nothing was written."
                )
            )
        if out.is_dir():
            _fail(DataFileError(f"{str(out)!r} is a folder; expected a file path; nothing was written."))
        if not out.is_file():
            return
        with out.open("rb") as fh:
            head = fh.read(64)
    except OSError:  # cannot be read: writing it fails on its own, with its own message
        return
    if head.startswith(b"SQLite format 3\x00"):
        what = "a SQLite database (another study file?)"
    elif csv_export and head and not head.startswith(b"number,state,source,"):
        what = f"not a CSV export of a study (it begins {head[:24]!r})"
    else:
        return
    _fail(
        DataFileError(
            f"{str(out)!r} exists and is {what}: choose another path or delete it first; nothing was written."
        )
    )


def _fmt(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


@study_app.command("list")
def list_cmd(file: FileArg) -> None:
    """Every study in FILE: policy, d, m, trials (complete / pending / failed), best feasible value."""
    try:
        with _open(file) as store:
            t = Table(title=f"studies in {escape(str(file))}")
            for h in ("name", "policy", "d", "m", "budget", "complete", "pending", "failed", "best feasible"):
                t.add_column(h, justify="left" if h in ("name", "policy") else "right")
            for name in store.study_names():
                spec = store.spec(name)
                trials = store.trials(name)
                _newer_note(file, name, spec)
                count = {s: sum(tr["state"] == s for tr in trials) for s in ("complete", "pending", "failed")}
                best = _curves(trials, _minimize(spec), int(spec["m"]))["best"]
                t.add_row(
                    escape(name),
                    escape(str(spec.get("policy", ""))),
                    str(len(spec["lower"])),
                    str(spec["m"]),
                    _fmt(spec.get("budget")),
                    str(count["complete"]),
                    str(count["pending"]),
                    str(count["failed"]),
                    "" if best.size == 0 or math.isnan(best[-1]) else f"{best[-1]:.6g}",
                )
            _out().print(t)
    except CKBError as exc:
        _fail(exc)


def _rows(spec: dict[str, Any], trials: list[dict]) -> tuple[list[str], list[list[Any]]]:
    d, m = len(spec["lower"]), int(spec["m"])
    head = [
        "number",
        "state",
        "source",
        *[f"x{i}" for i in range(d)],
        "objective",
        *[f"g{j}" for j in range(m)],
    ]
    head += ["feasible", "note", "asked_at", "told_at"]
    rows = []
    for t in trials:
        info = t.get("info") or {}
        c = t["constraints"]
        feas = "" if c is None else bool(np.all(np.asarray(c) <= 0))
        rows.append(
            [
                t["number"],
                t["state"],
                info.get("source", ""),
                *[float(v) for v in t["x"]],
                t["objective"],
                *([None] * m if c is None else [float(v) for v in c]),
                feas,
                t["note"] or "",
                t["asked_at"],
                t["told_at"],
            ]
        )
    return head, rows


@study_app.command("show")
def show_cmd(
    file: FileArg,
    name: NameArg,
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot",
            help="Where to write the plot; its extension gives the format (none: .png is appended). "
            "Default: FILE-NAME.png beside FILE (FILE-NAME-HASH.png for a name with other characters than "
            "letters, digits, '.', '_', '-', or a long one), replacing only an earlier plot of this study.",
        ),
    ] = None,
    last: Annotated[
        int | None,
        typer.Option(
            "--last",
            help="Show the table's last N trials only (a long study printed every row); the totals and "
            "the plot still cover all of them.",
        ),
    ] = None,
) -> None:
    """A table of NAME's trials and a plot of best feasible value and cumulative violation."""
    if last is not None and last < 1:
        _fail(CKBError(f"--last must be a number of trials >= 1, got {last}."))
    out, fmt = _plot_target(file, name, plot)
    spec, trials = _study(file, name)
    curves = _curves(trials, _minimize(spec), int(spec["m"]))
    where = f"plot: {out}"
    try:  # first: a failure is the only output, and a reader that stops early (| head) still gets the plot
        _plot(curves, name, spec, out, fmt, _plot_tag(file, name))
    except Exception as exc:  # OSError, or a format whose writer needs a missing program (.pgf: xelatex)
        if plot is not None or getattr(exc, "errno", None) not in _NOT_WRITABLE:
            hint = "" if plot is not None else "; pass --plot PATH to write it elsewhere"
            _fail(DataFileError(f"could not write the plot {str(out)!r}: {one_line(exc)}{hint}"))
        # the default path beside a study in a folder this user may not write (a shared or read-only
        # study, which show is the documented way to read): the table still, and where a plot can go
        where = (
            f"plot: not written, the folder of {str(out)!r} is not writable ({exc.strerror or exc}); "
            "pass --plot PATH to write it elsewhere"
        )
    head, rows = _rows(spec, trials)
    for trial, row in zip(trials, rows):  # a pending ask no one will tell: say so where it stands
        mark = (trial.get("info") or {}).get("asked_by")
        if trial["state"] == "pending" and gone(mark) and not row[head.index("note")]:
            row[head.index("note")] = f"asked by pid {mark['pid']}, which has ended"
    shown = f"; the last {last} of {len(rows)} trials" if last is not None and last < len(rows) else ""
    rows = rows[-last:] if last is not None else rows
    t = Table(
        title=f"study {escape(name)} ({escape(str(spec.get('policy', '')))}) in {escape(str(file))}{shown}"
    )
    for h in head[:-2]:
        t.add_column(h, justify="left" if h in ("state", "source", "note") else "right", no_wrap=h != "note")
    for r in rows:
        t.add_row(*[escape(_fmt(v)) for v in r[:-2]])
    con = _out()  # never squeeze the numbers: as wide as the table needs (a narrow terminal wraps lines);
    need = Console(width=1_000_000).measure(t).maximum  # measured unbounded: a console caps at its width
    _out(width=max(con.width, need)).print(t)
    n = curves["best"].size
    last = {k: (v[-1] if n else 0.0) for k, v in curves.items()}
    summary = f"{n} evaluations, {int(last['violating'])} violating, violation {last['violation']:.6g}, "
    summary += f"positive violation {last['positive_violation']:.6g}"
    best = curves["best"][-1] if n else math.nan
    summary += "" if math.isnan(best) else f", best feasible {best:.6g}"
    _out().print(summary, soft_wrap=True, highlight=False)
    for line in _extra_summary(spec, trials):
        _out().print(line, soft_wrap=True, highlight=False, markup=False)
    _out().print(where, soft_wrap=True, highlight=False)


def _extra_summary(spec: dict[str, Any], trials: list[dict]) -> list[str]:
    """The violation budget (spent and left, per constraint), the numerics totals of a study and the policy's
    constants as stored (a study written before they were stored shows none)."""
    from ckb.optimizer.study import numerics_totals, violation_spent

    lines = []
    budget = spec.get("violation_budget")
    if budget is not None:
        spent = violation_spent(trials, int(spec["m"]))
        left = np.maximum(np.asarray(budget, dtype=float) - spent, 0.0)
        fmt = lambda v: "[" + ", ".join(f"{x:.4g}" for x in v) + "]"
        lines.append(f"violation budget {fmt(budget)}: spent {fmt(spent)}, left {fmt(left)}")
    num = numerics_totals(trials)
    line = (
        f"numerics: {num['fit_warnings']} fit warning(s), {num['acq_warnings']} acquisition warning(s), "
        f"{num['fit_failed']} failed fit(s)"
    )
    if num["messages"]:
        line += "; first: " + " | ".join(num["messages"][:3])
    lines.append(line)
    constants = spec.get("policy_constants")
    if isinstance(constants, dict) and constants:
        lines.append(
            f"{spec.get('policy', 'policy')} constants: "
            + ", ".join(f"{k}={v!r}" for k, v in constants.items())
        )
    return lines


def _plot(
    curves: dict[str, np.ndarray],
    name: str,
    spec: dict[str, Any],
    out: Path,
    fmt: str = "png",
    tag: str | None = None,
) -> None:
    """Write the plot to ``out`` in format ``fmt``; a PNG records ``tag`` (:func:`_plot_tag`: the study it
    shows) in a ``ckb-study`` text chunk, so a later ``show`` knows the default path holds its own plot."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = np.arange(1, curves["best"].size + 1)
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.8))
    # a dot at each evaluation: a step drawn "post" shows the value after the last one only as a tick
    dots = {"where": "post", "marker": ".", "markersize": 4}
    a.step(n, curves["best"], **dots)
    a.set_xlabel("evaluations")
    a.set_ylabel("best feasible objective" + (" (minimized)" if _minimize(spec) else ""))
    a.set_title(f"{name}: best feasible value")
    b.step(n, curves["violation"], label="violation ||[sum g]+||", **dots)
    b.step(n, curves["positive_violation"], label="positive violation ||sum [g]+||", **dots)
    b.legend(loc="upper left", fontsize="small")
    b2 = b.twinx()
    b2.step(n, curves["violating"], color="tab:red", alpha=0.6, label="violating evaluations", **dots)
    b.set_ylim(bottom=0.0)  # both are counts or sums of positive parts: 0 at the bottom, not 1
    b2.set_ylim(bottom=0.0)
    b.set_xlabel("evaluations")
    b.set_ylabel("violation (observed values)")
    b2.set_ylabel("violating evaluations", color="tab:red")
    b.set_title(f"{name}: observed violation")
    for ax in (a, b):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    try:  # the format given: ``out`` is written as it is named; the old file stays whole if this fails
        meta = {"ckb-study": tag} if tag and fmt == "png" else None
        atomic_write(out, lambda fh: fig.savefig(fh, dpi=110, format=fmt, metadata=meta))
    finally:
        plt.close(fig)


@study_app.command("export")
def export_cmd(
    file: FileArg,
    name: NameArg,
    out: Annotated[Path | None, typer.Option("--out", help="CSV file to write (default: stdout).")] = None,
) -> None:
    """Every trial of NAME as CSV: number, state, source, x0.., objective, g0.., feasible, note, times."""
    if out is not None:
        _not_the_study(file, out)
        _not_foreign(out, csv_export=True)
    head, rows = _rows(*_study(file, name))
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(head)
    for r in rows:
        w.writerow(["" if v is None else (repr(v) if isinstance(v, float) else v) for v in r])
    if out is None:
        try:
            typer.echo(buf.getvalue(), nl=False)
        except BrokenPipeError:  # | head: click would exit with 1
            _pipe_closed()
        return
    try:
        text = buf.getvalue().encode()
        atomic_write(out, lambda fh: fh.write(text))  # the old file stays whole if this fails
    except OSError as exc:
        _fail(DataFileError(f"could not write {str(out)!r}: {exc}"))
    _out().print(f"{len(rows)} trials -> {out}", soft_wrap=True, highlight=False)
