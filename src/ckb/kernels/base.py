"""Kernel interface.

A kernel maps two point sets ``X1`` (n1 x d) and ``X2`` (n2 x d) to the Gram matrix
``K[i, j] = k(X1[i], X2[j])``. Every kernel in ckb is a plain, immutable object with numpy arithmetic;
fitted kernels on continuous spaces (BoTorch/GPyTorch) live in the practical optimizer, not here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from ckb._validation import check_finite_array
from ckb.errors import InvalidInputError


class Kernel(ABC):
    """A positive semi-definite kernel ``k(x, x')``."""

    #: number of input dimensions, or ``None`` if any is accepted
    input_dim: int | None = None

    @abstractmethod
    def __call__(self, X1: np.ndarray, X2: np.ndarray | None = None) -> np.ndarray:
        """Gram matrix between the rows of ``X1`` and ``X2`` (``X2 = X1`` if omitted)."""

    @abstractmethod
    def diag(self, X: np.ndarray) -> np.ndarray:
        """``k(x, x)`` for every row of ``X``, without forming the Gram matrix."""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly description (``{"type": ..., **params}``) used in specs and summaries."""

    def check_points(self, X: Any, name: str = "X") -> np.ndarray:
        """Return ``X`` as a finite 2-D float array with the kernel's input dimension."""
        X = check_finite_array(X, name)
        if X.ndim == 1:
            X = X[:, None] if self.input_dim in (None, 1) else X[None, :]
        if X.ndim != 2:
            raise InvalidInputError(f"{name} must be a 2-D array of points (n x d), got shape {X.shape}.")
        if self.input_dim is not None and X.shape[1] != self.input_dim:
            ls = getattr(self, "lengthscale", None)  # where d comes from, which is what the user wrote
            if np.ndim(ls) == 1:
                raise InvalidInputError(
                    f"{name} has {X.shape[1]} column(s) but the kernel's lengthscale {np.asarray(ls).tolist()} "
                    f"has {self.input_dim} entries, one per input: give {X.shape[1]} (or one scalar)."
                )
            raise InvalidInputError(
                f"{name} has {X.shape[1]} column(s) but the kernel expects d = {self.input_dim} inputs."
            )
        return X

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items() if k != "type")
        return f"{type(self).__name__}({params})"
