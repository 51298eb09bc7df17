r"""ADMMBO (Ariafar, Coll-Font, Brooks & Dy, JMLR 20(123), 2019): BO with unknown constraints by ADMM.

The baseline of Shi & Eryilmaz (2022, App. E), which ran the authors' MATLAB code
(https://github.com/SetarehAr/ADMMBO); parameters and details below follow that code. ADMMBO
*minimizes* :math:`F = -f` (our rewards are in the maximization sense) subject to :math:`c_i(x) \le 0`,
:math:`i = 1..m`, written as

.. math::

    \min_{x, z_1..z_m} F(x) + \sum_i M\,\mathbb 1[c_i(z_i) > 0] \quad \text{s.t.} \quad x = z_i,

and runs ADMM on its augmented Lagrangian with penalty :math:`\rho`, each subproblem solved by a short
Bayesian optimization. ADMM iteration :math:`k = 1, 2, \dots`:

1. **X-step.** BO with expected improvement on
   :math:`AL_X(x) = F(x) + \frac{m\rho}{2}\|x - \bar z + \bar y/\rho\|^2` (:math:`\bar z, \bar y` the means
   over constraints), with a GP whose prior mean is the known quadratic, i.e. a GP on the observed
   :math:`F` plus the quadratic. ``initial_bud_f`` new objective evaluations in iteration 1,
   ``final_bud`` afterwards; every earlier X-step sample (and the initial points) is reused with its
   :math:`AL_X` value recomputed for the current :math:`\bar z, \bar y, \rho`.
   :math:`x^*` = the sample of least observed :math:`AL_X`.
2. **Z-step**, for each constraint :math:`i`: BO on
   :math:`h(z) = \mathbb 1[c_i(z) > 0] + \frac{\rho}{2M}\|x^* - z + y_i/\rho\|^2`, with a zero-mean GP on the
   observed :math:`c_i` and ADMMBO's own acquisition: with :math:`h^+` the least observed :math:`h` and
   :math:`Q(z) = h^+ - \frac{\rho}{2M}\|x^* - z + y_i/\rho\|^2`,

   .. math::

       EI_Z(z) = \begin{cases} 0 & Q(z) < 0 \\ Q(z)\,\Pr[c_i(z) \le 0] & 0 \le Q(z) < 1 \\
       Q(z) - \Pr[c_i(z) > 0] & Q(z) \ge 1 \end{cases}

   (:func:`z_step_ei`). ``initial_bud_c`` evaluations of :math:`c_i` in iteration 1, ``final_bud``
   afterwards; :math:`z_i` = the sample (of all Z-step samples of constraint i and the initial points)
   of least observed :math:`h`.
3. **Y-update** (right after each Z-step): :math:`y_i \leftarrow y_i + \rho (x^* - z_i)`
   (:func:`dual_update`).
4. **Stopping** (:func:`admm_residuals`): constraint :math:`i` has converged once
   :math:`\|x^* - z_i\| < \sqrt d\,\epsilon_{abs} + \eta\,\epsilon_{rel} \max(\|x^*\|, \|z_i\|)` and
   :math:`\|\rho (z_i - z_i^{old})\| < \sqrt d\,\epsilon_{abs} + \eta\,\epsilon_{rel} \|\rho y_i\|`, with
   ``abstol`` = ``reltol`` = 0.05 and ``relaxation`` η = 1.5. ADMMBO stops when every constraint has
   converged (the original's flags are never reset, so "has converged in some iteration"; identical for
   m = 1), or after ``max_iterations``.
5. **ρ adaptation** (if not stopped; :func:`adapt_rho`): with :math:`\bar r, \bar s` the means over
   constraints of the two residuals, :math:`\rho \leftarrow 2\rho` if :math:`\bar r > 10 \bar s`,
   :math:`\rho \leftarrow \rho/2` if :math:`10 \bar r < \bar s`.

Start: ``n_initial`` = 2 uniform random points (both objective and constraints are used there),
:math:`y_i = 0`, :math:`z_i` = the box's upper corner. ``max_iterations`` defaults to the original's
:math:`1 + \mathrm{round}\big((B - m\,b_c - b_f) / ((m + 1) b)\big)` (:func:`max_admm_iterations`) with the
total budget :math:`B` = ``total_budget`` (default :math:`100 (m + 1)`, 200 for the paper's problems),
:math:`b_f, b_c, b` the three budgets; 15 for the toy-1 settings. An incumbent is tracked: after each X-
and Z-step, the new :math:`x^*` / :math:`z_i` replaces it if it is feasible within ``tol_c`` (all
:math:`c_j \le 0.01`) and its :math:`F` is not larger.

**Per-round play** (our choice: Shi & Eryilmaz do not say how ADMMBO's samples became rounds). Every
point ADMMBO evaluates is one round, in its order: the initial points, then per iteration the X-step
points and the Z-step points of constraint 1, 2, ...; the runner scores each on its true ``f`` and
``g``. The environment reveals the objective and all constraints at every round, but ADMMBO evaluates
only the objective in an X-step and only constraint :math:`i` in a Z-step: the other values are ignored
by the subproblems (faithful to the original, which never sees them). The incumbent check is the
exception: the original evaluates *both* F and all :math:`c_j` at :math:`x^*` and :math:`z_i` outside its
sample count; here it reads the values observed in the round where that point was played, so no extra
rounds are spent. Once ADMMBO has stopped it plays its final recommendation (the incumbent, or
:math:`x^*` of the last iteration if no point was ever ``tol_c``-feasible) in every remaining round.
``internals()`` (recorded after each round's tell) exposes ``stopped`` (1 once ADMMBO has terminated),
``sample`` (1 if this round's point was an ADMMBO evaluation, so ADMMBO's own horizon is the sum of
``sample``: Shi & Eryilmaz report "around 90" on Gardner and "around 50" on rate allocation), and, for
the point played this round, ``admm_iteration`` (0 for the initial points), ``step`` (0 initial, 1 X,
2 Z, 3 recommendation) and ``constraint`` (the Z-step's constraint, 0-based; -1 otherwise); also the
current ``rho`` and the mean residuals ``r_norm`` / ``s_norm`` of the last convergence check.

How Shi & Eryilmaz counted ADMMBO's horizon is not stated. The ``Samples`` list the original
``ADMMBO.m`` returns holds the initial points twice (X- and Z-step traces) and, through a slicing slip,
the X-step samples of iteration 1 only: after :math:`k` iterations it has
:math:`(n_0 + b_f) + (n_0 + m b_c) + (k - 1) m b` entries against
:math:`n_0 + b_f + m b_c + (k - 1)(m + 1) b` evaluations here (Gardner: 84 against 102 at k = 5). If they
played that list, their "around 90" is about k = 5-6 [inferred]; ``step`` and ``admm_iteration`` let a
report compute either count.

**GPs.** Isotropic Matérn 5/2 with lengthscale, signal variance and noise fitted by maximum marginal
likelihood at every BO step (:mod:`ckb.surrogates.mle`, L-BFGS-B, at most 100 evaluations, as gpml's
``minimize(-100)``), from the original's starting values: X-step :math:`\ell = 1, s_f = 1, s_n = 0.1`,
Z-step :math:`\ell = 1/4, s_f = 1, s_n = 0.1`, on inputs scaled to :math:`[0, 1]^d`. The problem's kernel
hint is not used. EI uses the predictive variance of a new *observation* (latent + fitted noise), which
is what gpml's ``gp`` returns to the original code (``ei_noise=False`` uses the latent variance).

**Acquisition maximization.** The original takes the EI argmax over :math:`10^5` Sobol points (X-step)
or :math:`10^5` uniform random points (Z-step). That would cost seconds per step here, so each step
draws ``n_candidates`` (default 2048) fresh scrambled Sobol points (``scipy.stats.qmc.Sobol`` seeded from
the policy's generator) and takes the argmax on them; a run of 350 rounds then takes about 1-3 s. On a
box with a grid the grid is the candidate set and the policy returns grid indices. Each BO step runs with
one BLAS thread (:func:`ckb.surrogates.mle.one_blas_thread`: small matrices, and threads oversubscribe
busy cores).

**Deviations from the original code, and why.**

- :math:`\Pr[c_i(z) \le 0] = \Phi(-\mu/\sigma)`: the original calls ``normcdf(0, m, s2)``, passing the
  variance as the standard deviation; we use the correct normal cdf.
- The X-step GP's prior mean is the quadratic :math:`\frac{m\rho}{2}\|x - \bar z + \bar y/\rho\|^2` in the
  problem's units. The original's ``meanShiftedBar`` uses :math:`\rho/2` (the same for m = 1, all of
  Shi & Eryilmaz's experiments) and evaluates it at inputs scaled to :math:`[0,1]^d` against unscaled
  :math:`\bar z, \bar y` (the same only on the unit box), and gpml's optimizer also moves the mean's
  "hyperparameters" with a derivative the function does not provide; we keep the mean exact and fixed.
- The Z-step GP works on inputs scaled to :math:`[0,1]^d` like the X-step (the original uses raw
  units there, so its :math:`\ell = 1/4` start is 1/24 of the Gardner box and a quarter of the unit box).
- Hyperparameter bounds and the noise floor of :mod:`ckb.surrogates.mle` (gpml has none).
- The two initial points are drawn uniformly from the box with the policy's generator (the original
  loads fixed random points from a file).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import ndtr

from ckb._validation import check_bool, check_scalar
from ckb.contract.domain import BoxDomain
from ckb.contract.observation import Observation
from ckb.errors import InvalidInputError
from ckb.policies.base import Policy
from ckb.policies.registry import POLICIES
from ckb.surrogates.mle import Matern52Hyperparameters, fit_matern52, one_blas_thread

#: starting hyperparameters of the X-step and Z-step fits (the original's gpml settings)
X_INIT = Matern52Hyperparameters(lengthscale=1.0, signal_std=1.0, noise_std=0.1)
Z_INIT = Matern52Hyperparameters(lengthscale=0.25, signal_std=1.0, noise_std=0.1)

_STEP_CODE = {"initial": 0, "x": 1, "z": 2, "done": 3}


# ---------------------------------------------------------------------------------------------- math
def expected_improvement(best: float, mean: np.ndarray, var: np.ndarray) -> np.ndarray:
    r"""EI for minimization: :math:`\sigma (u \Phi(u) + \varphi(u))`, :math:`u = (best - \mu)/\sigma`."""
    mean = np.asarray(mean, dtype=float)
    sd = np.sqrt(np.maximum(np.asarray(var, dtype=float), 0.0))
    gap = best - mean
    pos = sd > 0
    u = np.divide(gap, sd, out=np.zeros_like(gap), where=pos)
    ei = sd * (u * ndtr(u) + np.exp(-0.5 * u * u) / math.sqrt(2.0 * math.pi))
    return np.where(pos, ei, np.maximum(gap, 0.0))


def prob_feasible(mean: np.ndarray, var: np.ndarray) -> np.ndarray:
    r""":math:`\Pr[c \le 0] = \Phi(-\mu/\sigma)` for :math:`c \sim \mathcal N(\mu, \sigma^2)` (a step at σ = 0)."""
    mean = np.asarray(mean, dtype=float)
    sd = np.sqrt(np.maximum(np.asarray(var, dtype=float), 0.0))
    pos = sd > 0
    z = np.divide(-mean, sd, out=np.zeros_like(mean), where=pos)
    return np.where(pos, ndtr(z), (mean <= 0).astype(float))


def z_step_ei(Q: np.ndarray, p_feasible: np.ndarray) -> np.ndarray:
    """ADMMBO's Z-step acquisition: 0 if Q < 0, Q p if 0 <= Q < 1, Q - (1 - p) if Q >= 1."""
    Q = np.asarray(Q, dtype=float)
    p = np.asarray(p_feasible, dtype=float)
    return np.where(Q < 0.0, 0.0, np.where(Q < 1.0, Q * p, Q - (1.0 - p)))


