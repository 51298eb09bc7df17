r"""The field's baselines for the constrained benchmark, with the same ask/tell interface as ``ckb.Optimizer``.

Both start with the shared initial design (:func:`ckb.optimizer.initial_design`: the first ``n_init``
points, default :math:`2d + 2`, of a scrambled Sobol sequence seeded by ``seed``), so every method of a
benchmark evaluates the same first points for a given seed.

- :class:`SobolSearch` (``sobol``): random search; evaluation ``t`` is the ``t``-th point of that same
  scrambled Sobol sequence (``initial_design(l, h, budget, seed)``, whose first ``n_init`` points are the
  design), so it continues the design rather than restarting it.
- :class:`QLogNEI` (``qlognei``): BoTorch's constrained noisy expected improvement on the log scale
  (``qLogNoisyExpectedImprovement``, Ament et al. 2023) with outcome constraints, as in BoTorch's
  constrained tutorials. One ``SingleTaskGP`` with independent outputs (objective in the maximization
  sense, then the ``m`` constraints) on all complete observations, inputs normalized to the unit cube
  (``Normalize``), outputs standardized (``Standardize``), BoTorch's default kernel and priors,
  hyperparameters by maximum marginal likelihood (``fit_gpytorch_mll``) at every ask, warm-started from
  the previous fit (``warm_start``). The acquisition

  .. math::

      \alpha(x) = \log \mathbb E\Bigl[\bigl(f(x) - \max_{x' \in X_\text{obs}} f(x')\, \textstyle\prod_j
      1\{g_j(x') \le 0\}\bigr)^+ \prod_j 1\{g_j(x) \le 0\}\Bigr]

  (with BoTorch's smooth fat-tailed relaxations of the max and of the indicators, constraint callables
  ``Z[..., 1 + j]`` feasible where <= 0) is estimated with ``mc_samples`` quasi-MC posterior samples and
  maximized by ``optimize_acqf`` with ``num_restarts`` L-BFGS-B starts from ``raw_samples`` raw points:
  by default the same maximizer budget as ``ckb.Optimizer`` (10 restarts, 256 raw samples);
  ``mc_samples = 256`` as in BoTorch's closed-loop constrained tutorial. Torch runs with
  ``torch_threads`` (default 1) threads during an ask, as ``ckb.Optimizer`` does. ``exact=True``
  declares noise-free evaluations as ``ckb.Optimizer(exact=True)`` does, on equal footing: the GP's
  noise is fixed (``train_Yvar``) at :data:`ckb.optimizer.core.EXACT_NOISE_FLOOR` on the standardized
  targets (BoTorch's way to state known observation noise) instead of fitted above BoTorch's 1e-4 floor.
  ``outcome_units`` (default None: BoTorch's own ``Standardize`` of the raw values, as in its tutorials):
  an outcome transform of ``ckb.Optimizer`` (e.g. ``"auto"``, its default) applied to the targets before
  ``Standardize``, so that qLogNEI models what ckb's policies model: variant ``qlognei-ckb-units``, which
  separates what ckb's units do from what its rules do in a comparison.

If a fit fails, the previous hyperparameters are kept; if the acquisition maximization fails, the next
point of the Sobol sequence is used and counted in ``fallbacks``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ckb._validation import check_scalar
from ckb.errors import InvalidInputError
from ckb.optimizer.space import Space, initial_design


class _AskTell:
    """Sequential ask/tell bookkeeping shared by the baselines (one pending point at a time)."""

    def __init__(self, lower, upper, m=1, *, budget=60, minimize=False, n_init=None, seed=0) -> None:
        self.space = Space(lower, upper)
        d = self.space.d
        self.m = check_scalar(m, "m (number of constraints)", low=1, integer=True)
        self.budget = check_scalar(budget, "budget", low=1, integer=True)
        self.minimize = bool(minimize)
        self.n_init = check_scalar(2 * d + 2 if n_init is None else n_init, "n_init", low=1, integer=True)
        self.seed = check_scalar(seed, "seed", low=0, integer=True)
        self.X: list[np.ndarray] = []
        self.y: list[float] = []
        self.c: list[np.ndarray] = []
        self._pending: np.ndarray | None = None
        self.fallbacks = 0

    def _sobol_point(self, t: int) -> np.ndarray:
        return initial_design(self.space.lower, self.space.upper, t + 1, self.seed)[t]

    def ask(self) -> np.ndarray:
        if self._pending is not None:
            raise InvalidInputError(
                "this baseline evaluates one point at a time: tell the pending point first."
            )
        t = len(self.y)
        x = self._sobol_point(t) if t < self.n_init else self._propose(t)
        self._pending = np.asarray(x, dtype=float)
        return self._pending.copy()

    def _propose(self, t: int) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError

    def tell(self, x: Any, objective: float, constraints: Any) -> None:
        x = self.space.check_point(x)
        if self._pending is None or not np.allclose(x, self._pending, rtol=0, atol=1e-12):
            raise InvalidInputError(f"tell expects the pending point {self._pending}, got {x.tolist()}.")
        c = np.atleast_1d(np.asarray(constraints, dtype=float))
        if c.shape != (self.m,) or not np.all(np.isfinite(c)) or not np.isfinite(objective):
            raise InvalidInputError(
                f"tell needs a finite objective and m = {self.m} finite constraint values, got "
                f"{objective!r} and {np.asarray(constraints).tolist()}."
            )
        self.X.append(x)
        self.y.append(float(objective))
        self.c.append(c)
        self._pending = None


class SobolSearch(_AskTell):
    """Random search by the scrambled Sobol sequence that starts with the shared design (``sobol``)."""

    def _propose(self, t: int) -> np.ndarray:
        return self._sobol_point(t)


class QLogNEI(_AskTell):
    """BoTorch's constrained ``qLogNoisyExpectedImprovement`` (``qlognei``; see the module docstring)."""

    def __init__(
        self,
        lower,
        upper,
        m: int = 1,
        *,
        budget: int = 60,
        minimize: bool = False,
        n_init: int | None = None,
        seed: int = 0,
        mc_samples: int = 256,
        num_restarts: int = 10,
        raw_samples: int = 256,
        warm_start: bool = True,
        torch_threads: int = 1,
        exact: bool = False,
        outcome_units: str | None = None,
    ) -> None:
        super().__init__(lower, upper, m, budget=budget, minimize=minimize, n_init=n_init, seed=seed)
        if outcome_units is not None:
            from ckb.optimizer.models import OUTCOME_TRANSFORMS

            if outcome_units not in OUTCOME_TRANSFORMS:
                raise InvalidInputError(
                    f"outcome_units must be None or one of {', '.join(map(repr, OUTCOME_TRANSFORMS))}, "
                    f"got {outcome_units!r}."
                )
        self.outcome_units = outcome_units
        self.mc_samples = check_scalar(mc_samples, "mc_samples", low=1, integer=True)
        self.num_restarts = check_scalar(num_restarts, "num_restarts", low=1, integer=True)
        self.raw_samples = check_scalar(raw_samples, "raw_samples", low=1, integer=True)
        self.warm_start = bool(warm_start)
        self.exact = bool(exact)
        self.torch_threads = check_scalar(torch_threads, "torch_threads", low=1, integer=True)
        self._rng = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(2,)))
        self._hyper: dict | None = None
        self.fit_failures = 0

    def _propose(self, t: int) -> np.ndarray:
        import torch

        dt = torch.float64
        X = torch.tensor(np.stack(self.X), dtype=dt)
        Y = torch.tensor(self._targets(), dtype=dt)
        bounds = torch.tensor(np.stack([self.space.lower, self.space.upper]), dtype=dt)
        seed = int(self._rng.integers(2**62))
        threads = torch.get_num_threads()
        torch.set_num_threads(self.torch_threads)
        try:
            return self._propose_with(t, seed, X, Y, bounds)
        finally:
            torch.set_num_threads(threads)

    def _targets(self) -> np.ndarray:
        """``(n, 1 + m)``: the objective in the maximization sense and the constraints; with
        ``outcome_units``, both in the units ckb's policies see (:class:`ckb.optimizer.models.OutcomeUnits`
        fitted on the observations, robust scales from the design), before ``Standardize``."""
        y, c = np.asarray(self.y), np.stack(self.c)
        if self.outcome_units is None:
            return np.column_stack([(-1.0 if self.minimize else 1.0) * y, c])
        from ckb.optimizer.models import OutcomeUnits

        ref = np.arange(y.size) < self.n_init
        units = OutcomeUnits(
            y, c, minimize=self.minimize, m=self.m, transform=self.outcome_units, reference=ref
        )
        return np.column_stack([units.y(y), units.c(c)])

    def _noise(self, Y):
        """The fixed noise variances with ``exact=True`` (None: fitted)."""
        return _exact_noise(Y) if self.exact else None

    def _propose_with(self, t, seed, X, Y, bounds) -> np.ndarray:
        import torch
        from botorch.acquisition.logei import qLogNoisyExpectedImprovement
        from botorch.acquisition.objective import GenericMCObjective
        from botorch.exceptions import ModelFittingError
        from botorch.fit import fit_gpytorch_mll
        from botorch.models import SingleTaskGP
        from botorch.models.transforms import Normalize, Standardize
        from botorch.optim import optimize_acqf
        from botorch.sampling import SobolQMCNormalSampler
        from gpytorch.mlls import ExactMarginalLogLikelihood

        with torch.random.fork_rng(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # BoTorch's numerical and optimization warnings
            torch.manual_seed(seed)
            model = SingleTaskGP(
                X,
                Y,
                train_Yvar=self._noise(Y),
                input_transform=Normalize(d=X.shape[1], bounds=bounds),
                outcome_transform=Standardize(m=Y.shape[1]),
            )
            if self.warm_start and self._hyper is not None:
                model.load_state_dict(self._hyper, strict=False)
            try:
                fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
            except ModelFittingError:
                self.fit_failures += 1
                if self._hyper is not None:
                    model.load_state_dict(self._hyper, strict=False)
            self._hyper = {k: v.detach().clone() for k, v in model.state_dict().items() if "raw_" in k}
            acq = qLogNoisyExpectedImprovement(
                model,
                X_baseline=X,
                sampler=SobolQMCNormalSampler(torch.Size([self.mc_samples]), seed=seed % (2**31)),
                objective=GenericMCObjective(lambda Z, X=None: Z[..., 0]),
                constraints=[(lambda Z, j=j: Z[..., 1 + j]) for j in range(self.m)],
                prune_baseline=True,
            )
            try:
                cand, _ = optimize_acqf(
                    acq, bounds=bounds, q=1, num_restarts=self.num_restarts, raw_samples=self.raw_samples
                )
                x = cand.detach().numpy().reshape(-1)
            except Exception:
                x = np.full(self.space.d, np.nan)
        if not np.all(np.isfinite(x)):
            self.fallbacks += 1
            return self._sobol_point(t)
        return np.clip(x, self.space.lower, self.space.upper)


def _exact_noise(Y):
    """Per-output noise variances that standardize to ``EXACT_NOISE_FLOOR`` (as ``Standardize`` scales)."""
    from ckb.optimizer.core import EXACT_NOISE_FLOOR

    var = Y.var(dim=0, keepdim=True).clamp_min(1e-300)
    return (EXACT_NOISE_FLOOR * var).expand_as(Y).clone()


BASELINES = {"sobol": SobolSearch, "qlognei": QLogNEI}
"""The baseline methods by name."""
