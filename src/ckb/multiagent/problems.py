r"""Multi-agent problem instances (Xu et al. (2023), eq. 2.1) and their ground truth.

.. math::

    \min_{x_i \in \mathcal X^i}\ \sum_{i=1}^N f_i(x_i) \quad \text{s.t.} \quad
    \sum_{i=1}^N g_i(x_i) \le 0 \in \mathbb R^m, \qquad \sum_{i=1}^N A_i x_i = b \in \mathbb R^l.

**Sense.** The objective is always *minimized* here (the :math:`f_i` are costs, as in the paper); a
problem whose natural quantity is a utility (power allocation: :math:`f_i = -U_i`) says so in
``utility`` and reports are given in that quantity too.

Every :math:`\mathcal X^i` is a finite grid (Xu et al. (2023), App. D: "we use pure grid search"), and
the true :math:`f_i, g_i` are tabulated on it; a :class:`MultiAgentProblem` holds those tables, the affine
data, the noise levels, the kernel the agents model with, and the **public constants** a method may use
(``hints``: the clipping bounds :math:`C_{i,j}`, the Slater margin :math:`\xi` of Assumption 5, the
:math:`\rho` of Assumption 6 / Lemma A.1 and :math:`B = \max_x \|Ax - b\|`, which the paper's theory
mode assumes known).

**Ground truth** :math:`x^*` (for regret), by :func:`grid_optimum`:

- ``"exhaustive"``: search over the joint grid :math:`\prod_i \mathcal X^i` (used when it has at most
  ``max_joint`` points);
- ``"milp"``: otherwise, the exact mixed-integer program "pick one grid point per agent" (binary
  :math:`z_{ik}`, :math:`\sum_k z_{ik} = 1`, the coupled constraints linear in :math:`z`), solved by HiGHS
  (``scipy.optimize.milp``); tested against the exhaustive search;
- ``"given"``: a factory's closed form (power allocation: water-filling over the continuous box, the
  paper's :math:`\mathcal X^i` being intervals).

Equality constraints hold on the grid to ``1e-9``. :func:`distribution_optimum` solves the relaxation
over distributions (an LP over the agents' marginals, since every function is separable): the best
feasible *distribution*, which is why the regret of a soft-constraint method can be negative; and
:func:`slater_margin` the largest :math:`\xi` of Assumption 5 (the same LP with a margin).

Registered factories (``MULTIAGENT_PROBLEMS``): ``gp-samples`` (Xu et al. (2023), Sec. 5.1),
``power-allocation`` (Sec. 5.2, eq. 5.1, with utilities of our choice and a water-filling answer),
``counterexample`` (App. B, Table 1).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from ckb._validation import (
    as_real_array,
    check_bool,
    check_finite_array,
    check_noise_scale,
    check_params,
    check_scalar,
    did_you_mean,
    short_repr,
)
from ckb.errors import InvalidInputError, NotPositiveDefiniteError
from ckb.registry import Registry

MULTIAGENT_PROBLEMS: Registry = Registry("multi-agent problem")
_EQ_TOL = 1e-9


class MultiAgentProblem:
    """Tables of one instance of (2.1); see the module docstring.

    Parameters
    ----------
    grids:
        ``N`` arrays ``(G_i, n_i)``.
    f, g:
        ``N`` arrays ``(G_i,)`` and ``(G_i, m)`` of true values.
    A, b:
        ``N`` arrays ``(l, n_i)`` and ``(l,)``; ``None`` for no affine constraint (``l = 0``).
    noise_std, constraint_noise_std:
        Standard deviations of the Gaussian reading noise of ``f_i`` and of each ``g_{i,j}``.
    kernel, gp_noise:
        The kernel spec the agents' GPs use and the GP noise parameter λ.
    optimum:
        ``None`` (computed on demand by :func:`grid_optimum`) or a dict ``{"f_star", "method", ...}``.
    hints:
        Public constants (``C`` as an ``(N, m+1)`` list, ``xi``, ``rho``, ``B``); ``C`` defaults to the
        largest absolute table values, ``B`` to :func:`affine_range`.
    utility:
        ``None`` or a description of the utility ``-f`` the problem's own literature reports.
    """

    def __init__(
        self,
        name: str,
        grids: list,
        f: list,
        g: list | None = None,
        A: list | None = None,
        b: Any = None,
        *,
        noise_std: float = 0.0,
        constraint_noise_std: float | None = None,
        kernel: dict | None = None,
        gp_noise: float = 0.02**2,
        optimum: dict | None = None,
        hints: dict | None = None,
        metadata: dict | None = None,
        utility: str | None = None,
    ) -> None:
        self.name = name
        self.grids = _grids(grids)
        self.f, self.g = _value_tables(f, g, self.grids)
        self.m = self.g[0].shape[1]
        self.A, self.b = _affine_blocks(A, b, self.grids)
        self.l = self.b.shape[0]
        self.noise_std = check_noise_scale(noise_std, "noise_std")
        self.constraint_noise_std = check_noise_scale(
            self.noise_std if constraint_noise_std is None else constraint_noise_std,
            "constraint_noise_std",
        )
        self.kernel = _kernel_spec(kernel)
        self.gp_noise = check_gp_noise(gp_noise, self.kernel)
        if metadata is not None and not isinstance(metadata, dict):
            raise InvalidInputError(
                f"metadata must be a dict of JSON-friendly facts, got {short_repr(metadata, 60)} "
                f"({type(metadata).__name__})."
            )
        self.metadata = dict(metadata or {})
        self.utility = utility
        self.hints = _hints(hints, len(self.grids), self.m)
        if "C" not in self.hints:  # the clipping bounds: the largest absolute table values
            self.hints["C"] = [
                [float(np.max(np.abs(fi)))] + [float(np.max(np.abs(gi[:, j]))) for j in range(self.m)]
                for fi, gi in zip(self.f, self.g)
            ]
        if "B" not in self.hints:
            self.hints["B"] = affine_range(self)
        self._optimum = _given_optimum(optimum)

    # ----------------------------------------------------------------- sizes
    @property
    def n_agents(self) -> int:
        return len(self.grids)

    @property
    def sizes(self) -> list[int]:
        return [X.shape[0] for X in self.grids]

    @property
    def ax_tables(self) -> list[np.ndarray]:
        """``(G_i, l)`` values of ``A_i x`` on each grid."""
        return [X @ Ai.T for X, Ai in zip(self.grids, self.A)]

    # ----------------------------------------------------------- ground truth
    @property
    def optimum(self) -> dict[str, Any]:
        if self._optimum is None:
            self._optimum = grid_optimum(self)
        return self._optimum

    @property
    def f_star(self) -> float:
        return float(self.optimum["f_star"])

    def describe(self) -> dict[str, Any]:
        """JSON-friendly facts of the instance (recorded in traces and summary.json)."""
        opt = {k: v for k, v in self.optimum.items() if k != "indices"}
        return {
            "name": self.name,
            "n_agents": self.n_agents,
            "m": self.m,
            "l": self.l,
            "grid_sizes": self.sizes,
            "noise_std": self.noise_std,
            "constraint_noise_std": self.constraint_noise_std,
            "kernel": self.kernel,
            "gp_noise": self.gp_noise,
            "b": self.b.tolist(),
            "optimum": opt,
            "hints": self.hints,
            "utility": self.utility,
            **self.metadata,
        }


def _grids(grids: list) -> list[np.ndarray]:
    """Each agent's grid as a finite ``(G_i, n_i)`` array (a 1-D grid is one column)."""
    if not grids:
        raise InvalidInputError("a multi-agent problem needs at least one agent.")
    out = []
    for i, X in enumerate(grids):
        X = check_finite_array(X, f"grid of agent {i}")
        X = X[:, None] if X.ndim == 1 else X
        if X.ndim != 2 or X.shape[0] == 0:
            raise InvalidInputError(
                f"grid of agent {i} must be a (G_i, n_i) array of at least one point (a 1-D grid is one "
                f"column), got shape {X.shape}."
            )
        out.append(X)
    return out


