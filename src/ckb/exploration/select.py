"""Choosing the maximizer of an acquisition: over candidates (random tie-breaking) or over a box.

Ties matter in this field: with clipped estimates many arms can share the top score (e.g. at round 1
every UCB is equal), and breaking ties by lowest index biases the first arms. Ties are therefore broken
uniformly at random among scores within ``rtol`` of the maximum.
"""

from __future__ import annotations

import numpy as np

from ckb._validation import as_real_array, check_finite_array, check_scalar
from ckb.errors import InvalidInputError


def argmax_random_tie(values: np.ndarray, rng: np.random.Generator, rtol: float = 1e-12) -> int:
    """Index of the maximum of ``values``, ties (within ``rtol`` relative) broken uniformly at random. A
    +inf value wins, ties among several +inf broken the same way (the relative threshold is NaN there);
    NaN and an empty array are ``InvalidInputError``, as are values that are not a 1-D array (or list) of
    real numbers and an ``rtol`` that is not a finite number >= 0."""
    values = as_real_array(values, "acquisition values")
    if values.ndim != 1:  # a 2-D array gave a flat index
        raise InvalidInputError(
            f"acquisition values must be a 1-D array (one score per candidate), got shape {values.shape}."
        )
    rtol = check_scalar(rtol, "rtol (relative tie tolerance)", low=0.0)
    if values.size == 0:
        raise InvalidInputError("acquisition values are empty: there is no candidate to choose from.")
    top = values.max()
    if not np.isfinite(top):
        if np.isnan(values).any():
            raise InvalidInputError("acquisition values contain NaN.")
    thresh = top if top == np.inf else top - rtol * max(1.0, abs(top))
    ties = np.flatnonzero(values >= thresh)
    if ties.size == 1:
        return int(ties[0])
    return int(ties[rng.integers(ties.size)])


def maximize_on_box(
    acquisition,
    lower: np.ndarray,
    upper: np.ndarray,
    rng: np.random.Generator,
    *,
    n_raw: int = 1024,
    n_restarts: int = 4,
) -> np.ndarray:
    """Maximize ``acquisition(X) -> (q,)`` over a box: random raw samples, then L-BFGS-B from the best.

    This is the heuristic that footnote 4 of Zhou & Ji (2022) suggests for continuous domains (the argmax
    need only be accurate to within C/sqrt(t)). Gradients are by finite differences. ``lower <= upper``
    (arrays or lists of ``d`` finite numbers), ``n_raw >= 1`` and ``n_restarts >= 0`` are checked, and so
    are the raw scores: ``(n_raw,)`` real numbers, no NaN.
    """
    lower, upper = _box(lower, upper)
    n_raw = check_scalar(n_raw, "n_raw", low=1, integer=True)
    n_restarts = check_scalar(n_restarts, "n_restarts", low=0, integer=True)
    d = lower.shape[0]
    raw = lower + (upper - lower) * rng.random((n_raw, d))
    vals = _scores(acquisition(raw), n_raw)
    starts = raw[np.argsort(-vals)[:n_restarts]]
    best_x, best_v = raw[int(np.argmax(vals))], float(np.max(vals))
    bounds = list(zip(lower, upper))
    from scipy.optimize import minimize  # lazily: ~0.4-0.9 s to import, needed only here

    for x0 in starts:
        res = minimize(lambda x: -float(acquisition(x[None, :])[0]), x0, method="L-BFGS-B", bounds=bounds)
        if -res.fun > best_v:
            best_x, best_v = np.clip(res.x, lower, upper), -float(res.fun)
    return best_x


