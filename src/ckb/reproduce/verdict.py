r"""Verdicts computed from a run's ``summary.json`` (``{"algorithms": {LABEL: {METRIC: {"mean", "median",
"values", ...}}}, "checkpoints": {LABEL: {"loglog_slope_second_half": {METRIC: slope}}}}``).

Statistics (``stat``): ``mean`` and ``median`` over trials at the final round; ``share_le_zero`` and
``share_zero``: the share of trials whose final value is <= 0 / == 0 (from ``values``); ``slope``: the
log-log slope of the metric's mean curve over the second half of the run (``sublinear`` claims).

Rules (``kind``; ``tol`` = ``tolerance``, ``ptol`` = ``partly_tolerance``, default 2 ``tol``):

- ``value``: reproduced if ``|ours - paper| <= tol``, partly if ``<= ptol``, else not reproduced;
- ``at_most`` / ``at_least``: reproduced if ``ours <= paper + tol`` (``>= paper - tol``), partly within
  ``ptol``;
- ``relative``: ``ours = stat(algorithm) / stat(reference) - 1``, then as ``value``;
- ``ordering``: the stat must increase along ``order``. With ``stat = "mean"`` and the trials' values in the
  summary, an adjacent pair is *in order* when the second mean exceeds the first by more than two
  standard errors of the difference (unpaired, :math:`\sqrt{s_a^2/n_a + s_b^2/n_b}`), *reversed* when it
  falls short by more, and a *tie* in between (the runs cannot tell the two apart); other statistics
  compare the numbers (strictly). Reproduced if every pair is in order; not reproduced if none is and
  some pair is reversed; partly otherwise (the reason names the ties and reversals);
- ``lowest``: as ``ordering``, over the pairs (first of ``order``, each other): the first is below
  each of the others (nothing is claimed between the others);
- ``or_similar = true`` (ordering / lowest claims the paper words "better (or similar)"): a tie counts as
  in order (the reason still names it); a reversal does not;
- ``sublinear``: the log-log slope (``stat = "slope"``) is <= ``threshold`` (default 0.9): reproduced;
  < 1: partly (barely sublinear at this horizon); else not reproduced. A mean curve that is <= 0 in the
  second half has no log-log slope: if the metric's time average (``METRIC_over_t``) ends <= 0, the claim
  is partly reproduced (sublinear as an upper bound, no growth rate to measure; e.g. a regret below
  the constrained optimum, paid for with violation), else not run; a violation (or another metric
  that is >= 0 by definition, :data:`NONNEGATIVE_METRICS`) whose mean ends at 0 is reproduced: it was 0
  in every trial at ``T``, which is as sublinear as a run can show. A falling mean curve (a negative
  slope) is partly reproduced for the same reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ckb.reproduce.claims import ORDER_KINDS, Claim
from ckb.violation import POSITIVE_VIOLATION, VIOLATION

REPRODUCED, PARTLY, NOT_REPRODUCED, NOT_RUN = "reproduced", "partly", "not reproduced", "not run"

#: metrics that are >= 0 by definition (norms of positive parts, counts): one whose mean ends at 0 is bounded
NONNEGATIVE_METRICS = (VIOLATION, POSITIVE_VIOLATION, "violating_rounds")


@dataclass(frozen=True)
class Verdict:
    """A claim's verdict: ``value`` (ours, as text), ``verdict`` and the one-sentence ``reason``."""

    claim: Claim
    value: str
    verdict: str
    reason: str