def dual_update(y: np.ndarray, x: np.ndarray, z: np.ndarray, rho: float) -> np.ndarray:
    """The Y-update ``y + rho (x - z)``."""
    return np.asarray(y, dtype=float) + rho * (np.asarray(x, dtype=float) - np.asarray(z, dtype=float))


def admm_residuals(
    x: np.ndarray,
    z: np.ndarray,
    z_old: np.ndarray,
    y: np.ndarray,
    rho: float,
    abstol: float = 0.05,
    reltol: float = 0.05,
    relaxation: float = 1.5,
) -> dict[str, np.ndarray]:
    """Primal / dual residuals and tolerances per constraint (rows of ``z``, ``z_old``, ``y``).

    Returns ``r = ||x - z_i||``, ``s = ||rho (z_i - z_i_old)||``,
    ``eps_pri = sqrt(d) abstol + relaxation reltol max(||x||, ||z_i||)``,
    ``eps_dual = sqrt(d) abstol + relaxation reltol ||rho y_i||`` and ``converged = (r < eps_pri) & (s < eps_dual)``.
    """
    x = np.asarray(x, dtype=float)
    z, z_old, y = (np.atleast_2d(np.asarray(a, dtype=float)) for a in (z, z_old, y))
    d = x.shape[0]
    r = np.linalg.norm(x[None, :] - z, axis=1)
    s = np.linalg.norm(rho * (z - z_old), axis=1)
    base = math.sqrt(d) * abstol
    eps_pri = base + relaxation * reltol * np.maximum(np.linalg.norm(x), np.linalg.norm(z, axis=1))
    eps_dual = base + relaxation * reltol * np.linalg.norm(rho * y, axis=1)
    return {
        "r": r,
        "s": s,
        "eps_pri": eps_pri,
        "eps_dual": eps_dual,
        "converged": (r < eps_pri) & (s < eps_dual),
    }


