r"""Report helpers shared by the experiment kinds: statistics over trials, checkpoints, the summary layout,
mean-curve plots, and the printed result as plain data.

Over the N trials of a label a final-round metric is reported as ``{"mean", "stderr", "median",
"values"}`` (:func:`stats`; ``stderr`` is the sample standard deviation with ddof = 1 over
:math:`\sqrt N`, 0 for one trial). A curve's growth is the least-squares slope of
:math:`\log y` on :math:`\log t` over the second half of the rounds (:func:`loglog_slope`; < 1:
sublinear). :func:`assemble_summary` lays out ``summary.json`` for the kinds whose tasks are trials
(single- and multi-agent)::

    {"experiment", ...extra (e.g. "kind"), "horizon", "trials",
     "algorithms": {LABEL: {METRIC: {"mean", "stderr", "median", "values"}}},
     "checkpoints": {LABEL: {"t": [...], ...means at those rounds...}},
     "settings", "problem_instance_0", "reference", "choices"}

:class:`ConsoleReport` is what ``ckb experiment`` prints after a run (tables, verbatim markdown, notes,
the paper's reference), so a kind says *what* to show and the CLI alone says *how*.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ckb.io import atomic_write, write_json


def stats(values: np.ndarray) -> dict[str, Any]:
    """Mean, standard error (ddof = 1), median and the values of one metric over trials."""
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


def checkpoint_rounds(spec, T: int) -> list[int]:
    """The spec's ``report.checkpoints`` (clipped to T, with T added), else 1%, 10%, 25%, ... of T."""
    given = getattr(spec, "report", {}).get("checkpoints")
    if given:
        return sorted({min(int(c), T) for c in given} | {T})
    return sorted({max(1, round(T * q)) for q in (0.01, 0.1, 0.25, 0.5, 0.75, 1.0)})


def checkpoint_means(cv: dict[str, np.ndarray], ts: list[int], keys) -> dict[str, list[float]]:
    """The trial mean of each curve ``cv[key]`` (trials, T) at the 1-based rounds ``ts``."""
    return {k: [float(np.mean(cv[k][:, s - 1])) for s in ts] for k in keys}


def loglog_slopes(cv: dict[str, np.ndarray], keys) -> dict[str, float | None]:
    """:func:`loglog_slope` of the trial-mean curve of each of ``keys``."""
    return {k: loglog_slope(cv[k].mean(axis=0)) for k in keys}


def assemble_summary(spec, traces_by_alg: dict[str, list], algs, checkpoints, **extra) -> dict[str, Any]:
    """``summary.json``'s layout for trial-based kinds: the experiment, ``extra`` (e.g. its kind),
    horizon, trials, the per-label ``algorithms`` and ``checkpoints``, the spec's settings, the first
    trial's problem instance, and the spec's reference and choices."""
    first = next(iter(traces_by_alg.values()))
    return {
        "experiment": spec.name,
        **extra,
        "horizon": spec.horizon,
        "trials": len(first),
        "algorithms": algs,
        "checkpoints": checkpoints,
        "settings": spec.settings(),
        "problem_instance_0": first[0].meta.get("problem", {}),
        "reference": spec.reference,
        "choices": spec.choices,
    }


def write_summary(path: Path, summary: dict[str, Any]) -> None:
    write_json(path, summary)


