"""The ``ckb`` command line: list what exists, print a spec, run an experiment."""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
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

from ckb.cli_errors import err, folder_option, install_stop_handlers, one_line_warnings, terminated
from ckb.cli_errors import fail as _fail
from ckb.cli_errors import interrupted as _interrupted
from ckb.cli_reproduce import reproduce_command
from ckb.cli_study import _pipe_closed, _quiet_stdout, study_app
from ckb.errors import CKBError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Constrained kernelized bandits: run the papers' experiments and your own.",
    pretty_exceptions_enable=False,
)
app.add_typer(study_app, name="study")  # ckb study list|show|export (cli_study.py)
console = Console()


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"ckb {version('ckb')}")
        except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
            typer.echo("ckb (not installed)")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool | None,
        typer.Option("--version", callback=_version, is_eager=True, help="Print ckb's version and exit."),
    ] = None,
) -> None:
    """Constrained kernelized bandits: run the papers' experiments and your own."""


_COLUMNS = (
    TextColumn("[progress.description]{task.description}"),
    BarColumn(),
    MofNCompleteColumn(),
    TimeElapsedColumn(),
    TimeRemainingColumn(),
)


def _kinds():
    """The registered experiment kinds, the default (single-agent) first (importing ckb.experiments
    registers the shipped ones)."""
    import ckb.experiments  # noqa: F401
    from ckb.framework import DEFAULT_KIND, KINDS
    from ckb.framework.plugins import load_entry_points

    load_entry_points()

    return [KINDS.get(DEFAULT_KIND)] + [KINDS.get(n) for n in KINDS.names() if n != DEFAULT_KIND]


def _print_table(t) -> None:
    """A :class:`ckb.framework.report.TextTable` as a rich table."""
    table = Table(title=escape(t.title))
    for k, h in enumerate(t.header):
        # in a narrow terminal a cell folds onto more lines; it is not cut ("N8-T1…", "0.000…")
        if t.numeric:
            table.add_column(escape(h), justify="left" if k == 0 else "right", overflow="fold")
        else:
            table.add_column(escape(h), style="bold" if k == 0 else None, overflow="fold")
    for row in t.rows:
        table.add_row(*(escape(c) for c in row))
    console.print(table)


@contextmanager
def _progress(description: str, total: int, out: Path, unit: str = "trial"):
    """A progress bar ``(progress, task)`` around a sweep: a :class:`CKBError` inside exits cleanly with its
    message, Ctrl-C with a note that the finished ``unit``s are kept under ``out``."""
    bar = None
    try:
        with Progress(*_COLUMNS, console=console) as bar:
            yield bar, bar.add_task(description, total=total)
    except CKBError as exc:
        _fail(exc)
    except KeyboardInterrupt:
        if bar is None or not bar.tasks[0].completed:  # before, "finished trials are saved under OUT"
            # a worker writes its trial before this process counts it: one may be on disk already
            _interrupted(
                f"no {unit} was counted as finished; re-run the same command to run them (a {unit} a worker "
                f"finished meanwhile is kept under {out})."
            )
        _interrupted(f"finished {unit}s are saved under {out}; re-run the same command to resume.")


@app.command("list")
def list_cmd() -> None:
    """Show the shipped experiments and, per experiment kind, what its specs can name (policies,
    problems, environments, methods)."""
    from ckb.experiments import load_spec, shipped

    try:
        kinds = _kinds()
    except CKBError as exc:
        _fail(exc)
    t = Table(title="experiments  (ckb experiment NAME)")
    t.add_column("name", style="bold")
    t.add_column("kind")
    t.add_column("T", justify="right")
    t.add_column("trials", justify="right")
    t.add_column("title")
    for name in sorted(shipped()):
        s = load_spec(name)
        t.add_row(name, s.kind, str(s.horizon), str(s.trials), s.title)
    console.print(t)
    for kind in kinds:
        for table in kind.listing():
            _print_table(table)


