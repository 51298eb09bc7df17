"""The constrained benchmark as an experiment spec: ``kind = "benchmark"`` (``ckb experiment NAME``).

A benchmark spec runs :mod:`ckb.benchmarking.constrained` (the same runs, files, metrics, table and plots
as ``ckb benchmark constrained``) from a TOML file that states every choice, so the benchmark is listed,
printed, edited and overridden like any other experiment (``ckb list``, ``ckb spec``, ``--trials``,
``--horizon``, ``--seed``, ``--set``). Layout::

    kind = "benchmark"
    name = "constrained-bo"
    horizon = 60                      # evaluations per run, the shared Sobol design included
    trials = 20                       # seeds seed, seed + 1, ..., seed + trials - 1
    seed = 0
    problems = ["gardner-1", "gramacy"]   # ckb.problems.constrained_benchmarks (default: all)
    n_init = 6                        # optional: the shared Sobol design's size (default 2d + 2)

    [algorithms.config]               # a ckb.Optimizer policy, or qlognei / sobol (the label is the
    beta = 2.0                        # method's name); the table's keys are its parameters

    [reference]  [choices]            # as in every spec

``--horizon`` sets the budget and ``--trials`` the number of seeds. Finished runs are reused from disk
(a run stored with other parameters stops the experiment, naming its file).

The ``benchmark`` experiment kind is registered here, on import (:class:`BenchmarkKind`: the
framework's pipeline with the benchmark's runs, summary, table and plots as its hooks).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

from ckb._validation import did_you_mean
from ckb.errors import CKBError, SpecError
from ckb.framework import Kind, register_kind, run_pipeline
from ckb.framework.report import ConsoleReport, TextTable
from ckb.framework.spec import SpecBase, algorithm_tables


@dataclass(kw_only=True)
class BenchmarkSpec(SpecBase):
    """A constrained-benchmark experiment (see the module docstring); ``algorithms``: method -> its
    parameters."""

    problems: list[str]
    algorithms: dict[str, dict[str, Any]]
    n_init: int | None = None

    kind: ClassVar[str] = "benchmark"
    FIELDS: ClassVar[dict[str, type]] = {"problems": list, "n_init": int}
    SET_EXAMPLE: ClassVar[str] = "algorithms.config.beta=2.0"

    @classmethod
    def _parse(cls, raw: dict[str, Any], where: str, report: dict[str, Any]) -> dict[str, Any]:
        from ckb.benchmarking.constrained import CONSTRAINED_BENCHMARKS

        if "n_init" in raw and raw["n_init"] < 1:
            raise SpecError(f"field 'n_init'{where} must be >= 1, got {raw['n_init']!r}.")
        problems = list(raw.get("problems", CONSTRAINED_BENCHMARKS))
        if not problems:
            raise SpecError(f"field 'problems'{where} must name at least one problem.")
        for p in problems:
            if not isinstance(p, str) or p not in CONSTRAINED_BENCHMARKS:
                raise SpecError(
                    f"field 'problems'{where}: unknown benchmark problem {p!r}."
                    f"{did_you_mean(str(p), CONSTRAINED_BENCHMARKS)}"
                )
        algs: dict[str, dict[str, Any]] = {}
        for label, body in algorithm_tables(raw, where, "method", " (the method's parameters)").items():
            method = body.pop("method", label)
            if method != label:
                raise SpecError(
                    f"field 'algorithms.{label}.method'{where}: a benchmark's labels are method names (runs are "
                    f"stored by method), got method {method!r} under label {label!r}."
                )
            algs[label] = body
        return {"problems": problems, "n_init": raw.get("n_init"), "algorithms": algs}

    def _body(self) -> dict[str, Any]:
        return {
            "problems": list(self.problems),
            **({} if self.n_init is None else {"n_init": self.n_init}),
            "algorithms": self.algorithms,
        }

    @property
    def seeds(self) -> list[int]:
        return list(range(self.seed, self.seed + self.trials))

    def configs(self):
        """Every run (:class:`~ckb.benchmarking.constrained.RunConfig`), seed-major."""
        from ckb.benchmarking.constrained import plan

        return plan(
            self.problems,
            list(self.algorithms),
            self.seeds,
            self.horizon,
            n_init=self.n_init,
            method_params={m: p for m, p in self.algorithms.items() if p},
        )

    def _check_budget(self) -> None:
        """Every problem's budget (the horizon) must exceed its initial design (``n_init``, default
        2d + 2 points): the metrics after the design need at least one optimizer step."""
        from ckb.benchmarking.constrained import CONSTRAINED_BENCHMARKS

        for name in self.problems:
            if name not in CONSTRAINED_BENCHMARKS:
                continue  # plan() names it
            d = CONSTRAINED_BENCHMARKS[name].make().domain.d
            n = self.n_init if self.n_init is not None else 2 * d + 2
            if self.horizon <= n:
                how = "n_init" if self.n_init is not None else f"2d + 2 with d = {d}"
                raise SpecError(
                    f"field 'horizon'{self.where}: T = {self.horizon} evaluations do not go past the initial "
                    f"design of {name!r} ({n} points, {how}); use a horizon of at least {n + 1}."
                )

    def validate(self) -> BenchmarkSpec:
        """Check the names and build every method once on the first problem, so bad parameters fail
        before any run."""
        from ckb.benchmarking.constrained import open_run

        where = self.where
        self._check_budget()  # first: the spec's own field named, not plan()'s general message
        try:
            configs = self.configs()
        except CKBError as exc:
            raise SpecError(f"{self.name}{where}: {exc}") from None
        first = {}  # each method's first run: on the first problem (configs are seed-major)
        for cfg in configs:
            first.setdefault(cfg.method, cfg)
        for method, cfg in first.items():
            try:
                _, opt = open_run(cfg)
            except CKBError as exc:
                raise SpecError(f"field 'algorithms.{method}'{where}: {exc}") from None
            except TypeError as exc:  # a baseline given a parameter it does not take
                raise SpecError(f"field 'algorithms.{method}'{where}: {exc}") from None
            if hasattr(opt, "close"):
                opt.close()
        return self


class BenchmarkKind(Kind):
    """``kind = "benchmark"``: runs of :mod:`ckb.benchmarking.constrained` (records, not traces), its
    summary, ``table.md`` and plots; failed runs are listed and raise after everything is written."""

    name = "benchmark"
    spec = BenchmarkSpec
    unit = "run"

    def sweep(self, spec, out, *, on_done=None, executor_options=None, **options):
        """:func:`~ckb.benchmarking.constrained.sweep_runs`; ``on_done(task, skipped)`` gets
        ``task.algorithm`` = ``method/problem`` and ``task.trial`` = the seed."""
        from ckb.benchmarking.constrained import sweep_runs

        def done(cfg, skipped, status):
            if on_done is not None:
                on_done(SimpleNamespace(algorithm=f"{cfg.method}/{cfg.problem}", trial=cfg.seed), skipped)

        opts = dict(executor_options or {})
        return sweep_runs(spec.configs(), out, on_done=done, executor_options=opts, **options)

    def summarize(self, spec, outcome):
        from ckb.benchmarking.constrained import outcome_summary

        return outcome_summary(outcome), outcome.records

    def write(self, out, spec, summary):
        from ckb.benchmarking.constrained import write_outputs

        write_outputs(out, summary)

    def outputs(self, spec):
        from ckb.benchmarking.constrained import output_names

        return output_names(spec.problems)

    def plot(self, out, spec, summary, records):
        from ckb.benchmarking.constrained import plot_curves

        return plot_curves(records, Path(out) / "plots")

    def finish(self, out, spec, summary):
        """Add ``table`` (the markdown table); raise a :class:`~ckb.errors.CKBError` listing failed runs
        (their errors are in ``summary.json``; every finished run stays on disk)."""
        summary["table"] = (Path(out) / "table.md").read_text()
        errors = summary["errors"]
        if errors:
            failed = ", ".join(f"{e['method']} on {e['problem']} seed {e['seed']}" for e in errors[:5])
            raise CKBError(
                f"{len(errors)} run(s) failed ({failed}{', ...' if len(errors) > 5 else ''}); "
                f"their errors are in {Path(out) / 'summary.json'}; finished runs are kept, re-run to retry."
            )

    def render(self, spec, summary) -> ConsoleReport:
        return ConsoleReport(markdown=summary["table"])

    def plan_note(self, spec, n_tasks: int) -> str:
        return f" ({n_tasks} runs over {len(spec.problems)} problems)"

    def footer(self, done: int, reused: int, seconds: float, out: Path) -> str:
        return f"{done} run(s), {reused} reused from disk, {seconds:.1f} s. Summary: {out / 'summary.json'}"

    def listing(self) -> list[TextTable]:
        from ckb.benchmarking.constrained import BASELINE_METHODS, CONSTRAINED_BENCHMARKS, ckb_policies

        problems = [[n, b.source] for n, b in sorted(CONSTRAINED_BENCHMARKS.items())]
        methods = [[m, "ckb.Optimizer policy"] for m in ckb_policies()]
        methods += [[m, "baseline (ckb.benchmarking.baselines)"] for m in BASELINE_METHODS]
        return [
            TextTable('benchmark problems (specs with kind = "benchmark")', ["name", "source"], problems),
            TextTable('benchmark methods (specs with kind = "benchmark")', ["name", "what"], methods),
        ]


register_kind(BenchmarkKind())


def run_benchmark_experiment(spec: BenchmarkSpec, out: str | Path, **options: Any) -> dict[str, Any]:
    """Deprecated: ``ckb.experiments.run_experiment`` (:func:`ckb.framework.run_pipeline`) runs every kind;
    for a benchmark spec it returns the summary with ``table`` and raises after writing it if runs failed."""
    warnings.warn(
        "run_benchmark_experiment is deprecated; use ckb.experiments.run_experiment (every kind).",
        DeprecationWarning,
        stacklevel=2,
    )
    return run_pipeline(spec, out, **options)