def _kernel_spec(kernel: Any) -> dict | None:
    """``kernel`` as a dict the agents' GPs can build (checked now by building it once), or ``None``."""
    if kernel is None:
        return None
    if not isinstance(kernel, dict):
        raise InvalidInputError(
            f"kernel must be a dict such as {{'type': 'se', 'lengthscale': 0.2}}, got {kernel!r} "
            f"({type(kernel).__name__})."
        )
    from ckb.errors import SpecError
    from ckb.kernels import make_kernel

    try:
        make_kernel(dict(kernel))
    except (SpecError, InvalidInputError) as exc:
        raise InvalidInputError(f"kernel {kernel!r} is not a valid kernel spec: {exc}") from None
    return dict(kernel)


#: the public constants ``hints`` may hold (module docstring); ``xi`` and ``rho`` may be ``None`` (unknown)
HINT_KEYS = ("C", "xi", "rho", "B")


def _hints(hints: Any, N: int, m: int) -> dict[str, Any]:
    """The public constants, checked: ``C`` (:func:`_clipping_bounds`), the Slater margin ``xi > 0``
    (Assumption 5) and ``rho > 0`` (Lemma A.1), both finite or ``None``, and ``B >= 0`` finite (a norm);
    any other key is refused (a misspelt constant would silently be absent)."""
    if hints is None:
        return {}
    if not isinstance(hints, dict):
        raise InvalidInputError(
            f"hints must be a dict of public constants (C, xi, rho, B), got {short_repr(hints, 60)} "
            f"({type(hints).__name__})."
        )
    out = dict(hints)
    for key in out:
        if key not in HINT_KEYS:
            raise InvalidInputError(
                f"hints has no constant {key!r} (C, xi, rho, B).{did_you_mean(str(key), HINT_KEYS)}"
            )
    if "C" in out:
        out["C"] = _clipping_bounds(out["C"], N, m)
    for key, what in (("xi", "the Slater margin of Assumption 5"), ("rho", "the rho of Lemma A.1")):
        if out.get(key) is not None:
            out[key] = check_scalar(out[key], f"hints[{key!r}] ({what})", low=0.0, low_inclusive=False)
    if "B" in out:
        out["B"] = check_scalar(out["B"], "hints['B'] (max_x ||Ax - b||)", low=0.0)
    return out


