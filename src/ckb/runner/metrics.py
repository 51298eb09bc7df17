r"""Metrics as the papers define them, computed from a trace's true values (never from observations).

With utility :math:`u = \text{sign}\cdot f` (``sign = -1`` when minimizing), :math:`u^*` the best feasible
utility, and :math:`g(x_s) \in \mathbb R^m`:

- cumulative regret :math:`R(t) = \sum_{s \le t} (u^* - u(x_s))`;
- soft violation :math:`V(t) = \| [\sum_{s \le t} g(x_s)]^+ \|` (violations may cancel across rounds);
- positive (rectified) violation :math:`\| \sum_{s \le t} [g(x_s)]^+ \|` (no cancellation);
- violating rounds :math:`N(t) = \#\{s \le t : \max_j g_j(x_s) > 0\}` (strict ``>``);
- the signed cumulative constraint :math:`\max_j \sum_{s \le t} g_j(x_s)` (``constraint_sum``; its
  trial average is what the SCGP-UCB theorems' proofs bound, and it shows a burn-in that the
  non-negative V(t) hides).

The three violation curves and ``constraint_sum`` are :func:`ckb.violation.violation_curves` (the one
vocabulary the harness, the multi-agent code and the benchmark share): the norm over the m constraints
is Euclidean and taken outside the sums; for ``m = 1`` both violations are plain (non-negative) sums.
For ``m = 0`` all three are 0 and there is no ``constraint_sum``.
"""

from __future__ import annotations

import numpy as np

from ckb._validation import as_real_array
from ckb.errors import InvalidInputError
from ckb.violation import POSITIVE_VIOLATION, VIOLATING, VIOLATION, violation_curves

#: final-round metrics every experiment reports, in summary.json order
METRICS = ("regret", "violation", "positive_violation", "violating_rounds", "seconds_per_round")
#: reported too where they exist: ``regret_plus`` when the problem has candidates (a finite domain or a
#: grid), ``constraint_sum`` when it has constraints (m > 0)
OPTIONAL_METRICS = ("regret_plus", "constraint_sum")


def curves(
    f: np.ndarray,
    g: np.ndarray,
    utility_star: float | np.ndarray,
    sign: float = 1.0,
    utility_star_plus: float | None = None,
) -> dict[str, np.ndarray]:
    r"""Cumulative metric curves over rounds ``1..T`` from true values ``f`` (T,) and ``g`` (T, m).

    With ``utility_star_plus`` (the best feasible distribution's utility) also the stronger regret
    ``regret_plus`` :math:`R_+(t) = t E_{\pi^*}[u] - \sum_{s \le t} u(x_s)`. ``g`` may be 1-D for
    ``m = 1``; ``utility_star`` is one number or one per round. Arrays of other lengths than ``f``'s are a
    one-line error (they gave curves of different lengths).
    """
    f, g, utility_star = _checked(f, g, utility_star)
    regret = np.cumsum(utility_star - sign * f)
    extra = {}
    if utility_star_plus is not None:
        extra["regret_plus"] = regret + np.arange(1, f.shape[0] + 1) * (utility_star_plus - utility_star)
    v = violation_curves(g)
    return {
        "regret": regret,
        VIOLATION: v[VIOLATION],
        POSITIVE_VIOLATION: v[POSITIVE_VIOLATION],
        "violating_rounds": v[VIOLATING],
        **({"constraint_sum": v["constraint_sum"]} if "constraint_sum" in v else {}),
        **extra,
    }


def final_metrics(trace) -> dict[str, float]:
    """The metrics at the last recorded round of a :class:`~ckb.runner.trace.Trace`."""
    c = curves(trace.f, trace.g, trace.regret_reference, trace.sign, trace.utility_star_plus)
    out = {k: float(v[-1]) if v.size else 0.0 for k, v in c.items()}
    out["seconds_per_round"] = float(np.mean(trace.seconds)) if trace.seconds.size else 0.0
    return out


def _checked(f, g, utility_star):
    """``f`` (T,), ``g`` (T, m) or (T,) and ``utility_star`` (a number or (T,)) as real arrays of one
    length T, else a one-line :class:`~ckb.errors.InvalidInputError` naming the mismatch."""
    f = as_real_array(f, "f (true objective values)")
    g = as_real_array(g, "g (true constraint values)")
    u = as_real_array(utility_star, "utility_star")
    if f.ndim != 1:
        raise InvalidInputError(f"f must be a 1-D array of T values, got shape {f.shape}.")
    T = f.shape[0]
    if g.ndim not in (1, 2) or g.shape[0] != T:
        raise InvalidInputError(
            f"g must have one row per round, shape ({T}, m) or ({T},) as f has {T} values, got shape {g.shape}."
        )
    if u.ndim and u.shape != (T,):
        raise InvalidInputError(
            f"utility_star must be one number or one per round, shape ({T},), got shape {u.shape}."
        )
    return f, g, (u if u.ndim else utility_star)
