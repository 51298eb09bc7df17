r"""An agent's local surrogate: ``m + 1`` exact GPs on its grid and their clipped confidence bounds.

Agent ``i`` models :math:`f_i` (``j = 0``) and :math:`g_{i,1..m}` with independent GPs :math:`\mathcal{GP}(0,
k)` and noise parameter :math:`\lambda` (Xu et al. (2023), eq. 3.2; one kernel per agent, shared by its
``m + 1`` GPs), each an :class:`~ckb.surrogates.ExactGP` over the agent's grid (rank-one updates: O(t G)
or O(G^2) per observation, never O(t^3)). At round ``t`` (posterior after ``t - 1`` observations) the
clipped bounds of Lemma 3.1 are

.. math::

    \underline f_i^t = \max\{\mu_{i,0}^{t-1} - \beta_{i,0}^t \sigma_{i,0}^{t-1},\ -C_{i,0}\},\qquad
    \underline g_{i,j}^t = \max\{\mu_{i,j}^{t-1} - \beta_{i,j}^t \sigma_{i,j}^{t-1},\ -C_{i,j}\}

(and the upper bounds with ``min`` and ``+C``). ``clip=None`` switches clipping off (our choice for
when no bound is known; the paper takes the :math:`C_{i,j}` as known).

Width schedules :math:`\beta_{i,j}^t` (``beta``):

- a number: the constant :math:`\beta` for every ``j`` and ``t`` (Xu et al. (2023), App. D: 3.0 in the
  power example);
- ``{"type": "theory", "delta", "sigma", "gamma", "scale"}``: Lemma 3.1's
  :math:`\beta_{i,j}^t = C_{i,j} + \sigma\sqrt{2(\gamma_{i,j}^{t-1} + 1 + \ln(N(m+1)/\delta))}` with
  :math:`C_{i,j}` the clipping bounds, ``sigma`` the sub-Gaussian noise level of the readings and
  :math:`\gamma^{t-1}` either ``"greedy"`` (default: the information gain of ``t - 1`` points chosen
  greedily on the grid, :func:`greedy_information_gain`, the standard (1 - 1/e)-approximation of the
  maximum information gain of eq. 3.3, from below, so β and the bounds come out a little narrower than
  Lemma 3.1's; our choice, the paper does not say how it computed γ) or
  ``"chosen"`` (the information gain of the points actually queried, the convention of the single-agent
  policies of this code base; a lower bound). ``scale`` multiplies β.

``kind="oracle"`` is the situation of Xu et al. (2023), Appendix B ("we have already successfully
identified all the black-box function values"): the bounds are the given exact tables, observations
change nothing. It is used by the counter-example only and its tables are passed explicitly.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ckb._validation import check_choice, check_finite_array, check_scalar
from ckb.errors import InvalidInputError
from ckb.kernels import make_kernel
from ckb.surrogates import ExactGP


@functools.lru_cache(maxsize=64)
def _greedy_gain_cached(kernel_key: str, grid_bytes: bytes, shape: tuple, noise: float, T: int) -> np.ndarray:
    import json

    kernel = make_kernel(json.loads(kernel_key))
    grid = np.frombuffer(grid_bytes, dtype=float).reshape(shape)
    gp = ExactGP(kernel, noise, grid)
    gains = np.zeros(T + 1)
    for t in range(1, T + 1):
        k = int(np.argmax(gp.var))
        gp.update_arm(k, 0.0)  # the information gain does not depend on the targets
        gains[t] = gp.info_gain
    gains.setflags(write=False)
    return gains


def greedy_information_gain(kernel: dict, grid: np.ndarray, noise: float, T: int) -> np.ndarray:
    r"""``gamma[t]`` for ``t = 0..T``: :math:`\tfrac12 \log|I + \lambda^{-1} K_A|` of ``t`` grid points chosen
    greedily (each the point of largest posterior variance; repeats allowed): a lower bound of the maximum
    information gain :math:`\gamma_t` (eq. 3.3) within a factor 1 - 1/e (submodularity), so a β built
    from it is a little narrower than Lemma 3.1's.
    Cached per (kernel, grid, λ, T)."""
    import json

    grid = np.ascontiguousarray(grid, dtype=float)
    key = json.dumps(kernel, sort_keys=True)
    return _greedy_gain_cached(key, grid.tobytes(), grid.shape, float(noise), int(T))


class LocalModel:
    """The m + 1 posteriors of one agent and their clipped confidence bounds (see the module docstring).

    Parameters
    ----------
    grid:
        ``(G, n_i)`` points of the agent's domain.
    m:
        Number of coupled black-box constraints.
    kernel:
        Kernel spec dict, e.g. ``{"type": "se", "lengthscale": 0.2, "variance": 1.0}``.
    noise:
        GP noise parameter λ (> 0).
    clip:
        ``None`` or ``m + 1`` bounds ``(C_{i,0}, ..., C_{i,m})``.
    beta:
        Width schedule (see the module docstring).
    n_agents, horizon:
        ``N`` (in the theory width's log term) and ``T`` (length of the greedy γ curve).
    kind:
        ``"gp"`` or ``"oracle"`` (then ``values = {"f": (G,), "g": (G, m)}`` are the exact tables).
    """

    def __init__(
        self,
        grid: np.ndarray,
        m: int,
        *,
        kernel: dict | None = None,
        noise: float = 0.02**2,
        clip: Any = None,
        beta: Any = 3.0,
        n_agents: int = 1,
        horizon: int = 1,
        kind: str = "gp",
        values: dict | None = None,
        gp_method: str = "auto",
    ) -> None:
        self.grid = np.asarray(grid, dtype=float)
        G = self.grid.shape[0]
        self.m = int(m)
        self.kind = kind
        if clip is None:
            self.clip = None
        else:
            self.clip = check_finite_array(clip, "clip (C_i,0..m)", shape=(self.m + 1,))
            if np.any(self.clip <= 0):
                raise InvalidInputError(f"clip bounds C must be > 0, got {self.clip.tolist()}.")
        if kind == "oracle":
            if values is None:
                raise InvalidInputError("an 'oracle' model needs values={'f': ..., 'g': ...}.")
            self._f = check_finite_array(values["f"], "oracle f", shape=(G,))
            self._g = check_finite_array(
                np.asarray(values["g"], dtype=float).reshape(G, self.m), "oracle g", shape=(G, self.m)
            )
            self.gps = []
            self.t = 0
            return
        if kind != "gp":
            raise InvalidInputError(f"model kind (surrogate) must be 'gp' or 'oracle', got {kind!r}.")
        if kernel is None:
            raise InvalidInputError(
                "a 'gp' model needs a kernel spec, e.g. {'type': 'se', 'lengthscale': 0.2}."
            )
        self.kernel_spec = dict(kernel)
        k = make_kernel(dict(kernel))
        self.noise = check_scalar(noise, "GP noise (lambda)", low=0.0, low_inclusive=False)
        self.gps = [ExactGP(k, self.noise, self.grid, method=gp_method) for _ in range(self.m + 1)]
        self.t = 0
        self._setup_beta(beta, int(n_agents), int(horizon))

    # ------------------------------------------------------------------ beta
    def _setup_beta(self, beta: Any, n_agents: int, horizon: int) -> None:
        self._gamma_curve = None
        if isinstance(beta, (int, float, np.integer, np.floating)) and not isinstance(beta, bool):
            self._beta_const = check_scalar(beta, "beta", low=0.0)
            self.beta_spec: dict[str, Any] = {"type": "constant", "value": self._beta_const}
            return
        if not isinstance(beta, dict) or beta.get("type") != "theory":
            raise InvalidInputError(f"beta must be a number or {{'type': 'theory', ...}}, got {beta!r}.")
        unknown = set(beta) - {"type", "delta", "sigma", "gamma", "scale"}
        if unknown:
            raise InvalidInputError(
                f"beta has no parameter {sorted(unknown)[0]!r} (delta, sigma, gamma, scale)."
            )
        if self.clip is None:
            raise InvalidInputError("the theory width needs the bounds C_{i,j}: give clip=[C_0, ..., C_m].")
        delta = check_scalar(beta.get("delta", 0.1), "beta delta", low=0.0, high=1.0, low_inclusive=False)
        sigma = check_scalar(beta.get("sigma", 0.02), "beta sigma", low=0.0)
        scale = check_scalar(beta.get("scale", 1.0), "beta scale", low=0.0)
        gamma = check_choice(beta.get("gamma", "greedy"), "beta gamma", ("greedy", "chosen"))
        self._beta_const = None
        self._theory = (delta, sigma, scale, math.log(n_agents * (self.m + 1) / delta))
        if gamma == "greedy":
            self._gamma_curve = greedy_information_gain(self.kernel_spec, self.grid, self.noise, horizon)
        self.beta_spec = {"type": "theory", "delta": delta, "sigma": sigma, "gamma": gamma, "scale": scale}

    def beta(self, t: int) -> np.ndarray:
        r"""``(m + 1,)`` widths :math:`\beta_{i,j}^t` for round ``t`` (posterior after ``t - 1`` points)."""
        if self._beta_const is not None:
            return np.full(self.m + 1, self._beta_const)
        delta, sigma, scale, log_term = self._theory
        if self._gamma_curve is not None:
            g = self._gamma_curve[min(t - 1, self._gamma_curve.shape[0] - 1)]
            gam = np.full(self.m + 1, g)
        else:
            gam = np.array([gp.info_gain for gp in self.gps])
        return scale * (self.clip + sigma * np.sqrt(2.0 * (gam + 1.0 + log_term)))

    # ---------------------------------------------------------------- bounds
    def lower(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """``(f_lcb (G,), g_lcb (G, m))`` for round ``t``, clipped from below at ``-C`` (Lemma 3.1)."""
        if self.kind == "oracle":
            return self._f.copy(), self._g.copy()
        b = self.beta(t)
        lcb = np.stack([gp.mean - bj * gp.std for gp, bj in zip(self.gps, b)], axis=1)  # (G, m+1)
        if self.clip is not None:
            np.maximum(lcb, -self.clip, out=lcb)
        return lcb[:, 0].copy(), lcb[:, 1:].copy()

    def mean_var(self, k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Posterior means and variances ``(G, m+1)`` (or ``(m+1,)`` at grid index ``k``)."""
        if self.kind == "oracle":
            vals = np.column_stack([self._f, self._g])
            mu, var = vals, np.zeros_like(vals)
        else:
            mu = np.column_stack([gp.mean for gp in self.gps])
            var = np.column_stack([gp.var for gp in self.gps])
        return (mu, var) if k is None else (mu[k].copy(), var[k].copy())

    def update(self, k: int, y_f: float, y_g: np.ndarray) -> None:
        self.t += 1
        if self.kind == "oracle":
            return
        self.gps[0].update_arm(k, y_f)
        for j in range(self.m):
            self.gps[j + 1].update_arm(k, float(y_g[j]))

    def observations(self) -> np.ndarray:
        """``(t, m+1)`` readings the model holds (for the no-raw-data tests)."""
        if self.kind == "oracle" or not self.gps:
            return np.zeros((0, self.m + 1))
        return np.column_stack([gp.y for gp in self.gps])

    # ----------------------------------------------------------------- state
    def state_dict(self) -> dict[str, Any]:
        return {"t": self.t, "gps": [gp.state_dict() for gp in self.gps]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.t = int(state["t"])
        for gp, s in zip(self.gps, state["gps"]):
            gp.load_state_dict(s)