def check_gp_noise(gp_noise: Any, kernel: dict | None, name: str = "gp_noise (lambda)") -> float:
    """``gp_noise`` > 0 and at least the agents' GPs' floor (:data:`ckb.surrogates.gp.MIN_NOISE` times the
    kernel's prior variance), so that a value the GPs would refuse is refused here, under its own name."""
    from ckb.kernels import make_kernel
    from ckb.surrogates.gp import MIN_NOISE, kernel_scale

    noise = check_scalar(gp_noise, name, low=0.0, low_inclusive=False)
    if kernel is None:
        return noise
    scale = kernel_scale(make_kernel(dict(kernel)))
    if noise < MIN_NOISE * scale:
        raise InvalidInputError(
            f"{name} must be >= {MIN_NOISE:g} times the kernel's prior variance ({scale:g}), i.e. >= "
            f"{MIN_NOISE * scale:g} (below it the agents' GP updates lose every digit), got {noise!r}."
        )
    return noise


def _given_optimum(optimum: Any) -> dict | None:
    """A factory's known optimum: ``None`` or a dict with a finite ``f_star``."""
    if optimum is None:
        return None
    if not isinstance(optimum, dict) or "f_star" not in optimum:
        raise InvalidInputError(
            f"optimum must be None or a dict with a finite 'f_star' (and e.g. 'method'), got "
            f"{short_repr(optimum, 60)}."
        )
    opt = dict(optimum)
    opt["f_star"] = check_scalar(opt["f_star"], "optimum['f_star']")
    return opt


def _clipping_bounds(C: Any, N: int, m: int) -> list[list[float]]:
    """The clipping bounds ``hints["C"]``: finite, ``>= 0``, one row per agent and one column per function
    (objective, then the ``m`` constraints)."""
    arr = check_finite_array(C, "hints['C']", ndim=2)
    if arr.shape != (N, m + 1):
        raise InvalidInputError(f"hints['C'] must have shape (N, m + 1) = ({N}, {m + 1}), got {arr.shape}.")
    if np.any(arr < 0):
        raise InvalidInputError(f"hints['C'] (clipping bounds) must be >= 0, got {arr.tolist()}.")
    return arr.tolist()


def _value_tables(f: list, g: list | None, grids: list[np.ndarray]) -> tuple[list, list]:
    """The true values per agent: ``f_i`` (G_i,) and ``g_i`` (G_i, m), the same m for every agent."""
    N = len(grids)
    if len(f) != N:
        raise InvalidInputError(f"f must have one table per agent ({N}), got {len(f)}.")
    f = [
        check_finite_array(fi, f"f of agent {i}", shape=(X.shape[0],))
        for i, (fi, X) in enumerate(zip(f, grids))
    ]
    if g is None:
        g = [np.zeros((X.shape[0], 0)) for X in grids]
    if len(g) != N:
        raise InvalidInputError(f"g must have one table per agent ({N}), got {len(g)}.")
    tables = []
    for i, (gi, X) in enumerate(zip(g, grids)):
        gi = as_real_array(gi, f"g of agent {i}")
        if gi.size and (gi.ndim > 2 or gi.shape[0] != X.shape[0]):
            raise InvalidInputError(
                f"g of agent {i} must have {X.shape[0]} rows (one per grid point) and one column per "
                f"constraint, got shape {gi.shape}."
            )
        gi = gi.reshape(X.shape[0], -1) if gi.size else np.zeros((X.shape[0], 0))
        tables.append(check_finite_array(gi, f"g of agent {i}", ndim=2))
    ms = {gi.shape[1] for gi in tables}
    if len(ms) != 1:
        raise InvalidInputError(f"every agent must have the same number m of constraints, got {sorted(ms)}.")
    return f, tables


def _affine_blocks(A: list | None, b: Any, grids: list[np.ndarray]) -> tuple[list, np.ndarray]:
    """The coupling ``sum_i A_i x_i = b``: blocks ``A_i`` (l, n_i) and ``b`` (l,); ``l = 0`` without A."""
    if A is None:
        if b is not None and np.size(b):
            raise InvalidInputError(
                f"b was given without A: the coupling sum_i A_i x_i = b needs both (b = {short_repr(b, 60)})."
            )
        return [np.zeros((0, X.shape[1])) for X in grids], np.zeros(0)
    if b is None:
        raise InvalidInputError("A was given without b: the coupling sum_i A_i x_i = b needs both.")
    if len(A) != len(grids):
        raise InvalidInputError(f"A must have one block per agent ({len(grids)}), got {len(A)}.")
    A = [check_finite_array(Ai, f"A_{i}", ndim=2) for i, Ai in enumerate(A)]
    b = check_finite_array(b, "b", ndim=1)
    for i, (Ai, X) in enumerate(zip(A, grids)):
        if Ai.shape != (b.shape[0], X.shape[1]):
            raise InvalidInputError(
                f"A_{i} must have shape (l, n_i) = ({b.shape[0]}, {X.shape[1]}), got {Ai.shape}."
            )
    return A, b


