"""An explicit kernel matrix over a finite set of arms.

The real-data tasks of the primal-dual papers have arms without a metric (light sensors, stocks) whose
kernel is an empirical correlation matrix. Points are arm *indices*: a row ``[i]`` stands for arm ``i``,
so this kernel plugs into the same engine as the stationary ones (compare GPyTorch's ``IndexKernel``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ckb._validation import check_finite_array, check_scalar
from ckb.errors import InvalidInputError, NotPositiveDefiniteError, OutOfDomainError
from ckb.kernels.base import Kernel


class PrecomputedKernel(Kernel):
    """``k(i, j) = K[i, j] + jitter * [i == j]`` for arm indices ``i, j`` in ``0 .. n-1``.

    The matrix must be symmetric and positive semi-definite up to ``psd_tol`` (relative to its largest
    eigenvalue); otherwise construction fails with the smallest eigenvalue and a jitter that would fix it.
    """

    input_dim = 1

    def __init__(self, matrix: Any, jitter: float = 0.0, psd_tol: float = 1e-10) -> None:
        # a finite tolerance >= 0: NaN switched the check off (every comparison with it is False)
        psd_tol = check_scalar(psd_tol, "psd_tol (relative tolerance of the PSD check)", low=0.0)
        K = check_finite_array(matrix, "kernel matrix", ndim=2)
        n = K.shape[0]
        if K.shape != (n, n) or n == 0:
            raise InvalidInputError(f"kernel matrix must be square and non-empty, got shape {K.shape}.")
        asym = float(np.max(np.abs(K - K.T)))
        scale = float(np.max(np.abs(K))) or 1.0
        if asym > 1e-10 * scale:
            raise InvalidInputError(f"kernel matrix must be symmetric; max |K - K^T| = {asym:.3g}.")
        self.jitter = check_scalar(jitter, "jitter", low=0.0)
        K = 0.5 * (K + K.T) + self.jitter * np.eye(n)
        eig_min = float(np.linalg.eigvalsh(K)[0])
        if eig_min < -psd_tol * scale:
            raise NotPositiveDefiniteError(
                f"kernel matrix is not positive semi-definite: smallest eigenvalue {eig_min:.3g} "
                f"(largest |entry| {scale:.3g}). Add jitter, e.g. PrecomputedKernel(K, jitter={-2 * eig_min:.2g}), "
                "or rebuild the matrix with a consistent ddof."
            )
        self.matrix = K
        self.matrix.setflags(write=False)
        self.n = n
        self.min_eigenvalue = eig_min

    def indices(self, X: Any, name: str = "X") -> np.ndarray:
        """Convert points (``(k, 1)`` arrays of arm indices, or a 1-D index array) to int indices."""
        X = self.check_points(X, name)
        idx = X[:, 0]
        out = (idx < 0) | (idx > self.n - 1)
        if np.any(out):
            shown = _index_text(float(idx[out][0]))
            raise OutOfDomainError(f"{name} holds arm index {shown}, outside 0..{self.n - 1}.")
        if np.any(idx != np.round(idx)):
            bad = float(idx[idx != np.round(idx)][0])
            raise InvalidInputError(f"{name} must hold integer arm indices, got {bad!r}.")
        return idx.astype(np.intp)

    def __call__(self, X1, X2=None):
        i = self.indices(X1, "X1")
        j = i if X2 is None else self.indices(X2, "X2")
        return self.matrix[np.ix_(i, j)]

    def diag(self, X):
        return self.matrix.diagonal()[self.indices(X)].copy()

    def to_dict(self) -> dict[str, Any]:
        return {"type": "precomputed", "n": self.n, "jitter": self.jitter}


def _index_text(value: float) -> str:
    """An index as an error shows it: ``3`` for a whole number, else its full repr (``1.0000000001``,
    ``1e+30``; ``:g`` showed 1.0000000001 as ``1``)."""
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
