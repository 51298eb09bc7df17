"""Multi-agent experiments end to end: parallel resumable sweep, summary.json, plots.

The ``multiagent`` experiment kind (registered here, on import): ``ckb experiment NAME`` runs a spec
with ``kind = "multiagent"`` through :func:`ckb.framework.run_pipeline` with these hooks. Trials run over the
code base's executors (:func:`ckb.runner.executors.get_executor`; each trial in one worker, its agents
on the trial's backend), each trace is written to ``OUT/traces/LABEL/trial-NNNN.npz`` when its trial
finishes, finished trials with the same configuration hash are reused, and a trace of a different
configuration is never overwritten (:class:`~ckb.runner.sweep.SweepConflictError`).

``summary.json`` has the trial-based layout (:func:`ckb.framework.report.assemble_summary`): ``{"experiment",
"horizon", "trials", "algorithms": {LABEL: {METRIC: {"mean", "stderr", "median", "values"}}},
"checkpoints", "settings", "problem_instance_0", "reference", "choices"}`` with METRIC in ``regret``,
``violation``, ``positive_violation`` (strong violation), ``violating_rounds``, ``seconds_per_round``
(wall time of a round: every agent's step and the coordinator's update on the trial's backend) and,
beside them, ``affine_shift`` S_T, ``best_iterate_gap``, ``best_iterate_objective_gap``,
``best_iterate_violation``, ``affine_shift_over_sqrt_T``, ``regret_over_T``, ``average_utility`` (a
utility problem), ``average_objective``, and per label ``horizon`` and ``n_agents``. With
``report.relative_to = LABEL`` every label also gets ``relative`` (its mean average utility and
affine shift relative to that label's: the paper's "8.4% higher utility, 78.1% less deviation").
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ckb.framework import Kind, register_kind, run_pipeline
from ckb.framework.report import (
    TextTable,
    assemble_summary,
    burn_in,
    checkpoint_means,
    checkpoint_rounds,
    doc_line,
    loglog_slopes,
    plot_mean_curves,
    stats,
)
from ckb.multiagent.metrics import METRICS
from ckb.multiagent.spec import MultiAgentSpec
from ckb.multiagent.trial import MultiAgentTrace, MultiAgentTrial, MultiAgentTrialConfig
from ckb.runner.sweep import TraceStore, load_traces, run_sweep

_PLOTS = {
    "regret": "cumulative regret R(t)",
    "regret_over_t": "average regret R(t)/t",
    "violation": "violation V(t) = ||[sum g]^+||",
    "positive_violation": "strong violation ||sum [g]^+||",
    "affine_shift": "affine shift S(t) = ||sum (Ax - b)||",
    "affine_shift_over_sqrt_t": "S(t)/sqrt(t)",
    "best_iterate_gap": "best iterate: min_s (f - f*) + ||[g]^+|| + ||Ax - b||",
    "utility_over_t": "average utility (1/t) sum U",
}
#: trial-mean curves tabulated at the checkpoint rounds
_CHECKPOINTED = (
    "regret_over_t",
    "violation_over_t",
    "positive_violation_over_t",
    "affine_shift",
    "affine_shift_over_sqrt_t",
    "violation",
    "best_iterate_gap",
)


def run_one(task: tuple[dict, str]) -> dict[str, float]:
    """Worker entry point: run one trial from its config dict, save its trace at ``path``."""
    config_dict, path = task
    with MultiAgentTrial(MultiAgentTrialConfig(**config_dict)) as trial:
        trace = trial.run()
    trace.save(path)
    return {k: float(v[-1]) for k, v in trace.curves().items()}


#: multi-agent traces: stored as the single-agent ones, checked as :class:`MultiAgentTrace`
MULTIAGENT_TRACES = TraceStore(MultiAgentTrace)


def run_multiagent_sweep(configs, out: str | Path, **options: Any) -> dict[tuple[str, int], Path]:
    """Run every config not already on disk: :func:`ckb.runner.sweep.run_sweep` with the multi-agent
    trial as the worker; ``options``: ``workers``, ``executor``, ``executor_options`` (``ray``:
    ``address``, ``runtime_env``), ``on_done``."""
    return run_sweep(configs, out, worker=run_one, store=MULTIAGENT_TRACES, **options)


def load_multiagent_traces(paths: dict[tuple[str, int], Path]) -> dict[str, list[MultiAgentTrace]]:
    return load_traces(paths, MultiAgentTrace)


def trial_curves(traces: list[MultiAgentTrace]) -> dict[str, np.ndarray]:
    per = [tr.curves() for tr in traces]
    out = {k: np.stack([c[k] for c in per]) for k in per[0]}
    if traces[0].meta["problem"].get("utility"):  # a problem that minimizes a cost has none to plot
        out["utility_over_t"] = -out["objective_over_t"]
    return out


def _final_entry(cv: dict[str, np.ndarray], traces: list[MultiAgentTrace]) -> dict[str, Any]:
    """A label's final-round metrics over its trials (``algorithms[LABEL]`` of the summary)."""
    T = cv["regret"].shape[1]
    entry: dict[str, Any] = {k: stats(cv[k][:, -1]) for k in METRICS if k in cv}
    entry["seconds_per_round"] = stats(np.array([float(np.mean(tr.seconds)) for tr in traces]))
    entry["affine_shift_over_sqrt_T"] = stats(cv["affine_shift"][:, -1] / np.sqrt(T))
    entry["regret_over_T"] = stats(cv["regret"][:, -1] / T)
    entry["average_objective"] = stats(cv["objective_over_t"][:, -1])
    if traces[0].meta["problem"].get("utility"):
        entry["average_utility"] = stats(cv["utility_over_t"][:, -1])
    if "constraint_sum" in cv:
        entry["constraint_sum"] = stats(cv["constraint_sum"][:, -1])
    entry["regret_nonpositive_fraction"] = float(np.mean(cv["regret"][:, -1] <= 0))
    entry["horizon"] = T
    entry["n_agents"] = int(traces[0].f.shape[1])
    entry["method"] = traces[0].meta.get("method", {})
    return entry


