r"""Exact Gaussian-process posteriors with fixed hyperparameters, updated at bandit speed.

The model is the one every paper of the field uses for design (e.g. Sec. 2 of Zhou & Ji (2022) and of the
CBO paper): prior :math:`\mathcal{GP}(0, k)`, likelihood noise :math:`\mathcal N(0, \lambda)`
(``noise = λ``, also the kernel-ridge regularizer), and after observations :math:`(x_s, y_s)_{s \le t}`

.. math::

    \mu_t(x) = k_t(x)^\top (K_t + \lambda I)^{-1} y_{1:t}, \qquad
    k_t(x, x') = k(x, x') - k_t(x)^\top (K_t + \lambda I)^{-1} k_t(x'), \qquad
    \sigma_t^2(x) = k_t(x, x).

Two exact representations, chosen automatically by cost (``method="auto"``):

``"cholesky"``
    The lower Cholesky factor :math:`L_t` of :math:`K_t + \lambda I`, grown by one row per observation
    (row :math:`l = L_{t-1}^{-1} k_{t-1}(x_t)`, diagonal :math:`\sqrt{k(x_t,x_t) + \lambda - \|l\|^2}`), kept in
    packed storage so the triangular solve runs in place. With a candidate set of ``n`` points it also keeps
    :math:`V_t = L_t^{-1} K_{X_t, C}` one row at a time, so mean and variance at all candidates are updated in
    O(t n) per observation; for an observation at candidate ``i`` the new row :math:`l` is column ``i`` of
    :math:`V_{t-1}` and needs no solve. Works for arbitrary (continuous) points, at one extra O(t^2)
    packed triangular solve for a point that is not a candidate.

``"dense"``
    Only for observations at candidate arms. Keeps the posterior mean and covariance
    :math:`\Sigma_t` over the ``n`` arms and applies the rank-one step (the conditioning of a Gaussian on one
    noisy coordinate): with :math:`s = \Sigma_{t-1} e_i`, :math:`c = \lambda + s_i`,

    .. math:: \mu_t = \mu_{t-1} + \frac{y - \mu_{t-1,i}}{c} s, \qquad \Sigma_t = \Sigma_{t-1} - \frac{s s^\top}{c},

    in place (BLAS ``dsyr`` on the lower triangle): O(n^2) per observation, independent of t.

``auto`` starts with the Cholesky form, whose cost grows like t n, and converts once to the dense form
(:math:`\Sigma = K_{CC} - V^\top V`, :math:`\mu = V^\top L^{-1} y`) when t reaches ``n / 2`` (where the measured per-update costs cross) and every
observation so far is a candidate arm and ``n <= dense_max_arms``. The dense form is re-derived from the
data's sufficient statistics (per-arm counts and sums: ``m`` pulls of arm ``a`` with noise λ are one
observation of their mean with noise λ/m) every ``refresh_every`` updates, which bounds round-off drift
at an amortized O(n^2) cost.

Thompson sampling (:meth:`ExactGP.sample`) draws a fresh, independent joint posterior sample over the
candidates by pathwise (Matheron) conditioning of a fresh prior sample :math:`f_0 = F z`, where
:math:`F F^\top = K_{CC}` is computed once (symmetric eigendecomposition, so a singular ``K`` is fine):

.. math:: f_t = \mu_t + f_0 - K_{C X}(K_t + \lambda I)^{-1}(f_0(X_t) + \varepsilon), \quad \varepsilon \sim \mathcal N(0, \lambda I).

In dense form the correction uses the identity :math:`K_{CX}(K_t + \lambda I)^{-1} = \Sigma_t P^\top / \lambda`
(``P`` the t x n selection of pulled arms), so :math:`P^\top(f_0(X_t) + \varepsilon)` is the per-arm vector
``counts * f0 + sqrt(λ counts) ξ`` and a sample costs two O(n^2) products; in Cholesky form it is
:math:`V_t^\top L_t^{-1}(\cdot)`, O(t^2 + t n). No factorization is done per round.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.linalg import blas, cho_factor, cho_solve, solve_triangular

from ckb._system import available_memory
from ckb._validation import (
    as_real_array,
    check_choice,
    check_finite_array,
    check_scalar,
    is_count,
    load_or_restore,
    short_repr,
)
from ckb.errors import InvalidInputError, NotPositiveDefiniteError, OutOfDomainError
from ckb.kernels.base import Kernel
from ckb.kernels.precomputed import PrecomputedKernel

_METHODS = ("auto", "cholesky", "dense")


#: the smallest regularizer lambda ("noise", a variance) a GP takes, relative to the kernel's prior variance
#: k(x, x): below about 1e-15 of it the posterior's updates lose every digit (NaN widths, then a crash in
#: the argmax; infinite means with noise 1e-12 on a kernel of variance 1e4), and 1e-12 of it is far below
#: any noise level a bandit problem has. The floor scales with the kernel because the round-off does:
#: scaling k and λ together scales every step of the update alike. For a unit kernel it is 1e-12;
#: found by probing igp-ucb with noise = 1e-300 (absolute) and ExactGP with variance 1e4 (relative).
MIN_NOISE = 1e-12


def kernel_scale(kernel: Kernel, kdiag: np.ndarray | None = None) -> float:
    """The prior variance ``max k(x, x)`` that :data:`MIN_NOISE` is relative to.

    The largest ``k(x, x)`` over the candidates when their diagonal ``kdiag`` is given, and the kernel's own ``variance`` (stationary
    kernels) or largest diagonal entry (:class:`~ckb.kernels.PrecomputedKernel`) when it declares one,
    whichever is larger; ``1.0`` for a kernel that declares neither and no candidates (the floor is then
    absolute, as it is for any unit-variance kernel).
    """
    scales = []
    if kdiag is not None and len(kdiag):
        scales.append(float(np.max(kdiag)))
    variance = getattr(kernel, "variance", None)
    if isinstance(variance, (int, float, np.integer, np.floating)) and not isinstance(variance, bool):
        if np.isfinite(variance) and variance > 0:
            scales.append(float(variance))
    if isinstance(kernel, PrecomputedKernel):
        scales.append(float(np.max(kernel.matrix.diagonal())))
    return max(scales) if scales else 1.0


def _real(value: Any, name: str) -> float:
    """``value`` as a float if it is one real number (a 0-d array too; no string, boolean or complex)."""
    arr = as_real_array(value, name, "be a real number")
    if arr.ndim:
        raise InvalidInputError(f"{name} must be a real number, got {short_repr(value)}.")
    return float(arr)


#: observations up to this magnitude, with a prior variance scale in [1/_TAME_SCALE, _TAME_SCALE], cannot
#: overflow a posterior: with noise >= MIN_NOISE x the scale, |mean| <= 1e12 sqrt(n t) max|y| and every
#: intermediate stays below 1e250 for any feasible n and t. The per-observation updates skip the overflow
#: checks below (their cost was a fifth of an IGP-UCB round on 100 arms) while every target is this tame.
_TAME = 1e50
_TAME_SCALE = 1e100


def _check_overflow(y: Any, *results: Any) -> None:
    """A one-line error, before the GP changes, when conditioning on ``y`` (one observation, or all
    targets) would leave a non-finite posterior (``results``: the new mean or entries of ``L^{-1} y``, a
    new per-arm sum): observations near the float limit, e.g. 1e308 and then -1e308, made the mean ±inf
    silently. Observations far beyond the problem's scale but within it (1e195) stay fine."""
    if not all(np.all(np.isfinite(r)) for r in results):
        raise _overflow_error(y)


