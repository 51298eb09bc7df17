"""Public constants some baselines assume known: a safe seed and a Lipschitz constant.

The safe-BO baselines of the primal-dual papers (SafeOpt, StageOpt, SGP-UCB) need a known safe action
and (SafeOpt/StageOpt) a Lipschitz constant of the safety function. Experiments supply them through
:attr:`ProblemInfo.hints`, computed once per instance from ground truth here (the baselines' assumption
is that they are known); CKB policies do not use them.

Distances: Euclidean between arm coordinates; for arms without a metric (sensors, stocks) the
kernel-induced distance ``d(x, x') = sqrt(k(x,x) + k(x',x') - 2 k(x,x'))``. Policies measure with the same
ones; they are part of the policy-facing contract (:mod:`ckb.contract.distances`) and re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ckb.contract.distances import euclidean_distances, kernel_distances

__all__ = ["euclidean_distances", "kernel_distances", "lipschitz_constant", "safety_hints"]


#: entries of the distance matrix held at once by :func:`lipschitz_constant` (a block of rows)
BLOCK_ENTRIES = 1 << 22


def lipschitz_constant(values: np.ndarray, distances: np.ndarray | Callable[[int, int], np.ndarray]) -> float:
    """Smallest L with ``|v_i - v_j| <= L d_ij`` over all pairs (``values`` (n,) or (n, m): max over
    columns). ``distances``: the (n, n) matrix, or a function giving its rows ``i0:i1`` (so that the
    matrix is never held whole: an instance of 20,000 arms needed about 13 GB for a hint only the safe
    baselines read). Taken over blocks of rows; the maximum is the same as over the whole matrix."""
    v = values[:, None] if values.ndim == 1 else values
    n = v.shape[0]
    rows = distances if callable(distances) else (lambda i0, i1: distances[i0:i1])
    step = max(1, BLOCK_ENTRIES // max(n, 1))
    best = 0.0
    for i0 in range(0, n, step):
        D = rows(i0, min(n, i0 + step))
        off = D > 0
        if not off.any():
            continue
        for j in range(v.shape[1]):
            diff = np.abs(v[i0 : i0 + D.shape[0], j][:, None] - v[:, j][None, :])
            best = max(best, float(np.max(diff[off] / D[off])))
    return best


def safety_hints(
    g_values: np.ndarray, distances: np.ndarray | Callable[[int, int], np.ndarray], rng: np.random.Generator
) -> dict[str, float]:
    """``{"safe_seed": arm, "lipschitz": L}``: a uniformly random strictly feasible arm and L of ``g``
    (``distances`` as :func:`lipschitz_constant` takes them)."""
    strictly = np.flatnonzero(np.all(g_values < 0.0, axis=1))
    if strictly.size == 0:
        strictly = np.flatnonzero(np.all(g_values <= 0.0, axis=1))
    hints: dict[str, float] = {"lipschitz": lipschitz_constant(g_values, distances)}
    if strictly.size:
        hints["safe_seed"] = int(strictly[rng.integers(strictly.size)])
    return hints
