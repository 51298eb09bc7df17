r"""The two real-data problems of the primal-dual papers: light sensors (the CBO paper, App. F; Zhou & Ji
(2022), Sec. 5) and finance.

Both follow Chowdhury & Gopalan (2019), whose set-up the papers reuse; the data files and where ckb looks for
them are described in :mod:`ckb.problems.data`.

``light-sensor`` (``iw_data_all.mat``)
    Arms: the 41 sensors (:meth:`FiniteDomain.arms`, no coordinates). Objective
    :math:`f_i` = mean of sensor ``i``'s 192 *test* readings (raw units). Kernel: the correlation matrix of
    the 601 *training* rows, i.e. the covariance of the z-scored training rows. Constraint
    :math:`g = -f + h` with :math:`h = h_\text{fraction} \cdot B` and :math:`B = \max_i f_i` (the papers'
    ``h = B/2``), so ``g <= 0`` iff ``f >= h``.
``finance`` (``fin.csv``)
    Arms: the 29 stocks. Objective: mean adjusted close over the 823 days (raw dollars: the papers'
    ``h = 100`` only makes sense in price units). Kernel: the correlation matrix of the prices over *all*
    days (the papers use one table for everything; there is no train/test split). Constraint
    :math:`g = -f + h` with ``h = 100``.

Observations (both): a pull of arm ``i`` returns ``y`` = the reading of arm ``i`` on a uniformly random
row of the table ``f`` was computed from (test rows / all days;
:class:`~ckb.problems.noise.ResampledReadings`), so the noise ``y - f`` is the data's own, real and
heavy-tailed. Choices the papers leave open, each a parameter:

- ``constraint_noise="coupled"`` (default): ``c = h - y`` from the *same* reading, since
  the constraint is a deterministic transform of the reward (``constraint_affine=[(-1, h)]``).
  ``"independent"``: ``c = g + N(0, constraint_std^2)`` independent of ``y``; ``constraint_std`` defaults
  to the pooled standard deviation of the readings about their arm means (the reward noise's scale).
- Kernel: ``corr = Z^T Z / (n - 1)`` with ``Z`` the columns standardized by their mean and their
  ``ddof = 1`` standard deviation, the MATLAB convention (mixing numpy's default ``ddof = 0`` std with
  ``np.cov``'s ``ddof = 1`` would give a diagonal of ``n/(n-1)``). The diagonal is then exactly 1, so
  ``k(x, x) <= 1`` as the theory assumes. ``jitter`` (default 0) is added to the diagonal: the matrices
  are already positive definite (smallest eigenvalue about 5.7e-5 for the light sensors, 2.2e-3 for
  finance), and ckb's GP factors the prior by a symmetric eigendecomposition, so no jitter is needed;
  set it for code that Cholesky-factors the kernel matrix alone.
- ``R`` = :math:`\max |y - f|` over the table (the papers' R for finance; the same rule for the light
  sensors, 835.3 on the real data), published as a hint with ``B`` (= max f), ``G`` (= max |g|),
  ``slater_margin`` (δ = max(-g), the best single-arm margin), and the safe-BO baselines' ``safe_seed``
  and ``lipschitz`` (:mod:`ckb.problems.safety`, with the kernel-induced distance between arms; the seed
  is the only use of ``rng``, drawn last).

A threshold that leaves no strictly feasible arm (``h >= B``) is rejected: the papers need Slater's
condition (δ > 0).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ckb._validation import check_choice, check_noise_scale, check_scalar
from ckb.contract.domain import FiniteDomain
from ckb.errors import DataFileError, InvalidInputError
from ckb.kernels import PrecomputedKernel
from ckb.problems.data import (
    FINANCE_FILE,
    LIGHT_SENSOR_FILE,
    find_data_file,
    load_finance,
    load_light_sensor,
)
from ckb.problems.noise import ResampledReadings
from ckb.problems.problem import Problem, power_of_two_scale
from ckb.problems.registry import PROBLEMS
from ckb.problems.safety import kernel_distances, safety_hints

_CONSTRAINT_NOISE = ("coupled", "independent")


def correlation_matrix(table: np.ndarray, *, what: str = "table", arm_names: Any = None) -> np.ndarray:
    """Covariance of the z-scored columns of ``table`` (rows = samples), ``ddof = 1`` throughout.

    Equals the Pearson correlation matrix; the diagonal is set to exactly 1 (it is 1 up to round-off).
    A constant column has no correlation: :class:`DataFileError` naming it.
    """
    X = np.asarray(table, dtype=float)
    n = X.shape[0]
    # each column divided by a power of two near its largest magnitude first (exact; the correlation is
    # unchanged): before, readings near 1e152 overflowed in the variance and near 1e-300 underflowed to a
    # zero spread, reported as "constant"
    X = X / power_of_two_scale(X, axis=0)
    std = X.std(axis=0, ddof=1)
    if np.any(std == 0.0):
        j = int(np.flatnonzero(std == 0.0)[0])
        name = f"{arm_names[j]!r}" if arm_names is not None else f"column {j}"
        raise DataFileError(
            f"{what}: {name} is constant over all {n} rows, so its correlation (the kernel) is undefined."
        )
    Z = (X - X.mean(axis=0)) / std
    K = Z.T @ Z / (n - 1)
    K = 0.5 * (K + K.T)
    np.fill_diagonal(K, 1.0)
    return K


def _check_constraint_noise(constraint_noise: str, constraint_std: float | None) -> float | None:
    check_choice(constraint_noise, "constraint_noise", _CONSTRAINT_NOISE)
    if constraint_std is not None:
        if constraint_noise == "coupled":
            raise InvalidInputError(
                "constraint_std applies only with constraint_noise='independent' (coupled observations "
                "c = h - y carry the reading's own noise)."
            )
        return check_noise_scale(constraint_std, "constraint_std")
    return None


def _build(
    name: str,
    rng: np.random.Generator,
    *,
    f: np.ndarray,
    readings: np.ndarray,
    K: np.ndarray,
    h: float,
    jitter: float,
    constraint_noise: str,
    constraint_std: float | None,
    metadata: dict[str, Any],
) -> Problem:
    B = float(np.max(f))
    if not h < B:
        raise InvalidInputError(
            f"{name}: threshold h = {h:.6g} leaves no strictly feasible arm (g = -f + h <= 0 needs f >= h, "
            f"but max f = B = {B:.6g}); choose h < B so that Slater's condition holds."
        )
    n = f.shape[0]
    kernel = PrecomputedKernel(K, jitter=check_scalar(jitter, "jitter", low=0.0))
    g = -f + h
    residuals = readings - f
    R = float(np.max(np.abs(residuals)))
    if constraint_noise == "coupled":
        noise = ResampledReadings(readings, constraint_affine=[(-1.0, h)])
    else:
        std = float(np.sqrt(np.mean(residuals**2))) if constraint_std is None else constraint_std
        noise = ResampledReadings(readings, constraint_affine=None, constraint_std=std)
        metadata["constraint_std"] = std
    G = float(np.max(np.abs(g)))
    slater = float(np.max(-g))
    hints: dict[str, float] = {"B": B, "G": G, "slater_margin": slater, "R": R}
    domain = FiniteDomain.arms(n)
    # drawn last with the problem's rng, so it changes nothing else
    hints.update(safety_hints(g[:, None], kernel_distances(kernel, domain.candidates), rng))
    meta = {
        "B": B,
        "h": float(h),
        "R": R,
        "G": G,
        "slater_margin": slater,
        "n_arms": n,
        "n_feasible": int(np.sum(g <= 0.0)),
        "kernel_min_eigenvalue": float(kernel.min_eigenvalue),
        "kernel_jitter": float(kernel.jitter),
        "constraint_noise": constraint_noise,
        **metadata,
    }
    return Problem(name, domain, f, g, noise, kernel=kernel, hints=hints, metadata=meta)


@PROBLEMS.register("light-sensor")
def light_sensor(
    rng: np.random.Generator,
    *,
    data_dir: str | os.PathLike | None = None,
    h_fraction: float = 0.5,
    constraint_noise: str = "coupled",
    constraint_std: float | None = None,
    jitter: float = 0.0,
) -> Problem:
    """Light sensors (41 arms): f = mean test reading, g = -f + h_fraction * max f; see the module docstring."""
    h_fraction = check_scalar(h_fraction, "h_fraction", high=1.0, high_inclusive=False)
    constraint_std = _check_constraint_noise(constraint_noise, constraint_std)
    data = load_light_sensor(find_data_file(LIGHT_SENSOR_FILE, data_dir))
    f = data.test.mean(axis=0)
    K = correlation_matrix(data.train, what=f"{data.path}: data.train.sensordata")
    return _build(
        "light-sensor",
        rng,
        f=f,
        readings=data.test,
        K=K,
        h=h_fraction * float(np.max(f)),
        jitter=jitter,
        constraint_noise=constraint_noise,
        constraint_std=constraint_std,
        metadata={
            "h_fraction": h_fraction,
            "data_file": data.path.name,
            "data_sha256": data.sha256,
            "n_train_rows": int(data.train.shape[0]),
            "n_test_rows": int(data.test.shape[0]),
            "best_arm": int(np.argmax(f)),
        },
    )


@PROBLEMS.register("finance")
def finance(
    rng: np.random.Generator,
    *,
    data_dir: str | os.PathLike | None = None,
    h: float = 100.0,
    constraint_noise: str = "coupled",
    constraint_std: float | None = None,
    jitter: float = 0.0,
) -> Problem:
    """Dow stocks (29 arms): f = mean price, g = -f + h with h = 100 dollars; see the module docstring."""
    h = check_scalar(h, "h")
    constraint_std = _check_constraint_noise(constraint_noise, constraint_std)
    data = load_finance(find_data_file(FINANCE_FILE, data_dir))
    f = data.prices.mean(axis=0)
    K = correlation_matrix(data.prices, what=str(data.path), arm_names=data.tickers)
    return _build(
        "finance",
        rng,
        f=f,
        readings=data.prices,
        K=K,
        h=h,
        jitter=jitter,
        constraint_noise=constraint_noise,
        constraint_std=constraint_std,
        metadata={
            "data_file": data.path.name,
            "data_sha256": data.sha256,
            "tickers": list(data.tickers),
            "first_day": data.dates[0],
            "last_day": data.dates[-1],
            "n_days": len(data.dates),
            "best_arm": int(np.argmax(f)),
            "best_ticker": data.tickers[int(np.argmax(f))],
        },
    )
