r"""The decision rules as differentiable functions of posterior means, standard deviations or samples,
their state updates, and the maximizer.

Scores (torch, maximized over the unit cube; every argument broadcasts over a batch of points):

- :func:`ckb_score`: :math:`\mathrm{Proj}_{[-B,B]} f_t(x) - \sum_j \phi_j \mathrm{Proj}_{[-G_j,G_j]} g_{t,j}(x)`
  (Zhou & Ji, Algorithm 1, steps 3-5);
- :func:`rpol_score`: :math:`\hat f_t(x) - \sum_j Q_j [\check g_{t,j}(x)]^+` (Guo, Zhu & Liu, RPOL);
- :func:`config_score`: :math:`\hat f_t(x)` where :math:`\max_j \check g_{t,j}(x) \le 0`, else
  :math:`M - \max_j \check g_{t,j}(x)` with :math:`M = -10^6` below any feasible value: its argmax is CONFIG's
  :math:`\arg\max \hat f` over the optimistically feasible set when that set is not empty, and the
  fallback :math:`\arg\min_x \max_j \check g_{t,j}(x)` when it is;
- :func:`log_cei`: :math:`\log \mathrm{EI}(x) + \sum_j \log \Phi(-\mu_{g_j}(x)/\sigma_{g_j}(x))` (constrained
  EI, Gardner et al. 2014 / Gelbart et al. 2014, in log form as BoTorch's LogEI); with no feasible
  observation yet, only the log probability of feasibility.

Updates (numpy): :func:`ckb_dual_step` (Algorithm 1 step 7 with 003's slack), :func:`rpol_floor` and
:func:`rpol_add_costs` (:math:`Q_{t+1} = \max(Q_t + [c_t]^+, \sqrt t)`), :func:`penalty_update`
(001 Algorithm 3: :math:`\kappa^{l+1} = [\kappa^l + \mu \bar c^l]^+`).

:func:`maximize`: BoTorch's ``optimize_acqf`` (multi-start L-BFGS-B from the best of ``raw_samples``
scrambled Sobol points) over the unit cube, or enumeration over a finite candidate set (ties broken
uniformly at random); points within ``1e-6`` (unit-cube max-norm) of an excluded point (pending, or
earlier in the same batch) are skipped, so a batch never repeats a point. With a ``separation`` (per-dimension
radii r), a point x with :math:`\lVert (x - p)/r \rVert_2 < 1` for an excluded p is skipped instead, and the
restarts maximize the score minus a steep hinge :math:`c \sum_p [1.05 - \lVert (x - p)/r \rVert_2]^+` (c: ten
times the score's range over the raw samples, plus 1) so that they leave the excluded balls and settle just
outside them; if every restart and raw sample is then excluded, the ``1e-6`` rule applies.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ckb.errors import InvalidInputError
from ckb.exploration import argmax_random_tie

#: the score of CONFIG's infeasible region lies below this (standardized values never get near it)
CONFIG_FLOOR = -1.0e6
#: two unit-cube points closer than this (max-norm) count as the same point
SAME_POINT = 1e-6
#: the separation hinge pushes restarts out to this multiple of the radius (the hard rule is < 1)
_HINGE_EDGE = 1.05


# ------------------------------------------------------------------------------------------ scores
def ckb_score(f_est, g_est, phi, B: float, G) -> Any:
    """Clipped primal-dual score; ``f_est`` (...,), ``g_est`` (..., m), ``phi`` and ``G`` (m,)."""
    import torch

    G = torch.as_tensor(np.asarray(G, dtype=float), dtype=g_est.dtype)
    phi = torch.as_tensor(np.asarray(phi, dtype=float), dtype=g_est.dtype)
    f_bar = f_est.clamp(-B, B)
    g_bar = torch.maximum(torch.minimum(g_est, G), -G)
    return f_bar - (g_bar * phi).sum(-1)


def rpol_score(ucb_f, lcb_g, Q) -> Any:
    """RPOL's rectified-penalty score; ``ucb_f`` (...,), ``lcb_g`` (..., m), ``Q`` (m,)."""
    import torch

    Q = torch.as_tensor(np.asarray(Q, dtype=float), dtype=lcb_g.dtype)
    return ucb_f - (Q * lcb_g.clamp_min(0.0)).sum(-1)