@app.command("spec")
def spec_cmd(name: Annotated[str, typer.Argument(help="A shipped experiment name.")]) -> None:
    """Print a shipped experiment spec (TOML), to copy, edit and run by path."""
    from ckb.experiments import shipped

    try:
        specs = shipped()
        if name not in specs:
            from ckb.experiments import load_spec

            load_spec(name)  # raises with suggestions
            raise CKBError(
                f"ckb spec prints a shipped spec (see ckb list); {name!r} is a spec file already: edit it, "
                f"and run it with ckb experiment {name}."
            )
        text = specs[name].read_text()
    except CKBError as exc:
        _fail(exc)
    try:
        typer.echo(text, nl=False)
    except BrokenPipeError:  # | head: the reader has what it wanted
        _pipe_closed()
    except OSError as exc:  # > /dev/full, a closed terminal
        _quiet_stdout()
        _fail(CKBError(f"cannot write the spec to standard output: {exc.strerror or exc}."))


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
        str | None,
        typer.Option(
            "--out",
            "-o",
            help="Output directory (default: runs/NAME; with one --beta-scale S runs/NAME-beta-scale-S, "
            "with a list runs/NAME-beta-sweep).",
        ),
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
    plots: Annotated[bool, typer.Option(help="Write PNG plots (a --beta-scale list writes none).")] = True,
    beta_scale: Annotated[
        str | None,
        typer.Option(
            "--beta-scale",
            help="Scale every algorithm's beta by S; a comma-separated list (e.g. 0.1,0.3,1) runs a sweep and "
            "tabulates N, V and regret against the scale.",
        ),
    ] = None,
    plugin: Annotated[
        list[str] | None,
        typer.Option(
            "--plugin",
            help="Import MODULE first (repeatable): your own problems and policies, registered on import "
            "(see docs/your-own-problem.md).",
        ),
    ] = None,
) -> None:
    """Run an experiment: parallel trials (resumable), a table, per-trial traces, plots and summary.json."""
    try:
        with one_line_warnings():
            _experiment(
                name, trials, horizon, workers, seed, out, executor, address, set_, plots, beta_scale, plugin
            )
    except KeyboardInterrupt:
        _interrupted("finished trials are kept; re-run the same command to resume.")


def default_out(name: str, spec) -> Path:
    """``runs/NAME`` for a shipped experiment, ``runs/STEM`` for a spec file ``STEM.toml`` given by path (so
    an edited copy of a shipped spec never collides with the shipped experiment's results)."""
    from ckb.experiments import shipped

    if name in shipped() or not spec.source:
        return Path("runs") / spec.name
    return Path("runs") / Path(spec.source).stem


def _experiment(
    name, trials, horizon, workers, seed, out, executor, address, set_, plots, beta_scale, plugin
):
    from ckb.experiments import load_spec
    from ckb.framework.pipeline import check_folder_free, check_output_dir, check_run_folder
    from ckb.framework.plugins import load_plugins
    from ckb.runner.executors import check_executor

    # every argument is checked here, before anything runs or any folder is created
    try:
        out = folder_option(out, "--out")
        load_plugins(plugin or [], " (--plugin)")
        for flag, val in (("--trials", trials), ("--horizon", horizon), ("--workers", workers)):
            if val is not None and val < 1:
                raise CKBError(f"{flag} must be >= 1, got {val}.")
        if seed is not None and seed < 0:
            raise CKBError(f"--seed must be >= 0, got {seed}.")
        if address is not None and executor != "ray":
            raise CKBError(f"--address {address} needs --executor ray (got --executor {executor}).")
        check_executor(executor, address=address)
        scales = _parse_scales(beta_scale)
        both = [i for i in set_ or [] if i.split("=", 1)[0].strip().split(".")[-1] == "beta_scale"]
        if scales is not None and both:
            raise CKBError(f"--beta-scale {beta_scale} and --set {both[0]} both set a beta scale; give one.")
        spec = load_spec(name).with_overrides(trials=trials, horizon=horizon, seed=seed, sets=set_ or [])
        if scales is not None and len(scales) > 1:
            from ckb.experiments.run import check_beta_scale_sweep

            if out is None:
                out = default_out(name, spec)
                out = out.with_name(f"{out.name}-beta-sweep")
            check_beta_scale_sweep(spec, scales, out)  # every scale's spec and folder
        else:
            if scales is not None:
                from ckb.experiments.run import with_beta_scale

                spec = with_beta_scale(spec, scales[0])
            spec.check_size()
            if out is None:
                out = default_out(name, spec)
                if scales is not None:  # beside the spec's own run, not in its folder
                    out = out.with_name(f"{out.name}-beta-scale-{scales[0]:g}")
            check_output_dir(out)
            spec.validate()  # a bad spec is named first, whatever the folder holds
            check_run_folder(spec, out)
            check_folder_free(out)  # a run in progress there: refused before the header and the bar
    except CKBError as exc:
        _fail(exc)
    if scales is not None and len(scales) > 1:
        _beta_sweep(spec, scales, out, workers, executor, {"address": address})
        return
    _run_and_render(spec, out, workers, executor, address, plots)


