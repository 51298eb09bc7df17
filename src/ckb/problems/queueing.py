r"""Stochastic full-information constraints (the CBO paper, Sec. 4) and the GPU-allocation queueing example of
its App. A.

Full-information protocol
-------------------------
In the stochastic full-information setting (the CBO paper's Assumptions 5-6) the environment reveals,
*before* each round, an i.i.d. random constraint function :math:`g_t(\cdot)` with
:math:`\mathbb E[g_t(x)] = g(x)` and :math:`|g_t(x)| \le G`. A problem offers it through
:class:`StochasticConstraintProblem`:

- ``problem.sample_constraints(rng) -> (n, m)``: one draw of :math:`g_t` at all ``n`` candidates, from the
  generator it is given (the environment's, so runs are reproducible);
- ``problem.g_values`` (``(n, m)``): the *exact* mean :math:`g = \mathbb E[g_t]`, which the runner's
  metrics use (the paper's violation, defined in its Sec. 2, is :math:`[\sum_t g(x_t)]^+` with this mean);
- ``problem.constraint_bound``: ``G`` of Assumption 6 (also published as the hint ``"G"``).

The environment ``"full-information"`` (:mod:`ckb.runner.environments.full_information`) calls the
sampler; any problem with a ``sample_constraints`` method works there. A
:class:`StochasticConstraintProblem` runs only there: every other environment refuses it, as it would
show the policy the mean ``g`` through the problem's noise model instead of :math:`g_t` (``gpu-queue``
has no constraint noise, so the exact mean, a feedback neither of the paper's settings gives).

The ``gpu-queue`` problem (the CBO paper, App. A)
--------------------------------------------------
GPU resources are allocated to two computing nodes, :math:`x = (x_1, x_2)`, each the fraction of a node's
GPU pool switched on, on the grid :math:`\{0, \tfrac{1}{L-1}, \dots, 1\}^2` (``levels = L``). Jobs
arrive at random, :math:`\omega(t) \sim \mathrm{Poisson}(\lambda)`; node ``i`` serves
:math:`h_i(x_i)` jobs per round. The paper's constraint sample is
:math:`\omega(t) - h_1(x_1) - h_2(x_2)`, the stability (queue) condition; since Poisson arrivals are
unbounded and Assumption 6 needs :math:`|g_t| \le G`, it is clipped:

.. math::

    g_t(x) = \mathrm{Proj}_{[-G, G]}\big(\omega(t) - h_1(x_1) - h_2(x_2)\big), \qquad
    g(x) = \mathbb E[g_t(x)] = \sum_{k \ge 0} \frac{\lambda^k e^{-\lambda}}{k!}\,
    \mathrm{Proj}_{[-G, G]}\big(k - H(x)\big),

computed exactly from the Poisson pmf (every ``k > G + max H`` is clipped to ``G``, so the sum is
``sum_{k <= K} pmf(k) clip(k - H) + G P(ω > K)`` with ``K = ceil(G + max H)``). Clipping moves the mean
slightly below :math:`\lambda - H(x)` (``metadata["max_clipping_shift"]`` says by how much); the problem's
``g`` is the clipped mean, so Assumptions 5-6 hold exactly. The objective is the nodes' total energy cost
(minimized), observed with Gaussian noise: the paper says only "the bandit feedback of total energy cost".

Choices (the paper gives no constants; all are parameters):

- service rates: concave, increasing, known to the operator (App. A: "we assume that h_i is known"),
  :math:`h_i(x) = s_i\,(1 - e^{-k_i x}) / (1 - e^{-k_i})`, so :math:`h_i(0) = 0`, :math:`h_i(1) = s_i`.
  Defaults ``s = (3, 3)``, ``k = (5, 3)``: both nodes have diminishing returns, node 1 more so;
- arrivals: ``arrival_rate`` λ = 5.8 jobs per round against a full capacity of 6 (a heavily loaded
  system): the best single-arm Slater margin is :math:`\delta = \max_x -g(x) = 0.2000155` (published as
  ``slater_margin``; 0.2 before clipping). Theorems 3-4 put the burn-in at O(1/δ^4) rounds; with
  δ = 1 (λ = 5) the measured burn-in is a few rounds, with δ = 0.2 it is tens (setting i) to hundreds
  (setting ii) of rounds, visible within T = 5,000 (experiment ``scgp-queue``);
- energy cost: :math:`c(x) = \sum_i p_i x_i + q\,(x_1^2 + x_2^2)` (linear power plus a convex cooling term),
  ``p = (1, 0.6)``, ``q = 0.5``, divided by its maximum 2.6 so :math:`0 \le c \le 1` and ``B = max |c| = 1``.
  At the defaults 13 of the 121 arms are stable and the cheapest of them is the interior allocation
  (0.6, 0.9) (cost 0.663; the best stable *distribution* costs 0.652). The instance is fixed (``rng``
  is not used): trials differ only in arrivals, reward noise and the policy's randomness, so trial
  averages estimate the expectations of Theorems 3-4 for one instance. As in ``rkhs-synthetic``, ``B``
  is the bound on :math:`|f|`; ``c`` is a smooth function, not a finite kernel expansion, so the
  RKHS-norm role of ``B`` in :math:`\beta_t` holds only approximately;
- ``G = 12``: the clip level (at least the largest service total, so only large arrivals are clipped:
  when :math:`\omega(t) > 12 + H(x)`). At the defaults clipping binds with probability at most 0.0068
  (at x = (0, 0)) and lowers the mean by at most 0.011 (``metadata``);
- noise: energy readings with Gaussian noise of std ``reward_std = 0.1``; kernel: squared exponential,
  lengthscale 0.5 on the unit square.

Without the constraint the cheapest allocation (0, 0) serves nothing and violates by about λ per round.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ckb._validation import check_finite_array, check_scalar
from ckb.contract.domain import BoxDomain
from ckb.errors import InvalidInputError
from ckb.kernels import SquaredExponential
from ckb.problems.noise import GaussianNoise
from ckb.problems.problem import Problem
from ckb.problems.registry import PROBLEMS


class StochasticConstraintProblem(Problem):
    """A :class:`~ckb.problems.Problem` whose constraints are revealed as i.i.d. random functions.

    ``constraint_sampler(rng) -> (n, m)`` draws :math:`g_t` at the ``n`` candidates; ``constraints``
    (the ``Problem`` argument) must be its exact mean :math:`g`, and every draw must satisfy
    ``|g_t| <= constraint_bound`` (Assumptions 5-6 of the CBO paper). Needs a domain with candidates.
    """

    needs_environment = "full-information"
    needs_environment_because = (
        "its constraint is the random g_t revealed before each round (the CBO paper, Sec. 4 and App. A); "
        "any other environment would show the policy its mean g through the noise model (gpu-queue: "
        "exactly) instead"
    )

    def __init__(
        self,
        *args: Any,
        constraint_sampler: Callable[[np.random.Generator], np.ndarray],
        constraint_bound: float,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        if not self.domain.is_finite:
            raise InvalidInputError(
                f"problem {self.name!r}: revealed constraint functions need a finite domain or a grid."
            )
        if self.m < 1:
            raise InvalidInputError(f"problem {self.name!r}: a stochastic constraint problem needs m >= 1.")
        if not callable(constraint_sampler):
            raise InvalidInputError(
                f"constraint_sampler must be callable rng -> (n, m), got {type(constraint_sampler).__name__}."
            )
        self._sampler = constraint_sampler
        self.constraint_bound = check_scalar(
            constraint_bound, "constraint_bound (G)", low=0.0, low_inclusive=False
        )

    def sample_constraints(self, rng: np.random.Generator) -> np.ndarray:
        """One draw of :math:`g_t` at every candidate, shape ``(n, m)``."""
        return self._sampler(rng)


def service_rate(x: np.ndarray, s: float, k: float) -> np.ndarray:
    r""":math:`h(x) = s (1 - e^{-k x}) / (1 - e^{-k})` (``k = 0``: the linear limit ``s x``)."""
    if k == 0.0:
        return s * x
    return s * (-np.expm1(-k * x)) / (-math.expm1(-k))


def clipped_poisson_mean(rate: float, H: np.ndarray, G: float) -> np.ndarray:
    r"""Exact :math:`\mathbb E[\mathrm{Proj}_{[-G, G]}(\omega - H)]` for :math:`\omega \sim \mathrm{Poisson}(rate)`.

    ``H`` is an array of service totals (>= 0). Terms with ``k > K = ceil(G + max H)`` all equal ``G``
    and are summed in closed form through the survival function.
    """
    poisson = _poisson()
    H = np.asarray(H, dtype=float)
    K = math.ceil(G + float(np.max(H, initial=0.0)))
    k = np.arange(K + 1, dtype=float)
    pmf = poisson.pmf(k, rate)
    vals = np.clip(k[None, :] - H.reshape(-1, 1), -G, G)
    return (vals @ pmf + G * poisson.sf(K, rate)).reshape(H.shape)


def _pair(value: Any, name: str) -> np.ndarray:
    arr = check_finite_array(value, name)
    arr = np.broadcast_to(arr, (2,)).astype(float) if arr.ndim == 0 else arr
    if arr.shape != (2,):
        raise InvalidInputError(f"{name} must be a number or a pair (node 1, node 2), got {value!r}.")
    return arr


def _node_pairs(service_max: Any, service_curvature: Any, energy_linear: Any) -> tuple[np.ndarray, ...]:
    """The per-node constants ``s`` (> 0), ``k`` and ``p`` (>= 0), each a pair."""
    s = _pair(service_max, "service_max")
    k = _pair(service_curvature, "service_curvature")
    p = _pair(energy_linear, "energy_linear")
    if np.any(s <= 0) or np.any(k < 0) or np.any(p < 0):
        raise InvalidInputError(
            f"service_max must be > 0, service_curvature and energy_linear >= 0; got {s.tolist()}, "
            f"{k.tolist()}, {p.tolist()}."
        )
    return s, k, p


def _poisson():
    """``scipy.stats.poisson``, imported at the first call: scipy.stats is most of what `import
    ckb.problems` would cost at the top of this module."""
    from scipy.stats import poisson

    return poisson


def _stability_constraint(lam: float, H: np.ndarray, G: float) -> tuple[np.ndarray, float]:
    r"""The mean constraint :math:`g(x) = \mathbb E[\mathrm{Proj}_{[-G, G]}(\omega - H(x))]` at the service
    totals ``H`` and its Slater margin; an error if the clip would cut the lower end or no arm is stable."""
    if np.max(H) > G:
        raise InvalidInputError(
            f"G = {G} is below the largest service total {np.max(H):.4g}: the clip would cut the constraint's "
            "lower end; choose G >= max_x h_1(x_1) + h_2(x_2)."
        )
    g_mean = clipped_poisson_mean(lam, H, G)
    delta = float(np.max(-g_mean))
    if delta <= 0:
        raise InvalidInputError(
            f"no allocation is stable: the largest service total {np.max(H):.4g} does not exceed the "
            f"(clipped) arrival rate; Slater's condition fails (margin {delta:.4g}). Lower arrival_rate."
        )
    return g_mean, delta


@PROBLEMS.register("gpu-queue")
def gpu_queue(
    rng: np.random.Generator,
    *,
    levels: int = 11,
    arrival_rate: float = 5.8,
    service_max: Any = (3.0, 3.0),
    service_curvature: Any = (5.0, 3.0),
    energy_linear: Any = (1.0, 0.6),
    energy_quadratic: float = 0.5,
    G: float = 12.0,
    reward_std: float = 0.1,
    lengthscale: float = 0.5,
) -> StochasticConstraintProblem:
    """GPU allocation to two nodes under a stochastic queue-stability constraint (see the module docstring)."""
    levels = check_scalar(levels, "levels", low=2, integer=True)
    lam = check_scalar(arrival_rate, "arrival_rate", low=0.0, low_inclusive=False)
    s, k, p = _node_pairs(service_max, service_curvature, energy_linear)
    q = check_scalar(energy_quadratic, "energy_quadratic", low=0.0)
    G = check_scalar(G, "G", low=0.0, low_inclusive=False)
    domain = BoxDomain([0.0, 0.0], [1.0, 1.0], grid=levels)
    X = domain.candidates

    def service(Z: np.ndarray) -> np.ndarray:
        return service_rate(Z[:, 0], s[0], k[0]) + service_rate(Z[:, 1], s[1], k[1])

    def raw_cost(Z: np.ndarray) -> np.ndarray:
        return Z @ p + q * np.sum(Z**2, axis=1)

    scale = float(np.max(raw_cost(X)))
    if scale <= 0:
        raise InvalidInputError(
            "the energy cost is 0 everywhere: give energy_linear or energy_quadratic > 0."
        )
    H = service(X)
    g_mean, delta = _stability_constraint(lam, H, G)
    Hc = H[:, None]

    def sampler(gen: np.random.Generator) -> np.ndarray:
        return np.clip(gen.poisson(lam) - Hc, -G, G)

    meta = {
        "B": 1.0,
        "G": G,
        "slater_margin": delta,
        "slater_margin_unclipped": float(np.max(H) - lam),
        "max_clipping_shift": float(np.max(np.abs(g_mean - (lam - H)))),
        "clip_probability_max": float(_poisson().sf(math.floor(G), lam)),  # at x = (0, 0), the worst arm
        "energy_scale": scale,
        "service": f"h_i(x) = s_i (1 - exp(-k_i x)) / (1 - exp(-k_i)), s = {s.tolist()}, k = {k.tolist()}",
        "energy": f"c(x) = (p . x + q |x|^2) / {scale:.6g}, p = {p.tolist()}, q = {q}",
        "arrivals": f"Poisson({lam})",
    }
    return StochasticConstraintProblem(
        "gpu-queue",
        domain,
        lambda Z: raw_cost(Z) / scale,
        g_mean[:, None],
        GaussianNoise(reward_std, 0.0),
        kernel=SquaredExponential(lengthscale),
        minimize=True,
        hints={"B": 1.0, "G": G, "slater_margin": delta},
        metadata=meta,
        constraint_sampler=sampler,
        constraint_bound=G,
    )
