r"""Safe Bayesian-optimization baselines of the primal-dual papers: SafeOpt, StageOpt, SGP-UCB.

The primal-dual papers (Zhou & Ji 2022 and the CBO paper) compare CKB against **StageOpt** (Sui, Zhuang,
Burdick & Yue, ICML 2018) and **SGP-UCB** (Amani, Alizadeh & Thrampoulidis, L4DC 2020), and cite
**SafeOpt** (Sui, Gotovos, Burdick & Krause, ICML 2015) without running it (the CBO paper, Sec. 5). All
three keep every played arm safe with high probability, which needs a known safe seed; SafeOpt and
StageOpt also need a Lipschitz constant of the safety functions. They run on domains with candidates
(finite arms, or a box searched on a grid).

Conventions shared by the three
-------------------------------
*Safety functions.* ckb's constraints are feasible where :math:`g_j(x) \le 0`; these methods are written
for safety functions that must stay above a threshold, so they use :math:`s_j = -g_j` with threshold
:math:`h_j = 0` (:math:`s_j(x) \ge 0 \iff g_j(x) \le 0`). A point is safe when every constraint's
condition holds. There is one GP per function: :math:`(\mu_{t-1}, \sigma_{t-1})` for ``f`` and
:math:`(\tilde\mu_{j,t-1}, \tilde\sigma_{j,t-1})` for each :math:`g_j`, fed with the noisy constraint
observations :math:`c_{t,j}`; the posterior of :math:`s_j` has mean :math:`-\tilde\mu_j` and the same
:math:`\tilde\sigma_j`.

*Confidence widths.* :math:`\beta_t` for ``f`` and :math:`\tilde\beta_{j,t}` for :math:`g_j` come from
:mod:`ckb.exploration.beta` (default ``"theory"``: :math:`B + R\sqrt{2(\hat\gamma_{t-1} + 1 + \ln(1/\alpha'))}`
for ``f`` and the same with ``G``, ``R_g`` and the constraint GP's :math:`\hat\gamma` for :math:`g_j`). The
:math:`m + 1` GPs share the failure probability ``alpha`` by a union bound, :math:`\alpha' = \alpha/(m+1)`
(our choice; Theorem 1 of the CBO paper and of Zhou & Ji (2022) does the same with :math:`\ln(2/\alpha)`
for one constraint). The papers write :math:`\beta_t^{1/2}` where ckb's ``beta`` is already the
multiplier of :math:`\sigma`.

*Confidence intervals* (Sui et al. 2015, Sec. 3): :math:`Q_t(x) = [\mu_{t-1}(x) \pm \beta_t \sigma_{t-1}(x)]`
and :math:`C_t(x) = C_{t-1}(x) \cap Q_t(x)`, with :math:`C_0(x) = [0, \infty)` for the safety functions at
the seed arms and :math:`\mathbb R` elsewhere; :math:`\ell_t = \min C_t`, :math:`u_t = \max C_t`,
:math:`w_t = u_t - \ell_t`. ckb intersects at every arm every round. (SafeOpt's Algorithm 1 computes
:math:`C_{t+1}` only on :math:`S_t` to save work, which leaves a newly safe arm with :math:`C = \mathbb R`,
infinite width, for one round; intersecting everywhere gives tighter, equally valid intervals at the
same O(n) cost. A choice, recorded here.) An empty intersection (:math:`\ell > u`) can only follow a failed
confidence bound; it is kept as is (such an arm has negative width and is never "most uncertain").

*Safe set* (SafeOpt and StageOpt; Sui et al. 2015 Sec. 3, Sui et al. 2018 Algorithm 1), with
:math:`S_0` the seed set, Lipschitz constants :math:`L_j` and a distance ``d``:

.. math::

    S_t = \bigcap_j A_{t,j}, \qquad
    A_{t,j} = \bigcup_{x \in S_{t-1}} \{x' : \ell_{t,j}(x) - L_j\, d(x, x') \ge 0\}.

Because :math:`\ell_{t,j}` never decreases and the seeds have :math:`\ell \ge 0` from :math:`C_0`,
:math:`S_{t-1} \subseteq S_t` and :math:`A_{t-1,j} \subseteq A_{t,j}`: the set only grows and always
contains the seeds. At round 1 the safe set is the seed set itself. (The primal-dual papers note that the
Lipschitz condition is what StageOpt assumes; they write it for ``f`` because their constraint is
:math:`g = -f + h`; it is the safety functions' constant that the rule uses.)

*GP safe set* (StageOpt's default, ``safe_set="gp"``): the set the reference SafeOpt implementation
(``safeopt``, Berkenkamp et al.) builds when no Lipschitz constant is given: an arm is safe when every
constraint's upper confidence bound at it is :math:`\le 0` (this round's bounds, recomputed every round,
plus the seeds), and a safe arm is an expander when a hypothetical observation at it at its optimistic
value would make some uncertified arm safe (:class:`GPSafeSet`, :func:`gp_expanders`). The Lipschitz
constant of the real-data problems is set by strongly correlated arms with different means (see
*Distances*), which freezes the Lipschitz rule there; the GP rule uses the kernel's own correlations.

*Expanders* (same papers): :math:`G_t = \{x \in S_t : e_t(x) > 0\}` with
:math:`e_t(x) = |\{x' \notin S_t : u_t(x) - L\, d(x, x') \ge 0\}|`, the safe arms whose optimistic safety
value could certify an arm not yet safe. For :math:`m \ge 2` constraints (the papers state it for one
safety function; **reconstructed**), :math:`x` is an expander if for some constraint ``j`` and some arm
:math:`x' \notin A_{t,j}` (not yet certified for constraint ``j``), :math:`u_{t,j}(x) - L_j d(x, x') \ge 0`;
for ``m = 1`` this is exactly the papers' rule. With it, an empty :math:`G_t` is permanent (as long as the
intervals are non-empty, :math:`\ell_{t+1} \le u_{t+1} \le u_t` means no arm can ever be certified again),
which StageOpt uses below. Computed as :math:`u_{t,j}(x) - L_j \min_{x' \notin A_{t,j}} d(x, x') \ge 0`.

*Distances.* ``distance="euclidean"`` uses the arms' coordinates
(:func:`ckb.contract.distances.euclidean_distances`); ``"kernel"`` uses the kernel-induced distance
:math:`d(x, x') = \sqrt{k(x,x) + k(x',x') - 2k(x,x')}` (:func:`ckb.contract.distances.kernel_distances`),
the only metric available for arms without coordinates (light sensors, stocks: a
:class:`~ckb.kernels.PrecomputedKernel`). ``"auto"`` (default) picks ``"kernel"`` for a
:class:`~ckb.kernels.PrecomputedKernel` and ``"euclidean"`` otherwise. The Lipschitz constant must be the
one for the same distance (``ProblemInfo.hints["lipschitz"]`` is computed by the problem with its own
distance, see :mod:`ckb.problems.safety`). Measured caveat: on the real data, the ground-truth constant
over kernel distances is set by strongly correlated arms with different means, so even with exact
bounds (:math:`\ell = u = s`) the rule's closure from the hinted seed is the seed alone on the finance
data (10 of 10 instances) and 1-8 of the 19 feasible sensors on the light-sensor data; on the synthetic
grid it covers nearly all feasible arms. SafeOpt and StageOpt can therefore hardly expand there.

*Known constants* come from :attr:`ProblemInfo.hints` unless given: ``safe_seed`` (required; an arm or a
list of arms known to be safe), ``lipschitz`` (required by SafeOpt/StageOpt; one value for all
constraints or one per constraint), ``B`` and ``G`` (RKHS-norm bounds for the theory betas; default 1.0
when the problem gives none; IGP-UCB's ``B`` is 1.0 unless ``B=None`` asks for the hint), ``R`` (noise
level; else 0.1).

*Selection.* Every argmax breaks ties uniformly at random (:func:`ckb.exploration.argmax_random_tie`).
A played arm is always in the method's current safe set (tested).

The three rules
---------------
:class:`SafeOpt` (Sui et al. 2015, Algorithm 1; separate utility and safety functions as in Berkenkamp,
Krause & Schoellig 2016): maximizers
:math:`M_t = \{x \in S_t : u^f_t(x) \ge \max_{x' \in S_t} \ell^f_t(x')\}` (bounds of ``f`` intersected
the same way, :math:`C^f_0 = \mathbb R`), and

.. math:: x_t = \arg\max_{x \in G_t \cup M_t} \max\big(w^f_t(x), \max_j w_{t,j}(x)\big),

the most uncertain arm among expanders and maximizers. (With one function for both roles, as in the 2015
paper, this is :math:`w_t(x)`; the maximum over all functions is Berkenkamp et al.'s. Widths are compared in
the functions' own units, unscaled.) :math:`M_t` is never empty while the intervals are non-empty; if
:math:`G_t \cup M_t` is empty anyway the most uncertain arm of :math:`S_t` is played. SafeOpt is an
exploration rule whose guarantee is an :math:`\epsilon`-optimal safe point, not low regret: it keeps
sampling uncertain expanders at the safe set's boundary, and its cumulative regret grows about linearly
(as the primal-dual papers, which cite it but run StageOpt, imply).

:class:`StageOpt` (Sui et al. 2018, Algorithm 1). Stage 1, safe expansion, :math:`t \le T_0`:
:math:`x_t = \arg\max_{x \in G_t} \max_j w_{t,j}(x)` (uncertainty sampling of the safety functions over the
expanders). Stage 2, :math:`t > T_0`: GP-UCB on ``f`` in the safe set found,
:math:`x_t = \arg\max_{x \in S_{T_0}} \mu_{t-1}(x) + \beta_t \sigma_{t-1}(x)`. Choices:

- :math:`T_0`: the paper's theorem sets it from unknown constants; ``T0`` may be given, else
  ``ceil(T0_fraction * horizon)`` with ``T0_fraction = 0.1`` (our choice; the primal-dual papers give no
  baseline settings: 0.1 is the low end of 10-20% of T, since stage 1 pays regret without looking at
  ``f``). So StageOpt needs ``horizon`` or ``T0``.
- Stage 1 ends early when :math:`G_t = \emptyset` (``switch_when_converged=True``): then no arm can
  ever become safe again (see *Expanders*), so expansion is over. With ``False``, such rounds sample the
  most uncertain safe arm instead, until :math:`T_0`.
- Stage 2 keeps the set :math:`S_{T_0}` fixed, as the paper writes (``freeze_safe_set=True``); with
  ``False`` the safe set keeps being updated in stage 2, by the rule ``safe_set`` names (the GP
  confidence-bound rule by default, the Lipschitz rule with ``safe_set="lipschitz"``).
- If the seed is the only safe arm and not an expander (its upper safety bound cannot reach any
  neighbour), stage 1 ends at once and StageOpt plays the seed.

:class:`SGPUCB` (Amani et al. 2020). Phase 1, :math:`t \le T'`: an arm drawn uniformly at random from the
known safe set. Phase 2, :math:`t > T'`: GP-UCB on ``f`` over the pessimistic safe set

.. math::

    D_t = \{x : \tilde\mu_{j,t-1}(x) + \tilde\beta_{j,t}\tilde\sigma_{j,t-1}(x) \le 0 \ \forall j\} \cup S_0,
    \qquad x_t = \arg\max_{x \in D_t} \mu_{t-1}(x) + \beta_t \sigma_{t-1}(x).

The paper's phase 1 draws from a known safe set; ckb's problems give one safe arm, so **reconstructed**:
``explore="seed"`` (default) draws uniformly from the seed set :math:`S_0` (a single seed is played
:math:`T'` times), ``explore="pessimistic"`` draws uniformly from the current :math:`D_t`, which grows as
phase 1 proceeds. :math:`T'` (``T_explore``): the paper's value depends on unknown constants; default
``ceil(sqrt(horizon))``, our choice, so that phase 1's linear regret stays of the order
:math:`\sqrt T` of the phase-2 bound (the primal-dual papers note this phase's linear regret at the start).
When :math:`D_t = S_0` only, SGP-UCB plays the best seed by UCB. :math:`D_t` is recomputed every round
(it is not a union over time, and need not grow).

Costs per round (n arms). Written from the definitions, the safe set and the expanders cost O(n^2) per
round (the primal-dual papers' remark on StageOpt); :func:`reference_safe_set` and
:func:`reference_expanders` do exactly that and are kept as the reference for tests and benchmarks.
:class:`LipschitzSafeSet` computes the same sets exactly with a cache of distances to the nearest
uncertified arm: O(n m) in rounds where the set does not grow, O(|S| (n - |S|)) in rounds where it does
(at most n of them). So SafeOpt and StageOpt's stage 1 cost about as much as StageOpt's stage 2 and
SGP-UCB, O(n) plus the m + 1 GP updates (O(n^2) each in the GP's dense form).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ckb._validation import check_bool, check_choice, check_scalar
from ckb.contract.distances import euclidean_distances, kernel_distances
from ckb.contract.observation import Observation
from ckb.errors import InvalidInputError, OutOfDomainError
from ckb.exploration import argmax_random_tie, make_beta
from ckb.kernels import PrecomputedKernel
from ckb.policies.base import Policy
from ckb.policies.registry import POLICIES
from ckb.surrogates.gp import MIN_NOISE

_DISTANCES = ("auto", "euclidean", "kernel")
_SAFE_SETS = ("gp", "lipschitz")

# --------------------------------------------------------------------------------------------------
# Set computations (exact, vectorized).
# --------------------------------------------------------------------------------------------------


class LipschitzSafeSet:
    r"""The safe set :math:`S_t` of SafeOpt/StageOpt and the certified sets :math:`A_{t,j}`, grown in place.

    ``seeds`` are the arms of :math:`S_0`, ``lipschitz`` the (m,) constants :math:`L_j`, ``distances`` the
    (n, n) arm distances. :meth:`update` applies one step of the rule (module docstring)

    .. math:: A_{t,j} = A_{t-1,j} \cup \{x' : \exists x \in S_{t-1},\ \ell_{t,j}(x) - L_j d(x, x') \ge 0\},
              \qquad S_t = \textstyle\bigcap_j A_{t,j},

    and :meth:`expanders` returns :math:`G_t`. (:math:`A_{t-1,j} \subseteq A_{t,j}` holds for
    non-decreasing lower bounds, so keeping :math:`A_{t-1,j}` is the papers' union over :math:`S_{t-1}`.)

    Exact and cheap: for each safe arm ``x`` it caches :math:`\delta_j(x) = \min_{x' \notin A_j} d(x, x')`,
    recomputed only when a set grows. An arm can certify a new arm for constraint ``j`` only if
    :math:`\ell_j(x) - L_j \delta_j(x) \ge 0` (that is the maximum of :math:`\ell_j(x) - L_j d(x, x')` over
    the uncertified arms; with monotone rounding the test is exact in floating point too), so a round in
    which no arm passes costs O(n m); a growing round costs O(|witnesses| |uncertified|), and the cache
    O(|S| |uncertified|). The expander test is :math:`u_j(x) - L_j \delta_j(x) \ge 0` for some ``j``.
    """

    def __init__(self, seeds: np.ndarray, lipschitz: np.ndarray, distances: np.ndarray) -> None:
        n = distances.shape[0]
        self.lipschitz = np.asarray(lipschitz, dtype=float)
        self.m = self.lipschitz.shape[0]
        self.distances = distances
        self.safe = np.zeros(n, dtype=bool)
        self.safe[seeds] = True
        self.certified = np.repeat(self.safe[None, :], self.m, axis=0)
        self._refresh()

    def _refresh(self) -> None:
        """Recompute δ_j at the safe arms (inf elsewhere, and where every arm is certified)."""
        n = self.safe.shape[0]
        self._delta = np.full((self.m, n), np.inf)
        inside = np.flatnonzero(self.safe)
        for j in range(self.m):
            unc = ~self.certified[j]
            if unc.any():
                self._delta[j, inside] = self.distances.take(inside, axis=0).compress(unc, axis=1).min(axis=1)

    def update(self, lower: np.ndarray) -> bool:
        """One step with the lower bounds ``lower`` (m, n) of the safety functions; True if the set grew."""
        grew = False
        with np.errstate(invalid="ignore"):  # 0 * inf when L = 0 and nothing is left to certify
            for j in range(self.m):
                lj, L = lower[j], self.lipschitz[j]
                wit = np.flatnonzero(lj - L * self._delta[j] >= 0.0)  # δ = inf off S: never a witness
                if wit.size == 0:
                    continue
                unc = np.flatnonzero(~self.certified[j])
                sub = self.distances[np.ix_(wit, unc)]
                new = (lj.take(wit)[:, None] - L * sub).max(axis=0) >= 0.0
                if new.any():
                    self.certified[j, unc[new]] = True
                    grew = True
        if grew:
            self.safe = np.all(self.certified, axis=0)
            self._refresh()
        return grew

    def expanders(self, upper: np.ndarray) -> np.ndarray:
        """:math:`G_t` for the upper bounds ``upper`` (m, n): safe arms that could certify an uncertified arm."""
        with np.errstate(invalid="ignore"):
            G = np.any(upper - self.lipschitz[:, None] * self._delta >= 0.0, axis=0)
        return G & self.safe

    def state_dict(self) -> dict[str, Any]:
        return {"certified": self.certified.copy()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.certified = np.array(state["certified"], dtype=bool).reshape(self.certified.shape)
        self.safe = np.all(self.certified, axis=0)
        self._refresh()


class GPSafeSet:
    r"""The confidence-bound safe set of SafeOpt's reference implementation without a Lipschitz constant.

    :math:`S_t = \{x : \tilde\mu_{j,t-1}(x) + \tilde\beta_{j,t}\tilde\sigma_{j,t-1}(x) \le 0\ \forall j\}
    \cup S_0`: an arm is safe when every constraint's upper confidence bound at it is :math:`\le 0` (in
    the safety function's terms, its lower bound is :math:`\ge 0`). Recomputed every round from the current
    posterior, as the reference code (``safeopt.SafeOpt.compute_safe_set``, Berkenkamp et al.) does; it is
    not a union over time, so it need not grow. The seeds, known safe, always belong to it. Expanders:
    :func:`gp_expanders`.
    """

    def __init__(self, seeds: np.ndarray, n: int, m: int) -> None:
        self.seeds = np.asarray(seeds, dtype=np.intp)
        self.m = int(m)
        self.safe = np.zeros(n, dtype=bool)
        self.safe[self.seeds] = True
        self.certified = np.repeat(self.safe[None, :], self.m, axis=0)

    def update(self, lower: np.ndarray) -> bool:
        """The set for the lower bounds ``lower`` (m, n) of the safety functions :math:`s_j = -g_j` (so
        ``lower >= 0`` is ``UCB(g_j) <= 0``); True if it changed."""
        cert = np.asarray(lower) >= 0.0
        cert[:, self.seeds] = True
        safe = np.all(cert, axis=0)
        changed = bool(np.any(safe != self.safe))
        self.certified, self.safe = cert, safe
        return changed

    def state_dict(self) -> dict[str, Any]:
        return {"certified": self.certified.copy()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.certified = np.array(state["certified"], dtype=bool).reshape(self.certified.shape)
        self.safe = np.all(self.certified, axis=0)


def gp_expanders(
    safe: np.ndarray,
    certified: np.ndarray,
    mean_g: np.ndarray,
    cov_g: np.ndarray,
    beta_g: np.ndarray,
    noise_g: np.ndarray,
    var_g: np.ndarray | None = None,
) -> np.ndarray:
    r"""SafeOpt's expanders without a Lipschitz constant (reference implementation, Berkenkamp et al.):
    a safe arm ``x`` is an expander when a hypothetical observation of :math:`g_j` at ``x`` at its most
    optimistic value, the lower confidence bound :math:`\tilde\mu_j(x) - \tilde\beta_j\tilde\sigma_j(x)`
    (the safety function's upper bound), would make the upper confidence bound of :math:`g_j` at some arm
    ``x'`` not yet certified for constraint ``j`` fall to :math:`\le 0`. One GP update with noise
    :math:`\lambda_j`, exact:

    .. math:: \mu'(x') = \mu(x') - \frac{k(x', x)}{k(x, x) + \lambda}\,\beta\sigma(x), \qquad
              \sigma'^2(x') = k(x', x') - \frac{k(x', x)^2}{k(x, x) + \lambda},

    with :math:`k` the posterior covariance. ``mean_g`` (m, n); ``cov_g`` (m, n, n), or one function per
    constraint giving the block of rows ``S`` and columns ``U`` (:meth:`ckb.surrogates.ExactGP.covariance_block`,
    O(t |S| |U|) where the full matrix costs O(t n^2)) with ``var_g`` (m, n) the variances; ``beta_g`` and
    ``noise_g`` (m,), ``certified`` (m, n): arms whose ``g_j`` UCB is already :math:`\le 0` (or seeds).
    For ``m = 1`` "not certified" is "not safe", the reference code's test; for ``m >= 2`` it is per
    constraint (as for the Lipschitz rule). The reference code checks the safe arms in decreasing order of
    variance and stops early; this computes the full set. O(m |S| |uncertified|).
    """
    G = np.zeros(safe.shape[0], dtype=bool)
    S = np.flatnonzero(safe)
    for j in range(mean_g.shape[0]):
        U = np.flatnonzero(~certified[j])
        if U.size == 0 or S.size == 0:
            continue
        if callable(cov_g[j]):
            diag, kxu = np.maximum(var_g[j], 0.0), cov_g[j](S, U)
        else:
            diag, kxu = np.maximum(np.diag(cov_g[j]), 0.0), cov_g[j][np.ix_(S, U)]
        kxx = diag[S] + noise_g[j]
        shift = -beta_g[j] * np.sqrt(diag[S])  # optimistic observation minus the posterior mean
        mean2 = mean_g[j, U][None, :] + kxu / kxx[:, None] * shift[:, None]
        var2 = np.maximum(diag[U][None, :] - kxu**2 / kxx[:, None], 0.0)
        G[S] |= np.any(mean2 + beta_g[j] * np.sqrt(var2) <= 0.0, axis=1)
    return G


def reference_safe_set(
    safe_prev: np.ndarray, lower: np.ndarray, lipschitz: np.ndarray, distances: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    r"""The safe-set rule from its definition, O(m n^2): returns ``(S_t, A_t)`` with
    :math:`A_{t,j} = \bigcup_{x \in S_{t-1}} \{x' : \ell_{t,j}(x) - L_j d(x, x') \ge 0\}` and
    :math:`S_t = \bigcap_j A_{t,j}`. Reference for tests and benchmarks; policies use
    :class:`LipschitzSafeSet`."""
    idx = np.flatnonzero(safe_prev)
    reach = lower[:, idx, None] - np.asarray(lipschitz, dtype=float)[:, None, None] * distances[idx][None]
    certified = np.any(reach >= 0.0, axis=1)  # (m, n)
    return np.all(certified, axis=0), certified


def reference_expanders(
    safe: np.ndarray, certified: np.ndarray, upper: np.ndarray, lipschitz: np.ndarray, distances: np.ndarray
) -> np.ndarray:
    r"""Expanders from the definition, O(m n^2): safe ``x`` with :math:`u_{t,j}(x) - L_j d(x, x') \ge 0`
    for some ``j`` and some :math:`x' \notin A_{t,j}`. Reference for tests and benchmarks."""
    L = np.asarray(lipschitz, dtype=float)[:, None, None]
    hit = (upper[:, :, None] - L * distances[None]) >= 0.0  # (m, x, x')
    hit &= ~certified[:, None, :]
    return safe & np.any(hit, axis=(0, 2))


def pessimistic_safe_set(
    mean_g: np.ndarray, std_g: np.ndarray, beta_g: np.ndarray, seeds: np.ndarray
) -> np.ndarray:
    r""":math:`\{x : \tilde\mu_j(x) + \tilde\beta_j \tilde\sigma_j(x) \le 0\ \forall j\} \cup S_0` (SGP-UCB's
    :math:`D_t`); ``mean_g``, ``std_g`` (m, n), ``beta_g`` (m,), ``seeds`` arm indices."""
    D = np.all(mean_g + beta_g[:, None] * std_g <= 0.0, axis=0)
    D[seeds] = True
    return D


def _pick(values: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    """Argmax of ``values`` over the arms in ``mask`` (non-empty), ties broken uniformly at random."""
    idx = np.flatnonzero(mask)
    return int(idx[argmax_random_tie(values[idx], rng)])


# --------------------------------------------------------------------------------------------------
# Shared machinery.
# --------------------------------------------------------------------------------------------------


class _SafeBO(Policy):
    """Shared by the three: the GPs of ``f`` and of each ``g_j``, their betas, the seed set, ``tell``."""

    def __init__(
        self,
        info,
        rng,
        *,
        safe_seed: int | Sequence[int] | None = None,
        B: float | None = None,
        G: float | None = None,
        R: float | None = None,
        R_g: float | None = None,
        noise: float = 1.0,
        noise_g: float | None = None,
        alpha: float = 0.05,
        beta: Any = "theory",
        beta_g: Any = None,
        beta_scale: float = 1.0,
        kernel: Any = None,
        method: str = "auto",
    ) -> None:
        super().__init__(info, rng)
        C = self._require_candidates()
        self._require_constraints()
        self.m = int(info.m)
        self.n = info.domain.n
        self.seeds = self._seed_set(safe_seed, info.hints, self._who)
        self.B = check_scalar(self._hint("B", B, default=1.0), "B", low=0.0)
        self.G = check_scalar(self._hint("G", G, default=1.0), "G", low=0.0)
        self.R = check_scalar(self._hint("R", R, default=0.1), "R", low=0.0)
        self.R_g = self.R if R_g is None else check_scalar(R_g, "R_g", low=0.0)
        self.noise = check_scalar(noise, "noise", low=MIN_NOISE)
        self.noise_g = self.noise if noise_g is None else check_scalar(noise_g, "noise_g", low=MIN_NOISE)
        self.alpha = check_scalar(
            alpha, "alpha", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False
        )
        scale = check_scalar(beta_scale, "beta_scale", low=0.0)
        a = self.alpha / (self.m + 1)  # union bound over the m + 1 GPs
        self.beta = make_beta(beta, B=self.B, R=self.R, alpha=a, scale=scale)
        self.beta_g = make_beta(
            beta if beta_g is None else beta_g, B=self.G, R=self.R_g, alpha=a, scale=scale
        )
        self.gp, self.gp_g = self._gps(kernel, self.noise, C, method=method, m=self.m, noise_g=self.noise_g)
        self._beta_t = float("nan")
        self._beta_g_t = np.full(self.m, np.nan)
        self._info: dict[str, float] = {}

    # -- constructor helpers ------------------------------------------------------------------------
    def _seed_set(self, safe_seed, hints, name) -> np.ndarray:
        if safe_seed is None:
            if "safe_seed" not in hints:
                raise InvalidInputError(
                    f"policy {name!r} needs a known safe arm: problem {self.info.name!r} gives no "
                    "hints['safe_seed']; pass safe_seed=ARM (or a list of arms)."
                )
            safe_seed = hints["safe_seed"]
        seeds = [safe_seed] if np.ndim(safe_seed) == 0 else list(np.asarray(safe_seed).reshape(-1))
        if not seeds:
            raise InvalidInputError("safe_seed must name at least one arm, got an empty list.")
        out = []
        for s in seeds:
            i = check_scalar(s, "safe_seed", integer=True)
            if not 0 <= i < self.n:
                raise OutOfDomainError(f"safe_seed {i} is outside the arms 0..{self.n - 1}.")
            out.append(i)
        return np.unique(np.asarray(out, dtype=np.intp))

    # -- per-round helpers --------------------------------------------------------------------------
    def _betas(self) -> None:
        self._beta_t = self.beta(self.t, self.gp)
        self._beta_g_t = np.array([self.beta_g(self.t, gp) for gp in self.gp_g])

    def _ucb(self) -> np.ndarray:
        return self.gp.mean + self._beta_t * self.gp.std

    def _record(self, **extra: float) -> None:
        info = {"beta": float(self._beta_t)}
        for j in range(self.m):
            info["beta_g" if self.m == 1 else f"beta_g{j + 1}"] = float(self._beta_g_t[j])
        info.update({k: float(v) for k, v in extra.items()})
        self._info = info

    # -- Policy API ---------------------------------------------------------------------------------
    def tell(self, obs: Observation) -> None:
        obs = self._check_obs(obs)
        i = obs.index
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < self.n:
            raise OutOfDomainError(f"observation index {i!r} is not an arm 0..{self.n - 1}.")
        y = float(obs.y)
        c = np.asarray(obs.c, dtype=float)
        if not math.isfinite(y) or not np.all(np.isfinite(c)):
            raise InvalidInputError(
                f"observation must be finite, got y = {obs.y!r}, c = {c.tolist()}; nothing was recorded."
            )
        self.gp.update_arm(int(i), y)
        for j, gp in enumerate(self.gp_g):
            gp.update_arm(int(i), float(c[j]))

    def internals(self) -> dict[str, float]:
        return dict(self._info)

    def _state(self) -> dict[str, Any]:
        return {
            "gp": self.gp.state_dict(),
            "gp_g": [gp.state_dict() for gp in self.gp_g],
            "beta_t": self._beta_t,
            "beta_g_t": self._beta_g_t.copy(),
            "info": dict(self._info),
        }

    def _load(self, state: dict[str, Any]) -> None:
        self.gp.load_state_dict(state["gp"])
        if len(state["gp_g"]) != self.m:
            raise InvalidInputError(
                f"checkpoint has {len(state['gp_g'])} constraint GP(s) but the problem has m = {self.m}."
            )
        for gp, s in zip(self.gp_g, state["gp_g"]):
            gp.load_state_dict(s)
        self._beta_t = float(state["beta_t"])
        self._beta_g_t = np.array(state["beta_g_t"], dtype=float).reshape(self.m)
        self._info = {k: float(v) for k, v in state["info"].items()}


class _LipschitzSafeBO(_SafeBO):
    """Adds the Lipschitz safe set: constants, distances, intersected safety intervals C_t."""

    def __init__(
        self,
        info,
        rng,
        *,
        lipschitz: float | Sequence[float] | None = None,
        distance: str = "auto",
        safe_rule: str = "lipschitz",
        **common: Any,
    ) -> None:
        super().__init__(info, rng, **common)
        self.safe_rule = check_choice(safe_rule, "safe_set", _SAFE_SETS)
        # intersected intervals C_t of the safety functions s_j = -g_j; C_0 = [0, inf) at the seeds
        self.ls = np.full((self.m, self.n), -np.inf)
        self.ls[:, self.seeds] = 0.0
        self.us = np.full((self.m, self.n), np.inf)
        if self.safe_rule == "gp":
            if lipschitz is not None:
                raise InvalidInputError(
                    f"lipschitz = {lipschitz!r} is only used with safe_set = 'lipschitz'; the 'gp' safe set "
                    "needs no Lipschitz constant (drop it or set safe_set = 'lipschitz')."
                )
            self.distance = None
            self.lipschitz = None
            self.safe_set = GPSafeSet(self.seeds, self.n, self.m)
            return
        if check_choice(distance, "distance", _DISTANCES) == "auto":
            distance = "kernel" if isinstance(self.gp.kernel, PrecomputedKernel) else "euclidean"
        self.distance = distance
        self.lipschitz = self._lipschitz(lipschitz, info.hints, self._who)
        C = info.domain.candidates
        D = kernel_distances(self.gp.kernel, C) if distance == "kernel" else euclidean_distances(C)
        self.safe_set = LipschitzSafeSet(self.seeds, self.lipschitz, D)

    @property
    def safe(self) -> np.ndarray:
        """The current safe set :math:`S_t` as an (n,) bool mask (read it, do not modify it)."""
        return self.safe_set.safe

    @property
    def distances(self) -> np.ndarray:
        """The (n, n) arm distances of the safe-set rule."""
        return self.safe_set.distances

    def _lipschitz(self, lipschitz, hints, name) -> np.ndarray:
        if lipschitz is None:
            if "lipschitz" not in hints:
                raise InvalidInputError(
                    f"policy {name!r} needs a Lipschitz constant of the constraints: problem "
                    f"{self.info.name!r} gives no hints['lipschitz']; pass lipschitz=L."
                )
            lipschitz = hints["lipschitz"]
        vals = np.atleast_1d(np.asarray(lipschitz, dtype=object)).reshape(-1)
        if vals.size not in (1, self.m):
            raise InvalidInputError(
                f"lipschitz must be one number or one per constraint (m = {self.m}), got {vals.size} values."
            )
        L = np.array([check_scalar(v, "lipschitz", low=0.0) for v in vals], dtype=float)
        return np.broadcast_to(L, (self.m,)).copy()

    def _intersect_safety(self) -> None:
        """C_t = C_{t-1} ∩ Q_t for every s_j = -g_j (bounds from the posterior after t - 1 observations)."""
        for j, gp in enumerate(self.gp_g):
            half = self._beta_g_t[j] * gp.std
            np.maximum(self.ls[j], -gp.mean - half, out=self.ls[j])
            np.minimum(self.us[j], -gp.mean + half, out=self.us[j])

    def _lipschitz_step(self) -> None:
        """Intervals C_t, then the safe set S_t by the Lipschitz rule (with ``safe_set = "gp"``: this
        round's confidence bounds Q_t, not intersected, as the reference code, then the GP safe set)."""
        if self.safe_rule == "gp":
            for j, gp in enumerate(self.gp_g):
                half = self._beta_g_t[j] * gp.std
                self.ls[j] = -gp.mean - half
                self.us[j] = -gp.mean + half
        else:
            self._intersect_safety()
        self.safe_set.update(self.ls)

    def _expanders(self) -> np.ndarray:
        """:math:`G_t` of the current rule (Lipschitz: :meth:`LipschitzSafeSet.expanders`; gp:
        :func:`gp_expanders`)."""
        if self.safe_rule == "lipschitz":
            return self.safe_set.expanders(self.us)
        mean = np.array([gp.mean for gp in self.gp_g])
        blocks = [gp.covariance_block for gp in self.gp_g]  # the safe x uncertified block, not all n x n
        var = np.array([gp.var for gp in self.gp_g])
        noise = np.array([gp.noise for gp in self.gp_g], dtype=float)
        return gp_expanders(self.safe, self.safe_set.certified, mean, blocks, self._beta_g_t, noise, var)

    def _state(self) -> dict[str, Any]:
        return {
            **super()._state(),
            "ls": self.ls.copy(),
            "us": self.us.copy(),
            "safe_set": self.safe_set.state_dict(),
        }

    def _load(self, state: dict[str, Any]) -> None:
        super()._load(state)
        self.ls = np.array(state["ls"], dtype=float).reshape(self.m, self.n)
        self.us = np.array(state["us"], dtype=float).reshape(self.m, self.n)
        self.safe_set.load_state_dict(state["safe_set"])


def _horizon(horizon, name: str) -> int | None:
    return None if horizon is None else check_scalar(horizon, f"{name}: horizon", low=1, integer=True)


def _phase_length(
    value, param: str, horizon: int | None, of_horizon, rule: str, policy: str, what: str
) -> int:
    """A first phase's length: ``value`` if given, else ``of_horizon(T)`` (``rule`` says how); rounds >= 0."""
    if value is None:
        if horizon is None:
            raise InvalidInputError(
                f"policy {policy!r} needs {what}: pass {param}=ROUNDS or horizon=T (then {rule})."
            )
        value = of_horizon(horizon)
    return check_scalar(value, param, low=0, integer=True)


_COMMON_DOC = """
    safe_seed:
        A known safe arm, or a list of them (:math:`S_0`); default ``info.hints["safe_seed"]``, an error
        if neither is given.
    B, G:
        RKHS-norm bounds of ``f`` and of each ``g_j`` for the ``"theory"`` betas; default
        ``info.hints["B"]`` / ``["G"]``, else 1.0.
    R, R_g:
        Sub-Gaussian noise levels of the reward and of the constraint observations; ``R`` defaults to
        ``info.hints["R"]`` (the real-data problems publish the largest deviation of a reading from its
        arm's mean), else 0.1 (the synthetic problem's noise std); ``R_g`` defaults to ``R``. As CKB.
    noise, noise_g:
        λ of the GP of ``f`` (default 1.0, the C&G code's value) and of the constraint GPs (default: ``noise``).
    alpha:
        Total failure probability, split evenly over the ``m + 1`` GPs.
    beta, beta_g:
        Schedules (``"theory"`` default, ``"log"``, a number, or a dict) for ``f`` and for the ``g_j``
        (``beta_g=None``: the same kind as ``beta``, with ``G`` and ``R_g``).
    beta_scale:
        Multiplies both schedules (a dict spec's own ``scale`` wins).
    kernel:
        Kernel (or spec) of every GP; default the problem's.
    method:
        GP representation (``"auto"``; see :class:`~ckb.surrogates.ExactGP`).
"""

_LIPSCHITZ_DOC = """    lipschitz:
        Lipschitz constant(s) :math:`L_j` of the constraints with respect to ``distance``: one number or
        one per constraint; default ``info.hints["lipschitz"]``, an error if neither is given.
    distance:
        ``"auto"`` (default), ``"euclidean"`` or ``"kernel"`` (see the module docstring).
"""


# --------------------------------------------------------------------------------------------------
# SafeOpt
# --------------------------------------------------------------------------------------------------


@POLICIES.register("safeopt")
class SafeOpt(_LipschitzSafeBO):
    __doc__ = (
        "SafeOpt (Sui et al. 2015): the most uncertain of the expanders and maximizers in the Lipschitz "
        "safe set; see the module docstring.\n\n    Parameters\n    ----------"
        + _COMMON_DOC
        + _LIPSCHITZ_DOC
        + "\n    Internals per round: ``beta``, ``beta_g``, ``safe_set_size``, ``expanders``, ``maximizers``.\n"
    )

    def __init__(self, info, rng, **params: Any) -> None:
        super().__init__(info, rng, **params)
        self.lf = np.full(self.n, -np.inf)
        self.uf = np.full(self.n, np.inf)

    def ask(self, context: Any = None) -> int:
        self.t += 1
        self._betas()
        self._lipschitz_step()
        half = self._beta_t * self.gp.std
        np.maximum(self.lf, self.gp.mean - half, out=self.lf)
        np.minimum(self.uf, self.gp.mean + half, out=self.uf)
        S = self.safe
        G = self.safe_set.expanders(self.us)
        M = S & (self.uf >= np.max(self.lf[S]))
        width = np.maximum(self.uf - self.lf, np.max(self.us - self.ls, axis=0))
        cand = G | M
        x = _pick(width, cand if cand.any() else S, self.rng)
        self._record(safe_set_size=S.sum(), expanders=G.sum(), maximizers=M.sum())
        return x

    def _state(self) -> dict[str, Any]:
        return {**super()._state(), "lf": self.lf.copy(), "uf": self.uf.copy()}

    def _load(self, state: dict[str, Any]) -> None:
        super()._load(state)
        self.lf = np.array(state["lf"], dtype=float).reshape(self.n)
        self.uf = np.array(state["uf"], dtype=float).reshape(self.n)


# --------------------------------------------------------------------------------------------------
# StageOpt
# --------------------------------------------------------------------------------------------------


@POLICIES.register("stageopt")
class StageOpt(_LipschitzSafeBO):
    __doc__ = (
        "StageOpt (Sui et al. 2018): safe expansion for T0 rounds, then GP-UCB in the safe set found; "
        "see the module docstring.\n\n    Parameters\n    ----------"
        + _COMMON_DOC
        + _LIPSCHITZ_DOC
        + """
    horizon:
        T, used for the default ``T0``.
    T0:
        Length of stage 1 (rounds 1..T0); default ``ceil(T0_fraction * horizon)``.
    T0_fraction:
        Default 0.1 (our choice, the low end of 10-20% of T; the primal-dual papers give no T0).
    switch_when_converged:
        End stage 1 early when no expander is left (default True).
    freeze_safe_set:
        Stage 2 optimizes over :math:`S_{T_0}` (default True, the paper's rule) or keeps updating the set.
    safe_set:
        ``"gp"`` (default, the headline of the primal-dual experiments): the confidence-bound safe set
        :class:`GPSafeSet` and :func:`gp_expanders`, as the reference SafeOpt implementation builds them
        when no Lipschitz constant is given (needs no ``lipschitz``; ``switch_when_converged`` does not
        apply, stage 1 runs to ``T0``); ``"lipschitz"``: the papers' Lipschitz rule (needs ``lipschitz``),
        kept as a sensitivity row.

    Internals per round: ``beta``, ``beta_g``, ``stage`` (1 or 2), ``safe_set_size``, ``expanders``
    (NaN in stage 2).
"""
    )

    def __init__(
        self,
        info,
        rng,
        *,
        horizon: int | None = None,
        T0: int | None = None,
        T0_fraction: float = 0.1,
        switch_when_converged: bool = True,
        freeze_safe_set: bool = True,
        safe_set: str = "gp",
        **params: Any,
    ) -> None:
        horizon = _horizon(horizon, "stageopt")
        frac = check_scalar(T0_fraction, "T0_fraction", low=0.0, high=1.0)
        self.T0 = _phase_length(
            T0,
            "T0",
            horizon,
            lambda T: math.ceil(frac * T),
            f"T0 = ceil({frac} * T)",
            "stageopt",
            "the stage-1 length",
        )
        self.horizon = horizon
        self.switch_when_converged = check_bool(switch_when_converged, "switch_when_converged")
        self.freeze_safe_set = check_bool(freeze_safe_set, "freeze_safe_set")
        super().__init__(info, rng, safe_rule=safe_set, **params)
        self.stage = 1
        self.switched_at = 0  # first round of stage 2 (0: not yet)

    def ask(self, context: Any = None) -> int:
        self.t += 1
        self._betas()
        if self.stage == 1 and self.t > self.T0:
            self._enter_stage_2()
        n_exp = float("nan")
        if self.stage == 1:
            self._lipschitz_step()
            G = self._expanders()
            n_exp = G.sum()
            # an empty G_t is permanent only under the Lipschitz rule (module docstring); the GP safe set
            # is recomputed from the posterior and can grow again, so it runs stage 1 to T0
            converged = self.switch_when_converged and self.safe_rule == "lipschitz"
            if G.any() or not converged:
                width = np.max(self.us - self.ls, axis=0)
                x = _pick(width, G if G.any() else self.safe, self.rng)
                self._record(stage=1, safe_set_size=self.safe.sum(), expanders=n_exp)
                return x
            self._enter_stage_2()
        if not self.freeze_safe_set:
            self._lipschitz_step()
        x = _pick(self._ucb(), self.safe, self.rng)
        self._record(stage=2, safe_set_size=self.safe.sum(), expanders=n_exp)
        return x

    def _enter_stage_2(self) -> None:
        self.stage = 2
        self.switched_at = self.t

    def _state(self) -> dict[str, Any]:
        return {**super()._state(), "stage": self.stage, "switched_at": self.switched_at}

    def _load(self, state: dict[str, Any]) -> None:
        super()._load(state)
        self.stage = int(state["stage"])
        self.switched_at = int(state["switched_at"])


# --------------------------------------------------------------------------------------------------
# SGP-UCB
# --------------------------------------------------------------------------------------------------


@POLICIES.register("sgp-ucb")
class SGPUCB(_SafeBO):
    __doc__ = (
        "SGP-UCB (Amani et al. 2020): T' rounds of random safe exploration, then GP-UCB over the "
        "pessimistic safe set; see the module docstring.\n\n    Parameters\n    ----------"
        + _COMMON_DOC
        + """
    horizon:
        T, used for the default ``T_explore``.
    T_explore:
        T', the length of phase 1; default ``ceil(sqrt(horizon))``.
    explore:
        ``"seed"`` (default: uniform over the seed set) or ``"pessimistic"`` (uniform over the current
        pessimistic safe set :math:`D_t`).

    Internals per round: ``beta``, ``beta_g``, ``phase`` (1 or 2), ``safe_set_size`` (:math:`|D_t|`).
"""
    )

    def __init__(
        self,
        info,
        rng,
        *,
        horizon: int | None = None,
        T_explore: int | None = None,
        explore: str = "seed",
        **params: Any,
    ) -> None:
        horizon = _horizon(horizon, "sgp-ucb")
        self.T_explore = _phase_length(
            T_explore,
            "T_explore",
            horizon,
            lambda T: math.ceil(math.sqrt(T)),
            "T' = ceil(sqrt(T))",
            "sgp-ucb",
            "the exploration length T'",
        )
        self.explore = check_choice(explore, "explore", ("seed", "pessimistic"))
        self.horizon = horizon
        super().__init__(info, rng, **params)
        #: the pessimistic safe set D_t of the last round (the seeds before round 1)
        self.safe = np.zeros(self.n, dtype=bool)
        self.safe[self.seeds] = True

    def ask(self, context: Any = None) -> int:
        self.t += 1
        self._betas()
        mean = np.array([gp.mean for gp in self.gp_g])
        std = np.array([gp.std for gp in self.gp_g])
        self.safe = D = pessimistic_safe_set(mean, std, self._beta_g_t, self.seeds)
        if self.t <= self.T_explore:
            pool = self.seeds if self.explore == "seed" else np.flatnonzero(D)
            x = int(pool[self.rng.integers(pool.size)])
            phase = 1
        else:
            x = _pick(self._ucb(), D, self.rng)
            phase = 2
        self._record(phase=phase, safe_set_size=D.sum())
        return x

    def _state(self) -> dict[str, Any]:
        return {**super()._state(), "safe": self.safe.copy()}

    def _load(self, state: dict[str, Any]) -> None:
        super()._load(state)
        self.safe = np.array(state["safe"], dtype=bool).reshape(self.n)
