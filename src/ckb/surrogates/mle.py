r"""Maximum-likelihood Matérn-5/2 GP hyperparameters for small data sets (numpy + L-BFGS-B).

The model of gpml's ``covMaterniso`` (d = 5) with ``likGauss``, as ADMMBO's original MATLAB code (Ariafar
et al. 2019, ``SetarehAr/ADMMBO`` on GitHub) uses it: after the caller subtracts a known prior mean,

.. math::

    y_i = f(x_i) + \varepsilon_i, \quad f \sim \mathcal{GP}(0, k), \quad \varepsilon_i \sim \mathcal N(0, s_n^2),
    \qquad k(x, x') = s_f^2 \big(1 + \sqrt5 r + \tfrac53 r^2\big) e^{-\sqrt5 r}, \quad r = \|x - x'\| / \ell .

The parameters are :math:`\theta = (\log \ell, \log s_f, \log s_n)` (gpml's: lengthscale, signal standard
deviation, noise standard deviation). With :math:`K_y = K + s_n^2 I` and :math:`\alpha = K_y^{-1} y` the
negative log marginal likelihood and its gradient are

.. math::

    L(\theta) = \tfrac12 y^\top \alpha + \sum_i \log L_{ii} + \tfrac n2 \log 2\pi, \qquad
    \frac{\partial L}{\partial \theta_k} = \tfrac12 \operatorname{tr}\big((K_y^{-1} - \alpha\alpha^\top)
    \,\partial K_y / \partial \theta_k\big),

with :math:`L` the Cholesky factor of :math:`K_y`, and, for :math:`a = \sqrt5 r`,
:math:`\partial K / \partial \log \ell = s_f^2 \tfrac{a^2 (1 + a)}{3} e^{-a}`,
:math:`\partial K / \partial \log s_f = 2K`, :math:`\partial K_y / \partial \log s_n = 2 s_n^2 I`.
:func:`fit_matern52` minimizes :math:`L` with scipy's L-BFGS-B from a given start (gpml's ``minimize``
in the original, at most 100 evaluations), inside box bounds (:func:`default_bounds`):

- :math:`\ell \in [10^{-2}, 10^2]`, meant for inputs scaled to the unit cube (the caller scales);
- :math:`s_f \in [10^{-2} s, 10^2 s]` and :math:`s_n \in [10^{-3} s, 10 s]` with :math:`s` the root mean
  square of ``y`` about the prior mean (1 if that is 0). The noise floor :math:`10^{-3} s` keeps
  :math:`K_y` well conditioned on noiseless data (condition number at most about :math:`n \cdot 10^{10}`);
  gpml has no bounds, so its fits can drift to degenerate values on few points.

A start outside the bounds is clipped into them. If the optimizer returns a non-finite value the start is
kept.

Why not BoTorch / GPyTorch: a fit here is one O(n^3) Cholesky per evaluation on n <= a few hundred points
and takes milliseconds in numpy; ADMMBO refits at every one of its BO steps, so a 100-run sweep needs
thousands to tens of thousands of fits, and GPyTorch's per-fit overhead (autograd graphs, torch
dispatch: tens to hundreds of milliseconds) would put such a sweep far outside the time budget.

:class:`Matern52GP` is the posterior with fixed hyperparameters (one Cholesky, then
:meth:`Matern52GP.predict`); it is rebuilt after every fit, which is exact and cheap at these sizes.

Threads: at these sizes a multi-threaded BLAS gains nothing, and when the cores are busy (two pytest-xdist
workers, other jobs) OpenBLAS's threads make a fit 10-40 times slower (measured: 0.9 s instead of 0.02 s
for 50 points on 2 busy cores). :func:`fit_matern52` therefore runs inside :func:`one_blas_thread`, a
cheap (about 10 µs) scoped limit that callers may also use around their own loops (the process-pool
executors already pin their workers to one thread).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, cho_solve, solve_triangular
from scipy.linalg.lapack import dpotrf, dpotri, dpotrs
from scipy.optimize import minimize
from scipy.spatial.distance import cdist

from ckb._validation import check_finite_array, check_scalar
from ckb.errors import InvalidInputError

_SQRT5 = math.sqrt(5.0)
_CONTROLLER = None


def one_blas_thread():
    """A context manager limiting BLAS to one thread inside it (restored on exit)."""
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")


_LOG_2PI = math.log(2.0 * math.pi)


@dataclass(frozen=True)
class Matern52Hyperparameters:
    """``lengthscale`` ℓ, ``signal_std`` s_f (so the kernel variance is s_f²), ``noise_std`` s_n."""

    lengthscale: float
    signal_std: float
    noise_std: float

    def __post_init__(self) -> None:
        for name in ("lengthscale", "signal_std", "noise_std"):
            check_scalar(getattr(self, name), name, low=0.0, low_inclusive=False)

    @property
    def variance(self) -> float:
        return self.signal_std**2

    @property
    def noise(self) -> float:
        return self.noise_std**2

    def to_log(self) -> np.ndarray:
        return np.log([self.lengthscale, self.signal_std, self.noise_std])

    @classmethod
    def from_log(cls, theta: np.ndarray) -> Matern52Hyperparameters:
        ell, sf, sn = np.exp(np.asarray(theta, dtype=float))
        return cls(float(ell), float(sf), float(sn))


def matern52(X1: np.ndarray, X2: np.ndarray, lengthscale: float, variance: float) -> np.ndarray:
    """Isotropic Matérn-5/2 covariance matrix ``k(X1, X2)`` (same as :class:`ckb.kernels.Matern`)."""
    a = _SQRT5 * cdist(X1, X2) / lengthscale
    return variance * (1.0 + a + a * a / 3.0) * np.exp(-a)


def _check_data(X, y) -> tuple[np.ndarray, np.ndarray]:
    X = check_finite_array(X, "X", ndim=2)
    y = check_finite_array(y, "y", ndim=1)
    if X.shape[0] != y.shape[0] or X.shape[0] == 0:
        raise InvalidInputError(
            f"X and y must hold the same positive number of points, got {X.shape[0]} and {y.shape[0]}."
        )
    return X, y


def negative_log_marginal_likelihood(
    theta: np.ndarray, X: np.ndarray, y: np.ndarray, *, dist: np.ndarray | None = None
) -> tuple[float, np.ndarray]:
    """``L(θ)`` and its gradient for ``θ = (log ℓ, log s_f, log s_n)`` (see the module docstring).

    ``dist`` may pass the precomputed pairwise distances of ``X`` (``X`` is then only used for its size).
    Raises :class:`numpy.linalg.LinAlgError` if ``K_y`` is not numerically positive definite.
    """
    log_ell, log_sf, log_sn = (float(v) for v in theta)
    n = y.shape[0]
    D = cdist(X, X) if dist is None else dist
    a = (_SQRT5 * math.exp(-log_ell)) * D
    e = np.exp(-a)
    sf2 = math.exp(2.0 * log_sf)
    sn2 = math.exp(2.0 * log_sn)
    K = sf2 * (1.0 + a + a * a / 3.0) * e
    Ky = K.copy()
    Ky.flat[:: n + 1] += sn2
    c, info = dpotrf(Ky, lower=1, clean=1, overwrite_a=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"K_y is not positive definite (LAPACK potrf info = {info}).")
    alpha, _ = dpotrs(c, y, lower=1)
    value = 0.5 * float(y @ alpha) + float(np.sum(np.log(np.diag(c)))) + 0.5 * n * _LOG_2PI
    inv, _ = dpotri(c, lower=1)  # lower triangle of K_y^{-1}
    Kinv = inv + np.tril(inv, -1).T
    W = Kinv - np.outer(alpha, alpha)  # 2 dL/dK_y
    dK_dell = sf2 * (a * a * (1.0 + a) / 3.0) * e
    grad = 0.5 * np.array([np.vdot(W, dK_dell), 2.0 * np.vdot(W, K), 2.0 * sn2 * np.trace(W)])
    return value, grad


def default_bounds(y: np.ndarray) -> np.ndarray:
    """Bounds on ``(log ℓ, log s_f, log s_n)`` for inputs in the unit cube (see the module docstring)."""
    y = np.asarray(y, dtype=float)
    s = float(np.sqrt(np.mean(y * y))) if y.size else 0.0
    if not s > 1e-12:
        s = 1.0
    ls = math.log(s)
    return np.array(
        [
            [math.log(1e-2), math.log(1e2)],
            [ls + math.log(1e-2), ls + math.log(1e2)],
            [ls + math.log(1e-3), ls + math.log(10.0)],
        ]
    )


class Matern52GP:
    """Exact GP posterior with Matérn-5/2 hyperparameters ``hyp`` on data ``(X, y)`` (zero prior mean).

    ``nll`` is the negative log marginal likelihood at ``hyp``; ``n_evals`` the number of likelihood
    evaluations the fit used (0 when built directly).
    """

    def __init__(self, X, y, hyp: Matern52Hyperparameters, *, nll: float = float("nan"), n_evals: int = 0):
        self.X, self.y = _check_data(X, y)
        self.hyp = hyp
        self.nll = nll
        self.n_evals = n_evals
        n = self.y.shape[0]
        Ky = matern52(self.X, self.X, hyp.lengthscale, hyp.variance)
        Ky.flat[:: n + 1] += hyp.noise
        self._L = np.linalg.cholesky(Ky)
        self._alpha = cho_solve((self._L, True), self.y, check_finite=False)

    def predict(self, Xq, include_noise: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and variance of ``f`` at ``Xq`` (of a new observation if ``include_noise``)."""
        Xq = check_finite_array(Xq, "Xq", ndim=2)
        if Xq.shape[1] != self.X.shape[1]:
            raise InvalidInputError(f"Xq must have {self.X.shape[1]} columns, got {Xq.shape[1]}.")
        Kq = matern52(self.X, Xq, self.hyp.lengthscale, self.hyp.variance)
        mean = Kq.T @ self._alpha
        V = solve_triangular(self._L, Kq, lower=True, check_finite=False)
        var = np.maximum(self.hyp.variance - np.einsum("ij,ij->j", V, V), 0.0)
        if include_noise:
            var = var + self.hyp.noise
        return mean, var


