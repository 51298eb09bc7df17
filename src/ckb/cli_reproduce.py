"""``ckb reproduce PAPER``: run a paper's experiments and write ``docs/reproduction/PAPER.md``
(:mod:`ckb.reproduce`). Registered on ``ckb``'s app by one line in :mod:`ckb.cli`.

Bad input (an unknown paper or executor, ``--workers`` below 1, ``--report-only`` on a folder with no
runs) is a one-line ``error:`` naming it (exit code 2), given before anything is run or written. A report
is never replaced by one that judged fewer claims (:func:`ckb.reproduce.reproduce`): that is an error too.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ckb._validation import check_scalar
from ckb.cli_errors import fail as _fail
from ckb.cli_errors import folder_option, interrupted, one_line_warnings
from ckb.errors import CKBError

console = Console()


def reproduce_command(
    paper: Annotated[
        str | None, typer.Argument(help="Short name of the paper (e.g. zhou-ji-2022; --list shows them).")
    ] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the papers and their claims counts.")] = False,
    quick: Annotated[bool, typer.Option("--quick", help="Reduced trials and horizon (tests, CI).")] = False,
    out: Annotated[
        str | None, typer.Option("--out", help="Run folder (default runs/reproduce/PAPER).")
    ] = None,
    report_dir: Annotated[
        str | None,
        typer.Option(
            "--report-dir", help="Report folder (default docs/reproduction; with --quick, the --out folder)."
        ),
    ] = None,
    report_only: Annotated[
        bool,
        typer.Option(
            "--report-only",
            help="Rewrite the report from the runs on disk (refused if --out holds no run of the paper).",
        ),
    ] = False,
    workers: Annotated[int | None, typer.Option("--workers", help="Parallel workers (>= 1).")] = None,
    executor: Annotated[str, typer.Option("--executor", help="process, serial or ray.")] = "process",
) -> None:
    """Run a paper's experiments at paper scale (resumable) and write its claim-by-claim report. A report
    is never replaced by one that judged fewer claims (delete it first to do that)."""
    try:
        with one_line_warnings():
            _reproduce(paper, list_, quick, out, report_dir, report_only, workers, executor)
    except CKBError as exc:
        _fail(exc)
    except KeyboardInterrupt:  # before: no note, and a traceback from the process pool's exit hook
        interrupted("finished runs are kept; re-run the same command to resume.")


def _reproduce(paper, list_, quick, out, report_dir, report_only, workers, executor) -> None:
    from ckb.reproduce import PAPERS, load_paper, reproduce

    if list_ or paper is None:
        table = Table(title="papers (ckb reproduce NAME)")
        for col in ("name", "citation", "specs", "claims"):
            table.add_column(col)
        for name in PAPERS:
            p = load_paper(name, check_specs=False)
            table.add_row(p.short, p.citation, ", ".join(p.specs), str(len(p.claims)))
        console.print(table)
        return
    out, report_dir = folder_option(out, "--out"), folder_option(report_dir, "--report-dir")
    if workers is not None:
        check_scalar(workers, "--workers", low=1, integer=True)  # the message `ckb experiment` gives
    p = load_paper(paper)
    out = out or Path("runs/reproduce") / (p.short + ("-quick" if quick else ""))
    start = time.perf_counter()
    # shown from the first spec run: an error found before (a bad --executor) or --report-only prints no bar
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    )
    state = {"task": None}

    def on_spec(name: str, n: int) -> None:
        progress.start()
        state["task"] = progress.add_task(name, total=n or None)

    def on_done(task, skipped) -> None:
        if state["task"] is not None:
            progress.advance(state["task"])

    try:
        result = reproduce(
            p.short,
            out,
            quick=quick,
            report_dir=report_dir,
            workers=workers,
            executor=executor,
            on_spec=on_spec,
            on_done=on_done,
            run=not report_only,
        )
    finally:
        if progress.live.is_started:
            progress.stop()
    table = Table(title=f"{p.short}: claims")
    for col in ("id", "ours", "verdict"):
        table.add_column(col)
    for v in result["verdicts"]:
        table.add_row(v.claim.id, v.value, v.verdict)
    console.print(table)
    console.print(f"{time.perf_counter() - start:.1f} s. Report: {result['report']}")
