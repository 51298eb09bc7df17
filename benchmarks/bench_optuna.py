"""CKBSampler vs Optuna's constrained GPSampler and TPESampler on the constrained benchmark problems.

Run by hand, never as a test::

    python benchmarks/bench_optuna.py --workers 2                          # every problem, 20 seeds, 60
    python benchmarks/bench_optuna.py --seeds 2 --problems gardner-2,gramacy,branin-disk
    python benchmarks/bench_optuna.py --methods ckb.config,gp --seeds 5

Every run is an Optuna study (in memory) driven by ask/tell on a problem of
:data:`~ckb.problems.constrained_benchmarks.CONSTRAINED_BENCHMARKS`, with the same start as
``benchmarks/bench_constrained.py``: the ``2d + 2`` points of ckb's scrambled Sobol design for the seed
(:func:`ckb.optimizer.initial_design`), enqueued with ``study.enqueue_trial`` for every sampler, then
``budget - (2d + 2)`` trials chosen by the sampler (each sampler's ``n_startup_trials`` is ``2d + 2``, so
it models from the first trial after the design). Constraints reach every sampler through Optuna's
``constraints_func`` (feasible where <= 0), from the user attribute the objective sets. Methods:

- ``ckb.POLICY``: :class:`ckb.integrations.optuna.CKBSampler` with that policy (``ckb`` alone: the
  best-feasible goal's default policy, resolved and named in the table), ``n_trials = budget``;
- ``gp``: ``optuna.samplers.GPSampler(constraints_func=..., seed=seed)`` (its constrained log EI);
- ``tpe``: ``optuna.samplers.TPESampler(constraints_func=..., seed=seed)`` (Optuna's defaults otherwise).

Metrics and the per-problem tables are :mod:`ckb.benchmarking.constrained`'s (final gap, solved = gap <
2%, scaled Σ[g]+, violating evaluations, seconds per iteration = ask + suggest + tell after the design).
Every run is written to ``OUT/runs/PROBLEM/METHOD/seed-NNN.json`` when it finishes; re-running the same
command skips finished runs, so an interrupted benchmark loses nothing. Writes ``OUT/summary.json`` and
``OUT/table.md`` (also printed). Default ``OUT``: ``benchmarks/results/optuna``. A bad argument is one line
``error: ...`` on stderr with exit code 2, before anything runs or is written.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from _args import Parser, error, names, out_dir_problem
from ckb.benchmarking.constrained import (
    DEFAULT_BUDGET,
    RECORDS,
    RunConfig,
    _fmt,
    load_record,
    markdown_table,
    summarize,
)
from ckb.errors import CKBError, InvalidInputError, UnknownNameError
from ckb.io import write_json
from ckb.problems.constrained_benchmarks import CONSTRAINED_BENCHMARKS

BASELINES = ("gp", "tpe")
#: the most ``--seeds``: every (problem, method, seed) run is planned up front
MAX_SEEDS = 1000


def _default_ckb() -> str:
    from ckb.optimizer.policies import GOAL_POLICIES

    return f"ckb.{GOAL_POLICIES['best-feasible']}"


def _check_methods(methods: list[str]) -> list[str]:
    from ckb.optimizer.policies import OPTIMIZER_POLICIES

    out: dict[str, str] = {}  # method -> the name it was given as
    for given in methods:
        mth = _default_ckb() if given == "ckb" else given
        if mth.startswith("ckb."):
            mth = "ckb." + OPTIMIZER_POLICIES.canonical(mth[4:])  # UnknownNameError with a did-you-mean
        elif mth not in BASELINES:
            raise UnknownNameError(f"Unknown method {mth!r}: use ckb, ckb.POLICY, gp or tpe.")
        if mth in out:  # one record file per (problem, method, seed): a repeat would be counted twice
            both = f" (as {out[mth]!r} and {given!r})" if out[mth] != given else ""
            raise InvalidInputError(f"the method {mth!r} is named twice{both}; name each method once.")
        out[mth] = given
    return list(out)


def _constraints(trial) -> list[float]:
    return trial.user_attrs["g"]


def _sampler(method: str, seed: int, n_init: int, budget: int):
    import optuna

    if method == "gp":
        return optuna.samplers.GPSampler(seed=seed, n_startup_trials=n_init, constraints_func=_constraints)
    if method == "tpe":
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=n_init, constraints_func=_constraints)
    from ckb.integrations.optuna import CKBSampler

    return CKBSampler(
        policy=method[4:], constraints_func=_constraints, seed=seed, n_trials=budget, n_startup_trials=n_init
    )


def run_one(cfg: RunConfig) -> dict[str, Any]:
    """One Optuna study of ``cfg``: its record in :func:`ckb.benchmarking.constrained.run_one`'s format."""
    import warnings

    import optuna

    from ckb.benchmarking.constrained import _import_gp_stack, _versions, measure_run
    from ckb.optimizer import initial_design

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.filterwarnings("ignore", category=FutureWarning)  # Optuna 5 deprecates constraints_func
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    _import_gp_stack()  # imports are not the method's per-iteration cost
    problem = CONSTRAINED_BENCHMARKS[cfg.problem].make()
    dom = problem.domain
    d, n_init = dom.d, 2 * dom.d + 2
    versions = {**_versions(), "optuna": optuna.__version__}
    if not cfg.method.startswith("ckb."):
        versions["ckb.optimizer"] = f"optuna-{optuna.__version__}"
    sampler = _sampler(cfg.method, cfg.seed, n_init, cfg.budget)
    study = optuna.create_study(sampler=sampler, direction="minimize" if problem.minimize else "maximize")
    for p in initial_design(dom.lower, dom.upper, n_init, cfg.seed):
        study.enqueue_trial({f"x{i}": float(v) for i, v in enumerate(p)})
    pending = []

    def ask():
        trial = study.ask()
        pending.append(trial)
        return [trial.suggest_float(f"x{i}", dom.lower[i], dom.upper[i]) for i in range(d)]

    def tell(x, y, c):
        trial = pending.pop()
        trial.set_user_attr("g", np.asarray(c, dtype=float).tolist())  # what _constraints reads
        study.tell(trial, float(y))

    return measure_run(cfg, problem, ask, tell, n_init=n_init, versions=versions)


