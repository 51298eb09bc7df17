r"""One vocabulary for constraint violation, used by the harness, the multi-agent code, the benchmark and
:meth:`ckb.Optimizer.metrics` (numpy only: cheap to import anywhere).

For constraint values :math:`g(x_s) \in \mathbb R^m` of evaluations :math:`s = 1, \dots, t` (feasible
where :math:`g_j \le 0`), optionally divided per constraint by a typical magnitude :math:`s_j`:

- ``violation`` (soft, the cumulative constraint's violation, what the primal-dual theorems bound):
  :math:`V(t) = \| [\sum_{s \le t} g(x_s)/s]^+ \|_2`: a strictly feasible evaluation offsets an earlier
  violating one;
- ``positive_violation`` (rectified, no cancellation): :math:`\| \sum_{s \le t} [g(x_s)/s]^+ \|_2`;
- ``violating`` count: :math:`N(t) = \#\{s \le t : \max_j g_j(x_s) > 0\}` (strict ``>``), a NaN
  value counted as violating: the evaluations that :func:`feasible_rows` calls infeasible.

The norm over the m constraints is Euclidean and taken outside the sums; for ``m = 1`` both violations
are plain (non-negative) sums; for ``m = 0`` all are 0. The ``*_per_constraint`` forms return the m
sums before the norm; :func:`instant_violation` is :math:`\|[g(x_s)]^+\|_2` of each evaluation alone
(the multi-agent best-iterate merit). A scale divides the per-constraint *sums*
(:math:`\sum_s [g_j]^+ / s_j`, :math:`[\sum_s g_j / s_j]^+`), equal to summing the divided values for
:math:`s_j > 0` and the order the benchmark has always computed, so its numbers stay bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ckb.errors import InvalidInputError

#: the names of the three quantities above in :func:`violation_curves`; the count is reported as
#: ``violating_rounds`` by the harness and the multi-agent metrics, ``violating_evaluations`` by
#: :meth:`ckb.Optimizer.metrics` and ``violating`` by ``ckb study show``'s curves
VIOLATION = "violation"
POSITIVE_VIOLATION = "positive_violation"
VIOLATING = "violating"


def _values(g, scale: Sequence[float] | None) -> tuple[np.ndarray, np.ndarray | None]:
    """``g`` as (t, m) floats, and ``scale`` as m positive finite magnitudes (None if not given)."""
    g = np.asarray(g, dtype=float)
    if g.ndim == 1:
        g = g.reshape(-1, 1)
    if g.ndim != 2:
        raise InvalidInputError(f"constraint values must be (evaluations, m), got shape {g.shape}.")
    if scale is None:
        return g, None
    s = np.asarray(scale, dtype=float).reshape(-1)
    if s.shape != (g.shape[1],) or not np.all(np.isfinite(s)) or np.any(s <= 0):
        raise InvalidInputError(
            f"scale must be {g.shape[1]} positive magnitude(s), got {np.atleast_1d(scale).tolist()}."
        )
    return g, s


def positive_violation_per_constraint(g, scale: Sequence[float] | None = None) -> np.ndarray:
    r""":math:`(\sum_s [g_j(x_s)/s_j]^+)_j`, shape (m,)."""
    g, s = _values(g, scale)
    per = np.maximum(g, 0.0).sum(axis=0)
    return per if s is None else per / s


def soft_violation_per_constraint(g, scale: Sequence[float] | None = None) -> np.ndarray:
    r""":math:`([\sum_s g_j(x_s)/s_j]^+)_j`, shape (m,). Each sum is exact before its one rounding
    (:func:`math.fsum`), so it does not depend on the order of the evaluations: 1e300, 3, -1e300 sum
    to 3 (a running float sum gives 0)."""
    g, s = _values(g, scale)
    total = np.array([math.fsum(col) for col in g.T], dtype=float).reshape(g.shape[1])
    return np.maximum(total if s is None else total / s, 0.0)


def euclidean_norm(v, axis: int | None = None):
    """The Euclidean norm of ``v`` (of each row with ``axis=1``); where the plain formula overflows
    (values of 1e155 or more), computed on the values scaled by their largest magnitude, so a finite
    norm is never reported as inf. Elsewhere it is the plain formula, bit for bit."""
    v = np.asarray(v, dtype=float)
    with np.errstate(over="ignore"):
        plain = np.linalg.norm(v, axis=axis)
    a = np.max(np.abs(v), axis=axis) if v.size else np.zeros_like(plain)
    bad = ~np.isfinite(plain) & np.isfinite(a) & (a > 0)
    if not np.any(bad):
        return float(plain) if axis is None else plain
    if axis is None:
        return float(a * np.linalg.norm(v / a))
    plain = np.array(plain, dtype=float)
    rows = np.flatnonzero(bad)
    plain[rows] = a[rows] * np.linalg.norm(v[rows] / a[rows, None], axis=1)
    return plain


def positive_violation(g, scale: Sequence[float] | None = None) -> float:
    r""":math:`\|\sum_s [g(x_s)/s]^+\|_2` (``positive_violation``)."""
    return euclidean_norm(positive_violation_per_constraint(g, scale))


def soft_violation(g, scale: Sequence[float] | None = None) -> float:
    r""":math:`\|[\sum_s g(x_s)/s]^+\|_2` (``violation``)."""
    return euclidean_norm(soft_violation_per_constraint(g, scale))


def feasible_rows(g) -> np.ndarray:
    """Which evaluations satisfy every constraint (each :math:`g_j \\le 0`; NaN counts as violated), as a
    boolean array of shape (t,)."""
    g, _ = _values(g, None)
    return np.all(g <= 0.0, axis=1)


def violating_count(g) -> int:
    """Number of evaluations with some constraint > 0 or NaN (``violating``: not :func:`feasible_rows`)."""
    return int(np.sum(~feasible_rows(g)))


def instant_violation(g) -> np.ndarray:
    r""":math:`\|[g(x_s)]^+\|_2` of each evaluation on its own, shape (t,) (0 for ``m = 0``)."""
    g, _ = _values(g, None)
    return np.linalg.norm(np.maximum(g, 0.0), axis=1)


def violation_curves(g, scale: Sequence[float] | None = None) -> dict[str, np.ndarray]:
    """The three quantities after each evaluation, each of shape (t,): ``violation``,
    ``positive_violation``, ``violating`` (as floats), and for ``m > 0`` ``constraint_sum``
    (:math:`\\max_j \\sum_s g_j/s_j`, signed). The running sums are float sums, but the last one is
    exact (:func:`math.fsum`), so the final ``violation`` is :func:`soft_violation`'s."""
    g, s = _values(g, scale)
    if g.shape[1] == 0:
        zero = np.zeros(g.shape[0])
        return {VIOLATION: zero, POSITIVE_VIOLATION: zero, VIOLATING: zero}
    csum = np.cumsum(g, axis=0)
    if len(csum):  # the final sums exact, as soft_violation's: a running sum of 0.1 ten times and -1
        csum[-1] = [math.fsum(col) for col in g.T]  # gave 5.55e-17 > 0 where the sum is 0
    cpos = np.cumsum(np.maximum(g, 0.0), axis=0)
    if s is not None:
        csum, cpos = csum / s, cpos / s
    return {
        VIOLATION: euclidean_norm(np.maximum(csum, 0.0), axis=1),
        POSITIVE_VIOLATION: euclidean_norm(cpos, axis=1),
        VIOLATING: np.cumsum(~feasible_rows(g)).astype(float),
        "constraint_sum": np.max(csum, axis=1),
    }