def adapt_rho(
    rho: float, r: np.ndarray, s: np.ndarray, threshold: float = 10.0, factor: float = 2.0
) -> float:
    """Residual balancing: ``rho * factor`` if mean r > threshold mean s, ``rho / factor`` if threshold mean r < mean s."""
    r_bar, s_bar = float(np.mean(r)), float(np.mean(s))
    if r_bar > threshold * s_bar:
        return rho * factor
    if threshold * r_bar < s_bar:
        return rho / factor
    return rho


def _round_half_away(v: float) -> int:
    return int(math.copysign(math.floor(abs(v) + 0.5), v))


def max_admm_iterations(
    total_budget: int, m: int, initial_bud_f: int, initial_bud_c: int, final_bud: int
) -> int:
    """The original's ``1 + round((total_budget - m initial_bud_c - initial_bud_f) / ((m + 1) final_bud))``.

    MATLAB's ``round`` (halves away from zero).
    """
    return 1 + _round_half_away((total_budget - m * initial_bud_c - initial_bud_f) / ((m + 1) * final_bud))


# --------------------------------------------------------------------------------------------- policy
@POLICIES.register("admmbo")
class ADMMBO(Policy):
    """ADMMBO (Ariafar et al. 2019): constrained BO by ADMM, EI on each subproblem; see the module docstring.

    Defaults are the original's toy-1 (Gardner) settings; its 4-D example, the basis of Shi & Eryilmaz's
    App. E.2, uses ``initial_bud_f = 20``, ``initial_bud_c = 20``, ``final_bud = 2`` (experiment specs pass
    them).

    Parameters
    ----------
    rho:
        Initial ADMM penalty ρ (0.1).
    M:
        Penalty of an infeasible z in the reformulation (50); enters the Z-step as ρ / (2M).
    initial_bud_f, initial_bud_c:
        New evaluations of the X-step and of each Z-step in ADMM iteration 1 (10 and 50).
    final_bud:
        New evaluations of every X- and Z-step after iteration 1 (5).
    n_initial:
        Uniform random initial points, where objective and constraints are both used (2).
    abstol, reltol, relaxation:
        Stopping tolerances and the relaxation factor of the stopping rule (0.05, 0.05, 1.5).
    rho_threshold, rho_factor:
        ρ adaptation: multiply / divide by ``rho_factor`` when one mean residual exceeds
        ``rho_threshold`` times the other (10, 2).
    tol_c:
        Feasibility tolerance of the incumbent (0.01).
    n_candidates:
        Scrambled Sobol candidates per BO step for the acquisition argmax (2048; the original: 10^5).
    total_budget:
        The total evaluation budget in the ``max_iterations`` formula (default ``100 (m + 1)``).
    max_iterations:
        Maximum number of ADMM iterations (default: :func:`max_admm_iterations`).
    ei_noise:
        Use the predictive variance of a new observation (True, the original's) or of f in both EIs.
    max_fit_evals:
        Likelihood evaluations per hyperparameter fit (100).
    """

    def __init__(
        self,
        info,
        rng,
        *,
        rho: float = 0.1,
        M: float = 50.0,
        initial_bud_f: int = 10,
        initial_bud_c: int = 50,
        final_bud: int = 5,
        n_initial: int = 2,
        abstol: float = 0.05,
        reltol: float = 0.05,
        relaxation: float = 1.5,
        rho_threshold: float = 10.0,
        rho_factor: float = 2.0,
        tol_c: float = 0.01,
        n_candidates: int = 2048,
        total_budget: int | None = None,
        max_iterations: int | None = None,
        ei_noise: bool = True,
        max_fit_evals: int = 100,
    ) -> None:
        super().__init__(info, rng)
        dom = info.domain
        if not isinstance(dom, BoxDomain):
            raise InvalidInputError(
                f"policy 'admmbo' needs a box domain (BoxDomain, optionally with a grid), got {type(dom).__name__}."
            )
        self._require_constraints()
        self.rho0 = check_scalar(rho, "rho", low=0.0, low_inclusive=False)
        self.M = check_scalar(M, "M", low=0.0, low_inclusive=False)
        self.initial_bud_f = check_scalar(initial_bud_f, "initial_bud_f", low=0, integer=True)
        self.initial_bud_c = check_scalar(initial_bud_c, "initial_bud_c", low=0, integer=True)
        self.final_bud = check_scalar(final_bud, "final_bud", low=1, integer=True)
        self.n_initial = check_scalar(n_initial, "n_initial", low=1, integer=True)
        self.abstol = check_scalar(abstol, "abstol", low=0.0)
        self.reltol = check_scalar(reltol, "reltol", low=0.0)
        self.relaxation = check_scalar(relaxation, "relaxation", low=0.0, low_inclusive=False)
        self.rho_threshold = check_scalar(rho_threshold, "rho_threshold", low=1.0)
        self.rho_factor = check_scalar(rho_factor, "rho_factor", low=1.0)
        self.tol_c = check_scalar(tol_c, "tol_c", low=0.0)
        self.n_candidates = check_scalar(n_candidates, "n_candidates", low=1, integer=True)
        self.max_fit_evals = check_scalar(max_fit_evals, "max_fit_evals", low=1, integer=True)
        self.ei_noise = check_bool(ei_noise, "ei_noise")
        m = info.m
        if total_budget is None:
            total_budget = 100 * (m + 1)
        self.total_budget = check_scalar(total_budget, "total_budget", low=1, integer=True)
        if max_iterations is None:
            max_iterations = max_admm_iterations(
                self.total_budget, m, self.initial_bud_f, self.initial_bud_c, self.final_bud
            )
            if max_iterations < 1:
                raise InvalidInputError(
                    f"total_budget = {self.total_budget} is too small for the budgets (initial_bud_f = "
                    f"{self.initial_bud_f}, initial_bud_c = {self.initial_bud_c} x m = {m}): the formula gives "
                    f"max_iterations = {max_iterations} < 1; raise total_budget or set max_iterations."
                )
        self.max_iterations = check_scalar(max_iterations, "max_iterations", low=1, integer=True)
        self._lower = dom.lower.astype(float)
        self._span = (dom.upper - dom.lower).astype(float)
        self._reset()

    # ---------------------------------------------------------------------------------- state
    def _reset(self) -> None:
        m, d = self.info.m, self.info.domain.d
        self.rho = self.rho0
        self.iteration = 0  # ADMM iteration (0 during the initial design)
        self.phase = "initial"  # initial | x | z | done
        self._j = -1  # constraint of the current Z-step
        self._remaining = self.n_initial  # evaluations left in the current step
        self.z = np.tile(self.info.domain.upper.astype(float), (m, 1))
        self.z_old = self.z.copy()
        self.duals = np.zeros((m, d))  # ADMMBO's y_i
        self.x_star = np.full(d, np.nan)
        self._converged = np.zeros(m, dtype=bool)
        # every evaluation, in order: point, arm index, reward (max sense), constraints
        self._P: list[np.ndarray] = []
        self._I: list[int] = []
        self._Y: list[float] = []
        self._C: list[np.ndarray] = []
        self._x_rows: list[int] = []  # rows of the X-step data (initial points + X samples)
        self._z_rows: list[list[int]] = [[] for _ in range(m)]  # rows of each Z-step's data
        self._x_star_row = -1
        self._best_row = -1  # incumbent
        self._best_F = math.inf
        self._pending = False
        self._last_step = "initial"  # step, iteration and constraint of the point asked last
        self._last_iteration = 0
        self._last_j = -1
        self._r_mean = self._s_mean = math.nan

    @property
    def stopped(self) -> bool:
        return self.phase == "done"

    @property
    def n_samples(self) -> int:
        """Evaluations ADMMBO has asked for (its own horizon once stopped)."""
        return len(self._Y)

    @property
    def recommendation(self) -> np.ndarray:
        """The incumbent, else the last ``x*`` (else the last evaluated point, before any X-step ends)."""
        if self._best_row >= 0:
            return self._P[self._best_row].copy()
        if self._x_star_row >= 0:
            return self._P[self._x_star_row].copy()
        return self._P[-1].copy() if self._P else self.info.domain.lower.copy()

    def _recommendation_action(self) -> int | np.ndarray:
        row = self._best_row if self._best_row >= 0 else self._x_star_row
        if self.info.domain.candidates is not None and row >= 0 and self._I[row] >= 0:
            return int(self._I[row])
        return self.recommendation

    # ------------------------------------------------------------------------------ ask / tell
    def ask(self, context: Any = None) -> int | np.ndarray:
        if self._pending:
            raise InvalidInputError(
                "admmbo is sequential: tell() the observation of the last asked point before the next ask()."
            )
        self.t += 1
        self._last_step, self._last_iteration = self.phase, self.iteration
        self._last_j = self._j if self.phase == "z" else -1
        if self.phase == "done":
            return self._recommendation_action()
        self._pending = True
        if self.phase == "initial":
            return self._random_point()
        with one_blas_thread():
            return self._ask_x() if self.phase == "x" else self._ask_z(self._j)

    def tell(self, obs: Observation) -> None:
        obs = self._check_obs(obs)
        y = float(obs.y)
        c = np.asarray(obs.c, dtype=float)
        x = np.asarray(obs.x, dtype=float)
        if not (math.isfinite(y) and np.all(np.isfinite(c)) and np.all(np.isfinite(x))):
            raise InvalidInputError(
                f"observation must be finite, got y = {obs.y!r}, c = {c.tolist()}, x = {x.tolist()}."
            )
        if x.shape != (self.info.domain.d,):
            raise InvalidInputError(
                f"observation point must have shape ({self.info.domain.d},), got {x.shape}."
            )
        if self.phase == "done":
            return  # the recommendation's rounds: nothing for ADMMBO to learn
        if not self._pending:
            raise InvalidInputError("admmbo got an observation without a pending ask().")
        row = len(self._Y)
        self._P.append(x.copy())
        self._I.append(int(obs.index))
        self._Y.append(y)
        self._C.append(c.copy())
        self._pending = False
        if self.phase == "initial":
            self._x_rows.append(row)
            for rows in self._z_rows:
                rows.append(row)
        elif self.phase == "x":
            self._x_rows.append(row)
        else:
            self._z_rows[self._j].append(row)
        self._remaining -= 1
        self._advance()

    # --------------------------------------------------------------------------- state machine
    def _advance(self) -> None:
        """Close every finished step (possibly several with zero budgets) until one needs a sample."""
        m = self.info.m
        while self.phase != "done" and self._remaining <= 0:
            if self.phase == "initial":
                self.iteration = 1
                self._start_x()
            elif self.phase == "x":
                self._finish_x()
                self.z_old = self.z.copy()
                self._start_z(0)
            else:
                self._finish_z(self._j)
                if self._j + 1 < m:
                    self._start_z(self._j + 1)
                else:
                    self._end_iteration()

    def _start_x(self) -> None:
        self.phase = "x"
        self._remaining = self.initial_bud_f if self.iteration == 1 else self.final_bud

    def _start_z(self, j: int) -> None:
        self.phase, self._j = "z", j
        self._remaining = self.initial_bud_c if self.iteration == 1 else self.final_bud

    def _x_quadratic(self, X: np.ndarray) -> np.ndarray:
        """The known part of AL_X: (m rho / 2) ||x - zbar + ybar / rho||^2."""
        shift = self.z.mean(axis=0) - self.duals.mean(axis=0) / self.rho
        diff = X - shift[None, :]
        return (0.5 * self.info.m * self.rho) * np.einsum("ij,ij->i", diff, diff)

    def _z_quadratic(self, j: int, Z: np.ndarray) -> np.ndarray:
        """(rho / 2M) ||x* - z + y_j / rho||^2."""
        diff = Z - (self.x_star + self.duals[j] / self.rho)[None, :]
        return (self.rho / (2.0 * self.M)) * np.einsum("ij,ij->i", diff, diff)

    def _finish_x(self) -> None:
        rows = np.asarray(self._x_rows)
        P = np.asarray(self._P)[rows]
        al = -np.asarray(self._Y)[rows] + self._x_quadratic(P)
        self._x_star_row = int(rows[int(np.argmin(al))])
        self.x_star = self._P[self._x_star_row].copy()
        self._update_incumbent(self._x_star_row)

    def _finish_z(self, j: int) -> None:
        rows = np.asarray(self._z_rows[j])
        P = np.asarray(self._P)[rows]
        c = np.asarray(self._C)[rows, j]
        h = (c > 0).astype(float) + self._z_quadratic(j, P)
        row = int(rows[int(np.argmin(h))])
        self.z[j] = self._P[row]
        self._update_incumbent(row)
        self.duals[j] = dual_update(self.duals[j], self.x_star, self.z[j], self.rho)

    def _update_incumbent(self, row: int) -> None:
        F = -self._Y[row]
        if np.all(self._C[row] <= self.tol_c) and F <= self._best_F:
            self._best_row, self._best_F = row, F

    def _end_iteration(self) -> None:
        res = admm_residuals(
            self.x_star, self.z, self.z_old, self.duals, self.rho, self.abstol, self.reltol, self.relaxation
        )
        self._r_mean, self._s_mean = float(np.mean(res["r"])), float(np.mean(res["s"]))
        self._converged |= res["converged"]
        if np.all(self._converged):
            self.phase = "done"
            return
        self.rho = adapt_rho(self.rho, res["r"], res["s"], self.rho_threshold, self.rho_factor)
        if self.iteration >= self.max_iterations:
            self.phase = "done"
            return
        self.iteration += 1
        self._start_x()

    # ------------------------------------------------------------------------------ proposals
    def _scale(self, X: np.ndarray) -> np.ndarray:
        return (X - self._lower) / self._span

    def _random_point(self) -> int | np.ndarray:
        dom = self.info.domain
        if dom.candidates is not None:
            return int(self.rng.integers(dom.n))
        return dom.lower + self._span * self.rng.random(dom.d)

    def _candidates(self) -> tuple[np.ndarray, np.ndarray]:
        """``(X, U)``: candidates in problem units and scaled to the unit cube."""
        dom = self.info.domain
        if dom.candidates is not None:
            X = np.asarray(dom.candidates, dtype=float)
            return X, self._scale(X)
        from scipy.stats import qmc  # here: scipy.stats is most of what `import ckb.policies` costs

        seed = int(self.rng.integers(2**63 - 1))
        k = max(0, math.ceil(math.log2(self.n_candidates)))
        U = qmc.Sobol(dom.d, scramble=True, seed=seed).random_base2(k)[: self.n_candidates]
        return self._lower + self._span * U, U

    def _pick(self, X: np.ndarray, acq: np.ndarray) -> int | np.ndarray:
        k = int(np.argmax(acq))
        return k if self.info.domain.candidates is not None else X[k].copy()

    def _ask_x(self) -> int | np.ndarray:
        rows = np.asarray(self._x_rows)
        P = np.asarray(self._P)[rows]
        F = -np.asarray(self._Y)[rows]
        gp = fit_matern52(self._scale(P), F, X_INIT, max_evals=self.max_fit_evals)
        X, U = self._candidates()
        mu, var = gp.predict(U, include_noise=self.ei_noise)
        best = float(np.min(F + self._x_quadratic(P)))
        return self._pick(X, expected_improvement(best, self._x_quadratic(X) + mu, var))

    def _ask_z(self, j: int) -> int | np.ndarray:
        rows = np.asarray(self._z_rows[j])
        P = np.asarray(self._P)[rows]
        c = np.asarray(self._C)[rows, j]
        gp = fit_matern52(self._scale(P), c, Z_INIT, max_evals=self.max_fit_evals)
        X, U = self._candidates()
        mu, var = gp.predict(U, include_noise=self.ei_noise)
        h_plus = float(np.min((c > 0).astype(float) + self._z_quadratic(j, P)))
        Q = h_plus - self._z_quadratic(j, X)
        return self._pick(X, z_step_ei(Q, prob_feasible(mu, var)))

    # ------------------------------------------------------------------------------ reporting
    def internals(self) -> dict[str, float]:
        return {
            "stopped": float(self.phase == "done"),
            "sample": float(self._last_step != "done"),
            "admm_iteration": float(self._last_iteration),
            "rho": float(self.rho),
            "step": float(_STEP_CODE[self._last_step]),
            "constraint": float(self._last_j),
            "r_norm": self._r_mean,
            "s_norm": self._s_mean,
        }

    def _state(self) -> dict[str, Any]:
        d = self.info.domain.d
        return {
            "rho": self.rho,
            "iteration": self.iteration,
            "phase": self.phase,
            "j": self._j,
            "remaining": self._remaining,
            "z": self.z.copy(),
            "z_old": self.z_old.copy(),
            "duals": self.duals.copy(),
            "x_star": self.x_star.copy(),
            "converged": self._converged.astype(np.int64),
            "P": np.asarray(self._P, dtype=float).reshape(-1, d),
            "I": np.asarray(self._I, dtype=np.int64),
            "Y": np.asarray(self._Y, dtype=float),
            "C": np.asarray(self._C, dtype=float).reshape(-1, self.info.m),
            "x_rows": list(self._x_rows),
            "z_rows": [list(r) for r in self._z_rows],
            "x_star_row": self._x_star_row,
            "best_row": self._best_row,
            "best_F": self._best_F,
            "pending": self._pending,
            "last_step": self._last_step,
            "last_iteration": self._last_iteration,
            "last_j": self._last_j,
            "r_mean": self._r_mean,
            "s_mean": self._s_mean,
        }

    def _load(self, state: dict[str, Any]) -> None:
        self.rho = float(state["rho"])
        self.iteration = int(state["iteration"])
        self.phase = str(state["phase"])
        self._j = int(state["j"])
        self._remaining = int(state["remaining"])
        self.z = np.array(state["z"], dtype=float)
        self.z_old = np.array(state["z_old"], dtype=float)
        self.duals = np.array(state["duals"], dtype=float)
        self.x_star = np.array(state["x_star"], dtype=float)
        self._converged = np.asarray(state["converged"]).astype(bool)
        P = np.asarray(state["P"], dtype=float)
        self._P = [row.copy() for row in P]
        self._I = [int(i) for i in np.asarray(state["I"])]
        self._Y = [float(v) for v in np.asarray(state["Y"])]
        self._C = [row.copy() for row in np.asarray(state["C"], dtype=float)]
        self._x_rows = [int(i) for i in state["x_rows"]]
        self._z_rows = [[int(i) for i in r] for r in state["z_rows"]]
        self._x_star_row = int(state["x_star_row"])
        self._best_row = int(state["best_row"])
        self._best_F = float(state["best_F"])
        self._pending = bool(state["pending"])
        self._last_step = str(state["last_step"])
        self._last_iteration = int(state["last_iteration"])
        self._last_j = int(state["last_j"])
        self._r_mean = float(state["r_mean"])
        self._s_mean = float(state["s_mean"])