def _checkpoints(spec, cv: dict[str, np.ndarray], entry: dict[str, Any]) -> dict[str, Any]:
    """A label's trial means at the checkpoint rounds, log-log slopes, burn-in and violation peak."""
    ts = checkpoint_rounds(spec, cv["regret"].shape[1])
    cp = {
        "t": ts,
        **checkpoint_means(cv, ts, _CHECKPOINTED),
        "loglog_slope_second_half": loglog_slopes(
            cv, ("regret", "positive_violation", "violating_rounds", "affine_shift")
        ),
    }
    if "average_utility" in entry:
        cp.update(checkpoint_means(cv, ts, ("utility_over_t",)))
    if "constraint_sum" in cv:
        cp["burn_in"] = burn_in(cv["constraint_sum"].mean(axis=0))
        # violation V(t) of the trial mean: its peak and final value (DMABO's "compensation")
        mv = cv["violation"].mean(axis=0)
        cp["mean_violation_peak"] = {
            "t": int(np.argmax(mv)) + 1,
            "value": float(mv.max()),
            "final": float(mv[-1]),
        }
    return cp


def _relative(algs: dict[str, Any], rel: str) -> None:
    """Each label's mean average utility and affine shift relative to label ``rel``'s (in place)."""
    base = algs[rel]
    for entry in algs.values():
        r = {}
        if "average_utility" in entry and base["average_utility"]["mean"]:
            r["average_utility"] = entry["average_utility"]["mean"] / base["average_utility"]["mean"] - 1.0
        if base["affine_shift"]["mean"]:
            r["affine_shift"] = entry["affine_shift"]["mean"] / base["affine_shift"]["mean"] - 1.0
        entry["relative"] = {"to": rel, **r}


def summarize(spec, traces_by_alg: dict[str, list[MultiAgentTrace]]) -> tuple[dict[str, Any], dict]:
    algs: dict[str, Any] = {}
    checkpoints: dict[str, Any] = {}
    all_curves = {}
    for alg in spec.algorithms:
        traces = traces_by_alg.get(alg)
        if not traces:
            continue
        cv = all_curves[alg] = trial_curves(traces)
        algs[alg] = _final_entry(cv, traces)
        checkpoints[alg] = _checkpoints(spec, cv, algs[alg])
    rel = spec.report.get("relative_to")
    if rel in algs:
        _relative(algs, rel)
    summary = assemble_summary(spec, traces_by_alg, algs, checkpoints, kind="multiagent")
    return summary, all_curves


def plot_curves(
    out: Path, name: str, all_curves: dict[str, dict[str, np.ndarray]], max_points: int = 1000
) -> list[Path]:
    """One PNG per metric that is not 0 everywhere: the mean over trials with a ±1 standard-error band,
    per label."""
    return plot_mean_curves(
        out, name, all_curves, _PLOTS, max_points=max_points, skip_zero=True, legend_size=7
    )


class MultiAgentKind(Kind):
    """``kind = "multiagent"``: trials of :class:`~ckb.multiagent.trial.MultiAgentTrial` swept as traces,
    summarized in the single-agent layout plus the multi-agent metrics."""

    name = "multiagent"
    spec = MultiAgentSpec

    def sweep(self, spec, out, **options):
        return load_multiagent_traces(run_multiagent_sweep(spec.configs(), out, **options))

    summarize = staticmethod(summarize)

    def plot(self, out, spec, summary, curves):
        return plot_curves(out, spec.name, curves)

    def outputs(self, spec):
        return ["summary.json", *(f"{m}.png" for m in _PLOTS)]

    def listing(self):
        from ckb.multiagent import METHODS, MULTIAGENT_PROBLEMS

        rows = [
            [n, noun, doc_line(reg.get(n))]
            for reg, noun in ((METHODS, "method"), (MULTIAGENT_PROBLEMS, "problem"))
            for n in reg.names()
        ]
        title = 'multi-agent methods and problems (specs with kind = "multiagent")'
        return [TextTable(title, ["name", "kind", "summary"], rows)]


register_kind(MultiAgentKind())


def run_multiagent_experiment(spec, out: str | Path, **options: Any) -> dict[str, Any]:
    """Deprecated: ``ckb.experiments.run_experiment`` (:func:`ckb.framework.run_pipeline`) runs every kind."""
    warnings.warn(
        "run_multiagent_experiment is deprecated; use ckb.experiments.run_experiment (every kind).",
        DeprecationWarning,
        stacklevel=2,
    )
    return run_pipeline(spec, out, **options)
