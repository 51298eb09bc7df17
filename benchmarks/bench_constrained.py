"""ckb.Optimizer's policies vs BoTorch's constrained qLogNEI vs Sobol search on constrained test problems.

The constrained benchmark against the field (see :mod:`ckb.benchmarking.constrained` for the metrics and
:mod:`ckb.problems.constrained_benchmarks` for the problems). Run by hand, never as a test::

    python benchmarks/bench_constrained.py --quick                 # 1 seed, 30 evaluations, 3 problems
    python benchmarks/bench_constrained.py --workers 2             # all problems and methods, 20 seeds, 60
    python benchmarks/bench_constrained.py --methods qlognei,sobol,ckb-ucb --problems gramacy --seeds 5

Every run is written to ``OUT/runs/PROBLEM/METHOD/seed-NNN.json`` when it finishes; re-running the same
command skips finished runs, so an interrupted benchmark loses nothing. Writes ``OUT/summary.json``,
``OUT/table.md`` (also printed) and ``OUT/plots/best-feasible-PROBLEM.png``. Default ``OUT``:
``benchmarks/results/constrained`` (``constrained-quick`` with ``--quick``). A bad argument is one line
``error: ...`` on stderr with exit code 2, before anything runs or is written.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from _args import Parser, error, names, out_dir_problem
from ckb.benchmarking.constrained import DEFAULT_BUDGET, known_methods, plan, run_benchmark
from ckb.errors import CKBError, InvalidInputError
from ckb.problems.constrained_benchmarks import CONSTRAINED_BENCHMARKS

QUICK = {"seeds": 1, "budget": 30, "problems": "gardner-2,gramacy,branin-disk"}
#: the most ``--seeds``: every (problem, method, seed) run is planned up front, and a thousand seeds of
#: the whole benchmark are already over 10^5 runs
MAX_SEEDS = 1000


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=None, help="number of seeds 0..N-1 (default 20; --quick: 1)")
    ap.add_argument(
        "--budget", type=int, default=None, help=f"evaluations per run (default {DEFAULT_BUDGET})"
    )
    ap.add_argument(
        "--problems", default=None, help=f"comma-separated (default all: {','.join(CONSTRAINED_BENCHMARKS)})"
    )
    ap.add_argument(
        "--methods", default=None, help="comma-separated (default all ckb policies, qlognei, sobol)"
    )
    ap.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--out", type=Path, default=None, help="output directory")
    ap.add_argument("--quick", action="store_true", help="1 seed, 30 evaluations, 3 problems: a check")
    ap.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    ap.add_argument(
        "--report-only",
        action="store_true",
        help="run nothing: summarize, for each method, the seeds whose runs (every problem) are all on disk",
    )
    args = ap.parse_args(argv)
    console = Console()
    seeds = args.seeds if args.seeds is not None else (QUICK["seeds"] if args.quick else 20)
    budget = args.budget if args.budget is not None else (QUICK["budget"] if args.quick else DEFAULT_BUDGET)
    out = args.out or Path("benchmarks/results") / ("constrained-quick" if args.quick else "constrained")
    try:
        problems = names(args.problems) or (names(QUICK["problems"]) if args.quick else None)
        methods = names(args.methods, "--methods")
        if not 1 <= seeds <= MAX_SEEDS:
            raise InvalidInputError(f"--seeds must be an integer in [1, {MAX_SEEDS}], got {seeds}.")
        if budget < 2:
            raise InvalidInputError(f"--budget must be an integer >= 2, got {budget}.")
        cores = os.cpu_count() or 1  # each worker is a process importing torch: more would only contend
        if not 1 <= args.workers <= cores:
            raise InvalidInputError(
                f"--workers must be an integer in [1, {cores}] (this machine's cores), got {args.workers}."
            )
        configs = plan(problems, methods, seeds, budget)
    except CKBError as exc:
        return error(str(exc))
    why = out_dir_problem(out, args.report_only)
    if why is not None:
        return error(why)
    methods = list(dict.fromkeys(c.method for c in configs))
    if args.report_only:
        # per method, the seeds with a run on every problem: methods may have been run to different
        # numbers of seeds (each row of the table says how many it has)
        complete = {
            mth: [
                s
                for s in sorted({c.seed for c in configs})
                if all(c.path(out).exists() for c in configs if c.seed == s and c.method == mth)
            ]
            for mth in methods
        }
        if not any(complete.values()):
            return error(f"no method has a seed with all its runs under --out {out}.")
        configs = [c for c in configs if c.seed in complete[c.method]]
        seeds = max(len(v) for v in complete.values())
        for mth, done in complete.items():
            console.print(f"report only: {mth}: {len(done)} complete seed(s)", highlight=False)
    console.print(
        f"[bold]constrained benchmark[/]: {len({c.problem for c in configs})} problem(s) x {len(methods)} "
        f"method(s) x {seeds} seed(s), {budget} evaluations, {args.workers} worker(s) -> {out}"
    )
    console.print(f"methods: {', '.join(methods)}  (known: {', '.join(known_methods())})")
    start = time.perf_counter()
    skipped = 0
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
    ) as progress:
        task = progress.add_task("runs", total=len(configs))

        def on_done(cfg, was_skipped, status):
            nonlocal skipped
            skipped += was_skipped
            if not status["ok"]:
                progress.console.print(f"[red]failed[/]: {cfg.method} on {cfg.problem}, seed {cfg.seed}")
            label = (
                f"runs ({cfg.method} / {cfg.problem} / seed {cfg.seed} {'reused' if was_skipped else 'done'})"
            )
            progress.update(task, advance=1, description=label)

        try:
            summary = run_benchmark(
                configs, out, workers=args.workers, on_done=on_done, plots=not args.no_plots
            )
        except CKBError as exc:
            return error(str(exc))
        except KeyboardInterrupt:
            console.print(f"[yellow]interrupted[/]: finished runs are saved under {out}; re-run to resume.")
            return 130
    print((out / "table.md").read_text(), flush=True)  # plain: markdown lines must not be wrapped
    for p, entry in summary["problems"].items():
        for mth, row in entry["methods"].items():
            if len(row["code"]) > 1:
                console.print(
                    f"[yellow]warning[/]: the {mth} runs on {p} were made by {len(row['code'])} versions of "
                    f"ckb.optimizer's code ({', '.join(row['code'])}): comparable only where those versions "
                    "decide alike (a refactor changes the digest, not the numbers); for one version's "
                    "numbers, delete these runs and re-run.",
                    highlight=False,
                )
    for e in summary["errors"]:
        console.print(
            f"[red]error in {e['method']} / {e['problem']} / seed {e['seed']}:[/]\n{e['error']}",
            highlight=False,
        )
    console.print(
        f"{len(configs) - skipped} run(s), {skipped} reused from disk, {time.perf_counter() - start:.0f} s wall. "
        f"Summary: {out / 'summary.json'}, table: {out / 'table.md'}, plots: {out / 'plots'}/"
    )
    return 1 if summary["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