# --------------------------------------------------------------------------------- solvers
def affine_range(problem: MultiAgentProblem) -> float:
    r""":math:`B = \max_x \|Ax - b\|` over the joint grid (exact for ``l = 1``; for ``l > 1`` the upper bound
    :math:`\|(\max_x |(Ax - b)_r|)_r\|`)."""
    if problem.l == 0:
        return 0.0
    lo = sum(t.min(axis=0) for t in problem.ax_tables) - problem.b
    hi = sum(t.max(axis=0) for t in problem.ax_tables) - problem.b
    return float(np.linalg.norm(np.maximum(np.abs(lo), np.abs(hi))))


def _joint(tables: list[np.ndarray]) -> np.ndarray:
    """Sum over agents on the joint grid: ``(prod G_i, k)`` from ``N`` tables ``(G_i, k)`` (C order)."""
    out = tables[0]
    for t in tables[1:]:
        out = (out[:, None, :] + t[None, :, :]).reshape(-1, t.shape[1])
    return out


def joint_size(problem: MultiAgentProblem) -> int:
    return int(np.prod([float(s) for s in problem.sizes]))


def grid_optimum(
    problem: MultiAgentProblem, method: str = "auto", max_joint: int = 4_000_000
) -> dict[str, Any]:
    """The best feasible joint grid point: ``{"f_star", "indices", "method", ...}`` (module docstring)."""
    if method == "auto":
        method = "exhaustive" if joint_size(problem) <= max_joint else "milp"
    if method == "exhaustive":
        return _exhaustive(problem)
    if method == "milp":
        return _milp(problem, max_joint)
    raise InvalidInputError(f"optimum method must be 'auto', 'exhaustive' or 'milp', got {method!r}.")


def _exhaustive(problem: MultiAgentProblem) -> dict[str, Any]:
    F = _joint([fi[:, None] for fi in problem.f])[:, 0]
    feas = np.ones(F.shape[0], dtype=bool)
    if problem.m:
        Gs = _joint(problem.g)
        feas &= np.all(Gs <= 0.0, axis=1)
    if problem.l:
        AX = _joint(problem.ax_tables) - problem.b
        feas &= np.all(np.abs(AX) <= _eq_tol(problem), axis=1)
    if not feas.any():
        raise InvalidInputError(f"problem {problem.name!r} has no feasible point on the joint grid.")
    Ff = np.where(feas, F, np.inf)
    k = int(np.argmin(Ff))
    f_star = float(F[k])
    idx = [int(v) for v in np.unravel_index(k, problem.sizes)]
    out: dict[str, Any] = {"f_star": f_star, "indices": idx, "method": "exhaustive"}
    out["x_star"] = [problem.grids[i][j].tolist() for i, j in enumerate(idx)]
    k_free = int(np.argmin(F))
    out["unconstrained_f"] = float(F[k_free])
    out["active"] = bool(not feas[k_free])  # the unconstrained minimizer violates a constraint
    if problem.m and problem.l == 0:
        infeasible = np.any(Gs > 0.0, axis=1)
        # Condition 2 of Theorem 4.2: zeta = min over infeasible points of f - f* (> 0: it holds)
        out["zeta"] = float(F[infeasible].min() - f_star) if infeasible.any() else None
    return out


def _eq_tol(problem: MultiAgentProblem) -> float:
    """How far ``sum_i A_i x_i`` may be from ``b`` on the grid: ``1e-9`` relative to ``max(1, |b|)``."""
    return _EQ_TOL * max(1.0, float(np.abs(problem.b).max()))


def is_feasible(problem: MultiAgentProblem, indices: list[int]) -> bool:
    """Whether the joint grid point ``indices`` meets the constraints: the exhaustive search's exact test
    (``sum_i g_i <= 0`` with no tolerance, the equalities to :func:`_eq_tol`), summed in its order."""
    if problem.m:
        gs = _joint([gi[[k]] for gi, k in zip(problem.g, indices)])[0]
        if not np.all(gs <= 0.0):
            return False
    if problem.l:
        ax = _joint([t[[k]] for t, k in zip(problem.ax_tables, indices)])[0] - problem.b
        if not np.all(np.abs(ax) <= _eq_tol(problem)):
            return False
    return True


def _milp(problem: MultiAgentProblem, max_joint: int = 4_000_000) -> dict[str, Any]:
    """The MILP's optimum, re-checked with :func:`is_feasible` (HiGHS accepts constraint violations within
    its tolerance): a point failing it falls back to the exhaustive search when the joint grid has at most
    ``max_joint`` points, and is an error otherwise (never an infeasible optimum)."""
    from scipy.optimize import Bounds, milp

    c, cons = _assignment_lp(problem)
    res = milp(c, constraints=cons, integrality=np.ones_like(c), bounds=Bounds(0.0, 1.0))
    if res.status != 0:
        raise InvalidInputError(
            f"problem {problem.name!r}: the MILP found no feasible joint grid point ({res.message})."
        )
    z = np.round(res.x).astype(int)
    offs = np.cumsum([0, *problem.sizes])
    idx = [int(np.argmax(z[offs[i] : offs[i + 1]])) for i in range(problem.n_agents)]
    if not is_feasible(problem, idx):
        if joint_size(problem) <= max_joint:
            return _exhaustive(problem)
        raise InvalidInputError(
            f"problem {problem.name!r}: the MILP's joint grid point {idx} violates the constraints beyond "
            f"the exact test (within the solver's tolerance only), and the joint grid of "
            f"{joint_size(problem):.3g} points is too large to search exhaustively (max_joint = {max_joint})."
        )
    f_star = float(sum(fi[k] for fi, k in zip(problem.f, idx)))
    return {
        "f_star": f_star,
        "indices": idx,
        "method": "milp",
        "x_star": [problem.grids[i][j].tolist() for i, j in enumerate(idx)],
    }