def _run_and_render(spec, out: Path, workers, executor: str, address, plots: bool) -> None:
    """Run ``spec`` with a progress bar and print its kind's report (:meth:`ckb.framework.Kind.render`)."""
    from ckb.experiments import run_experiment
    from ckb.framework import kind_of

    kind = kind_of(spec)
    n_tasks = len(spec.configs())
    console.print(
        f"[bold]{escape(spec.name)}[/]: {len(spec.algorithms)} algorithm(s) x {spec.trials} trial(s), "
        f"T = {spec.horizon}, seed {spec.seed} -> {escape(str(out))}" + escape(kind.plan_note(spec, n_tasks))
    )
    start = time.perf_counter()
    skipped = 0
    with _progress(f"{kind.unit}s", n_tasks, out, kind.unit) as (progress, task):

        def on_done(cfg, was_skipped):
            nonlocal skipped
            skipped += was_skipped
            progress.update(task, advance=1, description=f"{kind.unit}s ({cfg.algorithm} #{cfg.trial} done)")

        summary = run_experiment(
            spec,
            out,
            workers=workers,
            executor=executor,
            executor_options={"address": address},
            on_done=on_done,
            plots=plots,
        )
    _print_report(kind.render(spec, summary))
    console.print(escape(kind.footer(n_tasks - skipped, skipped, time.perf_counter() - start, out)))


def _print_report(report) -> None:
    """A :class:`ckb.framework.report.ConsoleReport`: tables, markdown (plain: rows must not be wrapped),
    notes, the paper's reference."""
    for t in report.tables:
        _print_table(t)
    if report.markdown:
        typer.echo(report.markdown)
    for line in report.notes:
        console.print(escape(line))
    if report.reference:
        console.print("[bold]paper reference:[/]")
        for k, v in report.reference.items():
            console.print(escape(f"  {k}: {v}"))


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
    out: Annotated[
        str, typer.Option("--out", "-o", help="Output directory.")
    ] = "benchmarks/results/constrained",
    plots: Annotated[bool, typer.Option(help="Write PNG plots.")] = True,
) -> None:
    """ckb.Optimizer's policies vs BoTorch's constrained qLogNEI vs Sobol search (resumable, parallel)."""
    from ckb.benchmarking.constrained import check_benchmark_folder, plan, run_benchmark
    from ckb.framework.pipeline import check_folder_free

    def names(text):
        return None if text is None else [s.strip() for s in text.split(",") if s.strip()]

    try:
        out = folder_option(out, "--out")
        for flag, val, low in (("--workers", workers, 1), ("--seeds", seeds, 1), ("--budget/-T", budget, 2)):
            if val < low:
                raise CKBError(f"{flag} must be >= {low}, got {val}.")
        configs = plan(names(problems), names(methods), seeds, budget)
        check_benchmark_folder(configs, out)  # as ckb experiment's: before anything runs or is created
        check_folder_free(out)
    except CKBError as exc:
        _fail(exc)
    console.print(
        f"[bold]constrained benchmark[/]: {len(configs)} run(s), {budget} evaluations each -> {out}"
    )
    start = time.perf_counter()
    with _progress("runs", len(configs), out, "run") as (progress, task):

        def on_done(cfg, skipped, status):
            if not status["ok"]:
                progress.console.print(escape(f"failed: {cfg.method} on {cfg.problem}, seed {cfg.seed}"))
            progress.update(task, advance=1, description=f"runs ({cfg.method} / {cfg.problem} / {cfg.seed})")

        summary = run_benchmark(configs, out, workers=workers, on_done=on_done, plots=plots)
    typer.echo((out / "table.md").read_text())  # plain: markdown rows must not be wrapped
    console.print(
        f"{summary['runs_executed']} run(s), {summary['runs_reused']} reused, {len(summary['errors'])} failed; "
        f"{time.perf_counter() - start:.0f} s. Summary: {out / 'summary.json'}"
    )
    if summary["errors"]:
        raise typer.Exit(1)


def spec_kind(spec) -> str | None:
    """``None`` for a single-agent spec (the default kind), else its ``kind`` (``ckb.framework.KINDS``)."""
    from ckb.framework import DEFAULT_KIND

    return None if spec.kind == DEFAULT_KIND else spec.kind