def _overflow_error(y: Any) -> InvalidInputError:
    if np.ndim(y):
        y = np.asarray(y)
        what = f"targets y (largest |y| = {float(np.max(np.abs(y))):.6g})"
    else:
        what = f"observation {y!r}"
    return InvalidInputError(
        f"{what} would make the posterior mean overflow (beyond what float arithmetic can condition "
        "on); nothing was recorded."
    )


def _first_fraction(a: np.ndarray) -> int | None:
    """The first position of ``a`` (1-D) that is not a whole number (NaN and inf included), or None."""
    bad = np.flatnonzero(~np.isfinite(a) | (a != np.round(a)))
    return int(bad[0]) if bad.size else None


#: bytes per entry of an n x n matrix that building a :class:`PriorFactor` holds at its peak (the kernel
#: matrix, the eigenvectors, the factor and LAPACK's workspace; measured: 1.06 GB for n = 5,000)
PRIOR_BYTES_PER_ENTRY = 8 * 5


def _check_prior_memory(n: int) -> None:
    """Refuse, in one line, a prior factor over ``n`` candidates that cannot fit in memory: a bare
    MemoryError from numpy after minutes before (Thompson sampling over 20,000 arms needs about 17 GB)."""
    need, avail = PRIOR_BYTES_PER_ENTRY * n * n, available_memory()
    if avail is not None and need > avail:
        raise InvalidInputError(
            f"joint sampling over n = {n:,} candidates needs their n x n prior factor, about {need / 1e9:.1f} GB "
            f"while it is computed, more than the {avail / 1e9:.1f} GB available; use a policy that does not "
            "sample jointly (e.g. ckb-ucb or ckb-rand) or fewer candidates."
        )