def _assignment_lp(problem: MultiAgentProblem, margin: bool = False):
    """Objective and constraints over ``z_{ik}`` (one block per agent): one-hot rows, coupled rows."""
    from scipy.optimize import LinearConstraint

    sizes = problem.sizes
    n = sum(sizes) + (1 if margin else 0)
    c = np.concatenate(problem.f + ([np.zeros(1)] if margin else []))
    rows = []
    onehot = np.zeros((problem.n_agents, n))
    offs = np.cumsum([0, *sizes])
    for i in range(problem.n_agents):
        onehot[i, offs[i] : offs[i + 1]] = 1.0
    rows.append(LinearConstraint(onehot, 1.0, 1.0))
    if problem.m:
        Gm = np.concatenate(problem.g, axis=0).T  # (m, sum G)
        if margin:
            Gm = np.hstack([Gm, np.ones((problem.m, 1))])  # sum g + s <= 0
        rows.append(LinearConstraint(Gm, -np.inf, 0.0))
    if problem.l:
        Am = np.concatenate(problem.ax_tables, axis=0).T  # (l, sum G)
        if margin:
            Am = np.hstack([Am, np.zeros((problem.l, 1))])
        rows.append(LinearConstraint(Am, problem.b, problem.b))
    return c, rows


def distribution_optimum(problem: MultiAgentProblem) -> float | None:
    """:math:`\\min_\\pi E_\\pi f` s.t. :math:`E_\\pi g \\le 0`, :math:`E_\\pi Ax = b` (LP over the marginals)."""
    from scipy.optimize import Bounds, milp

    c, cons = _assignment_lp(problem)
    res = milp(c, constraints=cons, integrality=np.zeros_like(c), bounds=Bounds(0.0, 1.0))
    return float(res.fun) if res.status == 0 else None


def slater_margin(problem: MultiAgentProblem) -> float | None:
    r"""The largest :math:`\xi` with :math:`E_\pi g \le -\xi e`, :math:`E_\pi Ax = b` for some distribution
    (Assumption 5); ``None`` when ``m = 0`` (no black-box constraint)."""
    from scipy.optimize import Bounds, milp

    if problem.m == 0:
        return None
    c, cons = _assignment_lp(problem, margin=True)
    c = np.zeros_like(c)
    c[-1] = -1.0  # maximize s
    lb = np.zeros_like(c)
    ub = np.ones_like(c)
    lb[-1], ub[-1] = -np.inf, np.inf
    res = milp(c, constraints=cons, integrality=np.zeros_like(c), bounds=Bounds(lb, ub))
    return float(-res.fun) if res.status == 0 else None


def water_filling(gains: np.ndarray, budget: float, p_max: float) -> tuple[np.ndarray, float]:
    r"""Maximize :math:`\sum_i \log(1 + a_i p_i)` s.t. :math:`\sum_i p_i = P`, :math:`0 \le p_i \le p_{\max}`.

    KKT: :math:`p_i = \min\{p_{\max}, [w - 1/a_i]^+\}` with the water level ``w`` set by bisection so that
    the budget is spent exactly. Returns ``(p*, w)``.
    """
    a = check_finite_array(gains, "gains", ndim=1)
    if a.size == 0 or np.any(a <= 0):
        raise InvalidInputError(f"gains must be > 0 (at least one), got {short_repr(a.tolist())}.")
    p_max = check_scalar(p_max, "p_max", low=0.0)
    budget = check_scalar(budget, "budget P")
    if budget < 0 or budget > p_max * a.shape[0]:
        raise InvalidInputError(
            f"budget P must be in [0, N p_max] = [0, {p_max * a.shape[0]}], got {budget}."
        )
    lo, hi = 0.0, p_max + float(np.max(1.0 / a))
    for _ in range(200):
        w = 0.5 * (lo + hi)
        if np.clip(w - 1.0 / a, 0.0, p_max).sum() > budget:
            hi = w
        else:
            lo = w
    w = 0.5 * (lo + hi)
    return np.clip(w - 1.0 / a, 0.0, p_max), w


def make_multiagent_problem(name: str, rng: np.random.Generator, **params: Any) -> MultiAgentProblem:
    """Build a registered multi-agent problem; unknown parameters get an error naming the closest."""
    factory = MULTIAGENT_PROBLEMS.get(name)
    if not isinstance(rng, np.random.Generator):
        raise InvalidInputError(
            f"rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(0)), got "
            f"{short_repr(rng, 60)} ({type(rng).__name__})."
        )
    check_params(factory, params, f"multi-agent problem {name!r}", skip=("rng",))
    problem = factory(rng, **params)
    if not isinstance(problem, MultiAgentProblem):
        raise InvalidInputError(
            f"the factory of multi-agent problem {name!r} returned {short_repr(problem, 60)} "
            f"({type(problem).__name__}), not a MultiAgentProblem."
        )
    return problem


