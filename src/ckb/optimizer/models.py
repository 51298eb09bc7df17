r"""Fitted GP models of the practical optimizer (BoTorch/GPyTorch), in the policies' units.

**Units.** The optimizer hands every policy *policy units* (:mod:`ckb.optimizer.core`): the objective
standardized, :math:`\tilde f = (s\,y - \bar y)/\mathrm{sd}(y)` (``s = -1`` when minimizing, so policies
always maximize), and each constraint scaled but not shifted, :math:`\tilde g_j = c_j / r_j` with
:math:`r_j` the root mean square of its observed values, so that 0 stays the feasibility threshold.
The policy chooses which targets to model (the objective and each constraint, or one penalized
objective).

**Model.** One BoTorch ``SingleTaskGP`` with independent outputs (a batched model: one set of
hyperparameters per target, fitted together): inputs in the unit cube, RBF kernel with BoTorch's
dimension-scaled log-normal lengthscale prior, constant mean, Gaussian noise, every target standardized
once more for the fit (:math:`z = (v - a)/b` with its sample mean and standard deviation; means and
standard deviations are mapped back, :math:`\mu_v = a + b\mu_z`, :math:`\sigma_v = b\sigma_z`).
Hyperparameters maximize the marginal likelihood (``fit_gpytorch_mll`` per target, warm-started from
the previous fit, then loaded into the batched model); between refits (``refit_every``) the stored hyperparameters are reused with all current data.
Double precision throughout. :math:`\sigma` is the latent function's posterior standard deviation
(without observation noise).

**Pending points.** :meth:`Models.condition` adds points with fantasy observations equal to the
current posterior mean (kriging believer): the posterior mean is unchanged and only the variance
shrinks near the pending points, so parallel asks spread out.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ckb.errors import InvalidInputError


def _torch():
    import torch

    return torch


def _build(X, Z):
    """A SingleTaskGP on standardized targets Z (n, k), no transforms (inputs already in [0, 1]^d)."""
    from botorch.models import SingleTaskGP

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*not standardized.*")
        warnings.filterwarnings("ignore", message=".*not scaled.*")
        warnings.filterwarnings("ignore", category=UserWarning, module="botorch")
        return SingleTaskGP(X, Z, outcome_transform=None)


def _hyper_of(model) -> dict[str, np.ndarray]:
    """The raw (unconstrained) hyperparameters: noise, constant mean, lengthscales."""
    return {k: v.detach().cpu().numpy().copy() for k, v in model.named_parameters()}


def _load_hyper(model, hyper: dict[str, np.ndarray]) -> bool:
    """Load stored raw hyperparameters if every name and shape matches; return whether it did."""
    torch = _torch()
    own = dict(model.named_parameters())
    if (
        not hyper
        or set(hyper) != set(own)
        or any(tuple(own[k].shape) != np.shape(v) for k, v in hyper.items())
    ):
        return False
    with torch.no_grad():
        for k, v in hyper.items():
            own[k].copy_(torch.as_tensor(np.asarray(v), dtype=own[k].dtype))
    return True


def _fit_one(model) -> bool:
    from botorch.exceptions import ModelFittingError
    from botorch.fit import fit_gpytorch_mll
    from gpytorch.mlls import ExactMarginalLogLikelihood

    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit_gpytorch_mll(mll)
        return True
    except (ModelFittingError, RuntimeError, ValueError):
        return False


def _fit_outputs(X, Z, hyper: dict[str, np.ndarray] | None) -> tuple[dict[str, np.ndarray], bool]:
    """Fit one single-output GP per column of Z (warm-started from ``hyper``, the batched model's
    parameters) and stack their hyperparameters into the batched shapes. Separate fits are several
    times faster than fitting the batched model's joint likelihood, and give the same optimum (the
    outputs' likelihoods are independent)."""
    k = Z.shape[1]
    out: dict[str, list[np.ndarray]] = {}
    ok = True
    for j in range(k):
        mj = _build(X, Z[:, j : j + 1])
        if hyper:
            _load_hyper(mj, hyper if k == 1 else {n: np.asarray(v)[j] for n, v in hyper.items()})
        if not _fit_one(mj):
            ok = False
            if hyper:  # keep the previous values rather than a failed fit
                _load_hyper(mj, hyper if k == 1 else {n: np.asarray(v)[j] for n, v in hyper.items()})
        for n, v in _hyper_of(mj).items():
            out.setdefault(n, []).append(v)
    return {n: (v[0] if k == 1 else np.stack(v)) for n, v in out.items()}, ok


class _View:
    """What a beta schedule (:mod:`ckb.exploration.beta`) reads from a GP: ``info_gain`` and ``noise``."""

    def __init__(self, info_gain: float, noise: float) -> None:
        self.info_gain = info_gain
        self.noise = noise


