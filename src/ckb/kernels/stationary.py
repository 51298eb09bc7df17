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
        A = self.check_points(X1, "X1")
        B = A if X2 is None else self.check_points(X2, "X2")
        if A.shape[1] != B.shape[1]:
            raise InvalidInputError(f"X1 has {A.shape[1]} columns but X2 has {B.shape[1]}.")
        try:  # the flag, not a scan of the points: this is on every model update's path
            with np.errstate(over="raise"):
                X1 = A / self.lengthscale
                X2 = X1 if X2 is None else B / self.lengthscale
        except FloatingPointError:  # a point beyond float range once scaled
            return self._sq_dist(A, B)
        return cdist(X1, X2, "sqeuclidean")

    def _sq_dist(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """``||(a - b) / l||^2`` for every pair of rows, where a point divided by a tiny lengthscale
        overflowed (``l`` below about 1e-308 gave inf - inf = NaN in the cdist of the scaled points): the
        differences are divided instead, so equal points are at 0 and the others at their (possibly
        infinite) distance. Only on that overflow; the ordinary path is the cdist, bit for bit."""
        with np.errstate(over="ignore"):
            D = (A[:, None, :] - B[None, :, :]) / self.lengthscale
            return np.sum(D * D, axis=-1)

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
        s = (np.sqrt(3.0) if self.nu == 1.5 else np.sqrt(5.0)) * r
        try:  # the flags, not a scan of the result: this is on every model update's path
            with np.errstate(over="raise", invalid="raise"):
                return self._plain(s)
        except FloatingPointError:  # overflow (inf * 0, a huge variance): repaired where it happened
            with np.errstate(over="ignore", invalid="ignore"):
                out = self._plain(s)
        bad = ~np.isfinite(out)
        out[bad] = self._stable(s[bad])
        return out

    def _plain(self, s: np.ndarray) -> np.ndarray:
        if self.nu == 1.5:
            return self.variance * (1.0 + s) * np.exp(-s)
        return self.variance * (1.0 + s + s * s / 3.0) * np.exp(-s)

    def _stable(self, s: np.ndarray) -> np.ndarray:
        """``v p(s) exp(-s)`` (``p`` the polynomial of ``nu``) where the plain product overflowed: ``s`` =
        inf or ``p(s)`` = inf (a tiny lengthscale) made it inf * 0 = NaN, and a huge variance ``v`` made
        ``v p(s)`` inf. There ``v (p(s) exp(-s))`` (``p(s) exp(-s) <= 1``) while ``exp(-s)`` is a normal
        number, else ``exp(ln v + ln p(s) - s)`` with ``s`` capped at 1e4, beyond which every value is 0."""
        s = np.minimum(s, 1e4)
        p = 1.0 + s if self.nu == 1.5 else 1.0 + s + s * s / 3.0
        with np.errstate(under="ignore"):
            near = self.variance * (p * np.exp(-s))
            far = np.exp(np.log(self.variance) + np.log(p) - s)
        return np.where(s < 700.0, near, far)

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "nu": self.nu}