# ------------------------------------------------------------------------------- factories
#: The largest ``grid_size`` of ``gp-samples``. Sampling factorizes the dense ``G x G`` kernel matrix:
#: at 5000 points that is 200 MB (a few such temporaries at the peak, under 1 GB) and a Cholesky of a
#: second or so; 10^6 points would need 7.3 TiB. The paper's experiment uses 100 points.
MAX_GP_SAMPLES_GRID = 5000
#: The largest number ``n_agents (m + 1) grid_size`` of values ``gp-samples`` draws per instance (8 bytes
#: each: 400 MB); beyond it the draws alone would exhaust memory (the specs draw 3 * 3 * 100).
MAX_GP_SAMPLES_VALUES = 50_000_000


def _check_gp_samples_size(N: int, m: int, G: int) -> None:
    """Refuse a ``gp-samples`` grid or table too large to draw (:data:`MAX_GP_SAMPLES_GRID`,
    :data:`MAX_GP_SAMPLES_VALUES`)."""
    if G > MAX_GP_SAMPLES_GRID:
        raise InvalidInputError(
            f"grid_size must be <= {MAX_GP_SAMPLES_GRID} (the {G} x {G} kernel matrix of the GP draws would "
            f"need {8 * G * G / 2**30:.3g} GiB), got {G}."
        )
    if N * (m + 1) * G > MAX_GP_SAMPLES_VALUES:
        raise InvalidInputError(
            f"gp-samples would tabulate n_agents (m + 1) grid_size = {N} * {m + 1} * {G} = {N * (m + 1) * G} "
            f"values (n_agents = {N}, m = {m}, grid_size = {G}); at most {MAX_GP_SAMPLES_VALUES} are allowed."
        )


def _check_require_active(require_active: Any, m: int) -> bool:
    """``require_active`` as a boolean; ``True`` with ``m = 0`` (no constraint to be active) is refused."""
    require_active = check_bool(require_active, "require_active")
    if require_active and m == 0:
        raise InvalidInputError(
            "require_active = True needs a black-box constraint (m >= 1); with m = 0 it would have no "
            "effect: drop it or set m >= 1."
        )
    return require_active


def _se_cholesky(grid: np.ndarray, ls: float, var: float, jitter: float) -> np.ndarray:
    """The Cholesky factor of the squared-exponential kernel matrix on ``grid`` plus ``jitter I`` (a
    :class:`NotPositiveDefiniteError` saying to raise ``jitter`` when it fails)."""
    G = len(grid)
    K = var * np.exp(-0.5 * ((grid - grid.T) / ls) ** 2) + jitter * np.eye(G)
    try:
        return np.linalg.cholesky(K)
    except np.linalg.LinAlgError:
        raise NotPositiveDefiniteError(
            f"the gp-samples kernel matrix (grid_size = {G}, lengthscale = {ls!r}, variance = {var!r}) is "
            f"not positive definite with jitter = {jitter!r}; raise jitter "
            f"(e.g. to {max(10 * jitter, 1e-8 * var):.1e})."
        ) from None


#: A bound on the standard scores of ``gp-samples`` draws for :func:`_check_min_slater`: a draw beyond 40
#: standard deviations has probability below 1e-300, so it never comes.
_MAX_Z = 40.0


def _check_min_slater(min_slater: Any, m: int, N: int, var: float, jitter: float) -> float:
    """``min_slater`` (a margin >= 0), refused before any draw when the variance scale cannot give it: the
    Slater margin of an instance is at most ``sum_i max |g_ij|``, and each value of ``g`` has standard
    deviation ``sqrt(variance + jitter)``, so a margin above ``N * 40 * sqrt(variance + jitter)`` never
    comes (before, 1000 draws ended in "lower min_slater")."""
    min_slater = check_scalar(min_slater, "min_slater", low=0.0)
    bound = N * _MAX_Z * math.sqrt(var + jitter)
    if m and min_slater > bound:
        raise InvalidInputError(
            f"gp-samples cannot reach min_slater = {min_slater!r} with variance = {var!r}: the Slater margin "
            f"is at most n_agents x the largest |g|, and a draw of g beyond 40 sqrt(variance + jitter) never "
            f"comes, so the margin stays below {bound:.3g} here; raise variance or lower min_slater."
        )
    return min_slater


