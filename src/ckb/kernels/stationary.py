r"""Stationary kernels: squared exponential and Matérn (nu = 1.5, 2.5).

With ``r = ||(x - x') / l||`` (``l`` a scalar or one lengthscale per dimension) and variance ``v``:

- squared exponential: :math:`k(r) = v \exp(-r^2 / 2)` (the convention of Chowdhury & Gopalan's code,
  which the primal-dual papers follow: ``exp(-||x - y||^2 / (2 l^2))``);
- Matérn 3/2: :math:`k(r) = v (1 + \sqrt{3} r) \exp(-\sqrt{3} r)`;
- Matérn 5/2: :math:`k(r) = v (1 + \sqrt{5} r + 5 r^2 / 3) \exp(-\sqrt{5} r)`.

``k(x, x) = v``; the papers' assumption ``k(x, x) <= 1`` holds for the default ``v = 1``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.spatial.distance import cdist

from ckb._validation import check_choice, check_finite_array, check_scalar
from ckb.errors import InvalidInputError
from ckb.kernels.base import Kernel


class _Stationary(Kernel):
    type_name = ""

    def __init__(self, lengthscale: float | np.ndarray = 1.0, variance: float = 1.0) -> None:
        ls = check_finite_array(lengthscale, "lengthscale")
        if ls.ndim > 1 or ls.size == 0 or np.any(ls <= 0):
            raise InvalidInputError(
                f"lengthscale must be a positive scalar or a 1-D array of positive values, got {lengthscale!r}."
            )
        self.lengthscale = float(ls) if ls.ndim == 0 else ls.copy()
        self.input_dim = None if ls.ndim == 0 else ls.shape[0]
        self.variance = check_scalar(variance, "variance", low=0.0, low_inclusive=False)

    def _r(self, X1: np.ndarray, X2: np.ndarray | None) -> np.ndarray:
        X1 = self.check_points(X1, "X1") / self.lengthscale
        X2 = X1 if X2 is None else self.check_points(X2, "X2") / self.lengthscale
        if X1.shape[1] != X2.shape[1]:
            raise InvalidInputError(f"X1 has {X1.shape[1]} columns but X2 has {X2.shape[1]}.")
        return cdist(X1, X2, "sqeuclidean")

    def diag(self, X: np.ndarray) -> np.ndarray:
        return np.full(self.check_points(X).shape[0], self.variance)

    def to_dict(self) -> dict[str, Any]:
        ls = self.lengthscale if np.isscalar(self.lengthscale) else self.lengthscale.tolist()
        return {"type": self.type_name, "lengthscale": ls, "variance": self.variance}


class SquaredExponential(_Stationary):
    """Squared exponential (RBF) kernel ``v exp(-||x - x'||^2 / (2 l^2))``."""

    type_name = "se"

    def __call__(self, X1, X2=None):
        return self.variance * np.exp(-0.5 * self._r(X1, X2))


class Matern(_Stationary):
    """Matérn kernel with smoothness ``nu`` in {1.5, 2.5} (closed forms; see the module docstring)."""

    type_name = "matern"

    def __init__(self, lengthscale=1.0, variance=1.0, nu: float = 2.5) -> None:
        super().__init__(lengthscale, variance)
        self.nu = float(check_choice(nu, "nu", (1.5, 2.5)))

    def __call__(self, X1, X2=None):
        r = np.sqrt(self._r(X1, X2))
        if self.nu == 1.5:
            s = np.sqrt(3.0) * r
            return self.variance * (1.0 + s) * np.exp(-s)
        s = np.sqrt(5.0) * r
        return self.variance * (1.0 + s + s * s / 3.0) * np.exp(-s)

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "nu": self.nu}
