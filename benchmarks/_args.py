"""What the hand-run scripts of ``benchmarks/`` share to check their command lines: a bad argument is one
line ``error: ...`` on stderr with exit code 2, found before anything runs or is written.

Imported by the scripts as ``from _args import ...`` (a script's own folder is first on ``sys.path`` when it
runs as ``python benchmarks/NAME.py``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import NoReturn

from ckb.errors import CKBError, InvalidInputError
from ckb.framework.pipeline import check_output_dir


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors (a wrong type, an unknown choice or option) are one ``error:`` line
    with exit code 2, without the usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message}\n")


def error(message: str) -> int:
    """Print ``message`` as one ``error:`` line on stderr; returns 2, the exit code of a bad input."""
    print(f"error: {' '.join(message.split())}", file=sys.stderr, flush=True)
    return 2


def names(text: str | None, flag: str = "--problems") -> list[str] | None:
    """The comma-separated names of ``flag`` (None: not given); an empty list or item is an
    :class:`~ckb.errors.InvalidInputError`."""
    if text is None:
        return None
    if not text.strip():
        raise InvalidInputError(f"{flag} is empty ({text!r}); give comma-separated names, or leave it out.")
    out = [s.strip() for s in text.split(",")]
    if "" in out:
        raise InvalidInputError(f"{flag} has an empty name in {text!r}; give comma-separated names.")
    return out


def out_dir_problem(out: Path, report_only: bool = False) -> str | None:
    """Why ``--out`` cannot be the output folder (None if it can): with ``report_only`` it must be a folder
    of runs; else a folder that is or can be created, where a file can be written
    (:func:`ckb.framework.pipeline.check_output_dir`)."""
    if report_only:
        return None if out.is_dir() else f"--out {out} is not a directory of runs (--report-only reads them)."
    try:
        check_output_dir(out)
    except CKBError as exc:
        return f"--out: {exc}"
    return None


def out_file_problem(out: Path, flag: str, new: bool) -> str | None:
    """Why a result file cannot be written at ``out`` (None if it can); ``new``: it must not exist (an
    earlier result is never overwritten). Missing folders above it are created when it is written."""
    if out.is_dir():
        return f"{flag} {out} is a directory; give the path of a file."
    if new and (out.exists() or out.is_symlink()):
        return f"{flag} {out} already exists; give a new file (nothing was run, the file is unchanged)."
    folder = out.parent
    while not (folder.exists() or folder.is_symlink()):
        folder = folder.parent
    if not folder.is_dir():
        return f"{flag} {out} lies under {folder}, which is not a directory."
    try:  # a real write: permissions, read-only or special file systems
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        return f"{flag} {out} cannot be written: no file can be created in {folder} ({exc.strerror or exc})."
    return None
