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
    """Ctrl-C or SIGTERM: say ``note`` and exit 130 (143 after SIGTERM: "terminated"), ignoring both
    signals from then on. Before, a second and a third Ctrl-C in quick succession (``timeout`` and a
    terminal send one to the process and one to its group) printed the note twice, or a traceback from
    the process pool's exit hook (the finished work was safe either way)."""
    _ignore_stop_signals()  # until the process ends: its pools shut down in peace
    err.print(f"[yellow]{'terminated' if terminated() else 'interrupted'}[/]: {note}")
    raise typer.Exit(143 if terminated() else 130)


#: the signal that stopped this command (:func:`stop_on_signal`), or None
_STOPPED_BY: dict[str, int | None] = {"signal": None}


def terminated() -> bool:
    """Whether SIGTERM stopped this command (:func:`stop_on_signal`)."""
    import signal

    return _STOPPED_BY["signal"] == signal.SIGTERM


def stop_on_signal(signum, frame) -> None:
    """The ``ckb`` console script's handler of Ctrl-C and SIGTERM (``kill``, ``timeout``, a batch
    scheduler): from the first one on, both are ignored until the process ends, and the command stops as
    on Ctrl-C (``KeyboardInterrupt``: its workers are stopped, :func:`interrupted` says what is kept; exit
    code 130, or 143 after SIGTERM).

    The next ones are ignored at once, not after the note: ``timeout`` and a scheduler signal the command
    and then its whole group, so a second signal could arrive while the process pool was being stopped
    and cut that short (a traceback from the pool's exit hook, or a wait on workers nobody stopped).
    Before, SIGTERM ended a run at once with only Python's "leaked semaphore objects" warning (the
    finished trials were kept)."""
    _ignore_stop_signals()
    _STOPPED_BY["signal"] = signum
    raise KeyboardInterrupt


def _ignore_stop_signals() -> None:
    """Ctrl-C and SIGTERM ignored from now on (the command is already stopping)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def install_stop_handlers() -> None:
    """:func:`stop_on_signal` for SIGINT and SIGTERM, in the main thread (elsewhere a no-op). A signal
    this process was started ignoring (``nohup``, a background job's Ctrl-C) stays ignored."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, stop_on_signal)