def statistic(summary: dict[str, Any], algorithm: str, metric: str, stat: str) -> float:
    """One statistic of ``summary`` (module docstring); KeyError naming what is missing."""
    if stat == "slope":
        cps = summary.get("checkpoints", {}).get(algorithm, {})
        slopes = cps.get("loglog_slope_second_half") or {}
        val = slopes.get(metric) if isinstance(slopes, dict) else None
        if val is None:
            raise KeyError(f"no log-log slope of {metric!r} for {algorithm!r}")
        return _finite(float(val), f"{algorithm}'s log-log slope of {metric}")
    try:
        entry = summary["algorithms"][algorithm][metric]
    except KeyError:
        raise KeyError(f"no metric {metric!r} for {algorithm!r} in the summary") from None
    if stat in ("mean", "median"):
        return _finite(float(entry[stat]), f"{algorithm}'s {stat} {metric}")
    values = np.asarray(entry["values"], dtype=float)
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{algorithm}'s {metric} values include {values[~np.isfinite(values)][0]}")
    if stat == "share_le_zero":
        return float(np.mean(values <= 0.0))
    if stat == "share_zero":
        return float(np.mean(values == 0.0))
    raise KeyError(f"unknown statistic {stat!r}")


def _finite(value: float, what: str) -> float:
    """``value`` if finite; else ValueError naming ``what`` (a summary edited or written by a failed run:
    :func:`ckb.reproduce.runner` refuses it and keeps the report). Before, a NaN mean was judged, blamed
    on the reference ("penalty-5's mean affine_shift is 0") and replaced a correct report."""
    if not math.isfinite(value):
        raise ValueError(f"{what} is {value}, not a finite number")
    return value


def _fmt(x: float) -> str:
    if math.isnan(x):
        return "nan"
    return f"{x:.3g}" if abs(x) < 1e4 else f"{x:.4g}"


def _band(claim: Claim, gap: float) -> str:
    ptol = claim.partly_tolerance if claim.partly_tolerance is not None else 2.0 * claim.tolerance
    if gap <= claim.tolerance:
        return REPRODUCED
    return PARTLY if gap <= ptol else NOT_REPRODUCED


def judge(claim: Claim, summary: dict[str, Any] | None) -> Verdict:
    """The verdict of ``claim`` on ``summary`` (the claim's experiment's summary; None: not run)."""
    if summary is None:
        return Verdict(claim, "-", NOT_RUN, f"{claim.experiment} has not been run.")
    try:
        return _judge(claim, summary)
    except KeyError as exc:
        return Verdict(claim, "-", NOT_RUN, f"{exc.args[0]} ({claim.experiment}).")


def _judge(claim: Claim, summary: dict[str, Any]) -> Verdict:
    s, m = claim.stat, claim.metric
    if claim.kind in ORDER_KINDS:
        return _ordering(claim, summary)
    if claim.kind == "sublinear":
        nonpositive = _nonpositive_average(summary, claim.algorithm, m)
        if nonpositive is not None and m in NONNEGATIVE_METRICS:  # so it ends at exactly 0
            return Verdict(
                claim,
                f"{m}/t {_fmt(nonpositive)}",
                REPRODUCED,
                f"the mean {m} ends at 0 (a violation is >= 0, so it was 0 in every trial at T): bounded, "
                "so sublinear.",
            )
        if nonpositive is not None:
            return Verdict(
                claim,
                f"{m}/t {_fmt(nonpositive)}",
                PARTLY,
                f"the mean {m} ends <= 0 ({m}/t = {_fmt(nonpositive)} at T): sublinear as an upper bound, "
                "no growth rate to measure.",
            )
    ours = statistic(summary, claim.algorithm, m, s)
    if claim.kind == "sublinear":
        if ours < 0.0:  # a falling cumulative curve: as one that ends <= 0, no growth rate to measure
            return Verdict(
                claim,
                f"slope {_fmt(ours)}",
                PARTLY,
                f"the mean {m} falls (log-log slope {_fmt(ours)} in the second half): sublinear as an upper "
                "bound, no growth rate to measure.",
            )
        if ours <= claim.threshold:
            return Verdict(claim, f"slope {_fmt(ours)}", REPRODUCED, f"log-log slope <= {claim.threshold:g}.")
        verdict = PARTLY if ours < 1.0 else NOT_REPRODUCED
        return Verdict(claim, f"slope {_fmt(ours)}", verdict, f"log-log slope {_fmt(ours)} (linear is 1).")
    if claim.kind == "relative":
        ref = statistic(summary, claim.reference, m, s)
        ours = ours / ref - 1.0 if ref != 0 else math.nan
        if math.isnan(ours):
            return Verdict(claim, "nan", NOT_REPRODUCED, f"{claim.reference}'s {s} {m} is 0.")
    p = claim.paper_value
    if claim.kind in ("value", "relative"):
        gap = abs(ours - p)
    elif claim.kind == "at_most":
        gap = max(ours - p, 0.0)
    else:  # at_least
        gap = max(p - ours, 0.0)
    verdict = _band(claim, gap)
    rel = {"value": "from", "relative": "from", "at_most": "above", "at_least": "below"}[claim.kind]
    reason = (
        f"within {claim.tolerance:g} of the paper's {p:g}."
        if verdict == REPRODUCED
        else f"{_fmt(gap)} {rel} the paper's {p:g} (tolerance {claim.tolerance:g})."
    )
    return Verdict(claim, _fmt(ours), verdict, reason)


