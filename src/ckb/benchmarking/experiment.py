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
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from ckb._validation import did_you_mean
from ckb.errors import CKBError, SpecError
from ckb.experiments.spec import check_fields, common_fields, overridden

_TOP = {
    "kind": str,
    "name": str,
    "title": str,
    "description": str,
    "paper": str,
    "horizon": int,
    "trials": int,
    "seed": int,
    "problems": list,
    "n_init": int,
    "algorithms": dict,
    "reference": dict,
    "choices": dict,
}
_REQUIRED = ("kind", "name", "horizon", "trials", "algorithms")


@dataclass
class BenchmarkSpec:
    """A constrained-benchmark experiment (see the module docstring)."""

    name: str
    horizon: int  # the budget: evaluations per run
    trials: int  # seeds
    problems: list[str]
    algorithms: dict[str, dict[str, Any]]  # method -> its parameters
    seed: int = 0
    n_init: int | None = None
    title: str = ""
    description: str = ""
    paper: str = ""
    reference: dict[str, Any] = field(default_factory=dict)
    choices: dict[str, Any] = field(default_factory=dict)
    source: str = ""
    kind: str = "benchmark"

    @classmethod
    def from_dict(cls, raw: dict[str, Any], source: str = "") -> BenchmarkSpec:
        from ckb.benchmarking.constrained import CONSTRAINED_BENCHMARKS

        where = f" in {source}" if source else ""
        check_fields(raw, _TOP, _REQUIRED, where, kind="benchmark")
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
        if not raw["algorithms"]:
            raise SpecError(f"field 'algorithms'{where} must list at least one method.")
        algs: dict[str, dict[str, Any]] = {}
        for label, body in raw["algorithms"].items():
            if not isinstance(body, dict):
                raise SpecError(
                    f"field 'algorithms.{label}'{where} must be a table (the method's parameters)."
                )
            body = dict(body)
            method = body.pop("method", label)
            if method != label:
                raise SpecError(
                    f"field 'algorithms.{label}.method'{where}: a benchmark's labels are method names (runs are "
                    f"stored by method), got method {method!r} under label {label!r}."
                )
            algs[label] = body
        return cls(**common_fields(raw, source), problems=problems, n_init=raw.get("n_init"), algorithms=algs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "benchmark",
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "paper": self.paper,
            "horizon": self.horizon,
            "trials": self.trials,
            "seed": self.seed,
            "problems": list(self.problems),
            **({} if self.n_init is None else {"n_init": self.n_init}),
            "algorithms": copy.deepcopy(self.algorithms),
            "reference": copy.deepcopy(self.reference),
            "choices": copy.deepcopy(self.choices),
        }

    def with_overrides(self, *, trials=None, horizon=None, seed=None, sets: list[str] = ()) -> BenchmarkSpec:
        """A copy with CLI overrides (``--horizon``: the budget; ``--trials``: the number of seeds)."""
        return overridden(self, trials, horizon, seed, sets, example="algorithms.config.beta=2.0")

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

    def validate(self) -> BenchmarkSpec:
        """Check the names and build every method once on the first problem, so bad parameters fail
        before any run."""
        from ckb.benchmarking.constrained import open_run

        where = f" in {self.source}" if self.source else ""
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


def run_benchmark_experiment(
    spec: BenchmarkSpec,
    out: str | Path,
    *,
    workers: int | None = None,
    executor: str = "process",
    executor_options: Mapping[str, Any] | None = None,
    on_done: Callable | None = None,
    plots: bool = True,
) -> dict[str, Any]:
    """Run ``spec`` (:func:`ckb.benchmarking.constrained.run_benchmark`) and return its summary, with
    ``table`` (the markdown table). ``on_done(cfg, skipped)`` gets ``cfg.algorithm`` (``method/problem``)
    and ``cfg.trial`` (the seed). Runs that raised are listed in ``summary["errors"]`` and raise a
    :class:`~ckb.errors.CKBError` after the summary is written (every finished run stays on disk)."""
    from ckb.benchmarking.constrained import run_benchmark

    spec.validate()

    def done(cfg, skipped, status):
        if on_done is not None:
            on_done(SimpleNamespace(algorithm=f"{cfg.method}/{cfg.problem}", trial=cfg.seed), skipped)

    out = Path(out)
    summary = run_benchmark(
        spec.configs(),
        out,
        workers=workers,
        executor=executor,
        executor_options=dict(executor_options or {}),
        on_done=done,
        plots=plots,
    )
    summary["table"] = (out / "table.md").read_text()
    if summary["errors"]:
        failed = ", ".join(f"{e['method']} on {e['problem']} seed {e['seed']}" for e in summary["errors"][:5])
        raise CKBError(
            f"{len(summary['errors'])} run(s) failed ({failed}{', ...' if len(summary['errors']) > 5 else ''}); "
            f"their errors are in {out / 'summary.json'}; finished runs are kept, re-run to retry."
        )
    return summary