def _worker(task: tuple[dict[str, Any], str]) -> dict[str, Any]:
    """Executor entry (a spawned process): one run, its record in the status; never raises."""
    import torch

    torch.set_num_threads(1)
    try:
        record = run_one(RunConfig(**task[0]))
    except Exception:
        return {"ok": False, "error": traceback.format_exc()}
    return {"ok": True, "wall_seconds": record["wall_seconds"], "record": record}


def compact_table(summary: dict[str, Any]) -> str:
    """One row per method: per problem solved / seeds, median scaled Σ[g]+, median violating evaluations
    (the design's included); the solved total and the median wall (CPU) seconds per iteration."""
    problems = list(summary["problems"])
    methods: list[str] = []
    for entry in summary["problems"].values():
        methods += [m for m in entry["methods"] if m not in methods]
    head = "| method | seeds | " + " | ".join(problems) + " | solved | s / iteration, wall (CPU) |"
    lines = [head, "|---|---:|" + "---|" * len(problems) + "---:|---:|"]
    for mth in methods:
        cells, solved, runs, secs, cpus, seeds = [], 0, 0, [], [], set()
        for p in problems:
            r = summary["problems"][p]["methods"].get(mth)
            if r is None:
                cells.append("")
                continue
            n = len(r["seeds"])
            seeds.add(n)
            solved, runs = solved + r["solved"], runs + n
            secs.append(r["seconds_per_iteration"]["median"])
            cpus.append(r["cpu_seconds_per_iteration"]["median"])
            cells.append(
                f"{r['solved']}/{n}, {_fmt(r['scaled_violation']['median'])}, "
                f"{_fmt(r['violating_evaluations']['median'], 3)}"
            )
        span = lambda v: f"{_fmt(min(v), 2)}-{_fmt(max(v), 2)}" if len(v) > 1 else _fmt(v[0], 2)
        lines.append(
            f"| {mth} | {'/'.join(map(str, sorted(seeds)))} | "
            + " | ".join(cells)
            + f" | {solved}/{runs} | {span(secs)} ({span(cpus)}) |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20, help="number of seeds 0..N-1 (default 20)")
    ap.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help="evaluations per run (default 60)")
    ap.add_argument(
        "--problems", default=None, help=f"comma-separated (default all: {','.join(CONSTRAINED_BENCHMARKS)})"
    )
    ap.add_argument(
        "--methods", default=None, help="comma-separated: ckb, ckb.POLICY, gp, tpe (default ckb,gp,tpe)"
    )
    ap.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/optuna"), help="output directory")
    ap.add_argument("--report-only", action="store_true", help="run nothing: tabulate the runs on disk")
    args = ap.parse_args(argv)
    console = Console()
    try:
        problems = names(args.problems) or list(CONSTRAINED_BENCHMARKS)
        for p in problems:
            if p not in CONSTRAINED_BENCHMARKS:
                raise UnknownNameError(
                    f"Unknown benchmark problem {p!r}; known: {', '.join(CONSTRAINED_BENCHMARKS)}."
                )
        twice = sorted({p for p in problems if problems.count(p) > 1})
        if twice:  # one record file per (problem, method, seed): a repeat would be counted twice
            raise InvalidInputError(f"the problem {twice[0]!r} is named twice; name each problem once.")
        methods = _check_methods(names(args.methods, "--methods") or ["ckb", *BASELINES])
        if not 1 <= args.seeds <= MAX_SEEDS:
            raise InvalidInputError(f"--seeds must be an integer in [1, {MAX_SEEDS}], got {args.seeds}.")
        cores = os.cpu_count() or 1  # each worker is a process importing torch: more would only contend
        if not 1 <= args.workers <= cores:
            raise InvalidInputError(
                f"--workers must be an integer in [1, {cores}] (this machine's cores), got {args.workers}."
            )
        for p in problems:  # every run starts with the 2d + 2 design points (module docstring)
            design = 2 * CONSTRAINED_BENCHMARKS[p].make().domain.d + 2
            if args.budget < design:
                raise InvalidInputError(
                    f"--budget {args.budget} is smaller than the initial design of {p!r} ({design} points), "
                    f"which every run evaluates first; give a budget of at least {design}."
                )
    except CKBError as exc:
        return error(str(exc))
    why = out_dir_problem(args.out, args.report_only)
    if why is not None:
        return error(why)
    # seed-major: an interrupted benchmark has whole seeds on disk
    configs = [RunConfig(m, p, s, args.budget) for s in range(args.seeds) for p in problems for m in methods]
    out = args.out
    start = time.perf_counter()
    errors = []
    if not args.report_only:
        from ckb.runner.sweep import execute, plan_sweep

        try:
            todo, reused = plan_sweep(configs, out, RECORDS)
        except CKBError as exc:
            return error(str(exc))
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=console) as bar:
            task = bar.add_task(f"{len(reused)} reused; running", total=len(configs), completed=len(reused))
            try:
                for cfg, _, status in execute(todo, _worker, RECORDS, workers=args.workers):
                    if not status["ok"]:
                        errors.append({**cfg.identity(), "error": status["error"]})
                    bar.advance(task)
            except KeyboardInterrupt:
                console.print(
                    f"[yellow]interrupted[/]: finished runs are saved under {out}; re-run to resume."
                )
                return 130
    records = [load_record(c.path(out)) for c in configs if c.path(out).exists()]
    if not records:
        if args.report_only:  # nothing to report: a bad --out (or selection), not a failed run
            return error(f"no finished runs of the selected problems, methods and seeds under --out {out}.")
        console.print(f"[bold red]error:[/] no finished runs under {out}.", highlight=False)
        return 1
    summary = summarize(records)
    summary["errors"] = errors
    write_json(out / "summary.json", summary)
    text = compact_table(summary) + "\n\n" + markdown_table(summary)
    (out / "table.md").write_text(text + "\n")
    print(text, flush=True)
    for e in errors:
        console.print(
            f"[red]error in {e['method']} / {e['problem']} / seed {e['seed']}:[/]\n{e['error']}",
            highlight=False,
        )
    console.print(
        f"{len(records)} run(s) on disk, {time.perf_counter() - start:.0f} s wall. Table: {out / 'table.md'}"
    )
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
