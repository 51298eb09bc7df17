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

import numpy as np

from ckb.contract.distances import euclidean_distances, kernel_distances

__all__ = ["euclidean_distances", "kernel_distances", "lipschitz_constant", "safety_hints"]


def lipschitz_constant(values: np.ndarray, distances: np.ndarray) -> float:
    """Smallest L with ``|v_i - v_j| <= L d_ij`` over all pairs (``values`` (n,) or (n, m): max over columns)."""
    v = values[:, None] if values.ndim == 1 else values
    off = distances > 0
    best = 0.0
    for j in range(v.shape[1]):
        diff = np.abs(v[:, j][:, None] - v[:, j][None, :])
        best = max(best, float(np.max(diff[off] / distances[off])) if off.any() else 0.0)
    return best


def safety_hints(g_values: np.ndarray, distances: np.ndarray, rng: np.random.Generator) -> dict[str, float]:
    """``{"safe_seed": arm, "lipschitz": L}``: a uniformly random strictly feasible arm and L of ``g``."""
    strictly = np.flatnonzero(np.all(g_values < 0.0, axis=1))
    if strictly.size == 0:
        strictly = np.flatnonzero(np.all(g_values <= 0.0, axis=1))
    hints: dict[str, float] = {"lipschitz": lipschitz_constant(g_values, distances)}
    if strictly.size:
        hints["safe_seed"] = int(strictly[rng.integers(strictly.size)])
    return hints