@MULTIAGENT_PROBLEMS.register("gp-samples")
def gp_samples(
    rng: np.random.Generator,
    *,
    n_agents: int = 3,
    m: int = 2,
    grid_size: int = 100,
    lengthscale: float = 0.2,
    variance: float = 1.0,
    noise_std: float = 0.02,
    gp_noise: float = 0.02**2,
    jitter: float = 1e-8,
    min_slater: float = 0.05,
    require_active: bool = False,
    max_tries: int = 1000,
) -> MultiAgentProblem:
    r"""Xu et al. (2023), Sec. 5.1: :math:`f_i, g_{i,j}` sampled from :math:`\mathcal{GP}(0, k_{SE})` on a
    grid of ``[-1, 1]``.

    Each of the ``N (m + 1)`` functions is an independent joint draw on the agent's grid (Cholesky of
    :math:`K + \text{jitter}\,I`). Instances whose Slater margin (Assumption 5, :func:`slater_margin`)
    is below ``min_slater`` are redrawn, and with ``require_active`` also those whose unconstrained
    minimizer is feasible (constraint inactive); the number of draws is recorded. Clipping bounds
    :math:`C_{i,j}` = the largest absolute value of each table (the bound the clipping of Lemma 3.1
    needs; GP draws have no finite RKHS norm to use instead).

    Every parameter is checked before any work: ``grid_size`` at most :data:`MAX_GP_SAMPLES_GRID` (the
    dense ``G x G`` kernel matrix; see there why), ``n_agents (m + 1) grid_size`` at most
    :data:`MAX_GP_SAMPLES_VALUES`, ``jitter >= 0`` (a kernel matrix still not positive definite gets an
    error saying to raise it), ``min_slater >= 0`` (a margin, finite: NaN would turn the filter off) and
    ``max_tries >= 1`` (integers).
    """
    N = int(check_scalar(n_agents, "n_agents", low=1, integer=True))
    m = int(check_scalar(m, "m", low=0, integer=True))
    G = int(check_scalar(grid_size, "grid_size", low=2, integer=True))
    _check_gp_samples_size(N, m, G)
    ls = check_scalar(lengthscale, "lengthscale", low=0.0, low_inclusive=False)
    var = check_scalar(variance, "variance", low=0.0, low_inclusive=False)
    jitter = check_scalar(jitter, "jitter", low=0.0)
    min_slater = _check_min_slater(min_slater, m, N, var, jitter)
    max_tries = int(check_scalar(max_tries, "max_tries", low=1, integer=True))
    check_noise_scale(noise_std, "noise_std")
    check_gp_noise(gp_noise, {"type": "se", "lengthscale": ls, "variance": var})
    require_active = _check_require_active(require_active, m)
    grid = np.linspace(-1.0, 1.0, G)[:, None]
    L = _se_cholesky(grid, ls, var, jitter)
    kernel = {"type": "se", "lengthscale": ls, "variance": var}
    for tries in range(1, max_tries + 1):
        draws = L @ rng.standard_normal((G, N * (m + 1)))
        f = [draws[:, i * (m + 1)] for i in range(N)]
        g = [draws[:, i * (m + 1) + 1 : (i + 1) * (m + 1)] for i in range(N)]
        prob = MultiAgentProblem(
            "gp-samples",
            [grid] * N,
            f,
            g,
            noise_std=noise_std,
            kernel=kernel,
            gp_noise=gp_noise,
        )
        xi = slater_margin(prob)
        if m and (xi is None or xi < min_slater):
            continue
        try:  # the margin is over mixtures of points: positive with no single joint point feasible
            _ = prob.optimum
        except InvalidInputError:
            continue
        if require_active and m and not prob.optimum["active"]:
            continue
        prob.hints["xi"] = xi
        prob.metadata.update(
            draws=tries,
            slater_margin=xi,
            f_star_distribution=distribution_optimum(prob),
            choices="grid, lengthscale, noise, instance filter: ours (Xu et al. (2023) give none)",
        )
        return prob
    raise InvalidInputError(
        f"no gp-samples instance with Slater margin >= {min_slater}{' and an active constraint' if require_active else ''} "
        f"in {max_tries} draws; lower min_slater."
    )


#: The largest ``n_agents grid_size`` of ``power-allocation``: each agent holds tables of ``grid_size``
#: values (its costs, its affine image, its GP's posterior on the grid), 8 bytes each; at 10^7 values one
#: such array is 80 MB and a few of them stay well under 1 GB. The shipped specs use at most 5 * 1001.
MAX_POWER_ALLOCATION_VALUES = 10_000_000


def _check_power_grid(N: int, G: int, frac: float) -> None:
    """Refuse a ``power-allocation`` too large to tabulate, or whose grid does not contain ``P/N``."""
    if N * G > MAX_POWER_ALLOCATION_VALUES:
        raise InvalidInputError(
            f"power-allocation would tabulate n_agents grid_size = {N} * {G} = {N * G} values "
            f"(n_agents = {N}, grid_size = {G}); at most {MAX_POWER_ALLOCATION_VALUES} are allowed."
        )
    steps = frac * (G - 1)  # P/N in grid steps of p_max / (grid_size - 1)
    if abs(steps - round(steps)) <= 1e-9 * steps and round(steps) >= 1:
        return
    near = sorted({j for j in (math.floor(steps), math.ceil(steps)) if 1 <= j <= G - 2})
    fix = [f"budget_fraction = {' or '.join(f'{j / (G - 1):.6g}' for j in near)}"] if near else []
    ratio = Fraction(frac).limit_denominator(10_000)
    if abs(float(ratio) - frac) <= 1e-12:
        size = ratio.denominator * max(1, round((G - 1) / ratio.denominator)) + 1
        fix.append(f"grid_size = {size}")
    raise InvalidInputError(
        f"power-allocation: the grid of grid_size = {G} points on [0, p_max] does not contain P/N = "
        f"budget_fraction p_max (budget_fraction = {frac!r}: budget_fraction (grid_size - 1) = {steps:.6g} "
        f"must be an integer >= 1); use {' or '.join(fix) or 'a budget_fraction of k / (grid_size - 1)'}."
    )