class Models:
    """Independent GPs for named targets over the same points; posteriors in the targets' units.

    ``X``: (n, d) points in the unit cube; ``targets``: name -> (n,) values; ``hyper``: stored raw
    hyperparameters to reuse (warm start when ``fit``); ``fit``: maximize the marginal likelihood now.
    """

    def __init__(
        self,
        X: np.ndarray,
        targets: dict[str, np.ndarray],
        hyper: dict[str, np.ndarray] | None = None,
        fit: bool = True,
        *,
        _model: Any = None,
        _shift: np.ndarray | None = None,
        _scale: np.ndarray | None = None,
    ) -> None:
        torch = _torch()
        self.names = list(targets)
        if not self.names:
            raise InvalidInputError("Models needs at least one target.")
        V = np.column_stack([np.asarray(targets[k], dtype=float) for k in self.names])
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or V.shape[0] != X.shape[0] or X.shape[0] < 1:
            raise InvalidInputError(
                f"Models needs n >= 1 points and n targets, got X {X.shape}, targets {V.shape}."
            )
        self.X = X
        self.V = V
        if _model is not None:  # a conditioned copy (see condition)
            self.shift, self.scale, self.model = _shift, _scale, _model
            self.fit_ok = True
            return
        self.shift = V.mean(axis=0)
        sd = V.std(axis=0, ddof=1) if V.shape[0] > 1 else np.ones(V.shape[1])
        self.scale = np.where(sd > 1e-12 * np.maximum(1.0, np.abs(self.shift)), sd, 1.0)
        Z = (V - self.shift) / self.scale
        Xt, Zt = torch.as_tensor(X), torch.as_tensor(Z)
        self.model = _build(Xt, Zt)
        ok = _load_hyper(self.model, hyper or {})
        self.fit_ok = True
        if fit:
            fitted, self.fit_ok = _fit_outputs(Xt, Zt, hyper if ok else None)
            _load_hyper(self.model, fitted)
        self.model.eval()

    # ------------------------------------------------------------------------------ properties
    @property
    def hyper(self) -> dict[str, np.ndarray]:
        """The raw hyperparameters (exact numpy copies), to store in the policy state."""
        return _hyper_of(self.model)

    def lengthscales(self) -> np.ndarray:
        """The kernels' lengthscales in the unit cube, (k, d) (one row per target)."""
        torch = _torch()
        cov = self.model.covar_module
        cov = getattr(cov, "base_kernel", cov)
        d = self.X.shape[1]
        with torch.no_grad():
            return cov.lengthscale.detach().reshape(-1, d).expand(self.k, d).numpy().copy()

    @property
    def k(self) -> int:
        return len(self.names)

    def index(self, name: str) -> int:
        return self.names.index(name)

    def view(self, name: str) -> _View:
        """``info_gain`` (½ log det(I + K/σ²_n) on the training points) and ``noise`` σ²_n of a target,
        for the ``theory`` and ``log`` beta schedules."""
        torch = _torch()
        j = self.index(name)
        m = self.model
        with torch.no_grad():
            Xt = torch.as_tensor(self.X)
            K = m.covar_module(Xt).to_dense()
            noise = m.likelihood.noise.detach().reshape(-1)
            if K.dim() == 3:
                K = K[j]
            nj = float(noise[j] if noise.numel() > 1 else noise[0])
            M = torch.eye(K.shape[-1], dtype=K.dtype) + K / nj
            info = 0.5 * float(torch.linalg.slogdet(M)[1])
        return _View(info, nj)

    # ------------------------------------------------------------------------------- posterior
    def mean_std(self, X) -> tuple[Any, Any]:
        """Posterior mean and standard deviation at ``X`` (torch, (..., d)) -> two (..., k) tensors,
        differentiable in ``X``.

        For the default model (RBF kernel, constant mean, Gaussian noise) the exact posterior is computed
        here from one Cholesky factor per target, cached: the same numbers as GPyTorch's ``posterior``
        (tested to 1e-10) at a fraction of its per-call overhead, which dominates the acquisition
        maximization (hundreds of calls per ask). Any other kernel goes through ``posterior``.
        """
        torch = _torch()
        fast = self._fast if hasattr(self, "_fast") else self._prepare()
        if fast is None:
            post = self.model.posterior(X)
            mu, var = post.mean, post.variance
            if self.k == 1 and mu.shape[-1] != 1:  # defensive: single-output shapes
                mu, var = mu.unsqueeze(-1), var.unsqueeze(-1)
        else:
            Xt, ls, outscale, const, L, alpha = fast
            shape = X.shape[:-1]
            Xf = X.reshape(-1, X.shape[-1])
            diff = (Xf[None, :, None, :] - Xt[None, None, :, :]) / ls[:, None, None, :]  # (k, b, n, d)
            Ks = outscale[:, None, None] * torch.exp(-0.5 * (diff**2).sum(-1))  # (k, b, n)
            mu = const[:, None] + (Ks @ alpha).squeeze(-1)  # (k, b)
            v = torch.linalg.solve_triangular(L, Ks.transpose(-1, -2), upper=False)  # (k, n, b)
            var = outscale[:, None] - (v**2).sum(-2)
            mu, var = mu.T.reshape(*shape, self.k), var.T.reshape(*shape, self.k)
        shift = torch.as_tensor(self.shift, dtype=mu.dtype)
        scale = torch.as_tensor(self.scale, dtype=mu.dtype)
        return shift + scale * mu, scale * var.clamp_min(1e-18).sqrt()

    def _prepare(self):
        """Cache (train X, lengthscales, outputscales, means, Cholesky factors, weights) for the default
        RBF model; None for any other model."""
        torch = _torch()
        from gpytorch.kernels import RBFKernel, ScaleKernel

        m, k = self.model, self.k
        cov = m.covar_module
        with torch.no_grad():
            outscale = torch.ones(k, dtype=torch.float64)
            if isinstance(cov, ScaleKernel):
                outscale = cov.outputscale.detach().reshape(-1).expand(k).clone()
                cov = cov.base_kernel
            if type(cov) is not RBFKernel or getattr(cov, "active_dims", None) is not None:
                self._fast = None
                return None
            Xt = torch.as_tensor(self.X)
            d = Xt.shape[-1]
            ls = cov.lengthscale.detach().reshape(-1, d).expand(k, d).clone()
            noise = m.likelihood.noise.detach().reshape(-1).expand(k).clone()
            const = m.mean_module.constant.detach().reshape(-1).expand(k).clone()
            Z = torch.as_tensor((self.V - self.shift) / self.scale).T  # (k, n)
            diff = (Xt[None, :, None, :] - Xt[None, None, :, :]) / ls[:, None, None, :]
            K = outscale[:, None, None] * torch.exp(-0.5 * (diff**2).sum(-1))
            K = K + noise[:, None, None] * torch.eye(len(Xt), dtype=K.dtype)
            L, info = torch.linalg.cholesky_ex(K)
            jitter = 1e-9
            while bool(info.any()) and jitter < 1e-3:  # as psd_safe_cholesky: add jitter until it factors
                L, info = torch.linalg.cholesky_ex(K + jitter * torch.eye(len(Xt), dtype=K.dtype))
                jitter *= 10
            if bool(info.any()):
                self._fast = None
                return None
            alpha = torch.cholesky_solve((Z - const[:, None]).unsqueeze(-1), L)  # (k, n, 1)
        self._fast = (Xt, ls, outscale, const, L, alpha)
        return self._fast

    def sample_path(self) -> Callable:
        """One posterior sample path of every target (pathwise / Matheron sampling with random Fourier
        features; uses torch's random generator): a function ``X (..., d) -> (..., k)``, differentiable."""
        torch = _torch()
        from botorch.sampling.pathwise import draw_matheron_paths

        path = draw_matheron_paths(self.model, torch.Size([]))
        shift = torch.as_tensor(self.shift)
        scale = torch.as_tensor(self.scale)
        k = self.k

        def f(X):
            out = path(X)  # (k, ...) for a batched model, (...) for one output
            if k > 1:
                out = out.movedim(0, -1)
            else:
                out = out.unsqueeze(-1)
            return shift + scale * out

        return f

    # ---------------------------------------------------------------------------- conditioning
    def condition(self, Xp: np.ndarray) -> Models:
        """A copy conditioned on extra points ``Xp`` (p, d) with fantasy values at the posterior mean."""
        torch = _torch()
        Xp = np.asarray(Xp, dtype=float).reshape(-1, self.X.shape[1])
        if len(Xp) == 0:
            return self
        with torch.no_grad():
            mu, _ = self.mean_std(torch.as_tensor(Xp))
        Vp = mu.numpy().reshape(len(Xp), self.k)
        X = np.vstack([self.X, Xp])
        V = np.vstack([self.V, Vp])
        Z = (V - self.shift) / self.scale
        model = _build(torch.as_tensor(X), torch.as_tensor(Z))
        _load_hyper(model, self.hyper)
        model.eval()
        return Models(
            X,
            {n: V[:, j] for j, n in enumerate(self.names)},
            _model=model,
            _shift=self.shift,
            _scale=self.scale,
        )
