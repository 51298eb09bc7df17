r"""The maximizer of the optimizer's policies (the rules' scores and updates are in :mod:`ckb.rules`).

:class:`Maximizer`: BoTorch's ``optimize_acqf`` (multi-start L-BFGS-B from the best of ``raw_samples``
scrambled Sobol points) over the unit cube, or enumeration over a finite candidate set (ties broken
uniformly at random); points within ``1e-6`` (unit-cube max-norm) of an excluded point (pending, or
earlier in the same batch) are skipped, so a batch never repeats a point. With a ``separation`` (per-dimension
radii r), a point x with :math:`\lVert (x - p)/r \rVert_2 < 1` for an excluded p is skipped instead, and the
restarts maximize the score minus a steep hinge :math:`c \sum_p [1.05 - \lVert (x - p)/r \rVert_2]^+` (c: ten
times the score's range over the raw samples, plus 1) so that they leave the excluded balls and settle just
outside them; if every restart and raw sample is then excluded, the ``1e-6`` rule applies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ckb.errors import InvalidInputError
from ckb.exploration import argmax_random_tie

#: two unit-cube points closer than this (max-norm) count as the same point
SAME_POINT = 1e-6
#: the separation hinge pushes restarts out to this multiple of the radius (the hard rule is < 1)
_HINGE_EDGE = 1.05


# ------------------------------------------------------------------- names that moved to ckb.rules
#: old name -> "module:name" (the entry-point notation) of where it lives now
_MOVED = {
    "ckb_score": "ckb.rules.primal_dual:primal_dual_score",
    "ckb_dual_step": "ckb.rules.primal_dual:dual_step",
    "rpol_score": "ckb.rules.optimistic:rpol_score",
    "config_score": "ckb.rules.optimistic:config_score",
    "CONFIG_FLOOR": "ckb.rules.optimistic:CONFIG_FLOOR",
    "log_cei": "ckb.rules.cei:log_cei",
}


def __getattr__(name: str) -> Any:
    """The rule math that lived here is in :mod:`ckb.rules` (deprecated aliases)."""
    if name in _MOVED:
        import importlib
        import warnings

        module, _, new = _MOVED[name].partition(":")
        warnings.warn(
            f"ckb.optimizer.acquisition.{name} is deprecated; use {module}.{new}.",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(module), new)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------------------- maximizer
def full_line_search(fn: Callable) -> Callable:
    """Mark a score to be maximized with SciPy's 20 line-search steps whatever the maximizer's
    ``max_line_search`` (returns ``fn``): for a search run seldom whose result decides whether the
    policy acts at all, where a short line search's misses cost more than its steps."""
    fn.full_line_search = True
    return fn