def fit_matern52(
    X,
    y,
    init: Matern52Hyperparameters,
    *,
    bounds: np.ndarray | None = None,
    max_evals: int = 100,
) -> Matern52GP:
    """Fit ``(ℓ, s_f, s_n)`` by maximum marginal likelihood from ``init``; return the posterior.

    ``bounds`` is a ``(3, 2)`` array on ``(log ℓ, log s_f, log s_n)`` (default :func:`default_bounds`);
    ``max_evals`` caps the likelihood evaluations (gpml's ``minimize(..., -100)`` in ADMMBO's code).
    """
    X, y = _check_data(X, y)
    max_evals = check_scalar(max_evals, "max_evals", low=1, integer=True)
    b = default_bounds(y) if bounds is None else check_finite_array(bounds, "bounds", shape=(3, 2))
    if np.any(b[:, 0] > b[:, 1]):
        raise InvalidInputError(f"bounds must have lower <= upper in each row, got {b.tolist()}.")
    theta0 = np.clip(init.to_log(), b[:, 0], b[:, 1])
    dist = cdist(X, X)
    evals = 0
    big = 1e25

    def fun(theta):
        nonlocal evals
        evals += 1
        try:
            v, g = negative_log_marginal_likelihood(theta, X, y, dist=dist)
        except (LinAlgError, np.linalg.LinAlgError):
            return big, np.zeros(3)
        if not (math.isfinite(v) and np.all(np.isfinite(g))):
            return big, np.zeros(3)
        return v, g

    with one_blas_thread():
        v0, _ = fun(theta0)
        res = minimize(
            fun,
            theta0,
            jac=True,
            method="L-BFGS-B",
            bounds=[tuple(r) for r in b],
            options={"maxfun": max_evals, "maxiter": max_evals},
        )
        theta, v = (res.x, float(res.fun)) if math.isfinite(res.fun) and res.fun <= v0 else (theta0, v0)
        return Matern52GP(X, y, Matern52Hyperparameters.from_log(theta), nll=v, n_evals=evals)