def _parse_scales(text: str | None) -> list[float] | None:
    if text is None:
        return None
    import re

    entries = [v.strip() for v in text.split(",")]
    bad = [v for v in entries if not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", v)]
    if bad:
        what = "an empty entry" if "" in bad else f"{bad[0]!r} is not a number"
        raise CKBError(
            f"--beta-scale expects numbers separated by commas (e.g. 0.1,0.5,1), got {text!r}"
            + (f" ({what})." if len(entries) > 1 or "" in bad else ".")
        )
    scales = [float(v) for v in entries]
    from ckb.experiments.run import check_beta_scales

    return check_beta_scales(scales, "--beta-scale")


def _beta_sweep(spec, scales, out: Path, workers, executor, executor_options=None) -> None:
    from ckb.experiments.run import run_beta_scale_sweep

    n_tasks = spec.trials * len(spec.algorithms) * len(scales)
    console.print(
        f"[bold]{spec.name}[/]: beta-scale sweep over {scales}, {len(spec.algorithms)} algorithm(s) x "
        f"{spec.trials} trial(s), T = {spec.horizon} -> {out}"
    )
    start = time.perf_counter()
    with _progress("trials", n_tasks, out) as (progress, task):
        result = run_beta_scale_sweep(
            spec,
            scales,
            out,
            workers=workers,
            executor=executor,
            executor_options=executor_options,
            on_done=lambda cfg, skipped: progress.update(task, advance=1),
        )
    table = Table(
        title=f"{spec.name}: sensitivity to the beta scale (T = {spec.horizon}, {spec.trials} trials, means)"
    )
    for h in ("algorithm", "scale", "N mean", "N median", "V(T)", "sum [g]+", "R(T)"):
        table.add_column(escape(h), justify="left" if h == "algorithm" else "right")
    for alg, row in result["algorithms"].items():
        for k, s in enumerate(result["scales"]):  # with an earlier sweep's scales in the same folder
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
    from ckb.experiments.run import takes_beta_scale

    unscaled = [label for label, takes in takes_beta_scale(spec).items() if not takes]
    if unscaled:
        console.print(escape(f"({', '.join(unscaled)}: no beta_scale parameter, the same at every scale)"))
    console.print(f"{time.perf_counter() - start:.1f} s. Table: {out / 'beta_scale_sweep.json'}")


app.command("reproduce")(reproduce_command)  # ckb reproduce PAPER (cli_reproduce.py)


def main(args: list[str] | None = None) -> None:
    """The ``ckb`` console script: :data:`app`, with a usage error (an unknown option, a value that is not
    a number, a missing argument) as one ``error:`` line naming the command's ``--help``, as every other
    bad input is, instead of a boxed message of several lines; it exits with the command's code (2 for
    such an error), as ``app()`` does. Ctrl-C and SIGTERM stop a command with a note of what is kept
    (:func:`ckb.cli_errors.stop_on_signal`)."""
    install_stop_handlers()
    raise SystemExit(_main(args))


def _main(args: list[str] | None) -> int:
    try:
        code = app(args, standalone_mode=False)
    except typer.TyperException as exc:  # the usage errors of typer's click
        text = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        ctx = getattr(exc, "ctx", None)
        where = f"{ctx.command_path} --help" if ctx is not None else "ckb --help"
        given = _given(sys.argv[1:] if args is None else args, getattr(exc, "param", None))
        if given is not None and repr(given) not in text:  # typer's "Input should be a valid integer"
            text = f"{text.rstrip('.')}, got {given!r}"
        err.print("[bold red]error:[/]", end=" ", soft_wrap=True)
        err.print(f"{' '.join(text.split())} (see {where})", markup=False, highlight=False, soft_wrap=True)
        return int(getattr(exc, "exit_code", 2))
    except typer.Abort:  # Ctrl-C or SIGTERM in a command that keeps nothing to resume
        err.print("Terminated." if terminated() else "Aborted.", soft_wrap=True)
        return 143 if terminated() else 1
    return code if isinstance(code, int) else 0


def _given(args: list[str], param) -> str | None:
    """The value the command line gave the option ``param`` (its last occurrence: ``--opt V`` or
    ``--opt=V``), for a usage error that does not repeat it; ``None`` if not found."""
    if getattr(param, "param_type_name", "") != "option":
        return None
    value = None
    for k, token in enumerate(args):
        for opt in param.opts:
            if token == opt and k + 1 < len(args):
                value = args[k + 1]
            elif token.startswith(f"{opt}=") and opt.startswith("--"):
                value = token[len(opt) + 1 :]
    return value


if __name__ == "__main__":  # pragma: no cover
    main()