def refine_from_candidates(
    values: np.ndarray,
    acquisition,
    candidates: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    rng: np.random.Generator,
    *,
    n_restarts: int = 1,
    method: str = "local",
    n_iter: int = 12,
    batch: int = 16,
) -> np.ndarray:
    """Maximize over a box given an acquisition already evaluated at a fixed candidate set.

    Refines from the best ``n_restarts`` candidates (the best one chosen with random tie-breaking) and
    returns the best point found; never worse than the best candidate (``n_restarts = 0`` returns it).

    - ``method="local"`` (default): a batched random local search. Each of ``n_iter`` steps evaluates
      ``batch`` points drawn uniformly in a box of half-width ``r`` around the incumbent in one call,
      moves to the best if it improves and otherwise halves ``r``; ``r`` starts at the candidates'
      typical spacing ``(volume / n)^(1/d)``. About ``n_iter`` acquisition calls per start: with a GP
      that maintains its posterior at the candidates the whole round costs O(n + n_iter t^2 batch).
    - ``method="lbfgs"``: L-BFGS-B with finite-difference gradients (more precise, ~20x the calls).
    """
    lower, upper = _box(lower, upper)
    best = argmax_random_tie(values, rng)
    best_x, best_v = candidates[best].copy(), float(values[best])
    if n_restarts <= 0:
        return best_x
    order = np.argsort(-values)[:n_restarts]
    starts = [best, *[int(i) for i in order if i != best][: n_restarts - 1]]
    if method == "local":
        d = lower.shape[0]
        r0 = float(np.prod(upper - lower) / candidates.shape[0]) ** (1.0 / d)
        for i in starts:
            x, v, r = candidates[i].copy(), float(values[i]), r0
            for _ in range(n_iter):
                X = np.clip(x + r * rng.uniform(-1.0, 1.0, (batch, d)), lower, upper)
                vals = acquisition(X)
                j = int(np.argmax(vals))
                if vals[j] > v:
                    x, v = X[j], float(vals[j])
                else:
                    r *= 0.5
            if v > best_v:
                best_x, best_v = x, v
        return best_x
    if method != "lbfgs":
        raise InvalidInputError(f"method must be 'local' or 'lbfgs', got {method!r}.")
    from scipy.optimize import minimize  # lazily: ~0.4-0.9 s to import, needed only here

    bounds = list(zip(lower, upper))
    for i in starts:
        res = minimize(
            lambda x: -float(acquisition(x[None, :])[0]), candidates[i], method="L-BFGS-B", bounds=bounds
        )
        if np.isfinite(res.fun) and -res.fun > best_v:
            best_x, best_v = np.clip(res.x, lower, upper), -float(res.fun)
    return best_x


def sobol_candidates(lower: np.ndarray, upper: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` scrambled Sobol points in the box (seeded from ``rng``): a fixed search set for a continuous
    domain, at which a GP keeps its posterior (O(t n) per update) and from which
    :func:`refine_from_candidates` starts. ``n``: an integer >= 1."""
    from scipy.stats import qmc

    lower, upper = _box(lower, upper)
    n = check_scalar(n, "n (number of Sobol points)", low=1, integer=True)
    sob = qmc.Sobol(lower.shape[0], scramble=True, seed=int(rng.integers(2**63 - 1)))
    return lower + (upper - lower) * sob.random(n)


def _box(lower, upper) -> tuple[np.ndarray, np.ndarray]:
    """``lower`` and ``upper`` as 1-D float arrays of one length ``d >= 1`` with ``lower <= upper``
    (lists are taken), else a one-line error naming the bad bound."""
    lower = check_finite_array(lower, "lower", ndim=1)
    upper = check_finite_array(upper, "upper", ndim=1)
    if lower.shape != upper.shape or not lower.size:
        raise InvalidInputError(
            f"lower and upper must have the same length d >= 1, got shapes {lower.shape} and {upper.shape}."
        )
    if np.any(lower > upper):
        i = int(np.flatnonzero(lower > upper)[0])
        raise InvalidInputError(
            f"the box needs lower <= upper, but lower[{i}] = {float(lower[i])!r} > upper[{i}] = "
            f"{float(upper[i])!r}."
        )
    return lower, upper


def _scores(vals, n: int) -> np.ndarray:
    """The acquisition's values at ``n`` raw points: ``(n,)`` real numbers without NaN (an all-NaN
    acquisition gave a random point), else a one-line error."""
    vals = as_real_array(vals, "acquisition values")
    if vals.shape != (n,):
        raise InvalidInputError(
            f"the acquisition must return one value per point, shape ({n},), got shape {vals.shape}."
        )
    if np.isnan(vals).any():
        i = int(np.flatnonzero(np.isnan(vals))[0])
        raise InvalidInputError(f"acquisition values contain NaN (first at raw point {i} of {n}).")
    return vals
