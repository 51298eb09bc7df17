"""Aggregating traces into ``summary.json``, a printed table, and PNG plots.

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

from ckb.io import write_json
from ckb.runner.metrics import METRICS, OPTIONAL_METRICS, curves

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


def _stats(values: np.ndarray) -> dict[str, Any]:
    n = values.shape[0]
    se = float(np.std(values, ddof=1) / np.sqrt(n)) if n > 1 else 0.0
    return {
        "mean": float(np.mean(values)),
        "stderr": se,
        "median": float(np.median(values)),
        "values": values.tolist(),
    }


def loglog_slope(curve: np.ndarray) -> float | None:
    """Least-squares slope of log(curve) against log(t) over the second half of the rounds.

    ``None`` when the curve is not positive there (e.g. no violation at all).
    """
    T = curve.shape[0]
    t = np.arange(1, T + 1)[T // 2 :]
    y = curve[T // 2 :]
    if T < 4 or np.any(y <= 0):
        return None
    return float(np.polyfit(np.log(t), np.log(y), 1)[0])


def burn_in(curve: np.ndarray) -> int | None:
    """The first round tau from which ``curve`` stays <= 0 through the last round (1-based).

    Applied to the trial mean of the signed cumulative constraint: the burn-in after which the expected
    cumulative violation is 0, as the SCGP-UCB theorems predict. ``None`` if the last value is > 0.
    """
    positive = np.flatnonzero(curve > 0)
    if positive.size == 0:
        return 1
    if positive[-1] == curve.shape[0] - 1:
        return None
    return int(positive[-1]) + 2


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


def checkpoint_rounds(spec, T: int) -> list[int]:
    """The spec's ``report.checkpoints`` (clipped to T, with T added), else 1%, 10%, 25%, ... of T."""
    given = getattr(spec, "report", {}).get("checkpoints")
    if given:
        return sorted({min(int(c), T) for c in given} | {T})
    return sorted({max(1, round(T * q)) for q in (0.01, 0.1, 0.25, 0.5, 0.75, 1.0)})


def checkpoint_means(cv: dict[str, np.ndarray], ts: list[int], keys) -> dict[str, list[float]]:
    """The trial mean of each curve ``cv[key]`` (trials, T) at the 1-based rounds ``ts``."""
    return {k: [float(np.mean(cv[k][:, s - 1])) for s in ts] for k in keys}


def assemble_summary(spec, traces_by_alg: dict[str, list], algs, checkpoints, **extra) -> dict[str, Any]:
    """``summary.json``'s layout, shared by the single- and multi-agent experiments: the experiment,
    ``extra`` (e.g. its kind), horizon, trials, the per-label ``algorithms`` and ``checkpoints``, the
    spec's settings, the first trial's problem instance, and the spec's reference and choices."""
    first = next(iter(traces_by_alg.values()))
    return {
        "experiment": spec.name,
        **extra,
        "horizon": spec.horizon,
        "trials": len(first),
        "algorithms": algs,
        "checkpoints": checkpoints,
        "settings": spec.to_dict(),
        "problem_instance_0": first[0].meta.get("problem", {}),
        "reference": spec.reference,
        "choices": spec.choices,
    }


def summarize(
    spec, traces_by_alg: dict[str, list]
) -> tuple[dict[str, Any], dict[str, dict[str, np.ndarray]]]:
    algs: dict[str, Any] = {}
    checkpoints: dict[str, Any] = {}
    all_curves = {}
    for alg, traces in traces_by_alg.items():
        cv = trial_curves(traces)
        all_curves[alg] = cv
        entry = {k: _stats(cv[k][:, -1]) for k in METRICS + OPTIONAL_METRICS if k in cv}
        entry["seconds_per_round"] = _stats(np.array([float(np.mean(tr.seconds)) for tr in traces]))
        algs[alg] = entry
        T = cv["regret"].shape[1]
        ts = checkpoint_rounds(spec, T)
        checkpoints[alg] = {
            "t": ts,
            **checkpoint_means(cv, ts, ("regret_over_t", "violation_over_t", "positive_violation_over_t")),
            # growth exponent of the trial-mean curve over the second half: < 1 means sublinear
            "loglog_slope_second_half": {
                k: loglog_slope(cv[k].mean(axis=0))
                for k in ("regret", "positive_violation", "violating_rounds")
            },
        }
        if getattr(spec, "report", {}).get("utility"):
            checkpoints[alg].update(checkpoint_means(cv, ts, ("utility_over_t",)))
        if "constraint_sum" in cv:
            checkpoints[alg]["burn_in"] = burn_in(cv["constraint_sum"].mean(axis=0))
        if "sample" in traces[0].internals:
            # a method with its own stopping rule (ADMMBO): rounds it spent evaluating before it stopped
            entry["own_horizon"] = _stats(np.array([float(np.sum(tr.internals["sample"])) for tr in traces]))
    summary = assemble_summary(spec, traces_by_alg, algs, checkpoints)
    return summary, all_curves


