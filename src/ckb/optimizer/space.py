r"""The search space of the practical optimizer: a box, optionally a finite set of candidates in it.

Every model and acquisition works in the unit cube :math:`u = (x - l) / (h - l) \in [0, 1]^d`; points go
back to original units by :math:`x = l + u (h - l)`. With ``candidates`` (an ``(n, d)`` array inside the
box) the optimizer only ever proposes candidates and maximizes acquisitions by enumeration.

:func:`initial_design` is the scrambled Sobol design every policy starts with (``2d + 2`` points by
default): the first ``n`` points of a scrambled Sobol sequence seeded by ``seed``, so that a longer design
extends a shorter one with the same seed, and every method of a benchmark shares the same initial points.
On a candidate set each Sobol point is replaced by the nearest not-yet-used candidate (unit-cube
Euclidean distance).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ckb._validation import as_real_array, check_finite_array, check_scalar
from ckb.errors import InvalidInputError, OutOfDomainError


class Space:
    """A box ``[lower, upper]`` in R^d (``upper > lower``) with optional finite ``candidates``."""

    def __init__(self, lower: Any, upper: Any, candidates: Any = None) -> None:
        lo = np.atleast_1d(check_finite_array(lower, "lower"))
        hi = np.atleast_1d(check_finite_array(upper, "upper"))
        for arr, name in ((lo, "lower"), (hi, "upper")):
            if arr.ndim != 1:
                raise InvalidInputError(
                    f"{name} must be a number or a list of d numbers, got shape {arr.shape}."
                )
        if lo.shape != hi.shape:
            raise InvalidInputError(
                f"lower and upper must have the same length, got {lo.size} ({lo.tolist()}) and {hi.size} ({hi.tolist()})."
            )
        if lo.size == 0:
            raise InvalidInputError("the box needs at least one dimension, got empty bounds.")
        bad = np.flatnonzero(hi <= lo)
        if bad.size:
            j = int(bad[0])
            raise InvalidInputError(
                f"upper must exceed lower in every coordinate; coordinate {j} has lower = {lo[j]} and upper = {hi[j]}."
            )
        with np.errstate(over="ignore"):
            wide = np.flatnonzero(~np.isfinite(hi - lo))
        if wide.size:
            j = int(wide[0])
            raise InvalidInputError(
                f"the box's width upper - lower must be a finite float; coordinate {j} spans [{lo[j]}, {hi[j]}]: "
                "rescale it (the models work in the unit cube)."
            )
        self.lower, self.upper = lo, hi
        self.d = lo.size
        self.candidates: np.ndarray | None = None
        if candidates is not None:
            C = check_finite_array(candidates, "candidates")
            if C.ndim == 1 and self.d == 1:
                C = C[:, None]
            if C.ndim != 2 or C.shape[1] != self.d or C.shape[0] < 1:
                raise InvalidInputError(
                    f"candidates must be an (n, d) array with d = {self.d} and n >= 1, got shape {C.shape}."
                )
            for i, row in enumerate(C):
                self._check(row, f"candidate {i}")
            self.candidates = C.copy()

    @property
    def width(self) -> np.ndarray:
        return self.upper - self.lower

    def to_unit(self, X: Any) -> np.ndarray:
        return (np.asarray(X, dtype=float) - self.lower) / self.width

    def from_unit(self, U: Any) -> np.ndarray:
        X = self.lower + np.asarray(U, dtype=float) * self.width
        return np.clip(X, self.lower, self.upper)  # guard against round-off just outside the box

    def _check(self, x: np.ndarray, what: str) -> None:
        bad = np.flatnonzero((x < self.lower) | (x > self.upper))
        if bad.size:
            j = int(bad[0])
            raise OutOfDomainError(
                f"{what} {x.tolist()} is outside the box: coordinate {j} = {x[j]} is not in "
                f"[{self.lower[j]}, {self.upper[j]}]."
            )

    def as_point(self, x: Any, what: str = "point") -> np.ndarray:
        """``x`` as a finite (d,) float array (not checked against the box), else an error naming it."""
        named = what if " " in what else f"a {what}"  # "initial_design point 0", "a point"
        arr = np.atleast_1d(as_real_array(x, named, "be numeric (real numbers)"))
        if arr.shape != (self.d,):
            raise InvalidInputError(
                f"{named} must have d = {self.d} coordinate(s), got shape {np.shape(x)}: {np.asarray(x).tolist()}."
            )
        if not np.all(np.isfinite(arr)):
            raise InvalidInputError(f"{named} must be finite, got {arr.tolist()}.")
        return arr

    def check_point(self, x: Any, what: str = "point") -> np.ndarray:
        """``x`` as a finite (d,) float array inside the box, else an error naming the bad coordinate."""
        arr = self.as_point(x, what)
        self._check(arr, what)
        return arr

    def to_dict(self) -> dict[str, Any]:
        return {
            "lower": self.lower.tolist(),
            "upper": self.upper.tolist(),
            "candidates": None if self.candidates is None else self.candidates.tolist(),
        }


def _sobol_unit(d: int, n: int, seed: int) -> np.ndarray:
    """The first ``n`` points of the scrambled Sobol sequence of ``seed`` in ``[0, 1]^d``. Drawn as the
    first power of 2 at least ``n`` and cut (the same points ``random(n)`` gives), so SciPy has no
    "balance properties" warning to give: silencing it with ``warnings.catch_warnings`` changed the
    process's filters, which is not thread-safe, and under ``optimize(n_jobs=2)`` it leaked."""
    from scipy.stats import qmc

    bits = max(0, math.ceil(math.log2(n))) if n > 0 else 0
    return qmc.Sobol(d, scramble=True, rng=np.random.default_rng(seed)).random_base2(bits)[:n]


def initial_design(lower: Any, upper: Any, n: int, seed: int, candidates: Any = None) -> np.ndarray:
    """The first ``n`` points of a scrambled Sobol sequence on the box, in original units, ``(n, d)``.

    Deterministic in ``seed``; ``initial_design(l, h, n + k, s)[:n] == initial_design(l, h, n, s)``. With
    ``candidates``, each point is the nearest candidate not used by an earlier point (until all are used).
    """
    space = Space(lower, upper, candidates)
    n = check_scalar(n, "n (initial design size)", low=0, integer=True)
    seed = check_scalar(seed, "seed", low=0, integer=True)
    U = _sobol_unit(space.d, n, seed)
    if space.candidates is None:
        return space.from_unit(U)
    return space.candidates[nearest_unused(space.to_unit(space.candidates), U)]


def nearest_unused(C_unit: np.ndarray, U: np.ndarray, used: Any = ()) -> np.ndarray:
    """Indices into ``C_unit``: for each row of ``U`` the nearest candidate not yet taken (by ``used`` or an
    earlier row); once every candidate is taken, the nearest one."""
    taken = np.zeros(len(C_unit), dtype=bool)
    taken[np.asarray(list(used), dtype=np.intp)] = True
    out = np.empty(len(U), dtype=np.intp)
    for i, u in enumerate(U):
        dist = np.sum((C_unit - u) ** 2, axis=1)
        if not np.all(taken):
            dist = np.where(taken, np.inf, dist)
        out[i] = int(np.argmin(dist))
        taken[out[i]] = True
    return out