def _standard_error(summary: dict[str, Any], algorithm: str, metric: str) -> float | None:
    """The standard error of the metric's final mean over trials (None without at least 2 values)."""
    values = summary.get("algorithms", {}).get(algorithm, {}).get(metric, {}).get("values")
    if values is None or len(values) < 2:
        return None
    v = np.asarray(values, dtype=float)
    return float(np.std(v, ddof=1) / math.sqrt(len(v)))


def _ordering(claim: Claim, summary: dict[str, Any]) -> Verdict:
    s, m = claim.stat, claim.metric
    vals = [statistic(summary, a, m, s) for a in claim.order]
    text = ", ".join(f"{a} {_fmt(v)}" for a, v in zip(claim.order, vals))
    states, notes = [], []
    if claim.kind == "lowest":
        pairs = [(0, j) for j in range(1, len(vals))]
    else:
        pairs = [(i, i + 1) for i in range(len(vals) - 1)]
    for i, j in pairs:
        a, b = vals[i], vals[j]
        pair = f"{claim.order[i]} vs {claim.order[j]}"
        se = [_standard_error(summary, claim.order[k], m) for k in (i, j)] if s == "mean" else [None]
        if all(e is not None for e in se):
            band = 2.0 * math.hypot(*se)
            state = "in order" if b - a > band else ("reversed" if a - b > band else "tie")
            if state != "in order":
                notes.append(f"{pair} {state} (difference {_fmt(b - a)}, two standard errors {_fmt(band)})")
            if state == "tie" and claim.or_similar:  # the paper claims "better (or similar)"
                state = "in order"
        else:
            state = "in order" if a < b else "reversed"
            if state != "in order":
                notes.append(f"{pair} reversed")
        states.append(state)
    if all(x == "in order" for x in states):
        what = (
            "is lowest for " + claim.order[0]
            if claim.kind == "lowest"
            else "increases along the paper's order"
        )
        if notes:  # only ties, on an or_similar claim
            return Verdict(claim, text, REPRODUCED, f"the {s} {m} {what} or similar: {'; '.join(notes)}.")
        return Verdict(claim, text, REPRODUCED, f"the {s} {m} {what}.")
    verdict = NOT_REPRODUCED if "in order" not in states and "reversed" in states else PARTLY
    return Verdict(claim, text, verdict, f"the order fails for {'; '.join(notes)}.")


def _nonpositive_average(summary: dict[str, Any], algorithm: str, metric: str) -> float | None:
    """The final time average of ``metric`` if its log-log slope is missing and that average is <= 0."""
    cps = summary.get("checkpoints", {}).get(algorithm, {})
    slopes = cps.get("loglog_slope_second_half") or {}
    if isinstance(slopes, dict) and slopes.get(metric) is not None:
        return None
    curve = cps.get(f"{metric}_over_t")
    if not curve or curve[-1] is None or not curve[-1] <= 0.0:
        return None
    return float(curve[-1])
