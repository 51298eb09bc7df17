"""Distances between arms that a policy and a problem agree on (no ground truth in them).

Euclidean between arm coordinates; for arms without a metric (sensors, stocks) the kernel-induced
distance ``d(x, x') = sqrt(k(x,x) + k(x',x') - 2 k(x,x'))``. The safe-BO baselines measure with them,
and :mod:`ckb.problems.safety` computes the public Lipschitz hint with the same ones.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist

from ckb.kernels.base import Kernel


def euclidean_distances(points: np.ndarray) -> np.ndarray:
    """Pairwise Euclidean distances between the rows of ``points`` (n, d)."""
    return cdist(points, points)


def kernel_distances(kernel: Kernel, points: np.ndarray) -> np.ndarray:
    """``sqrt(k(x,x) + k(x',x') - 2 k(x,x'))`` for all pairs (the RKHS distance of the feature maps)."""
    K = kernel(points)
    d = np.diag(K)
    return np.sqrt(np.maximum(d[:, None] + d[None, :] - 2.0 * K, 0.0))