def config_score(ucb_f, lcb_g) -> Any:
    """CONFIG: UCB on the optimistically feasible set, else (below it) minus the worst LCB."""
    import torch

    worst = lcb_g.max(dim=-1).values
    return torch.where(worst <= 0.0, ucb_f, CONFIG_FLOOR - worst)


def log_cei(mu_f, sd_f, best: float | None, mu_g, sd_g) -> Any:
    """Log of EI over ``best`` (None: no feasible observation, EI omitted) times the probabilities of
    feasibility :math:`P(g_j \\le 0)`."""
    import torch
    from botorch.acquisition.analytic import _log_ei_helper

    log_pof = torch.special.log_ndtr(-mu_g / sd_g).sum(-1)
    if best is None:
        return log_pof
    u = (mu_f - best) / sd_f
    return _log_ei_helper(u) + sd_f.log() + log_pof


# ----------------------------------------------------------------------------------------- updates
def ckb_dual_step(phi, g_bar_at_x, slack: float, V: float, rho: float) -> np.ndarray:
    r""":math:`\phi_{t+1} = \mathrm{Proj}_{[0,\rho]}[\phi_t + (\bar g_t(x_t) + \varepsilon)/V]` per constraint."""
    phi = np.asarray(phi, dtype=float)
    return np.clip(phi + (np.asarray(g_bar_at_x, dtype=float) + slack) / V, 0.0, rho)


def rpol_floor(Q, t: int) -> np.ndarray:
    r"""At the ask of round ``t``: :math:`Q_t = \max(Q_{t-1} + \text{costs told}, \sqrt{t-1})` for t > 1."""
    Q = np.asarray(Q, dtype=float)
    return np.maximum(Q, math.sqrt(t - 1)) if t > 1 else Q.copy()


def rpol_add_costs(Q, c) -> np.ndarray:
    r"""At a tell: :math:`Q \leftarrow Q + [c]^+` (observed, scaled costs)."""
    return np.asarray(Q, dtype=float) + np.maximum(np.asarray(c, dtype=float), 0.0)


def penalty_update(kappa, mean_c, mu: float) -> np.ndarray:
    r"""001 Algorithm 3: :math:`\kappa^{l+1}_j = [\kappa^l_j + \mu\,\bar c^l_j]^+`."""
    return np.maximum(np.asarray(kappa, dtype=float) + mu * np.asarray(mean_c, dtype=float), 0.0)


# --------------------------------------------------------------------------------------- maximizer
class Maximizer:
    """Maximizes a score ``fn(X) -> (b,)`` (torch, X of shape (b, d) in the unit cube).

    ``candidates``: (n, d) unit-cube points for enumeration (None: the continuous cube). ``exclude``:
    points a result must differ from.
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
    ) -> None:
        self.d = d
        self.rng = rng
        self.candidates = candidates
        self.num_restarts = num_restarts
        self.raw_samples = raw_samples
        self.maxiter = maxiter

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

        from botorch.acquisition import AcquisitionFunction
        from botorch.optim import optimize_acqf

        class _Score(AcquisitionFunction):
            def __init__(self, f):
                super().__init__(model=torch.nn.Module())
                self.f = f

            def forward(self, X):  # (b, 1, d) -> (b,)
                return self.f(X.squeeze(-2))

        bounds = torch.stack([torch.zeros(self.d), torch.ones(self.d)]).to(torch.float64)
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            X, vals = optimize_acqf(
                _Score(score),
                bounds=bounds,
                q=1,
                num_restarts=self.num_restarts,
                raw_samples=self.raw_samples,
                options={"seed": seed, "maxiter": self.maxiter},
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
