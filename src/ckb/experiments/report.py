"""The single-agent kind's report: aggregating traces into ``summary.json`` and PNG plots (the helpers
every kind shares are :mod:`ckb.framework.report`'s, re-exported here).

``summary.json`` layout::

    {"experiment": NAME, "horizon": T, "trials": N,
     "algorithms": {ALG: {METRIC: {"mean", "stderr", "median", "values"}}},   # values at the final round
     "checkpoints": {ALG: {"t": [...], "regret_over_t": [...],                # mean R(t)/t
                           "loglog_slope_second_half": {...}, "burn_in": tau}},
     "settings": {...the spec...}, "reference": {...the paper's numbers...}, "choices": {...}}

METRIC is one of ``regret``, ``violation`` (soft), ``positive_violation`` (rectified),
``violating_rounds``, ``seconds_per_round``; later experiments add their own names. ``stderr`` is the
standard error of the mean over trials (sample std with ddof = 1, divided by sqrt(N)).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ckb.framework.report import (
    assemble_summary,
    burn_in,
    checkpoint_means,
    checkpoint_rounds,
    loglog_slope,
    loglog_slopes,
    plot_mean_curves,
    save_figure,
    stats,
    table_rows,
    write_summary,
)
from ckb.runner.metrics import METRICS, OPTIONAL_METRICS, curves

__all__ = [
    "assemble_summary",
    "burn_in",
    "checkpoint_means",
    "checkpoint_rounds",
    "loglog_slope",
    "plot_curves",
    "summarize",
    "table_rows",
    "trial_curves",
    "write_summary",
]

_stats = stats  # the name this module used before ckb.framework.report.stats

_LABELS = {
    "regret": "cumulative regret R(t)",
    "violation": "soft violation V(t) = ||[sum g]^+||",
    "positive_violation": "positive violation ||sum [g]^+||",
    "violating_rounds": "violating rounds N(t)",
    "regret_over_t": "average regret R(t)/t",
    "constraint_sum": "signed cumulative constraint max_j sum g_j",
    "violation_over_t": "time-averaged violation V(t)/t",
    "positive_violation_over_t": "time-averaged rectified violation (1/t) sum [g]^+",
    "utility_over_t": "time-averaged utility (1/t) sum f(x_s)",
}


def trial_curves(traces) -> dict[str, np.ndarray]:
    """Stack each metric's curve over trials: ``{metric: (trials, T)}``, plus ``regret_over_t``."""
    per = [curves(tr.f, tr.g, tr.regret_reference, tr.sign, tr.utility_star_plus) for tr in traces]
    out = {k: np.stack([c[k] for c in per]) for k in per[0]}
    t = np.arange(1, out["regret"].shape[1] + 1)
    out["regret_over_t"] = out["regret"] / t
    out["violation_over_t"] = out["violation"] / t
    out["positive_violation_over_t"] = out["positive_violation"] / t
    # (1/t) sum_s u(x_s) = (1/t) sum_s u*_s - R(t)/t, back in the problem's sense (sign * utility)
    u_star = np.stack([np.broadcast_to(tr.regret_reference, (tr.t,)) for tr in traces])
    out["utility_over_t"] = traces[0].sign * (np.cumsum(u_star, axis=1) / t - out["regret_over_t"])
    return out


def summarize(
    spec, traces_by_alg: dict[str, list]
) -> tuple[dict[str, Any], dict[str, dict[str, np.ndarray]]]:
    algs: dict[str, Any] = {}
    checkpoints: dict[str, Any] = {}
    all_curves = {}
    for alg, traces in traces_by_alg.items():
        cv = trial_curves(traces)
        all_curves[alg] = cv
        entry = {k: stats(cv[k][:, -1]) for k in METRICS + OPTIONAL_METRICS if k in cv}
        entry["seconds_per_round"] = stats(np.array([float(np.mean(tr.seconds)) for tr in traces]))
        algs[alg] = entry
        T = cv["regret"].shape[1]
        ts = checkpoint_rounds(spec, T)
        checkpoints[alg] = {
            "t": ts,
            **checkpoint_means(cv, ts, ("regret_over_t", "violation_over_t", "positive_violation_over_t")),
            # growth exponent of the trial-mean curve over the second half: < 1 means sublinear
            "loglog_slope_second_half": loglog_slopes(
                cv, ("regret", "violation", "positive_violation", "violating_rounds")
            ),
        }
        if getattr(spec, "report", {}).get("utility"):
            checkpoints[alg].update(checkpoint_means(cv, ts, ("utility_over_t",)))
        if "constraint_sum" in cv:
            checkpoints[alg]["burn_in"] = burn_in(cv["constraint_sum"].mean(axis=0))
        if "sample" in traces[0].internals:
            # a method with its own stopping rule (ADMMBO): rounds it spent evaluating before it stopped
            entry["own_horizon"] = stats(np.array([float(np.sum(tr.internals["sample"])) for tr in traces]))
    summary = assemble_summary(spec, traces_by_alg, algs, checkpoints)
    return summary, all_curves


def plot_names() -> list[str]:
    """Every file :func:`plot_curves` may write."""
    boxed = ("regret_over_t", "utility_over_t", "violation_over_t")
    return [f"{m}.png" for m in _LABELS] + [f"box_{m}.png" for m in boxed]


def plot_curves(
    out: Path,
    name: str,
    all_curves: dict[str, dict[str, np.ndarray]],
    max_points: int = 1000,
    report: dict[str, Any] | None = None,
) -> list[Path]:
    """One PNG per metric: mean over trials with a ±1 standard-error band, per algorithm.

    With ``report["boxplots"]`` also ``box_<metric>.png``: the distribution over trials of each
    time-averaged metric at the ``report["checkpoints"]`` rounds (the figures of Shi & Eryilmaz (2022)).
    """
    report = report or {}
    paths = []
    metrics = [
        "regret",
        "regret_over_t",
        "violation",
        "violation_over_t",
        "positive_violation",
        "violating_rounds",
    ]
    if report.get("utility"):
        metrics.append("utility_over_t")
    metrics.append("constraint_sum")  # drawn when some algorithm has it (a problem with constraints)
    if report.get("boxplots"):
        T = next(iter(all_curves.values()))["regret"].shape[1]
        ts = sorted({min(int(c), T) for c in report.get("checkpoints", [])} | {T})
        boxed = ["utility_over_t" if report.get("utility") else "regret_over_t", "violation_over_t"]
        paths += [_boxplot(out, metric, all_curves, ts) for metric in boxed]
    labels = {m: _LABELS[m] for m in metrics}
    return paths + plot_mean_curves(out, name, all_curves, labels, max_points=max_points)


def _boxplot(out: Path, metric: str, all_curves: dict[str, dict[str, np.ndarray]], ts: list[int]) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    algs = list(all_curves)
    # one y-axis for every method, so their boxes compare at a glance
    fig, axes = plt.subplots(
        len(algs), 1, figsize=(max(6, 0.45 * len(ts)), 2.6 * len(algs)), squeeze=False, sharey=True
    )
    for ax, alg in zip(axes[:, 0], algs):
        Y = all_curves[alg][metric]
        ax.boxplot([Y[:, t - 1] for t in ts], showfliers=True)
        ax.set_xticks(range(1, len(ts) + 1), [str(t) for t in ts], fontsize=7)
        ax.set_title(alg, fontsize=9)
        ax.set_ylabel(_LABELS[metric], fontsize=7)
    axes[-1, 0].set_xlabel("round t")
    fig.tight_layout()
    path = Path(out) / f"box_{metric}.png"
    save_figure(fig, path)
    return path
