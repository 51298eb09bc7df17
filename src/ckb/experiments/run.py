"""Run an experiment spec end to end: sweep (parallel, resumable), summary.json, plots."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ckb.experiments.report import plot_curves, summarize, write_summary
from ckb.experiments.spec import ExperimentSpec
from ckb.runner.sweep import load_traces, run_sweep

#: spec kind -> "module:function" running it, with :func:`run_experiment`'s signature (the kinds of
#: :data:`ckb.experiments.spec.SPEC_KINDS`)
RUNNERS = {
    "multiagent": "ckb.multiagent.run:run_multiagent_experiment",
    "benchmark": "ckb.benchmarking.experiment:run_benchmark_experiment",
}


def run_experiment(
    spec: ExperimentSpec,
    out: str | Path,
    *,
    workers: int | None = None,
    executor: str = "process",
    executor_options: Mapping[str, Any] | None = None,
    on_done: Callable | None = None,
    plots: bool = True,
) -> dict[str, Any]:
    """Validate ``spec``, run every (algorithm, trial) not yet on disk under ``out``, and write the report.

    ``executor_options`` go to the executor (``ray``: ``address``, ``runtime_env``).
    Returns the summary dict (also written to ``out/summary.json``).
    """
    kind = getattr(spec, "kind", None)
    if kind is not None:  # another spec kind (ckb.experiments.spec.SPEC_KINDS) runs its own pipeline
        import importlib

        module, fn = RUNNERS[kind].split(":")
        return getattr(importlib.import_module(module), fn)(
            spec,
            out,
            workers=workers,
            executor=executor,
            executor_options=executor_options,
            on_done=on_done,
            plots=plots,
        )
    spec.validate()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = run_sweep(
        spec.configs(),
        out,
        workers=workers,
        executor=executor,
        executor_options=executor_options,
        on_done=on_done,
    )
    traces = load_traces(paths)
    summary, all_curves = summarize(spec, traces)
    write_summary(out / "summary.json", summary)
    if plots:
        summary["plots"] = [str(p) for p in plot_curves(out, spec.name, all_curves, report=spec.report)]
    return summary


def with_beta_scale(spec: ExperimentSpec, scale: float) -> ExperimentSpec:
    """A copy of ``spec`` whose every algorithm that takes ``beta_scale`` uses ``scale``."""
    from ckb.policies import POLICIES, init_parameters

    if getattr(spec, "kind", None) is not None:
        from ckb.errors import SpecError

        raise SpecError(
            f"--beta-scale is for single-agent experiments; {spec.name!r} is of kind {spec.kind!r}: set a "
            "method's width with --set algorithms.LABEL.beta=VALUE."
        )
    sets = [
        f"algorithms.{label}.beta_scale={scale!r}"
        for label, (policy, _) in spec.algorithms.items()
        if "beta_scale" in init_parameters(POLICIES.get(policy))
    ]
    return spec.with_overrides(sets=sets)


def run_beta_scale_sweep(
    spec: ExperimentSpec,
    scales: list[float],
    out: str | Path,
    *,
    workers: int | None = None,
    executor: str = "process",
    executor_options: Mapping[str, Any] | None = None,
    on_done: Callable | None = None,
) -> dict[str, Any]:
    """Run ``spec`` once per beta scale (``out/beta-scale-<s>/``) and tabulate N, V and regret against it.

    The violation counts of the primal-dual papers are very sensitive to the width scale; this shows the
    sensitivity instead of hiding it. Writes ``out/beta_scale_sweep.json``:
    ``{"experiment", "scales", "algorithms": {ALG: {METRIC: [mean per scale]}}, "median_violating_rounds": ...}``.
    """
    from ckb.io import write_json

    out = Path(out)
    table: dict[str, Any] = {}
    for s in scales:
        summary = run_experiment(
            with_beta_scale(spec, s),
            out / f"beta-scale-{s:g}",
            workers=workers,
            executor=executor,
            executor_options=executor_options,
            on_done=on_done,
            plots=False,
        )
        for alg, m in summary["algorithms"].items():
            row = table.setdefault(alg, {})
            for metric in ("violating_rounds", "violation", "positive_violation", "regret"):
                row.setdefault(metric, []).append(m[metric]["mean"])
            row.setdefault("violating_rounds_median", []).append(m["violating_rounds"]["median"])
    result = {
        "experiment": spec.name,
        "horizon": spec.horizon,
        "trials": spec.trials,
        "scales": list(scales),
        "algorithms": table,
    }
    write_json(out / "beta_scale_sweep.json", result)
    return result
