r"""Metrics of a multi-agent run (Xu et al. (2023), eq. 3.1, Sec. 4.2, App. D), from true values only.

With :math:`F_t = \sum_i f_i(x_i^t)`, :math:`G_t = \sum_i g_i(x_i^t) \in \mathbb R^m`,
:math:`D_t = \sum_i A_i x_i^t - b \in \mathbb R^l` and :math:`f^* = f(x^*)` of the constrained optimum:

- regret :math:`\mathcal R_t = \sum_{s \le t} (F_s - f^*)` (may be negative);
- violation :math:`\mathcal V_t = \|[\sum_{s \le t} G_s]^+\|` (``violation``);
- strong violation :math:`\|\sum_{s \le t} [G_s]^+\|` (``positive_violation``; the paper's
  :math:`\mathcal V^+_t` for ``m = 1``, the norm outside the sum for ``m > 1`` as in its Sec. 3.1);
- affine shift :math:`\mathcal S_t = \|\sum_{s \le t} D_s\|` (``affine_shift``; for power allocation the
  cumulative power deviation :math:`|\sum_{s \le t} \sum_i p_i^s - P|` of Fig. 2);
- violating rounds :math:`\#\{s \le t: \max_j G_{s,j} > 0\}` and ``constraint_sum``
  :math:`\max_j \sum_{s \le t} G_{s,j}` (signed), as the single-agent metrics;
- best iterate (Theorem 4.2, proof C.13): :math:`\tilde x^t = \arg\min_{s \le t} (F_s - f^*) + \|[G_s]^+\|
  + \|D_s\|` (the affine residual added so the merit is a violation measure when ``l > 0``; Thm 4.2 has
  ``l = 0``); ``best_iterate_gap`` is that minimum, ``best_iterate_objective_gap``
  :math:`F - f^*` and ``best_iterate_violation`` :math:`\|[G]^+\|` at it;
- ``objective_over_t`` :math:`\frac1t\sum_{s\le t} F_s` (``-`` the average utility of a utility problem).

The Euclidean norm is over the ``m`` (or ``l``) components; for ``m = 0`` the violations are 0. The
violations of :math:`G` are :mod:`ckb.violation`'s (the vocabulary every report shares).
"""

from __future__ import annotations

import numpy as np

from ckb.violation import POSITIVE_VIOLATION, VIOLATING, VIOLATION, instant_violation, violation_curves

#: final-round metrics in summary.json (the single-agent names first, then the multi-agent ones)
METRICS = (
    "regret",
    "violation",
    "positive_violation",
    "violating_rounds",
    "affine_shift",
    "best_iterate_gap",
    "best_iterate_objective_gap",
    "best_iterate_violation",
)


def curves(F: np.ndarray, G: np.ndarray, D: np.ndarray, f_star: float) -> dict[str, np.ndarray]:
    """Cumulative curves over rounds ``1..T`` from ``F`` (T,), ``G`` (T, m), ``D`` (T, l)."""
    F = np.asarray(F, dtype=float)
    T = F.shape[0]
    G = np.asarray(G, dtype=float).reshape(T, -1)
    D = np.asarray(D, dtype=float).reshape(T, -1)
    t = np.arange(1, T + 1)
    out: dict[str, np.ndarray] = {"regret": np.cumsum(F - f_star)}
    v = violation_curves(G)
    out["violation"] = v[VIOLATION]
    out["positive_violation"] = v[POSITIVE_VIOLATION]
    out["violating_rounds"] = v[VIOLATING]
    if "constraint_sum" in v:
        out["constraint_sum"] = v["constraint_sum"]
    inst_viol = instant_violation(G)
    if D.shape[1]:
        out["affine_shift"] = np.linalg.norm(np.cumsum(D, axis=0), axis=1)
        inst_shift = np.linalg.norm(D, axis=1)
    else:
        out["affine_shift"] = np.zeros(T)
        inst_shift = np.zeros(T)
    merit = (F - f_star) + inst_viol + inst_shift
    best = np.minimum.accumulate(merit)
    # index of the running argmin (first occurrence)
    arg = np.zeros(T, dtype=int)
    for s in range(1, T):
        arg[s] = s if merit[s] < merit[arg[s - 1]] else arg[s - 1]
    out["best_iterate_gap"] = best
    out["best_iterate_objective_gap"] = (F - f_star)[arg] if T else np.zeros(0)
    out["best_iterate_violation"] = inst_viol[arg] if T else np.zeros(0)
    out["objective_over_t"] = np.cumsum(F) / t
    out["regret_over_t"] = out["regret"] / t
    out["violation_over_t"] = out["violation"] / t
    out["positive_violation_over_t"] = out["positive_violation"] / t
    out["affine_shift_over_sqrt_t"] = out["affine_shift"] / np.sqrt(t)
    return out