class PriorFactor:
    """A fixed square root ``F`` (``F F^T = K``) of the prior covariance over a candidate set.

    Computed once by a symmetric eigendecomposition (negative round-off eigenvalues are set to 0), so
    rank-deficient kernel matrices such as an SE kernel on a fine grid are handled exactly. Share one
    instance between the GPs of ``f`` and ``g`` when they have the same kernel and candidates.
    """

    def __init__(self, K: np.ndarray) -> None:
        w, U = np.linalg.eigh(K)
        if w[0] < -1e-8 * max(1.0, abs(w[-1])):
            raise NotPositiveDefiniteError(
                f"prior covariance has eigenvalue {w[0]:.3g} < 0; the kernel is not positive semi-definite "
                "on these candidates (add jitter to the kernel)."
            )
        self.factor = np.ascontiguousarray(U * np.sqrt(np.clip(w, 0.0, None)))
        self.n = K.shape[0]

    def draw(self, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
        """Prior samples ``F z`` with ``z ~ N(0, I)``: shape ``(n,)`` or ``(n, size)``."""
        z = rng.standard_normal(self.n if size is None else (self.n, size))
        return self.factor @ z


class ExactGP:
    """Exact GP posterior with a fixed kernel and noise ``λ``, over an optional candidate set.

    Parameters
    ----------
    kernel:
        A :class:`~ckb.kernels.Kernel`.
    noise:
        λ > 0: the likelihood variance (not a standard deviation; equivalently the kernel-ridge
        regularizer) of the model. At least :data:`MIN_NOISE` times the kernel's prior variance
        (:func:`kernel_scale`: ``1e-12`` for a unit kernel, ``1e-8`` for variance ``1e4``), below which
        the updates lose every digit.
    candidates:
        ``(n, d)`` points at which :attr:`mean`, :attr:`var` and :meth:`sample` are maintained, or
        ``None`` for a purely continuous model (then only :meth:`predict` is available).
    method:
        ``"auto"`` (default), ``"cholesky"`` or ``"dense"``; see the module docstring.
    dense_max_arms:
        ``auto`` never switches to the dense form above this many candidates (its memory is 8 n^2 bytes).
    refresh_every:
        In dense form, re-derive the posterior from the sufficient statistics every this many
        updates (``None``: ``max(10 n, 10000)``, which keeps its amortized cost near 1% of an
        update; ``0``: never). Rank-one drift measured over 10^4 updates is ~1e-9 relative without it.
    prior:
        An optional shared :class:`PriorFactor` for the candidates (built lazily otherwise).

    Notes
    -----
    :attr:`mean` (and the arrays behind :attr:`var`) are the model's own buffers, updated in place by
    each observation: copy them if you keep them across updates. :meth:`update` never matches a point to
    a candidate; observe candidates with :meth:`update_arm` (sampling needs every observation there).
    """

    def __init__(
        self,
        kernel: Kernel,
        noise: float = 1.0,
        candidates: np.ndarray | None = None,
        *,
        method: str = "auto",
        dense_max_arms: int = 4096,
        refresh_every: int | None = None,
        prior: PriorFactor | None = None,
    ) -> None:
        if not isinstance(kernel, Kernel):
            raise InvalidInputError(f"kernel must be a ckb.kernels.Kernel, got {type(kernel).__name__}.")
        self.kernel = kernel
        self.method = check_choice(method, "method", _METHODS)
        self.dense_max_arms = check_scalar(dense_max_arms, "dense_max_arms", low=0, integer=True)
        if candidates is None:
            if method == "dense":
                raise InvalidInputError("method='dense' needs a candidate set.")
            self.candidates = None
            self.n = 0
        else:
            self.candidates = kernel.check_points(candidates, "candidates").copy()
            if not self.candidates.shape[0]:  # every update_arm then said "outside 0..-1"
                raise InvalidInputError(
                    f"candidates must hold at least one point, got shape {self.candidates.shape}; "
                    "pass candidates=None for a model without a candidate set."
                )
            self.candidates.setflags(write=False)
            self.n = self.candidates.shape[0]
        self._kdiag_c = None if self.candidates is None else kernel.diag(self.candidates)
        self.noise = self._check_noise(noise)
        scale = kernel_scale(self.kernel, self._kdiag_c)
        self._scale_tame = 1.0 / _TAME_SCALE <= scale <= _TAME_SCALE
        if refresh_every is None:
            refresh_every = max(10 * self.n, 10_000)
        self.refresh_every = check_scalar(refresh_every, "refresh_every", low=0, integer=True)
        if prior is not None and prior.n != self.n:
            raise InvalidInputError(
                f"prior factor is over {prior.n} points but there are {self.n} candidates."
            )
        self._prior = prior
        self.reset()

    def _check_noise(self, noise: Any) -> float:
        """λ at least :data:`MIN_NOISE` times the kernel's prior variance (:func:`kernel_scale`)."""
        scale = kernel_scale(self.kernel, self._kdiag_c)
        if scale == 1.0:  # the unit kernel: the floor is 1e-12 itself
            return check_scalar(noise, "noise (lambda)", low=MIN_NOISE)
        noise = check_scalar(noise, "noise (lambda)", low=0.0, low_inclusive=False)
        floor = MIN_NOISE * scale
        if noise < floor:
            raise InvalidInputError(
                f"noise (lambda, the likelihood variance) must be >= {MIN_NOISE:g} times the kernel's "
                f"prior variance k(x, x) = {scale:g}, i.e. >= {floor:g}, got {noise!r} "
                f"(ratio {noise / scale:.3g}); below that the posterior updates lose every digit."
            )
        return noise

    # ------------------------------------------------------------------ state
    def reset(self) -> None:
        """Forget all observations (the posterior becomes the prior)."""
        # input dimension: from the candidates or the kernel, else fixed by the first observed point
        self._d = self.candidates.shape[1] if self.candidates is not None else self.kernel.input_dim
        self.t = 0
        self.info_gain = 0.0  # ½ Σ_s ln(1 + σ²_{s-1}(x_s)/λ): information gain of the points chosen
        self._X = np.empty((16, self._d or 0))
        self._y = np.empty(16)
        self._tame = self._scale_tame  # every target within _TAME (updates skip the overflow checks)
        self._arm = np.empty(16, dtype=np.intp)  # candidate index of each observation, -1 if none
        self._all_arms = True
        self._since_refresh = 0
        if self.candidates is not None:
            self.mean = np.zeros(self.n)
            self._var = self._kdiag_c.astype(float).copy()
        else:
            self.mean = None
            self._var = None
        self.mode = "dense" if self.method == "dense" else "cholesky"
        self._init_cholesky()
        self._cov = None
        self._counts = self._sums = None
        if self.mode == "dense":
            self._to_dense()
        self._pred_cache = None

    def _init_cholesky(self) -> None:
        self._L_full = None  # cache of the unpacked factor (see _unpack_L)
        self._Lp = np.empty(16 * 17 // 2)  # rows of L packed: row j at [j(j+1)/2, (j+1)(j+2)/2)
        self._alpha = np.empty(16)  # L^{-1} y
        self._V = np.empty((16, self.n)) if self.candidates is not None else None

    @property
    def var(self) -> np.ndarray:
        """Posterior variance at every candidate (clipped at 0 against round-off)."""
        v = self._var if self.mode == "cholesky" else self._cov.diagonal()
        return np.maximum(v, 0.0)

    @property
    def std(self) -> np.ndarray:
        return np.sqrt(self.var)

    @property
    def X(self) -> np.ndarray:
        """The observed points, ``(t, d)``."""
        return self._X[: self.t]

    @property
    def y(self) -> np.ndarray:
        return self._y[: self.t]

    @property
    def arms(self) -> np.ndarray:
        """Candidate index of each observation (``-1`` for a point that is not a candidate)."""
        return self._arm[: self.t]

    # ------------------------------------------------------------- updating
    def update_arm(self, index: int, y: float) -> None:
        """Condition on ``y = f(candidates[index]) + noise``."""
        if self.candidates is None:
            raise InvalidInputError("update_arm needs a candidate set; use update(x, y) for points.")
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            if not (isinstance(index, (float, np.floating)) and float(index).is_integer()):
                raise InvalidInputError(f"arm index must be an integer, got {index!r}.")
        if not 0 <= index < self.n:
            raise OutOfDomainError(f"arm index {index!r} is outside 0..{self.n - 1}.")
        index = int(index)
        y = self._check_y(y)
        if self.mode == "dense":
            self._dense_update(index, y)
        else:
            self._chol_update(self.candidates[index], y, index)
        self._after_update()

    def update(self, x: Any, y: float) -> None:
        """Condition on ``y = f(x) + noise`` at an arbitrary point ``x`` (shape ``(d,)``).

        A 1-D ``x`` is one point of ``d`` coordinates (and a scalar one point of a 1-D GP);
        :meth:`predict` reads a 1-D input the same way when ``d > 1``.
        """
        x = as_real_array(x, "x", "be a point (real coordinates)")
        x = self.kernel.check_points(np.atleast_1d(x).reshape(1, -1), "x")[0]
        if self._d is not None and x.shape[0] != self._d:
            raise InvalidInputError(
                f"x has {x.shape[0]} coordinate(s) but this GP's points have d = {self._d}."
            )
        y = self._check_y(y)
        self.kernel.diag(x[None, :])  # validate x for the kernel (e.g. an arm index) before any change
        if self._d is None:
            self._d = x.shape[0]
            self._X = np.empty((16, self._d))
        if self.mode == "dense":  # rare: a non-candidate point after the switch; rebuild the factor
            self._rebuild_cholesky()
        self._chol_update(x, y, -1)
        self._after_update()

    def fit(self, X: Any, y: Any, arms: Any = None, K_XC: np.ndarray | None = None) -> None:
        r"""Replace all observations by ``(X, y)`` with one factorization, O(t^3 + t^2 n) (Cholesky form).

        For models rebuilt from a moving data set, e.g. a sliding window. ``X``: ``(t, d)``, one point per
        entry of the 1-D ``y`` (a 1-D ``X`` is ``t`` scalar points when ``d`` is 1 or not fixed, one
        point when ``t = 1`` and ``d`` is not fixed, and one point when ``d > 1``, as in :meth:`update`). ``arms``: the candidate index of each point, ``-1``
        for a point that is not a candidate (``None``: all ``-1``); a point given an arm ``a >= 0`` must
        be exactly ``candidates[a]``. ``K_XC``: the ``(t, n)`` kernel rows of the points against the
        candidates, if the caller caches them. The information gain becomes that of the new data,
        :math:`\tfrac12\ln\det(I + K/\lambda) = \sum_i \ln L_{ii} - \tfrac t2 \ln\lambda`.

        Everything is checked, and the factor computed, before the old data is dropped: a refused call
        leaves the model as it was.
        """
        if self.method == "dense":
            raise InvalidInputError("fit() builds the Cholesky form; use method='cholesky' or 'auto'.")
        y = check_finite_array(y, "y", ndim=1)
        t = len(y)
        X = self._fit_points(X, t)
        arms = self._fit_arms(arms, X)
        if K_XC is not None:
            if self.candidates is None:
                raise InvalidInputError(
                    "K_XC (the kernel rows of X against the candidates) was given, but this GP has no "
                    "candidate set."
                )
            K_XC = check_finite_array(K_XC, "K_XC", shape=(t, self.n))
        if t == 0:
            self.reset()
            return
        try:
            L = np.linalg.cholesky(self.kernel(X) + self.noise * np.eye(t))
        except np.linalg.LinAlgError:
            raise NotPositiveDefiniteError(
                f"K(X, X) + noise I is not positive definite for these {t} points (noise {self.noise!r}); "
                "the kernel is not positive semi-definite on them (add jitter to the kernel)."
            ) from None
        alpha = solve_triangular(L, y, lower=True)
        if self.candidates is not None:
            KXC = self.kernel(X, self.candidates) if K_XC is None else K_XC
            V = solve_triangular(L, KXC, lower=True)
        mean = V.T @ alpha if self.candidates is not None else None
        _check_overflow(y, alpha, () if mean is None else mean)
        self.reset()
        cap = max(16, t)
        self._d = X.shape[1]
        self._X, self._y, self._arm = _grow(X, cap), _grow(y, cap), _grow(arms, cap)
        self._note_targets(y)
        self._all_arms = bool(np.all(arms >= 0))
        self._Lp = _grow(L[np.tril_indices(t)], max(16 * 17 // 2, t * (t + 1) // 2))
        self._alpha = _grow(alpha, cap)
        if self.candidates is not None:
            self._V = _grow(V, cap)
            self.mean = mean
            self._var = self._kdiag_c - np.einsum("ij,ij->j", V, V)
        self.t = t
        self.info_gain = float(np.sum(np.log(np.diag(L))) - 0.5 * t * np.log(self.noise))
        self._L_full = L

    def _fit_points(self, X: Any, t: int) -> np.ndarray:
        """``X`` of :meth:`fit` as ``(t, d)`` points, checked against ``t`` targets and the GP's ``d``."""
        d = self.candidates.shape[1] if self.candidates is not None else self.kernel.input_dim
        X = check_finite_array(X, "X")
        if t == 0:
            if X.size:
                raise InvalidInputError(
                    f"X has shape {X.shape} but y is empty: fit() needs one point per target."
                )
            return np.zeros((0, d or 0))
        if X.ndim == 1:  # as in update(): one point when d > 1 (or one target), else t scalar points
            X = X[None, :] if (d not in (None, 1) or (d is None and t == 1)) else X[:, None]
        if X.ndim != 2:
            raise InvalidInputError(f"X must be a 2-D array of points (t x d), got shape {X.shape}.")
        if X.shape[0] != t:
            raise InvalidInputError(
                f"X has {X.shape[0]} row(s) (points) but y has {t} target(s); "
                "fit() needs one point per target."
            )
        if d is not None and X.shape[1] != d:
            raise InvalidInputError(f"X has {X.shape[1]} coordinate(s) but this GP's points have d = {d}.")
        X = self.kernel.check_points(X, "X")
        self.kernel.diag(X)  # validate X for the kernel (e.g. arm indices) before any change
        return X

    def _fit_arms(self, arms: Any, X: np.ndarray) -> np.ndarray:
        """``arms`` of :meth:`fit`: one integer in ``-1..n-1`` per point, a point of arm ``a >= 0`` at
        ``candidates[a]``."""
        t = X.shape[0]
        if arms is None:
            return np.full(t, -1, dtype=np.intp)
        what = "candidate indices (-1 for a point that is not a candidate)"
        a = as_real_array(arms, "arms", f"hold integer {what}")
        if a.shape != (t,):  # one per target: a 1-D array of t entries
            raise InvalidInputError(
                f"arms must be a 1-D array of {t} {what}, one per target, got shape {a.shape}."
            )
        i = _first_fraction(a)
        if i is not None:
            raise InvalidInputError(f"arms must hold integer {what}, got arms[{i}] = {float(a[i])!r}.")
        if self.candidates is None and np.any(a != -1):
            i = int(np.flatnonzero(a != -1)[0])
            raise InvalidInputError(
                f"arms[{i}] = {a[i]:g} names a candidate, but this GP has no candidate set (use -1 or None)."
            )
        out = (a < -1) | (a > self.n - 1)
        if np.any(out):
            i = int(np.flatnonzero(out)[0])
            raise OutOfDomainError(
                f"arms[{i}] = {a[i]:g} is outside -1..{self.n - 1} (-1: a point that is not a candidate)."
            )
        arms = a.astype(np.intp)
        on = np.flatnonzero(arms >= 0)
        if on.size:
            differs = np.any(X[on] != self.candidates[arms[on]], axis=1)
            if np.any(differs):
                i = int(on[np.argmax(differs)])
                raise InvalidInputError(
                    f"X[{i}] is not candidates[arms[{i}]] = candidates[{arms[i]}]: "
                    f"{short_repr(X[i].tolist())} vs {short_repr(self.candidates[arms[i]].tolist())}."
                )
        return arms

    def remove_oldest(self) -> None:
        r"""Forget the first observation, exactly, in O(t^2 + t n) (Cholesky form): a sliding window.

        With :math:`L = \begin{pmatrix} l_{11} & 0 \\ l_{21} & L_{22} \end{pmatrix}` the factor of the
        remaining points' :math:`K_{22} + \lambda I = L_{22}L_{22}^T + l_{21}l_{21}^T` is a rank-one update
        of :math:`L_{22}` by Givens rotations; the same rotations, applied to the rows of
        :math:`[V_2; V_1]` and :math:`[\alpha_2; \alpha_1]`, give the new :math:`V = L'^{-1}K_{X'C}` and
        :math:`\alpha = L'^{-1}y'` (since :math:`K_{2C} = l_{21}V_1 + L_{22}V_2`). The information gain
        becomes that of the remaining points.
        """
        if self.t == 0:
            raise InvalidInputError("remove_oldest() on a GP without observations.")
        if self.mode != "cholesky":
            raise InvalidInputError("remove_oldest() needs the Cholesky form; use method='cholesky'.")
        t = self.t
        L = self._unpack_L().copy()
        L22, v = L[1:, 1:], L[1:, 0].copy()
        alpha = self._alpha[:t].copy()
        a2, a1 = alpha[1:], alpha[0]
        has_c = self.candidates is not None
        if has_c:
            V = self._V[:t]
            V2, V1 = V[1:].copy(), V[0].copy()
        for k in range(t - 1):
            r = float(np.hypot(L22[k, k], v[k]))
            if r == 0.0:
                continue
            c, sn = L22[k, k] / r, v[k] / r
            col = L22[k:, k].copy()
            L22[k:, k] = c * col + sn * v[k:]
            v[k:] = -sn * col + c * v[k:]
            a2[k], a1 = c * a2[k] + sn * a1, -sn * a2[k] + c * a1
            if has_c:  # in place, no temporaries: (V2[k], V1) <- (c V2[k] + s V1, c V1 - s V2[k])
                xr, V1 = blas.drot(V2[k], V1, c, sn, overwrite_x=1, overwrite_y=1)
                V2[k] = xr  # a no-op copy when BLAS rotated the row in place
        n1 = t - 1
        self._Lp[: n1 * (n1 + 1) // 2] = L22[np.tril_indices(n1)]
        self._alpha[:n1] = a2
        self._X[:n1] = self._X[1:t].copy()
        self._y[:n1] = self._y[1:t].copy()
        self._arm[:n1] = self._arm[1:t].copy()
        self.t = n1
        self._all_arms = bool(np.all(self._arm[:n1] >= 0))
        if has_c:
            self._V[:n1] = V2
            self.mean = V2.T @ a2 if n1 else np.zeros(self.n)
            self._var = self._kdiag_c - np.einsum("ij,ij->j", V2, V2)
        self.info_gain = (
            float(np.sum(np.log(np.abs(np.diag(L22))))) - 0.5 * n1 * np.log(self.noise) if n1 else 0.0
        )
        self._pred_cache = None
        self._L_full = None

    def relabel(self, y: Any) -> None:
        r"""Replace the targets of all ``t`` observations, keeping their points (O(t^2 + t n)).

        For methods whose objective changes while the evaluated points stay, e.g. the penalty methods
        of Shi & Eryilmaz (2022) re-expressing past observations under new multipliers. The covariance,
        the information gain and the factor depend only on the points, so only the mean changes:
        Cholesky form :math:`\alpha = L^{-1} y`, :math:`\mu = V^T \alpha`; dense form: the sufficient
        statistics are rebuilt and the posterior re-derived exactly (:meth:`refresh`).
        """
        y = check_finite_array(y, "y", shape=(self.t,))
        if self.mode == "dense":
            self._relabel_dense(y)
            return
        mean = None if self.candidates is None else np.zeros(self.n)
        if self.t:  # checked first: an overflowing mean is refused with nothing changed
            alpha = blas.dtpsv(self.t, self._Lp, y.copy(), lower=0, trans=1)
            mean = self._V[: self.t].T @ alpha if self.candidates is not None else None
            _check_overflow(y, alpha, () if mean is None else mean)
        self._y[: self.t] = y
        self._note_targets(y)
        self._pred_cache = None
        if self.t:
            self._alpha[: self.t] = alpha
        if mean is not None:
            self.mean = mean

    def retarget(self, rows: Any, y: Any) -> None:
        r"""Replace the targets of the observations ``rows`` (0-based, in the order observed) by ``y``,
        keeping their points: :meth:`relabel` for a few targets, at a cost that does not grow with t.

        For feedback that arrives late, e.g. RPOL-CensoredUCB's targets entered as 0 and filled in when
        they arrive (Guo, Zhu & Liu 2023, App. C). The mean is linear in the targets. Cholesky form:
        :math:`\Deltalpha = L^{-1}\Delta y` is zero before the first changed row :math:`s_0`, so only rows
        :math:`s_0..t-1` are solved again and :math:`\mu \mathrel{+}= V_{s_0:t}^T \Deltalpha_{s_0:t}`
        (O((t - s_0)^2 + (t - s_0) n)); dense form: :math:`\mu = \Sigma s / \lambda` with ``s`` the per-arm
        sums of targets (the posterior mean identity behind :meth:`refresh`), so
        :math:`\mu \mathrel{+}= \Sigma_{:a} \Delta s_a / \lambda` for each arm ``a`` whose sum changed
        (O(n) each). :meth:`relabel` re-solves all t rows (O(t^2 + t n); dense form O(|A|^3 + n^2 |A|)),
        which made a round of RPOL-CensoredUCB cost O(t^2). Equal to :meth:`relabel` up to round-off.
        """
        rows = np.asarray(rows).reshape(-1)
        if not rows.size:
            rows = rows.astype(np.intp)
        elif rows.dtype.kind not in "iu" or rows.min() < 0 or rows.max() >= self.t:
            raise InvalidInputError(
                f"rows must be indices of observations 0..{self.t - 1}, got {rows.tolist()!r}; nothing changed."
            )
        y = check_finite_array(y, "y", shape=(rows.size,))
        new = self._y[: self.t].copy()
        new[rows] = y
        delta = new - self._y[: self.t]
        changed = np.flatnonzero(delta)
        if not changed.size:
            return
        if self.mode == "dense":  # every observation is at an arm here (update() leaves this form otherwise)
            dsum = np.bincount(self._arm[changed], weights=delta[changed], minlength=self.n)
            step = sum(self._cov_column(a) * (dsum[a] / self.noise) for a in np.flatnonzero(dsum))
            with np.errstate(over="ignore", invalid="ignore"):
                mean, sums = self.mean + step, self._sums + dsum
            _check_overflow(y, mean, sums)
            self.mean, self._sums = mean, sums
        else:
            s0 = int(changed[0])
            dalpha = np.zeros(self.t - s0)
            for k, j in enumerate(range(s0, self.t)):  # forward substitution, packed row j from column s0
                row = self._Lp[j * (j + 1) // 2 + s0 : j * (j + 1) // 2 + j + 1]
                dalpha[k] = (delta[j] - row[:k] @ dalpha[:k]) / row[k]
            alpha = self._alpha[s0 : self.t] + dalpha
            mean = None
            if self.candidates is not None:
                mean = self.mean + self._V[s0 : self.t].T @ dalpha
            _check_overflow(y, alpha, () if mean is None else mean)
            self._alpha[s0 : self.t] = alpha
            if mean is not None:
                self.mean = mean
        self._y[: self.t] = new
        self._note_targets(new)
        self._pred_cache = None

    def _relabel_dense(self, y: np.ndarray) -> None:
        """:meth:`relabel` in dense form: new sums, then :meth:`refresh`; put back as it was (and refused)
        when the new mean overflows."""
        before = (self._y[: self.t].copy(), self._sums, self.mean, self._cov, self._since_refresh)
        self._y[: self.t] = y
        self._pred_cache = None
        self._sums = np.bincount(self.arms, weights=y, minlength=self.n).astype(float)
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below
            self.refresh()
        if not (np.all(np.isfinite(self.mean)) and np.all(np.isfinite(self._sums))):
            self._y[: self.t], self._sums, self.mean, self._cov, self._since_refresh = before
            raise _overflow_error(y)
        self._note_targets(y)

    def _check_y(self, y: float) -> float:
        # strings, booleans and complex numbers are refused, not converted (float("1") and float(True)
        # were accepted as 1.0)
        y = _real(y, "observation")
        if not np.isfinite(y):
            raise InvalidInputError(f"observation must be finite, got {y!r}; nothing was recorded.")
        return y

    def _record(self, x: np.ndarray, y: float, arm: int) -> None:
        t = self.t
        if t == self._y.shape[0]:
            cap = max(16, 2 * t)
            self._X = _grow(self._X, cap)
            self._y = _grow(self._y, cap)
            self._arm = _grow(self._arm, cap)
        self._X[t] = x
        self._y[t] = y
        self._arm[t] = arm
        if arm < 0:
            self._all_arms = False
        if not abs(y) <= _TAME:
            self._tame = False
        self.t = t + 1

    def _note_targets(self, y: np.ndarray) -> None:
        """After the targets were replaced by ``y``: whether the updates may skip the overflow checks."""
        self._tame = self._scale_tame and bool(np.all(np.abs(y) <= _TAME))

    def _after_update(self) -> None:
        self._pred_cache = None
        self._L_full = None
        if self.mode == "cholesky":
            if (
                self.method == "auto"
                and self.candidates is not None
                and self._all_arms
                and self.n <= self.dense_max_arms
                and 2 * self.t >= self.n  # measured crossover of the two costs: t ≈ n/2 (README)
            ):
                self._to_dense()
        elif self.refresh_every and self._since_refresh >= self.refresh_every:
            self.refresh()

    # Cholesky form --------------------------------------------------------
    def _chol_update(self, x: np.ndarray, y: float, arm: int) -> None:
        t = self.t
        kxx = float(self._kdiag_c[arm]) if arm >= 0 else float(self.kernel.diag(x[None, :])[0])
        if t == 0:
            l = np.empty(0)
        elif arm >= 0:
            # l = L^{-1} k_t(x_arm) is column `arm` of V = L^{-1} K_{X,C}: O(t), not an O(t^2) solve
            l = self._V[:t, arm].copy()
        else:
            l = blas.dtpsv(t, self._Lp, self.kernel(self.X, x[None, :])[:, 0], lower=0, trans=1)
        d2 = kxx + self.noise - float(l @ l)
        # Exactly, d2 - λ = σ²_{t}(x) >= 0; clamp round-off at that bound.
        prior_var = max(d2 - self.noise, 0.0)
        d2 = max(d2, self.noise)
        d = np.sqrt(d2)
        if self.candidates is not None:  # everything computed, and checked, before anything changes
            kc = self.kernel(x[None, :], self.candidates)[0]
            v = (kc - l @ self._V[:t]) / d if t else kc / d
        mean = None  # the new mean, where it had to be checked before anything changes
        if self._tame and abs(y) <= _TAME:  # cannot overflow (_TAME)
            a = (y - float(l @ self._alpha[:t])) / d
        else:
            with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below
                a = (y - float(l @ self._alpha[:t])) / d
                mean = a if self.candidates is None else self.mean + a * v  # the bits of ``mean += a * v``
            _check_overflow(y, a, mean)
        need = (t + 1) * (t + 2) // 2
        if need > self._Lp.shape[0]:
            self._Lp = _grow(self._Lp, max(need, 2 * self._Lp.shape[0]))
        self._Lp[t * (t + 1) // 2 : need - 1] = l
        self._Lp[need - 1] = d
        if t == self._alpha.shape[0]:
            self._alpha = _grow(self._alpha, max(16, 2 * t))
        self._alpha[t] = a
        if self.candidates is not None:
            if t == self._V.shape[0]:
                self._V = _grow(self._V, max(16, 2 * t))
            self._V[t] = v
            if mean is None:
                self.mean += a * v
            else:
                self.mean[...] = mean  # in place: the mean is the model's own buffer
            self._var -= v * v
        self.info_gain += 0.5 * np.log1p(prior_var / self.noise)
        self._record(x, y, arm)

    def _rebuild_cholesky(self) -> None:
        """Recompute the Cholesky form from the data (O(t^3); only on a non-candidate point in dense form)."""
        X, y, arms, gain = self.X.copy(), self.y.copy(), self.arms.copy(), self.info_gain
        self.mode = "cholesky"
        self._cov = self._counts = self._sums = None
        self.t = 0
        self._init_cholesky()
        if self.candidates is not None:
            self.mean = np.zeros(self.n)
            self._var = self._kdiag_c.astype(float).copy()
        t = len(y)
        cap = max(16, 2 * t)
        self._X, self._y, self._arm = _grow(X, cap), _grow(y, cap), _grow(arms, cap)
        self._note_targets(y)
        if t:
            L = np.linalg.cholesky(self.kernel(X) + self.noise * np.eye(t))
            self._Lp = _grow(L[np.tril_indices(t)], max(16 * 17 // 2, cap * (cap + 1) // 2))
            self._alpha = _grow(solve_triangular(L, y, lower=True), cap)
            if self.candidates is not None:
                V = solve_triangular(L, self.kernel(X, self.candidates), lower=True)
                self._V = _grow(V, cap)
                self.mean = V.T @ self._alpha[:t]
                self._var = self._kdiag_c - np.einsum("ij,ij->j", V, V)
        self.t = t
        self.info_gain = gain

    # Dense form -----------------------------------------------------------
    def _to_dense(self) -> None:
        """Switch to the dense arm form: Σ = K_CC - VᵀV, μ = Vᵀα (O(t n^2), once)."""
        K = self.kernel(self.candidates)
        cov = np.asfortranarray(0.5 * (K + K.T))
        t = self.t
        if t:
            V = self._V[:t]
            cov -= V.T @ V
            self.mean = V.T @ self._alpha[:t]
        self._cov = cov
        self._counts = np.bincount(self.arms, minlength=self.n).astype(float)
        self._sums = np.bincount(self.arms, weights=self.y, minlength=self.n).astype(float)
        self._var = None
        self._Lp = self._alpha = self._V = None
        self.mode = "dense"
        self._since_refresh = 0

    def _cov_column(self, i: int) -> np.ndarray:
        """Column ``i`` of the dense posterior covariance, read from its lower triangle (the only part
        the rank-1 updates keep)."""
        cov = self._cov
        return np.concatenate((cov[i, :i], cov[i:, i]))

    def _dense_update(self, i: int, y: float) -> None:
        cov = self._cov
        s = self._cov_column(i)
        sii = max(s[i], 0.0)
        c = self.noise + sii
        if self._tame and abs(y) <= _TAME:  # cannot overflow (_TAME)
            self.mean += ((y - self.mean[i]) / c) * s
        else:
            with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below
                mean = self.mean + ((y - self.mean[i]) / c) * s  # the bits of ``self.mean += ...``
                total = self._sums[i] + y
            _check_overflow(y, mean, total)
            self.mean[...] = mean
        # In place (cov is Fortran-ordered): Σ ← Σ - s sᵀ / c. Keep the returned array regardless, so a
        # layout mistake can only cost a copy, never correctness.
        self._cov = cov = blas.dsyr(-1.0 / c, s, lower=1, a=cov, overwrite_a=1)
        cov[i, i] = self.noise * sii / c  # exact form of s_ii - s_ii²/c, free of cancellation
        self._counts[i] += 1.0
        self._sums[i] += y
        self.info_gain += 0.5 * np.log1p(sii / self.noise)
        self._since_refresh += 1
        self._record(self.candidates[i], y, i)

    def refresh(self) -> None:
        """Re-derive the dense posterior from sufficient statistics (O(|A|^3 + n^2 |A|), |A| = distinct arms).

        Observing arm ``a`` ``m_a`` times with noise λ carries the same information as observing the mean
        of those observations once with noise λ/m_a, so the posterior is exactly
        ``Σ = K - K_{:A} (K_AA + λ D^{-1})^{-1} K_{A:}`` and ``μ = K_{:A} (K_AA + λ D^{-1})^{-1} ȳ_A``.
        """
        if self.mode != "dense":
            return
        K = self.kernel(self.candidates)
        A = np.flatnonzero(self._counts)
        cov = np.asfortranarray(0.5 * (K + K.T))
        if A.size:
            m = self._counts[A]
            ybar = self._sums[A] / m
            S = K[np.ix_(A, A)] + np.diag(self.noise / m)
            Lc = np.linalg.cholesky(S)
            W = solve_triangular(Lc, K[A, :], lower=True)
            cov -= W.T @ W
            self.mean = W.T @ solve_triangular(Lc, ybar, lower=True)
        else:
            self.mean = np.zeros(self.n)
        self._cov = cov
        self._since_refresh = 0
        self._pred_cache = None

    # ------------------------------------------------------------ querying
    def covariance(self, indices: np.ndarray | None = None) -> np.ndarray:
        """Full posterior covariance over the candidates (or a subset of them), symmetric."""
        if self.candidates is None:
            raise InvalidInputError("covariance() needs a candidate set; use predict(X, full_cov=True).")
        idx = np.arange(self.n) if indices is None else self._candidate_indices(indices)
        if self.mode == "dense":
            C = np.tril(self._cov) + np.tril(self._cov, -1).T
            return C[np.ix_(idx, idx)]
        Xc = self.candidates[idx]
        V = self._V[: self.t][:, idx]
        return self.kernel(Xc) - V.T @ V

    def covariance_block(self, rows: Any, cols: Any) -> np.ndarray:
        """Posterior covariance between the candidates ``rows`` and ``cols`` (index arrays), a
        ``(len(rows), len(cols))`` block: O(t |rows| |cols|) in Cholesky form, a copy of the stored
        entries in dense form, where :meth:`covariance` builds all n x n first (SafeOpt's expanders need
        only the safe x uncertified block)."""
        if self.candidates is None:
            raise InvalidInputError(
                "covariance_block() needs a candidate set; use predict(X, full_cov=True)."
            )
        r, c = self._candidate_indices(rows), self._candidate_indices(cols)
        if self.mode == "dense":  # the lower triangle holds the entries: (i, j) at [max, min]
            lower = r[:, None] >= c[None, :]
            return np.where(lower, self._cov[np.ix_(r, c)], self._cov[np.ix_(c, r)].T)
        V = self._V[: self.t]
        return self.kernel(self.candidates[r], self.candidates[c]) - V[:, r].T @ V[:, c]

    def _candidate_indices(self, indices: Any) -> np.ndarray:
        """Candidate indices as integers in 0..n-1 (as update_arm takes them: 1.7 was read as 1, True as 1)."""
        a = as_real_array(indices, "candidate indices", "be integers").reshape(-1)
        i = _first_fraction(a)
        if i is not None:
            raise InvalidInputError(f"candidate indices must be integers, got {float(a[i])!r}.")
        out = (a < 0) | (a >= self.n)
        if np.any(out):
            raise OutOfDomainError(f"candidate index {a[out][0]:g} is outside 0..{self.n - 1}.")
        return a.astype(np.intp)

    def predict(self, X: Any, full_cov: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and variance (or full covariance) at arbitrary points ``X`` (q x d).

        ``X`` must have the GP's ``d`` coordinates per point. A 1-D ``X`` is read as :meth:`update`
        reads one: one point of ``d`` coordinates when ``d > 1``, and ``q`` scalar points when
        ``d = 1``; before ``d`` is known (no candidates, a kernel of any dimension, no observation yet)
        a 1-D ``X`` is ambiguous and refused: pass ``(q, d)``. An empty ``(0, d)`` query gives empty
        arrays.

        Cost: O(t q d + t^2 q) in Cholesky form; in dense form the posterior is solved from the
        sufficient statistics once per update (O(|A|^3)) and then O(|A| q) per query.
        """
        X = self._query_points(X)
        if X.shape[0] == 0:
            return np.zeros(0), np.zeros((0, 0)) if full_cov else np.zeros(0)
        kxx = self.kernel(X) if full_cov else self.kernel.diag(X)
        if self.t == 0:
            return np.zeros(X.shape[0]), kxx.copy()
        if self.mode == "dense":
            A, Lc, beta = self._compressed()
            W = solve_triangular(Lc, self.kernel(self.candidates[A], X), lower=True)
            mean = W.T @ beta
        else:
            W = self._solve_L(self.kernel(self.X, X))
            mean = W.T @ self._alpha[: self.t]
        if full_cov:
            return mean, kxx - W.T @ W
        return mean, np.maximum(kxx - np.einsum("ij,ij->j", W, W), 0.0)

    def _query_points(self, X: Any) -> np.ndarray:
        """``X`` of :meth:`predict` as ``(q, d)`` points with the GP's ``d`` (see :meth:`predict`)."""
        X = check_finite_array(X, "X")
        d = self._d
        if X.ndim == 1:
            if d is None:
                raise InvalidInputError(
                    f"X is 1-D (shape {X.shape}), one point or {X.shape[0]} scalar points, and this GP's "
                    "input dimension d is not known yet (no candidates or observations): "
                    "pass a 2-D (q, d) array."
                )
            X = X.reshape(0, d) if X.size == 0 else (X[:, None] if d == 1 else X[None, :])
        if X.ndim != 2:
            raise InvalidInputError(f"X must be a 2-D array of points (q x d), got shape {X.shape}.")
        if d is not None and X.shape[1] != d:
            raise InvalidInputError(f"X has {X.shape[1]} coordinate(s) but this GP's points have d = {d}.")
        return self.kernel.check_points(X, "X")

    def _compressed(self):
        if self._pred_cache is None:
            A = np.flatnonzero(self._counts)
            m = self._counts[A]
            S = self.kernel(self.candidates[A]) + np.diag(self.noise / m)
            Lc = np.linalg.cholesky(S)
            beta = solve_triangular(Lc, self._sums[A] / m, lower=True)
            self._pred_cache = (A, Lc, beta)
        return self._pred_cache

    def _solve_L(self, B: np.ndarray) -> np.ndarray:
        """``L_t^{-1} B`` for a ``(t, k)`` right-hand side: packed solves for a few columns, else one unpacked solve."""
        t = self.t
        if B.shape[1] <= 4:
            return np.column_stack(
                [blas.dtpsv(t, self._Lp, B[:, j], lower=0, trans=1) for j in range(B.shape[1])]
            )
        return solve_triangular(self._unpack_L(), B, lower=True)

    def _unpack_L(self) -> np.ndarray:
        """The factor as a full lower-triangular array, cached until the next observation."""
        t = self.t
        cache = getattr(self, "_L_full", None)
        if cache is not None and cache.shape[0] == t:
            return cache
        L = np.zeros((t, t))
        rows, cols = np.tril_indices(t)  # row-major order of the lower triangle = our packing
        L[rows, cols] = self._Lp[: t * (t + 1) // 2]
        self._L_full = L
        return L

    # ------------------------------------------------------------- sampling
    @property
    def prior(self) -> PriorFactor:
        if self._prior is None:
            if self.candidates is None:
                raise InvalidInputError("sampling needs a candidate set.")
            _check_prior_memory(self.n)
            self._prior = PriorFactor(self.kernel(self.candidates))
        return self._prior

    def sample(self, rng: np.random.Generator, size: int | None = None, scale: float = 1.0) -> np.ndarray:
        """Joint posterior sample(s) over the candidates from ``N(μ_t, scale² Σ_t)``, fresh and independent.

        Returns shape ``(n,)``, or ``(size, n)`` when ``size`` (an integer >= 0) is given. ``scale``: a
        finite real >= 0. Uses pathwise conditioning of a fresh prior draw (module docstring); every
        observation must be at a candidate arm.
        """
        if self.candidates is None:
            raise InvalidInputError("sampling needs a candidate set.")
        if not isinstance(rng, np.random.Generator):
            raise InvalidInputError(
                f"rng must be a numpy random Generator (np.random.default_rng(seed)), got "
                f"{short_repr(rng, 60)} ({type(rng).__name__})."
            )
        k = 1 if size is None else check_scalar(size, "size", low=0, integer=True)
        scale = check_scalar(_real(scale, "scale"), "scale", low=0.0)
        if not self._all_arms:  # checked before any draw: a refused call leaves the generator alone
            raise InvalidInputError(
                "joint sampling over the candidates needs every observation at a candidate arm; "
                "this GP has observations at other points."
            )
        if k == 0:
            return np.empty((0, self.n))
        f0 = self.prior.draw(rng, k)  # (n, k)
        if self.t == 0:
            dev = f0
        elif self.mode == "dense":
            counts = self._counts[:, None]
            e = counts * f0 + np.sqrt(self.noise * counts) * rng.standard_normal((self.n, k))
            if k == 1:
                corr = blas.dsymv(1.0 / self.noise, self._cov, e[:, 0], lower=1)[:, None]
            else:
                corr = blas.dsymm(1.0 / self.noise, self._cov, e, lower=1)
            dev = f0 - corr
        else:
            t = self.t
            u = f0[self.arms] + np.sqrt(self.noise) * rng.standard_normal((t, k))
            dev = f0 - self._V[:t].T @ self._solve_L(u)
        out = self.mean[:, None] + scale * dev
        return out[:, 0] if size is None else out.T

    # ---------------------------------------------------------- persistence
    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume exactly: data, representation arrays and counters."""
        t = self.t
        state: dict[str, Any] = {
            "t": t,
            "mode": self.mode,
            "info_gain": self.info_gain,
            "since_refresh": self._since_refresh,
            "X": self.X.copy(),
            "y": self.y.copy(),
            "arms": self.arms.copy(),
        }
        if self.mode == "dense":
            state.update(mean=self.mean.copy(), cov=np.asarray(self._cov).copy())
        else:
            state.update(Lp=self._Lp[: t * (t + 1) // 2].copy(), alpha=self._alpha[:t].copy())
            if self.candidates is not None:
                state.update(mean=self.mean.copy(), var=self._var.copy(), V=self._V[:t].copy())
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict`. The state is checked first (its keys for the mode, each array's
        shape against ``t`` and the candidates, finite values, arm indices); a state that does not fit
        is refused with one line and the GP keeps its data (before, a failed load had reset it)."""
        checked = self._checked_state(state)
        load_or_restore(self._apply_state, checked, self.state_dict(), "cannot load this GP state")

    def _checked_state(self, state: Any) -> dict[str, Any]:
        """``state`` with its arrays as numpy arrays of the shapes this GP needs, or InvalidInputError."""
        if not isinstance(state, dict):
            raise InvalidInputError(f"a GP state is a dict from state_dict(), got {short_repr(state, 60)}.")
        mode = state.get("mode")
        if mode not in ("cholesky", "dense") or (mode == "dense" and self.candidates is None):
            allowed = "'cholesky' or 'dense'" if self.candidates is not None else "'cholesky' (no candidates)"
            raise InvalidInputError(f"GP state: mode = {short_repr(mode, 40)}, expected {allowed}.")
        if mode == "dense" and self.method == "cholesky":  # a Cholesky GP never takes the dense form
            raise InvalidInputError(
                "GP state: mode = 'dense' (saved by a GP of method 'dense' or 'auto'), but this GP has "
                "method = 'cholesky', which never uses the dense form."
            )
        t = state.get("t")
        if not is_count(t):
            raise InvalidInputError(
                f"GP state: t = {short_repr(t, 40)} must be a count of observations >= 0."
            )
        n, d = self.n, self._d
        X = np.asarray(check_finite_array(state.get("X"), "GP state X"))
        d = d if d is not None else (X.shape[1] if X.ndim == 2 else 0)
        shapes = {"X": (t, d), "y": (t,), "arms": (t,)}
        if mode == "dense":
            shapes.update(mean=(n,), cov=(n, n))
        else:
            shapes.update(Lp=(t * (t + 1) // 2,), alpha=(t,))
            if self.candidates is not None:
                shapes.update(mean=(n,), var=(n,), V=(t, n))
        missing = [k for k in (*shapes, "info_gain", "since_refresh") if k not in state]
        if missing:
            raise InvalidInputError(f"GP state: missing key(s) {missing} for mode {mode!r}.")
        out: dict[str, Any] = {"t": int(t), "mode": mode}
        for key, shape in shapes.items():
            value = check_finite_array(state[key], f"GP state {key}")
            if value.shape != shape and not (value.size == 0 and int(np.prod(shape)) == 0):
                raise InvalidInputError(
                    f"GP state: {key} has shape {value.shape}, expected {shape} (t = {t}, n = {n})."
                )
            out[key] = value.reshape(shape)
        arms = out["arms"]
        if np.any(arms != np.round(arms)) or np.any(arms < -1) or np.any(arms > n - 1):
            raise InvalidInputError(f"GP state: arms must be candidate indices in -1..{n - 1}.")
        out["arms"] = arms.astype(np.intp)
        out["info_gain"] = check_scalar(state["info_gain"], "GP state info_gain", low=0.0)
        out["since_refresh"] = check_scalar(
            state["since_refresh"], "GP state since_refresh", low=0, integer=True
        )
        return out

    def _apply_state(self, state: dict[str, Any]) -> None:
        """Set the GP from a :meth:`_checked_state` (or its own :meth:`state_dict`)."""
        t = int(state["t"])
        self.reset()
        X = np.asarray(state["X"], dtype=float)
        X = X.reshape(t, self._d if self._d is not None else (X.shape[1] if X.ndim == 2 else 0))
        if t and self._d is None:
            self._d = X.shape[1]
        self._X, self._y = _grow(X, max(16, t)), _grow(np.asarray(state["y"], dtype=float), max(16, t))
        self._arm = _grow(np.asarray(state["arms"], dtype=np.intp), max(16, t))
        self.t = t
        self._note_targets(self._y[:t])
        self._all_arms = bool(np.all(self.arms >= 0))
        self.info_gain = float(state["info_gain"])
        self._since_refresh = int(state["since_refresh"])
        self.mode = str(state["mode"])
        if self.mode == "dense":
            self._cov = np.array(state["cov"], dtype=float, order="F")
            self.mean = np.asarray(state["mean"], dtype=float).copy()
            self._counts = np.bincount(self.arms, minlength=self.n).astype(float)
            self._sums = np.bincount(self.arms, weights=self.y, minlength=self.n).astype(float)
            self._var = self._Lp = self._alpha = self._V = None
        else:
            self._Lp = _grow(np.asarray(state["Lp"], dtype=float), max(16 * 17 // 2, t * (t + 1) // 2))
            self._alpha = _grow(np.asarray(state["alpha"], dtype=float), max(16, t))
            if self.candidates is not None:
                self.mean = np.asarray(state["mean"], dtype=float).copy()
                self._var = np.asarray(state["var"], dtype=float).copy()
                self._V = _grow(np.asarray(state["V"], dtype=float).reshape(t, self.n), max(16, t))


def _grow(a: np.ndarray, cap: int) -> np.ndarray:
    """Copy ``a`` into a new C-ordered array with first dimension ``cap`` (>= len(a)).

    Always C order, so that row-wise buffers (X, V) have one layout whatever their history and a
    restored GP rounds exactly like the original.
    """
    out = np.empty((cap, *a.shape[1:]), dtype=a.dtype)
    out[: a.shape[0]] = a
    return out


def dense_posterior(
    kernel: Kernel, noise: float, X: np.ndarray, y: np.ndarray, Xq: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Reference: posterior mean and full covariance at ``Xq`` by one fresh dense solve, O(t^3).

    Used by tests and benchmarks as ground truth; never in a policy loop.
    """
    K = kernel(X) + noise * np.eye(len(y))
    cf = cho_factor(K, lower=True)
    Kq = kernel(X, Xq)
    mean = Kq.T @ cho_solve(cf, y)
    cov = kernel(Xq) - Kq.T @ cho_solve(cf, Kq)
    return mean, cov