def write_summary(path: Path, summary: dict[str, Any]) -> None:
    write_json(path, summary)


def plot_curves(
    out: Path,
    name: str,
    all_curves: dict[str, dict[str, np.ndarray]],
    max_points: int = 1000,
    report: dict[str, Any] | None = None,
) -> list[Path]:
    """One PNG per metric: mean over trials with a ±1 standard-error band, per algorithm.

    With ``report["boxplots"]`` also ``box_<metric>.png``: the distribution over trials of each
    time-averaged metric at the ``report["checkpoints"]`` rounds (001's figures).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
    if any("constraint_sum" in cv for cv in all_curves.values()):
        metrics.append("constraint_sum")
    if report.get("boxplots"):
        T = next(iter(all_curves.values()))["regret"].shape[1]
        ts = sorted({min(int(c), T) for c in report.get("checkpoints", [])} | {T})
        boxed = ["utility_over_t" if report.get("utility") else "regret_over_t", "violation_over_t"]
        paths += [_boxplot(out, metric, all_curves, ts) for metric in boxed]
    for metric in metrics:
        fig, ax = plt.subplots(figsize=(6, 4))
        for alg, cv in all_curves.items():
            if metric not in cv:
                continue
            Y = cv[metric]
            T = Y.shape[1]
            idx = np.unique(np.linspace(0, T - 1, min(T, max_points)).astype(int))
            mean = Y[:, idx].mean(axis=0)
            se = (
                Y[:, idx].std(axis=0, ddof=1) / np.sqrt(Y.shape[0]) if Y.shape[0] > 1 else np.zeros_like(mean)
            )
            ax.plot(idx + 1, mean, label=alg)
            ax.fill_between(idx + 1, mean - se, mean + se, alpha=0.25)
        if metric == "constraint_sum":
            ax.axhline(0.0, color="black", lw=0.8)
        ax.set_xlabel("round t")
        ax.set_ylabel(_LABELS[metric])
        ax.set_title(f"{name}: mean ± s.e. over {Y.shape[0]} trials", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        path = Path(out) / f"{metric}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def _boxplot(out: Path, metric: str, all_curves: dict[str, dict[str, np.ndarray]], ts: list[int]) -> Path:
    import matplotlib.pyplot as plt

    algs = list(all_curves)
    fig, axes = plt.subplots(len(algs), 1, figsize=(max(6, 0.45 * len(ts)), 2.6 * len(algs)), squeeze=False)
    for ax, alg in zip(axes[:, 0], algs):
        Y = all_curves[alg][metric]
        ax.boxplot([Y[:, t - 1] for t in ts], showfliers=True)
        ax.set_xticks(range(1, len(ts) + 1), [str(t) for t in ts], fontsize=7)
        ax.set_title(alg, fontsize=9)
        ax.set_ylabel(_LABELS[metric], fontsize=7)
    axes[-1, 0].set_xlabel("round t")
    fig.tight_layout()
    path = Path(out) / f"box_{metric}.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _mean_se(stats: dict[str, Any]) -> str:
    return f"{stats['mean']:.3g} ± {stats['stderr']:.3g}"


def table_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the printed table (mean ± s.e.; N also as median)."""
    header = ["algorithm", "R(T)", "R(T)/T", "V(T)", "sum [g]+", "N mean", "N median", "ms/round"]
    rows = []
    shift = any("affine_shift" in m for m in summary["algorithms"].values())  # multi-agent: S(T)
    if shift:
        header.insert(-1, "S(T)")
    for alg, m in summary["algorithms"].items():
        T = m.get("horizon", summary["horizon"])  # a multi-agent label may have its own T
        rows.append(
            [
                alg,
                _mean_se(m["regret"]),
                f"{m['regret']['mean'] / T:.3g}",
                _mean_se(m["violation"]),
                _mean_se(m["positive_violation"]),
                _mean_se(m["violating_rounds"]),
                f"{m['violating_rounds']['median']:.3g}",
                *([_mean_se(m["affine_shift"])] if shift else []),
                f"{m['seconds_per_round']['mean'] * 1e3:.3g}",
            ]
        )
    return header, rows
