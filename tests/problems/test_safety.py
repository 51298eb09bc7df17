"""The safe baselines' hints: the Lipschitz constant over blocks of rows is the constant of all pairs."""

import numpy as np
from scipy.spatial.distance import cdist

from ckb.problems import safety


def test_lipschitz_constant_by_blocks_of_rows_is_the_brute_force_maximum(monkeypatch):
    """An instance of 20,000 arms built the n x n distance matrix (about 13 GB with temporaries) for
    this hint; rows are now taken a block at a time, from a matrix or a function, with the same result."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (37, 2))
    X[5] = X[9]  # a repeated point: distance 0 is left out
    g = rng.normal(size=(37, 2))
    D = cdist(X, X)
    want = max(
        abs(g[i, j] - g[k, j]) / D[i, k]
        for i in range(37)
        for k in range(37)
        for j in range(2)
        if D[i, k] > 0
    )
    monkeypatch.setattr(safety, "BLOCK_ENTRIES", 100)  # blocks of 2 rows
    assert safety.lipschitz_constant(g, D) == want
    assert safety.lipschitz_constant(g, lambda i0, i1: cdist(X[i0:i1], X)) == want
    assert safety.lipschitz_constant(g[:, 0], D) == max(
        abs(g[i, 0] - g[k, 0]) / D[i, k] for i in range(37) for k in range(37) if D[i, k] > 0
    )
    assert safety.lipschitz_constant(g[:1], np.zeros((1, 1))) == 0.0  # one point: no pair