# --------------------------------------------------------------------------------------------- plots
def plot_mean_curves(
    out: Path,
    name: str,
    all_curves: dict[str, dict[str, np.ndarray]],
    labels: dict[str, str],
    *,
    max_points: int = 1000,
    skip_zero: bool = False,
    legend_size: float | None = None,
) -> list[Path]:
    """``out/METRIC.png`` for each metric of ``labels`` (metric -> axis label) that some label has: the
    mean over trials of each label's curve (trials, T) with a ±1 standard-error band, at most
    ``max_points`` rounds drawn. ``skip_zero``: leave out a metric that is 0 everywhere."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    for metric, label in labels.items():
        have = {alg: cv[metric] for alg, cv in all_curves.items() if metric in cv}
        if not have or (skip_zero and not any(np.any(Y != 0) for Y in have.values())):
            continue
        fig, ax = plt.subplots(figsize=(6, 4))
        for alg, Y in have.items():
            n, T = Y.shape
            idx = np.unique(np.linspace(0, T - 1, min(T, max_points)).astype(int))
            mean = Y[:, idx].mean(axis=0)
            # a single round is a point, not a line (a horizon of 1 drew nothing)
            ax.plot(idx + 1, mean, label=alg, marker="o" if idx.size == 1 else None)
            if n > 1:  # one trial has no standard error: no band (it was drawn as 0 wide)
                se = Y[:, idx].std(axis=0, ddof=1) / np.sqrt(n)
                ax.fill_between(idx + 1, mean - se, mean + se, alpha=0.25)
        if metric == "constraint_sum":
            ax.axhline(0.0, color="black", lw=0.8)
        ax.set_xlabel("round t")
        ax.set_ylabel(label)
        ax.set_title(f"{name}: {_over_trials(Y.shape[0] for Y in have.values())}", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=legend_size)
        fig.tight_layout()
        path = Path(out) / f"{metric}.png"
        save_figure(fig, path)
        paths.append(path)
    return paths


def _over_trials(counts) -> str:
    """The title's account of the trials behind each curve: every label's count (it named the last
    label's only), and no standard error for one trial."""
    counts = sorted(set(counts))
    if counts == [1]:
        return "one trial each (no standard error)"
    many = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
    return f"mean ± s.e. over {many} trials"


def save_figure(fig, path: Path, dpi: int = 110) -> None:
    """Write ``fig`` as a PNG at ``path`` atomically (a temporary file renamed into place, as every ckb
    output), then close it. Before, a run interrupted while plotting left a cut PNG of 124 bytes."""
    import matplotlib.pyplot as plt

    try:
        atomic_write(Path(path), lambda fh: fig.savefig(fh, dpi=dpi, format="png"))
    finally:
        plt.close(fig)


# ----------------------------------------------------------------------------------- printed report
@dataclass
class TextTable:
    """A table as text cells; ``numeric``: right-align every column but the first."""

    title: str
    header: list[str]
    rows: list[list[str]]
    numeric: bool = False


@dataclass
class ConsoleReport:
    """What ``ckb experiment`` prints after a run, in order: ``tables``, ``markdown`` (verbatim: its rows
    must not be wrapped), ``notes`` (plain lines), and the paper's ``reference`` (key: value lines)."""

    tables: list[TextTable] = field(default_factory=list)
    markdown: str = ""
    notes: list[str] = field(default_factory=list)
    reference: dict[str, Any] = field(default_factory=dict)


def doc_line(obj: Any) -> str:
    """A registry entry's summary in listings: the first whole sentence of its docstring, Sphinx markup
    made readable (:func:`ckb.framework.doctext.summary`, as in ``docs/catalog.md``); "" without one."""
    from ckb.framework.doctext import summary

    return summary(obj)


#: a printed value smaller than this fraction of the table's largest magnitude is printed as 0 (floating
#: point noise such as a violation of 1e-14 where the regret is 1e2)
NOISE_TOLERANCE = 1e-9


def _denoise(v: float, scale: float) -> float:
    return 0.0 if abs(v) <= NOISE_TOLERANCE * scale else v


def _mean_se(s: dict[str, Any], scale: float = 0.0) -> str:
    """``mean ± s.e.``; the mean alone for one trial, whose standard error is undefined (summary.json
    stores 0; the table printed "± 0")."""
    if len(s.get("values", ())) == 1:
        return f"{_denoise(s['mean'], scale):.3g}"
    return f"{_denoise(s['mean'], scale):.3g} ± {_denoise(s['stderr'], scale):.3g}"


def _scale(summary: dict[str, Any], keys: tuple[str, ...]) -> float:
    """The largest magnitude (mean or s.e.) of the metrics ``keys`` over the summary's labels."""
    values = [
        abs(float(m[k][stat]))
        for m in summary["algorithms"].values()
        for k in keys
        if k in m
        for stat in ("mean", "stderr")
    ]
    finite = [v for v in values if v == v and v != float("inf")]
    return max(finite, default=0.0)


def table_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the printed table of a trial-based summary (mean ± s.e.; N also as median;
    the affine shift S(T) when a label has it). With no black-box constraint (m = 0) the violation
    columns print "-": they printed 0, which read as "never violated" where an affine constraint (the
    shift S(T)) was exceeded in a third of the rounds."""
    header = ["algorithm", "R(T)", "R(T)/T", "V(T)", "sum [g]+", "N mean", "N median", "ms/round"]
    rows = []
    unconstrained = (summary.get("problem_instance_0") or {}).get("m") == 0
    shift = any("affine_shift" in m for m in summary["algorithms"].values())  # multi-agent: S(T)
    if shift:
        header.insert(-1, "S(T)")
    # values below NOISE_TOLERANCE x the largest magnitude of regret and violations print as 0
    scale = _scale(summary, ("regret", "violation", "positive_violation", "affine_shift"))
    for alg, m in summary["algorithms"].items():
        T = m.get("horizon", summary["horizon"])  # a multi-agent label may have its own T
        rows.append(
            [
                alg,
                _mean_se(m["regret"], scale),
                f"{_denoise(m['regret']['mean'], scale) / T:.3g}",
                *(
                    ["-"] * 4
                    if unconstrained
                    else [
                        _mean_se(m["violation"], scale),
                        _mean_se(m["positive_violation"], scale),
                        _mean_se(m["violating_rounds"]),
                        f"{m['violating_rounds']['median']:.3g}",
                    ]
                ),
                *([_mean_se(m["affine_shift"], scale)] if shift else []),
                f"{m['seconds_per_round']['mean'] * 1e3:.3g}",
            ]
        )
    return header, rows


def checkpoint_notes(summary: dict[str, Any]) -> list[str]:
    """Per label: R(t)/t at the checkpoints, the log-log slopes and the burn-in, as printed lines."""
    lines = []
    for alg, cp in summary["checkpoints"].items():
        pairs = ", ".join(f"t={t}: {v:.3g}" for t, v in zip(cp["t"], cp["regret_over_t"]))
        lines.append(f"  R(t)/t [{alg}]: {pairs}")
        slopes = cp.get("loglog_slope_second_half", {})
        if slopes:
            text = ", ".join(f"{k} {'-' if v is None else f'{v:.2f}'}" for k, v in slopes.items())
            lines.append(f"    log-log slope over the second half (< 1: sublinear): {text}")
        if "burn_in" in cp:
            b = cp["burn_in"]
            lines.append(
                f"    mean signed cumulative constraint <= 0 from round {b}"
                if b is not None
                else "    mean signed cumulative constraint still > 0 at T (no burn-in)"
            )
    return lines


def trial_report(spec, summary: dict[str, Any]) -> ConsoleReport:
    """The printed report of a trial-based summary: the metric table, checkpoint notes, the reference."""
    header, rows = table_rows(summary)
    n = summary["trials"]
    what = "1 trial; no standard error" if n == 1 else f"{n} trials; mean ± s.e."
    title = f"{spec.name} (T = {spec.horizon}, {what})"
    return ConsoleReport(
        tables=[TextTable(title, header, rows, numeric=True)],
        notes=checkpoint_notes(summary),
        reference=dict(spec.reference),
    )