@MULTIAGENT_PROBLEMS.register("power-allocation")
def power_allocation(
    rng: np.random.Generator,
    *,
    n_agents: int = 5,
    p_max: float = 2.0,
    budget_fraction: float = 0.4,
    gain_low: float = 0.2,
    gain_high: float = 5.0,
    grid_size: int = 101,
    noise_std: float = 0.02,
    lengthscale: float = 0.5,
    variance: float = 1.0,
    gp_noise: float = 0.02**2,
) -> MultiAgentProblem:
    r"""Xu et al. (2023), Sec. 5.2, eq. 5.1: :math:`\max \sum_i U_i(p_i)` s.t. :math:`\sum_i p_i = P`,
    :math:`p_i \in [0, p_{\max}]`.

    The paper gives neither the utilities, ``N``, ``P``, the bounds nor ``T``; **our choice** is the
    parallel Gaussian channel rate :math:`U_i(p) = \ln(1 + a_i p)` with gain-to-noise ratios
    :math:`a_i = h_i / n_i` log-uniform on ``[gain_low, gain_high]`` (drawn per instance), budget
    :math:`P = \text{budget\_fraction} \cdot N p_{\max}`, a grid of ``grid_size`` points on
    :math:`[0, p_{\max}]` containing :math:`P/N` (``budget_fraction (grid_size - 1)`` must be an integer,
    else an error names the nearest values that work: otherwise no joint grid allocation would spend
    :math:`P` exactly, or only uneven ones would). ``n_agents grid_size`` is at most
    :data:`MAX_POWER_ALLOCATION_VALUES`. Costs :math:`f_i = -U_i`; :math:`A_i = 1`, :math:`b = P`,
    ``m = 0``. The optimum over the continuous box is water-filling (:func:`water_filling`, closed form
    up to the water level), the known answer regret is measured against. :math:`\rho` of Lemma A.1:
    the ball around :math:`\tilde x = (P/N) e` inside the box, :math:`\tilde\rho = \min(P/N, p_{\max} - P/N)`,
    and :math:`\|A_l^{-1}\|_{\infty,2} = 1`.
    """
    N = int(check_scalar(n_agents, "n_agents", low=1, integer=True))
    p_max = check_scalar(p_max, "p_max", low=0.0, low_inclusive=False)
    frac = check_scalar(
        budget_fraction, "budget_fraction", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False
    )
    lo = check_scalar(gain_low, "gain_low", low=0.0, low_inclusive=False)
    hi = check_scalar(gain_high, "gain_high", low=lo)
    G = int(check_scalar(grid_size, "grid_size", low=2, integer=True))
    _check_power_grid(N, G, frac)
    a = np.exp(rng.uniform(math.log(lo), math.log(hi), size=N))
    P = frac * N * p_max
    grid = np.linspace(0.0, p_max, G)[:, None]
    f = [-np.log1p(ai * grid[:, 0]) for ai in a]
    p_star, level = water_filling(a, P, p_max)
    f_star = float(-np.log1p(a * p_star).sum())
    share = P / N
    prob = MultiAgentProblem(
        "power-allocation",
        [grid] * N,
        f,
        None,
        A=[np.ones((1, 1))] * N,
        b=np.array([P]),
        noise_std=noise_std,
        kernel={"type": "se", "lengthscale": lengthscale, "variance": variance},
        gp_noise=gp_noise,
        optimum={
            "f_star": f_star,
            "x_star": p_star.tolist(),
            "method": "given (water-filling)",
            "water_level": level,
        },
        hints={"rho": float(min(share, p_max - share))},
        metadata={"gains": a.tolist(), "budget": P, "p_max": p_max},
        utility="sum_i ln(1 + a_i p_i) (rate, nats)",
    )
    return prob


@MULTIAGENT_PROBLEMS.register("counterexample")
def counterexample(rng: np.random.Generator) -> MultiAgentProblem:
    """Xu et al. (2023), App. B, Table 1: one agent, X = {-1, 0, 1}, f = (1, 0.5, -1), g = (-1, 0, 2),
    no noise.

    The constrained optimum is x = 0 (f = 0.5). Run it with the ``oracle`` model (the values known
    exactly, as the appendix assumes). ``rng`` is unused.
    """
    grid = np.array([[-1.0], [0.0], [1.0]])
    return MultiAgentProblem(
        "counterexample",
        [grid],
        [np.array([1.0, 0.5, -1.0])],
        [np.array([[-1.0], [0.0], [2.0]])],
        noise_std=0.0,
        hints={"C": [[1.0, 2.0]]},
        metadata={"table": "Xu et al. (2023), App. B, Table 1"},
    )
