"""How every ``ckb`` command reports a bad input: ``error: MESSAGE`` on one line of stderr, exit code 2.

Shared by :mod:`ckb.cli`, :mod:`ckb.cli_study` and :mod:`ckb.cli_reproduce` (the last two cannot import
:mod:`ckb.cli`, which registers them).
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.console import Console

#: the commands' stderr
err = Console(stderr=True)


def fail(exc: Exception) -> None:
    """Print ``exc`` as one ``error:`` line and exit with code 2.

    ``soft_wrap``: a message (paths, field names) is never broken at the terminal's width; ``markup=False``:
    a message such as "expected values in [0, 1]" is text, not rich markup; a KeyError subclass (e.g.
    StudyNotFoundError) prints its message, not its quoted repr.
    """
    msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
    err.print("[bold red]error:[/]", end=" ", soft_wrap=True)
    err.print(str(msg), markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def folder_option(value: str | None, flag: str) -> Path | None:
    """The folder option ``flag`` as a path (``None`` when not given). A blank value is refused
    (:class:`ckb.errors.CKBError`): typer's ``Path("")`` is the working folder, which an unset shell variable
    (``-o "$OUT"``) never means. Before, ``--out ""`` wrote the run's files into the working folder."""
    from ckb.errors import CKBError

    if value is None:
        return None
    if not value.strip():
        raise CKBError(f"{flag} must be a folder path, got {value!r}; nothing was computed.")
    return Path(value)


@contextmanager
def one_line_warnings():
    """Inside: a :class:`ckb.runner.sweep.SweepWarning` (e.g. a corrupt trace kept aside) or an
    :class:`~ckb.runner.executors.ExecutorWarning` (once: more workers than CPUs) is printed as one
    ``warning: ...`` line on stderr, not as Python's two-line warning with a source line."""
    from ckb.runner.executors import ExecutorWarning
    from ckb.runner.sweep import SweepWarning

    with warnings.catch_warnings():
        shown = warnings.showwarning

        def show(message, category, filename, lineno, file=None, line=None):
            if not issubclass(category, (SweepWarning, ExecutorWarning)):
                return shown(message, category, filename, lineno, file, line)
            err.print("[yellow]warning:[/]", end=" ", soft_wrap=True)
            err.print(str(message), markup=False, highlight=False, soft_wrap=True)

        warnings.showwarning = show
        warnings.simplefilter("always", SweepWarning)
        warnings.simplefilter("once", ExecutorWarning)
        yield


def interrupted(note: str) -> None:
    """Ctrl-C: say ``note`` and exit 130, ignoring further Ctrl-Cs from then on. Before, a second and a
    third Ctrl-C in quick succession (``timeout`` and a terminal send one to the process and one to its
    group) printed the note twice, or a traceback from the process pool's exit hook (the finished work was
    safe either way)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # until the process ends: its pools shut down in peace
    err.print(f"[yellow]interrupted[/]: {note}")
    raise typer.Exit(130)
