"""The ``ckb`` command line: list what exists, print a spec, run an experiment."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from ckb.cli_study import study_app
from ckb.errors import CKBError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Constrained kernelized bandits: run the papers' experiments and your own.",
    pretty_exceptions_enable=False,
)
app.add_typer(study_app, name="study")  # ckb study list|show|export (cli_study.py)
console = Console()
err = Console(stderr=True)


_COLUMNS = (
    TextColumn("[progress.description]{task.description}"),
    BarColumn(),
    MofNCompleteColumn(),
    TimeElapsedColumn(),
    TimeRemainingColumn(),
)


def _fail(exc: Exception) -> None:
    # soft_wrap: never break a message (paths, field names) at the terminal width;
    # markup=False: a message such as "expected values in [0, 1]" is text, not rich markup.
    err.print("[bold red]error:[/]", end=" ", soft_wrap=True)
    err.print(str(exc), markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(2)


@app.command("list")
def list_cmd() -> None:
    """Show the registered problems, algorithms (policies) and experiments."""
    from ckb.experiments import load_spec, shipped
    from ckb.policies import POLICIES
    from ckb.problems import PROBLEMS

    t = Table(title="experiments  (ckb experiment NAME)")
    t.add_column("name", style="bold")
    t.add_column("T", justify="right")
    t.add_column("trials", justify="right")
    t.add_column("title")
    for name in sorted(shipped()):
        s = load_spec(name)
        t.add_row(name, str(s.horizon), str(s.trials), s.title)
    console.print(t)
    t = Table(title="algorithms (policies)")
    t.add_column("name", style="bold")
    t.add_column("aliases")
    t.add_column("summary")
    for name in POLICIES.names():
        cls = POLICIES.get(name)
        doc = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        t.add_row(name, ", ".join(POLICIES.aliases_of(name)), doc)
    console.print(t)
    t = Table(title="problems")
    t.add_column("name", style="bold")
    t.add_column("summary")
    for name in PROBLEMS.names():
        fn = PROBLEMS.get(name)
        t.add_row(name, (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else "")
    console.print(t)
    from ckb.multiagent import METHODS, MULTIAGENT_PROBLEMS

    t = Table(title='multi-agent methods and problems (specs with kind = "multiagent")')
    t.add_column("name", style="bold")
    t.add_column("kind")
    t.add_column("summary")
    for reg, kind in ((METHODS, "method"), (MULTIAGENT_PROBLEMS, "problem")):
        for n in reg.names():
            fn = reg.get(n)
            t.add_row(n, kind, (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else "")
    console.print(t)


@app.command("spec")
def spec_cmd(name: Annotated[str, typer.Argument(help="A shipped experiment name.")]) -> None:
    """Print a shipped experiment spec (TOML), to copy, edit and run by path."""
    from ckb.experiments import shipped

    try:
        specs = shipped()
        if name not in specs:
            from ckb.experiments import load_spec

            load_spec(name)  # raises with suggestions
        typer.echo(specs[name].read_text(), nl=False)
    except CKBError as exc:
        _fail(exc)


@app.command("experiment")
def experiment_cmd(
    name: Annotated[
        str, typer.Argument(help="Experiment name (see `ckb list`) or path to a spec .toml file.")
    ],
    trials: Annotated[
        int | None, typer.Option("--trials", "-n", help="Number of trials (default: the spec's).")
    ] = None,
    horizon: Annotated[
        int | None, typer.Option("--horizon", "-T", help="Horizon T (default: the spec's).")
    ] = None,
    workers: Annotated[
        int | None, typer.Option("--workers", "-w", help="Worker processes (default: all cores).")
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed", "-s", help="Base seed (default: the spec's).")] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Output directory (default: runs/NAME).")
    ] = None,
    executor: Annotated[
        str,
        typer.Option(
            "--executor",
            help="process | serial | ray (Ray tasks on a local instance, or on a cluster with --address).",
        ),
    ] = "process",
    address: Annotated[
        str | None,
        typer.Option(
            "--address",
            help="Ray cluster for --executor ray: host:6379, auto, or ray://host:10001 (default: RAY_ADDRESS, "
            "else a local Ray instance). ckb must be installed on the cluster's nodes.",
        ),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set", help="Override a spec field, e.g. --set algorithms.igp-ucb.beta_scale=0.5 (repeatable)."
        ),
    ] = None,
    plots: Annotated[bool, typer.Option(help="Write PNG plots.")] = True,
    beta_scale: Annotated[
        str | None,
        typer.Option(
            "--beta-scale",
            help="Scale every algorithm's beta by S; a comma-separated list (e.g. 0.1,0.3,1) runs a sweep and "
            "tabulates N, V and regret against the scale.",
        ),
    ] = None,
) -> None:
    """Run an experiment: parallel trials (resumable), a table, per-trial traces, plots and summary.json."""
    from ckb.experiments import load_spec, run_experiment
    from ckb.experiments.report import table_rows

    try:
        for flag, val in (("--trials", trials), ("--horizon", horizon), ("--workers", workers)):
            if val is not None and val < 1:
                raise CKBError(f"{flag} must be >= 1, got {val}.")
        if seed is not None and seed < 0:
            raise CKBError(f"--seed must be >= 0, got {seed}.")
        if address is not None and executor != "ray":
            raise CKBError(f"--address {address} needs --executor ray (got --executor {executor}).")
        spec = load_spec(name).with_overrides(trials=trials, horizon=horizon, seed=seed, sets=set_ or [])
        scales = _parse_scales(beta_scale)
        if scales is not None and len(scales) == 1:
            from ckb.experiments.run import with_beta_scale

            spec = with_beta_scale(spec, scales[0])
        spec.validate()
    except CKBError as exc:
        _fail(exc)
    if scales is not None and len(scales) > 1:
        beta_out = out or Path("runs") / f"{spec.name}-beta-sweep"
        _beta_sweep(spec, scales, beta_out, workers, executor, {"address": address})
        return
    out = out or Path("runs") / spec.name
    n_tasks = len(spec.configs())
    console.print(
        f"[bold]{spec.name}[/]: {len(spec.algorithms)} algorithm(s) x {spec.trials} trial(s), T = {spec.horizon}, "
        f"seed {spec.seed} -> {out}"
        + (f" ({n_tasks} runs over {len(spec.problems)} problems)" if spec_kind(spec) == "benchmark" else "")
    )
    start = time.perf_counter()
    skipped = 0
    try:
        with Progress(*_COLUMNS, console=console) as progress:
            task = progress.add_task("trials", total=n_tasks)

            def on_done(cfg, was_skipped):
                nonlocal skipped
                skipped += was_skipped
                progress.update(task, advance=1, description=f"trials ({cfg.algorithm} #{cfg.trial} done)")

            summary = run_experiment(
                spec,
                out,
                workers=workers,
                executor=executor,
                executor_options={"address": address},
                on_done=on_done,
                plots=plots,
            )
    except CKBError as exc:
        _fail(exc)
    except KeyboardInterrupt:
        err.print(
            f"[yellow]interrupted[/]: finished trials are saved under {out}; re-run the same command to resume."
        )
        raise typer.Exit(130) from None
    took = time.perf_counter() - start
    if spec_kind(spec) == "benchmark":
        typer.echo(summary["table"])  # plain: markdown rows must not be wrapped
        console.print(
            f"{n_tasks - skipped} run(s), {skipped} reused from disk, {took:.1f} s. Summary: {out / 'summary.json'}"
        )
        return
    header, rows = table_rows(summary)
    table = Table(title=f"{spec.name} (T = {spec.horizon}, {summary['trials']} trials; mean ± s.e.)")
    for h in header:
        table.add_column(escape(h), justify="left" if h == "algorithm" else "right")
    for r in rows:
        table.add_row(*(escape(c) for c in r))
    console.print(table)
    for alg, cp in summary["checkpoints"].items():
        pairs = ", ".join(f"t={t}: {v:.3g}" for t, v in zip(cp["t"], cp["regret_over_t"]))
        console.print(escape(f"  R(t)/t [{alg}]: {pairs}"))
        slopes = cp.get("loglog_slope_second_half", {})
        if slopes:
            text = ", ".join(f"{k} {'-' if v is None else f'{v:.2f}'}" for k, v in slopes.items())
            console.print(escape(f"    log-log slope over the second half (< 1: sublinear): {text}"))
        if "burn_in" in cp:
            b = cp["burn_in"]
            console.print(
                escape(f"    mean signed cumulative constraint <= 0 from round {b}")
                if b is not None
                else escape("    mean signed cumulative constraint still > 0 at T (no burn-in)")
            )
    if spec.reference:
        console.print("[bold]paper reference:[/]")
        for k, v in spec.reference.items():
            console.print(escape(f"  {k}: {v}"))
    took = time.perf_counter() - start
    console.print(
        f"{n_tasks - skipped} trial(s) run, {skipped} reused from disk, {took:.1f} s. "
        f"Summary: {out / 'summary.json'}; plots and traces under {out}/"
    )


benchmark_app = typer.Typer(
    no_args_is_help=True, help="Benchmarks against the field (long; results under benchmarks/results/)."
)
app.add_typer(benchmark_app, name="benchmark")


@benchmark_app.command("constrained")
def benchmark_constrained_cmd(
    seeds: Annotated[int, typer.Option("--seeds", help="Seeds 0..N-1.")] = 20,
    budget: Annotated[int, typer.Option("--budget", "-T", help="Evaluations per run.")] = 60,
    problems: Annotated[str | None, typer.Option(help="Comma-separated problems (default: all).")] = None,
    methods: Annotated[
        str | None, typer.Option(help="Comma-separated: ckb policies, qlognei, sobol (default: all).")
    ] = None,
    workers: Annotated[int, typer.Option("--workers", "-w", help="Worker processes.")] = 2,
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")] = Path(
        "benchmarks/results/constrained"
    ),
    plots: Annotated[bool, typer.Option(help="Write PNG plots.")] = True,
) -> None:
    """ckb.Optimizer's policies vs BoTorch's constrained qLogNEI vs Sobol search (resumable, parallel)."""
    from ckb.benchmarking.constrained import plan, run_benchmark

    def names(text):
        return None if text is None else [s.strip() for s in text.split(",") if s.strip()]

    try:
        if workers < 1:
            raise CKBError(f"--workers must be >= 1, got {workers}.")
        configs = plan(names(problems), names(methods), seeds, budget)
    except CKBError as exc:
        _fail(exc)
    console.print(
        f"[bold]constrained benchmark[/]: {len(configs)} run(s), {budget} evaluations each -> {out}"
    )
    start = time.perf_counter()
    try:
        with Progress(*_COLUMNS, console=console) as progress:
            task = progress.add_task("runs", total=len(configs))

            def on_done(cfg, skipped, status):
                if not status["ok"]:
                    progress.console.print(escape(f"failed: {cfg.method} on {cfg.problem}, seed {cfg.seed}"))
                progress.update(
                    task, advance=1, description=f"runs ({cfg.method} / {cfg.problem} / {cfg.seed})"
                )

            summary = run_benchmark(configs, out, workers=workers, on_done=on_done, plots=plots)
    except CKBError as exc:
        _fail(exc)
    except KeyboardInterrupt:
        err.print(
            f"[yellow]interrupted[/]: finished runs are saved under {out}; re-run the same command to resume."
        )
        raise typer.Exit(130) from None
    typer.echo((out / "table.md").read_text())  # plain: markdown rows must not be wrapped
    console.print(
        f"{summary['runs_executed']} run(s), {summary['runs_reused']} reused, {len(summary['errors'])} failed; "
        f"{time.perf_counter() - start:.0f} s. Summary: {out / 'summary.json'}"
    )
    if summary["errors"]:
        raise typer.Exit(1)


def spec_kind(spec) -> str | None:
    """``None`` for a single-agent spec, else its ``kind`` (ckb.experiments.spec.SPEC_KINDS)."""
    return getattr(spec, "kind", None)


def _parse_scales(text: str | None) -> list[float] | None:
    if text is None:
        return None
    try:
        scales = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise CKBError(f"--beta-scale expects numbers separated by commas, got {text!r}.") from None
    if not scales or any(v < 0 for v in scales):
        raise CKBError(f"--beta-scale values must be >= 0, got {text!r}.")
    return scales


def _beta_sweep(spec, scales, out: Path, workers, executor, executor_options=None) -> None:
    from ckb.experiments.run import run_beta_scale_sweep

    n_tasks = spec.trials * len(spec.algorithms) * len(scales)
    console.print(
        f"[bold]{spec.name}[/]: beta-scale sweep over {scales}, {len(spec.algorithms)} algorithm(s) x "
        f"{spec.trials} trial(s), T = {spec.horizon} -> {out}"
    )
    start = time.perf_counter()
    try:
        with Progress(*_COLUMNS, console=console) as progress:
            task = progress.add_task("trials", total=n_tasks)
            result = run_beta_scale_sweep(
                spec,
                scales,
                out,
                workers=workers,
                executor=executor,
                executor_options=executor_options,
                on_done=lambda cfg, skipped: progress.update(task, advance=1),
            )
    except CKBError as exc:
        _fail(exc)
    except KeyboardInterrupt:
        err.print(
            f"[yellow]interrupted[/]: finished trials are saved under {out}; re-run the same command to resume."
        )
        raise typer.Exit(130) from None
    table = Table(
        title=f"{spec.name}: sensitivity to the beta scale (T = {spec.horizon}, {spec.trials} trials, means)"
    )
    for h in ("algorithm", "scale", "N mean", "N median", "V(T)", "sum [g]+", "R(T)"):
        table.add_column(escape(h), justify="left" if h == "algorithm" else "right")
    for alg, row in result["algorithms"].items():
        for k, s in enumerate(scales):
            table.add_row(
                escape(alg),
                f"{s:g}",
                f"{row['violating_rounds'][k]:.3g}",
                f"{row['violating_rounds_median'][k]:.3g}",
                f"{row['violation'][k]:.3g}",
                f"{row['positive_violation'][k]:.3g}",
                f"{row['regret'][k]:.4g}",
            )
    console.print(table)
    console.print(f"{time.perf_counter() - start:.1f} s. Table: {out / 'beta_scale_sweep.json'}")


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