class Maximizer:
    """Maximizes a score ``fn(X) -> (b,)`` (torch, X of shape (b, d) in the unit cube).

    ``candidates``: (n, d) unit-cube points for enumeration (None: the continuous cube). ``exclude``:
    points a result must differ from. ``max_line_search``: the line-search steps L-BFGS-B may take per
    iteration (None: SciPy's 20; a score marked by :func:`full_line_search` always gets 20); a score
    with a jump (a hard admissible set) wants few, since a line search across the jump fails however
    many steps it takes.
    """

    def __init__(
        self,
        d: int,
        rng: np.random.Generator,
        *,
        candidates: np.ndarray | None = None,
        num_restarts: int = 10,
        raw_samples: int = 256,
        maxiter: int = 100,
        max_line_search: int | None = None,
    ) -> None:
        self.d = d
        self.rng = rng
        self.candidates = candidates
        self.num_restarts = num_restarts
        self.raw_samples = raw_samples
        self.maxiter = maxiter
        self.max_line_search = max_line_search

    def __call__(
        self, fn: Callable, exclude: np.ndarray | None = None, separation: np.ndarray | None = None
    ) -> tuple[np.ndarray, float]:
        """The maximizer of ``fn`` over the unit cube (or the candidates) and its score, avoiding ``exclude``
        (p, d): within ``SAME_POINT``, or within the ellipsoid of radii ``separation`` (d,) if given."""
        exclude = (
            np.zeros((0, self.d)) if exclude is None else np.asarray(exclude, dtype=float).reshape(-1, self.d)
        )
        r = None
        if separation is not None and len(exclude):
            r = np.asarray(separation, dtype=float).reshape(-1)
            if r.shape != (self.d,) or not np.all(np.isfinite(r)) or np.any(r <= 0):
                raise InvalidInputError(f"separation must be {self.d} positive radii, got {separation!r}.")
        if self.candidates is not None:
            rules = [lambda c: self._taken(c, exclude)]
            if r is not None:
                rules.insert(0, lambda c: self._near(c, exclude, r))
            return self._enumerate(fn, exclude, rules)
        found = None if r is None else self._optimize(fn, exclude, r)
        if found is None:
            found = self._optimize(fn, exclude, None)
        if found is None:
            raise InvalidInputError(
                "could not find a point that differs from the pending ones."
            )  # pragma: no cover
        return found

    def _optimize(self, fn: Callable, exclude: np.ndarray, r: np.ndarray | None):
        """Multi-start maximization; the best restart (else raw Sobol point) not excluded, or None."""
        import torch

        from ckb.optimizer.space import _sobol_unit

        seed = int(self.rng.integers(2**31 - 1))
        taken = (lambda x: self._taken(x, exclude)) if r is None else (lambda x: self._near(x, exclude, r))
        score, U, vU = fn, None, None

        def sobol_scores():  # raw Sobol points and their scores, computed at most once
            nonlocal U, vU
            if U is None:
                U = _sobol_unit(self.d, max(self.raw_samples, 16), seed)
                with torch.no_grad():
                    vU = fn(torch.as_tensor(U)).numpy()
            return U, vU

        if r is not None:
            v = sobol_scores()[1]
            v = v[np.isfinite(v)]
            c = 10.0 * float(v.max() - v.min()) + 1.0 if v.size else 1.0
            P = torch.as_tensor(exclude)
            R = torch.as_tensor(r)

            def score(X):
                dist = torch.linalg.vector_norm((X[..., None, :] - P) / R, dim=-1)  # (..., p)
                return fn(X) - c * (_HINGE_EDGE - dist).clamp_min(0.0).sum(-1)

        from botorch.optim import optimize_acqf

        from ckb.rules.botorch import ScoreAcquisition

        bounds = torch.stack([torch.zeros(self.d), torch.ones(self.d)]).to(torch.float64)
        options = {"seed": seed, "maxiter": self.maxiter}
        if self.max_line_search is not None and not getattr(fn, "full_line_search", False):
            options["maxls"] = self.max_line_search
        # warnings (a restart that did not converge, bad initial candidates) are not suppressed:
        # ckb.Optimizer counts them per trial (ckb.optimizer.models.capture_warnings)
        X, vals = optimize_acqf(
            ScoreAcquisition(score),
            bounds=bounds,
            q=1,
            num_restarts=self.num_restarts,
            raw_samples=self.raw_samples,
            options=options,
            return_best_only=False,
            retry_on_optimization_warning=False,  # a kinked score (clip, rectifier) need not converge
        )
        X = X.detach().reshape(-1, self.d).clamp(0.0, 1.0).numpy()
        vals = vals.detach().reshape(-1).numpy()
        if np.any(np.isnan(vals)):
            raise InvalidInputError("the acquisition is NaN at a restart point; the model is degenerate.")
        if r is not None:  # report the policy's own score, not the hinge-penalized one
            with torch.no_grad():
                vals = fn(torch.as_tensor(X)).numpy().reshape(-1)
        for i in np.argsort(-vals, kind="stable"):
            if not taken(X[i]):
                return X[i].copy(), float(vals[i])
        # every restart landed on an excluded point: the best fresh Sobol point that is not excluded
        U, v = sobol_scores()
        for i in np.argsort(-v, kind="stable"):
            if not taken(U[i]):
                return U[i].copy(), float(v[i])
        return None

    @staticmethod
    def _taken(x: np.ndarray, exclude: np.ndarray) -> bool:
        return bool(len(exclude)) and bool(np.any(np.max(np.abs(exclude - x), axis=1) <= SAME_POINT))

    @staticmethod
    def _near(x: np.ndarray, exclude: np.ndarray, r: np.ndarray) -> bool:
        """Within the ellipsoid of radii ``r`` around an excluded point (or the same point)."""
        return bool(len(exclude)) and bool(np.any(np.linalg.norm((exclude - x) / r, axis=1) < 1.0))

    def _enumerate(
        self, fn: Callable, exclude: np.ndarray, rules: list[Callable]
    ) -> tuple[np.ndarray, float]:
        """The best candidate not excluded by the first rule that leaves one free (no rule does: repeats
        are allowed); ties at random."""
        import torch

        C = self.candidates
        with torch.no_grad():
            v = np.concatenate(
                [fn(torch.as_tensor(C[i : i + 4096])).numpy().reshape(-1) for i in range(0, len(C), 4096)]
            )
        if len(exclude):
            for rule in rules:
                taken = np.array([rule(c) for c in C])
                if not np.all(taken):
                    v = np.where(taken, -np.inf, v)
                    break
        i = argmax_random_tie(v, self.rng)
        return C[i].copy(), float(v[i])
