"""Domains: a finite set of arms, or a box with an optional grid of candidates.

A policy acts on a domain with candidates by returning a candidate *index* (an ``int``); on a box
without a grid it returns a point. :meth:`Domain.check_action` turns either into ``(index, point)``
and rejects anything outside the domain with a clear error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ckb._validation import check_finite_array, check_scalar
from ckb.errors import InvalidInputError, OutOfDomainError


class Domain:
    #: ``(n, d)`` candidate points, or ``None`` for a continuous box
    candidates: np.ndarray | None
    d: int

    @property
    def n(self) -> int:
        return 0 if self.candidates is None else self.candidates.shape[0]

    @property
    def is_finite(self) -> bool:
        return self.candidates is not None

    def check_action(self, action: Any) -> tuple[int, np.ndarray]:
        """Return ``(index, point)`` for an action (``index = -1`` for a point of a continuous box)."""
        if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
            if self.candidates is None:
                raise InvalidInputError(
                    f"action {action!r} is an index but this domain is a continuous box; give a point of length {self.d}."
                )
            if not 0 <= action < self.n:
                raise OutOfDomainError(f"arm index {action} is outside 0..{self.n - 1}.")
            return int(action), self.candidates[action]
        x = check_finite_array(action, "action")
        if x.shape != (self.d,):
            raise InvalidInputError(
                f"action must be an arm index or a point of shape ({self.d},), got shape {x.shape}."
            )
        self.check_point(x)
        return -1, x

    def check_point(self, x: np.ndarray) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:  # pragma: no cover - overridden
        raise NotImplementedError


class FiniteDomain(Domain):
    """``n`` arms with coordinates ``points`` (n x d); arms without coordinates use ``points = [[0], [1], ...]``."""

    def __init__(self, points: Any) -> None:
        pts = check_finite_array(points, "points")
        if pts.ndim == 1:
            pts = pts[:, None]
        if pts.ndim != 2 or pts.shape[0] == 0:
            raise InvalidInputError(f"points must be a non-empty (n, d) array, got shape {pts.shape}.")
        self.candidates = pts.copy()
        self.candidates.setflags(write=False)
        self.d = pts.shape[1]

    @classmethod
    def arms(cls, n: int) -> FiniteDomain:
        """Arms ``0 .. n-1`` without coordinates (for a :class:`~ckb.kernels.PrecomputedKernel`)."""
        n = check_scalar(n, "n", low=1, integer=True)
        return cls(np.arange(n, dtype=float)[:, None])

    def check_point(self, x: np.ndarray) -> None:
        hit = np.flatnonzero(np.all(self.candidates == x, axis=1))
        if hit.size == 0:
            raise OutOfDomainError(
                f"point {x.tolist()} is not one of the {self.n} arms of this finite domain."
            )

    def check_action(self, action: Any) -> tuple[int, np.ndarray]:
        index, x = super().check_action(action)
        if index < 0:  # a point given for a finite domain: map it to its arm
            index = int(np.flatnonzero(np.all(self.candidates == x, axis=1))[0])
        return index, x

    def to_dict(self) -> dict[str, Any]:
        return {"type": "finite", "n": self.n, "d": self.d}


class BoxDomain(Domain):
    """The box ``[lower, upper]`` in R^d, optionally searched on a fixed grid of candidates.

    ``grid`` may be an ``(n, d)`` array of points inside the box, or an int / list of ints: the number
    of grid points per dimension (a full tensor grid including the bounds).
    """

    def __init__(self, lower: Any, upper: Any, grid: Any = None) -> None:
        lo = np.atleast_1d(check_finite_array(lower, "lower"))
        hi = np.atleast_1d(check_finite_array(upper, "upper"))
        if lo.ndim != 1 or lo.shape != hi.shape:
            raise InvalidInputError(
                f"lower and upper must be 1-D of equal length, got {lo.shape} and {hi.shape}."
            )
        if np.any(hi <= lo):
            j = int(np.flatnonzero(hi <= lo)[0])
            raise InvalidInputError(f"upper[{j}] = {hi[j]} must exceed lower[{j}] = {lo[j]}.")
        self.lower, self.upper, self.d = lo, hi, lo.shape[0]
        self.grid_spec = grid
        if grid is None:
            self.candidates = None
        elif np.ndim(grid) == 2:
            pts = check_finite_array(grid, "grid", shape=(None, self.d))
            for x in pts:
                self.check_point(x)
            self.candidates = pts.copy()
        else:
            sizes = np.broadcast_to(np.asarray(grid, dtype=int), (self.d,))
            if np.any(sizes < 1):
                raise InvalidInputError(f"grid sizes must be >= 1, got {grid!r}.")
            axes = [np.linspace(lo[j], hi[j], int(sizes[j])) for j in range(self.d)]
            mesh = np.meshgrid(*axes, indexing="ij")
            self.candidates = np.stack([m.ravel() for m in mesh], axis=1)
        if self.candidates is not None:
            self.candidates.setflags(write=False)

    def check_point(self, x: np.ndarray) -> None:
        tol = 1e-12 * np.maximum(1.0, np.abs(self.upper - self.lower))
        bad = (x < self.lower - tol) | (x > self.upper + tol)
        if np.any(bad):
            j = int(np.flatnonzero(bad)[0])
            raise OutOfDomainError(
                f"point {x.tolist()} is outside the box: coordinate {j} = {x[j]} not in [{self.lower[j]}, {self.upper[j]}]."
            )

    def to_dict(self) -> dict[str, Any]:
        grid = self.grid_spec if self.grid_spec is None or np.ndim(self.grid_spec) < 2 else f"{self.n} points"
        if isinstance(grid, np.ndarray):
            grid = grid.tolist()
        return {"type": "box", "lower": self.lower.tolist(), "upper": self.upper.tolist(), "grid": grid}
