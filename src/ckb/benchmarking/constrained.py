r"""Constrained benchmark: ``ckb.Optimizer``'s policies vs BoTorch's qLogNEI vs Sobol search.

Every (method, problem, seed) is one *run*: ``budget`` sequential evaluations (ask, evaluate, tell) of a
problem of :data:`~ckb.problems.constrained_benchmarks.CONSTRAINED_BENCHMARKS`, starting with the shared
Sobol design of ``n_init`` points (default :math:`2d + 2`; the same points for every method at a given
seed). Methods: every policy of :data:`ckb.optimizer.OPTIMIZER_POLICIES` (run through
:class:`ckb.Optimizer` with its defaults), ``qlognei`` and ``sobol`` (:mod:`ckb.benchmarking.baselines`).
The problems are evaluated exactly unless their ``noise_std`` is set; metrics use the true values.

Metrics of a run, with utility :math:`u = f` (maximized problems) or :math:`u = -f` (minimized), true
values :math:`f(x_t), g(x_t)`, :math:`t = 1..T`:

- best feasible value :math:`b_t = \max\{u(x_s) : s \le t,\ g_j(x_s) \le 0\ \forall j\}` (in the problem's
  own sense in reports; undefined before the first feasible evaluation);
- final gap :math:`(u^* - b_T) / \text{scale}`, the scale being :math:`|f^*|` or the objective's range on the
  box when :math:`f^*` is near zero (stated per problem, see
  :class:`~ckb.problems.constrained_benchmarks.ConstrainedBenchmark`); :math:`+\infty` when no evaluation
  was feasible. A run *solves* the problem when the gap is below ``GAP_TOLERANCE`` (2%);
- scaled cumulative positive violation :math:`\bigl\|\bigl(\sum_t [g_j(x_t)]^+ / s_j\bigr)_j\bigr\|_2`
  with :math:`s_j` the constraint's stated typical magnitude (the norm over constraints outside the sums,
  a plain sum for :math:`m = 1`: :mod:`ckb.violation`, the vocabulary every report shares);
- scaled cumulative (soft) violation :math:`\bigl\|\bigl[(\sum_t g_j(x_t) / s_j)_j\bigr]^+\bigr\|_2`,
  the violation of the time-averaged constraint that the primal-dual policies bound (strictly feasible
  evaluations offset violating ones);
- violating evaluations :math:`\#\{t : \max_j g_j(x_t) > 0\}`;
- seconds per iteration: the mean wall time of ``ask`` + ``tell`` over the evaluations after the design
  (the method's own cost; the test functions cost nothing), and the same in CPU time of the process (one
  torch/BLAS thread; less inflated than wall time by other load on a shared machine, but not immune to
  it: on this project's 2-core VM a pcei run alone took about half the CPU seconds of its record made
  beside another worker, so ratios between runs of different batches are approximate).

The violation metrics count every evaluation, the shared design included (the same for every method);
``*_after_init`` count the evaluations after it only.

Runs execute in parallel (:mod:`ckb.runner.executors`, one BLAS/torch thread per worker); each writes
``OUT/runs/PROBLEM/METHOD/seed-NNN.json`` atomically when it finishes, and re-running skips finished
runs (a file written with another budget, design size or method parameters stops the run, naming it).
:func:`run_benchmark` then writes ``OUT/summary.json``, ``OUT/table.md`` and ``OUT/plots/*.png``.

``OUT`` is checked as ``ckb experiment`` checks its folder, before anything runs
(:func:`check_benchmark_folder`), and written under the same lock
(:func:`ckb.framework.pipeline.folder_lock`): ``OUT/spec.json`` says it holds a benchmark's runs
(:data:`~ckb.framework.pipeline.BENCHMARK_RUNS`), so an experiment's folder (``ckb experiment``, the
``constrained-bo`` spec included: its folder holds one spec's runs, this one the runs of any methods,
problems and seeds) is refused here, and this folder there; a file of someone else's where the benchmark
writes one is never replaced.
"""

from __future__ import annotations

import json
import math
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ckb._validation import check_scalar, did_you_mean
from ckb.errors import CKBError, InvalidInputError, UnknownNameError
from ckb.framework.report import save_figure
from ckb.io import atomic_write, write_json
from ckb.problems.constrained_benchmarks import CONSTRAINED_BENCHMARKS, ConstrainedBenchmark
from ckb.problems.problem import Problem
from ckb.violation import positive_violation, soft_violation, violating_count

#: a run solves a problem when its final gap is below this
GAP_TOLERANCE = 0.02
DEFAULT_BUDGET = 60
BASELINE_METHODS = ("qlognei", "sobol")


# ------------------------------------------------------------------------------------------ metrics


def best_feasible_curve(f: np.ndarray, g: np.ndarray, minimize: bool = False) -> np.ndarray:
    """``b_t``: the best feasible objective value among evaluations ``1..t`` (NaN before the first)."""
    f = np.asarray(f, dtype=float)
    g = np.asarray(g, dtype=float).reshape(f.shape[0], -1)
    sign = -1.0 if minimize else 1.0
    u = np.where(np.all(g <= 0.0, axis=1), sign * f, -np.inf)
    best = np.maximum.accumulate(u) if u.size else u
    return np.where(np.isfinite(best), sign * best, np.nan)


def gap_curve(f: np.ndarray, g: np.ndarray, bench: ConstrainedBenchmark, minimize: bool) -> np.ndarray:
    """``(u* - b_t) / scale`` for every ``t`` (``+inf`` before the first feasible evaluation)."""
    sign = -1.0 if minimize else 1.0
    b = best_feasible_curve(f, g, minimize)
    gap = (sign * bench.f_star - sign * b) / bench.gap_scale
    return np.where(np.isnan(b), np.inf, gap)


def final_gap(f: np.ndarray, g: np.ndarray, bench: ConstrainedBenchmark, minimize: bool) -> float:
    """The gap after the last evaluation (``inf`` if none was feasible)."""
    curve = gap_curve(f, g, bench, minimize)
    return float(curve[-1]) if curve.size else math.inf


def scaled_positive_violation(g: np.ndarray, scale: Sequence[float]) -> float:
    r""":math:`\|(\sum_t [g_j(x_t)]^+ / s_j)_j\|_2`: :func:`ckb.violation.positive_violation` with a scale."""
    return positive_violation(g, scale)


def scaled_soft_violation(g: np.ndarray, scale: Sequence[float]) -> float:
    r""":math:`\|[(\sum_t g_j(x_t) / s_j)_j]^+\|_2`: the cumulative constraint's violation, where a
    strictly feasible evaluation offsets an earlier violating one (the quantity the primal-dual
    policies bound; :func:`scaled_positive_violation` counts every violation):
    :func:`ckb.violation.soft_violation` with a scale."""
    return soft_violation(g, scale)


def cumulative_regret(f: np.ndarray, bench: ConstrainedBenchmark, minimize: bool) -> float:
    r""":math:`\sum_t (u^* - u(x_t)) / \text{scale}` with :math:`u = f` (max) or :math:`-f` (min): the
    cumulative (online) regime's regret, every evaluation counted, feasible or not (an infeasible point
    with :math:`u > u^*` counts negatively, as in the papers' regret; its violation is counted apart)."""
    sign = -1.0 if minimize else 1.0
    f = np.asarray(f, dtype=float)
    return float(np.sum(sign * bench.f_star - sign * f) / bench.gap_scale)


def repeated_evaluations(x: np.ndarray, tol: float = 1e-9) -> int:
    """Evaluations at a point evaluated before (max-norm distance <= ``tol`` times the box width 1)."""
    x = np.asarray(x, dtype=float)
    if x.ndim != 2 or len(x) < 2:
        return 0
    span = np.maximum(x.max(axis=0) - x.min(axis=0), 1e-300)
    z = x / span
    return int(sum(np.any(np.max(np.abs(z[:i] - z[i]), axis=1) <= tol) for i in range(1, len(z))))


def violating_evaluations(g: np.ndarray) -> int:
    """Number of evaluations with some constraint > 0 or NaN (:func:`ckb.violation.violating_count`)."""
    return violating_count(g)


def within_budget(record: dict[str, Any], bench: ConstrainedBenchmark | None = None) -> bool | None:
    r"""Whether a run of a budget variant (:data:`VARIANTS` with ``budget_in_scales`` :math:`b`) kept its
    violation budget: :math:`\sum_{t > n_0} [g_j(x_t)]^+ \le b\,s_j` for every constraint j over the
    evaluations after the design, or with a known-feasible design (``feasible_design``) no violating
    evaluation at all. None for a run of any other method (it had no budget)."""
    options = VARIANTS.get(record.get("method", ""), (None, {}))[1]
    if "budget_in_scales" not in options:
        return None
    bench = bench or CONSTRAINED_BENCHMARKS[record["problem"]]
    g = np.asarray(record["g"], dtype=float).reshape(len(record["f"]), -1)
    if options.get("feasible_design"):
        return violating_evaluations(g) == 0
    spent = np.maximum(g[int(record["n_init"]) :], 0.0).sum(axis=0)
    return bool(np.all(spent <= options["budget_in_scales"] * np.asarray(bench.constraint_scale)))


def run_metrics(record: dict[str, Any], bench: ConstrainedBenchmark | None = None) -> dict[str, Any]:
    """Every metric of one run record (see the module docstring)."""
    bench = bench or CONSTRAINED_BENCHMARKS[record["problem"]]
    f, g = np.asarray(record["f"], dtype=float), np.asarray(record["g"], dtype=float)
    g = g.reshape(f.shape[0], -1)
    k, minimize = int(record["n_init"]), bool(record["minimize"])
    sec = np.asarray(record["seconds"], dtype=float)
    after = sec[k:] if sec.size > k else sec
    cpu = np.asarray(record.get("cpu_seconds", record["seconds"]), dtype=float)
    cpu = cpu[k:] if cpu.size > k else cpu
    return {
        "final_gap": final_gap(f, g, bench, minimize),
        "gap_curve": gap_curve(f, g, bench, minimize),
        "best_feasible_curve": best_feasible_curve(f, g, minimize),
        "scaled_violation": scaled_positive_violation(g, bench.constraint_scale),
        "scaled_violation_after_init": scaled_positive_violation(g[k:], bench.constraint_scale),
        "scaled_soft_violation": scaled_soft_violation(g, bench.constraint_scale),
        "violating_evaluations": violating_evaluations(g),
        "violating_after_init": violating_evaluations(g[k:]),
        "cumulative_regret": cumulative_regret(f, bench, minimize),
        "scaled_soft_violation_after_init": scaled_soft_violation(g[k:], bench.constraint_scale),
        "found_feasible": bool(np.any(np.all(g <= 0.0, axis=1))),
        "within_budget": within_budget(record, bench),
        "repeated_evaluations": repeated_evaluations(np.asarray(record.get("X", []), dtype=float)),
        "seconds_per_iteration": float(after.mean()) if after.size else 0.0,
        "cpu_seconds_per_iteration": float(cpu.mean()) if cpu.size else 0.0,
    }


# ------------------------------------------------------------------------------------------ runs


def ckb_policies() -> list[str]:
    """The practical policies of ``ckb.Optimizer`` (all run on continuous boxes)."""
    from ckb.optimizer.policies import OPTIMIZER_POLICIES

    return OPTIMIZER_POLICIES.names()


#: pcei without the refinement near the incumbent (its default since ``pcei-refine-endgame`` was
#: measured): the variants measured before keep their records' rule.
_NO_REFINE: dict[str, Any] = {"refine_radius": None}
#: the units before the bound map joined ``outcome_transform="auto"``: the variants measured before it
#: pin them, so that they keep their records' decisions
_NO_BOUNDS: dict[str, Any] = {"outcome_transform": "auto-no-bounds"}

#: benchmark variants of an optimizer policy: name -> (policy, options). Options: ``budget_in_scales``
#: b sets ``violation_budget`` to b times each constraint's stated typical magnitude s_j;
#: ``feasible_design`` hands the optimizer a known-feasible initial design (the first 2d + 2 feasible
#: points of a scrambled Sobol sequence of the seed, found offline); ``goal`` picks the optimizer's goal
#: with its default policy; ``params``: the policy's constants.
#: ``pcei-kappa2``: the width 2 of pcei's records before width 1 became its default, with feasibility
#: first by the probability of feasibility alone as then (it replays them bit for bit); ``pcei-k1`` is
#: the default width and ``pcei-k2`` the exploration width 2. ``pcei-pof-first``: feasibility first by
#: the probability of feasibility alone, pcei's rule before ``first_quantile``.
#: ``pcei-leap``: the endgame's leaps at radius 0.1; ``pcei-exact`` and ``qlognei-exact``: the problems
#: declared noise-free to the method (``exact=True``; qLogNEI's GP noise is then fixed at ckb's floor);
#: ``qlognei-ckb-units``: qLogNEI on the targets in ckb's default outcome units (``outcome_units="auto"``);
#: ``pcei-bilog-constraints-exact`` both the log map of the constraints and the declaration;
#: ``pcei-bilog-constraints-b1``/``-b5`` the log map under budgets of 1 and 5 scales.
#: ``pcei-bounds`` (``-b0``, ``-b0-feasible-design``, ``-b1``, ``-b5``; ``slack-cei-bounds``,
#: ``cei-bounds``): the constraints' log map of the distance to a bound their values crowd against
#: (``outcome_transform="auto-bounds"``).
#: ``slack-cei-first-slack``: slack-cei's search for a first feasible point against the signed
#: threshold of the running sum, its rule before ``first_threshold`` (it replays those records).
#: ``ckb-ucb-slack``: CKB-UCB with the slack of Zhou & Ji (2022) for zero violation (``slack="auto"``);
#: ``ckb-ucb-mean``: CKB-UCB whose dual steps with the posterior mean of g at the played point
#: (``dual_estimate="mean"``) instead of its LCB (both with the default search for a first feasible
#: point); ``ckb-ucb-first``: CKB-UCB with that search stated (``feasibility_first=True``, measured as an
#: option before it became the optimizer's default, the same decisions as ``ckb-ucb`` since then);
#: ``ckb-ucb-no-first``, ``ckb-ts-no-first``, ``ckb-rand-no-first``: without it, Zhou & Ji's Algorithm 1
#: as written (the optimizer's CKB policies before this default; they replay those records);
#: ``rpol-ucb-no-first``, ``penalty-noisy-no-first``: RPOL and Shi & Eryilmaz's Algorithm 3 without
#: it, as their papers state them; ``config-first``: CONFIG with it (off by default there).
#: ``pcei-refine``: only the last fifth of the asks search the box of radius 0.1 around the incumbent
#: first (``refine_last=0.2``); ``pcei-refine-endgame``: every endgame ask does (``refine_radius=0.1,
#: refine_last=None``, the default since it was measured: its records are the default's);
#: ``pcei-no-refine``: no refinement (``refine_radius=None``), pcei's rule before that default (it
#: replays those records, as do the variants above that pin ``refine_radius=None``).
#: ``pcei-b1-pace-all``/``-pace-even``: budget 1 with each ask allowed all of what is left of the
#: budget (the rule before ``budget_pace``) or an even share over the asks left, instead of half.
#: ``queue-ucb-feasibility-first``: queue-ucb's search for a first feasible point by the probability of
#: feasibility alone (as measured when the search was an option); ``queue-ucb-no-first``: no such
#: search, queue-ucb's rule before ``feasibility_first`` became its default (each replays its records,
#: checked on one; the former's spring records predate the constraints' log threshold of 30).
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "pcei-b0": ("pcei", {"budget_in_scales": 0.0}),
    "pcei-b1": ("pcei", {"budget_in_scales": 1.0}),
    "pcei-b5": ("pcei", {"budget_in_scales": 5.0}),
    "pcei-b0-feasible-design": ("pcei", {"budget_in_scales": 0.0, "feasible_design": True}),
    "pcei-k1": ("pcei", {"params": {"kappa": 1.0, **_NO_REFINE}}),
    "pcei-kappa2": ("pcei", {"params": {"kappa": 2.0, "first_quantile": None, **_NO_REFINE}}),
    "pcei-bilog-constraints": (
        "pcei",
        {"params": {"outcome_transform": "bilog-constraints", **_NO_REFINE}},
    ),
    "pcei-bilog-constraints-b1": (
        "pcei",
        {"budget_in_scales": 1.0, "params": {"outcome_transform": "bilog-constraints"}},
    ),
    "pcei-bilog-constraints-b5": (
        "pcei",
        {"budget_in_scales": 5.0, "params": {"outcome_transform": "bilog-constraints"}},
    ),
    "pcei-leap": ("pcei", {"params": {"leap_radius": 0.1}}),
    "pcei-leap-cost": ("pcei", {"params": {"leap_radius": 0.1, "leap_cost": 0.05}}),
    "pcei-bounds": ("pcei", {"params": {"outcome_transform": "auto-bounds"}}),
    "pcei-bounds-b1": ("pcei", {"budget_in_scales": 1.0, "params": {"outcome_transform": "auto-bounds"}}),
    "pcei-bounds-b5": ("pcei", {"budget_in_scales": 5.0, "params": {"outcome_transform": "auto-bounds"}}),
    "pcei-bounds-b0": ("pcei", {"budget_in_scales": 0.0, "params": {"outcome_transform": "auto-bounds"}}),
    "pcei-bounds-b0-feasible-design": (
        "pcei",
        {"budget_in_scales": 0.0, "feasible_design": True, "params": {"outcome_transform": "auto-bounds"}},
    ),
    "slack-cei-bounds": ("slack-cei", {"params": {"outcome_transform": "auto-bounds"}}),
    "cei-bounds": ("cei", {"params": {"outcome_transform": "auto-bounds"}}),
    "pcei-refine": ("pcei", {"params": {"refine_radius": 0.1, "refine_last": 0.2}}),
    "pcei-no-refine": ("pcei", {"params": _NO_REFINE}),
    "pcei-refine-endgame": ("pcei", {"params": {"refine_radius": 0.1, "refine_last": None}}),
    "pcei-pof-first": ("pcei", {"params": {"first_quantile": None, **_NO_REFINE}}),
    "pcei-exact": ("pcei", {"params": {"exact": True, **_NO_REFINE}}),
    "pcei-bilog-constraints-exact": (
        "pcei",
        {"params": {"outcome_transform": "bilog-constraints", "exact": True, **_NO_REFINE}},
    ),
    "qlognei-exact": ("qlognei", {"params": {"exact": True}}),
    "qlognei-ckb-units": ("qlognei", {"params": {"outcome_units": "auto"}}),
    "pcei-e0": ("pcei", {"params": {"explore_kappa": 0.0, **_NO_REFINE}}),
    "pcei-e1": ("pcei", {"params": {"explore_kappa": 1.0, **_NO_REFINE}}),
    "pcei-k2": ("pcei", {"params": {"explore_kappa": 2.0, **_NO_REFINE}}),
    "queue-ucb-feasibility-first": (
        "queue-ucb",
        {"params": {"feasibility_first": True, "first_quantile": None}},
    ),
    "queue-ucb-no-first": ("queue-ucb", {"params": {"feasibility_first": False}}),
    "slack-cei-first-slack": ("slack-cei", {"params": {"first_threshold": "slack"}}),
    "ckb-ucb-slack": ("ckb-ucb", {"params": {"slack": "auto"}}),
    "ckb-ucb-mean": ("ckb-ucb", {"params": {"dual_estimate": "mean"}}),
    "ckb-ucb-first": ("ckb-ucb", {"params": {"feasibility_first": True}}),
    "ckb-ucb-no-first": ("ckb-ucb", {"params": {"feasibility_first": False}}),
    "ckb-ts-no-first": ("ckb-ts", {"params": {"feasibility_first": False}}),
    "ckb-rand-no-first": ("ckb-rand", {"params": {"feasibility_first": False}}),
    "rpol-ucb-no-first": ("rpol-ucb", {"params": {"feasibility_first": False}}),
    "config-first": ("config", {"params": {"feasibility_first": True}}),
    "penalty-noisy-no-first": ("penalty-noisy", {"params": {"feasibility_first": False}}),
    "pcei-b1-pace-all": ("pcei", {"budget_in_scales": 1.0, "params": {"budget_pace": "all"}}),
    "pcei-b1-pace-even": ("pcei", {"budget_in_scales": 1.0, "params": {"budget_pace": "even"}}),
}

#: the default's violation-budget variants: measured again when the bound map joined "auto"
_DEFAULT_BUDGETS = ("pcei-b0", "pcei-b1", "pcei-b5", "pcei-b0-feasible-design")


def _with_params(name: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Method ``name`` (a variant or a policy) with ``params`` added to its policy constants."""
    policy, options = VARIANTS.get(name, (name, {}))
    return policy, {**options, "params": {**options.get("params", {}), **params}}


def _pin(params: dict[str, Any], where) -> None:
    """Add ``params`` to every variant registered so far for which ``where(name, policy, options)``
    holds: the variants measured before a new default keep the rule their records were run with."""
    for name, (policy, options) in list(VARIANTS.items()):
        if where(name, policy, options):
            VARIANTS[name] = _with_params(name, params)


# every other variant above that leaves the units to the default was measured before the bound map
# joined "auto": it keeps the units of its records
_pin(
    _NO_BOUNDS,
    lambda name, policy, options: (
        policy not in BASELINE_METHODS
        and name not in _DEFAULT_BUDGETS
        and "outcome_transform" not in options.get("params", {})
    ),
)
#: ``NAME-no-bounds``: a method before the bound map joined "auto", for the methods whose records were
#: run again then (their former records, on the spring and in Gardner 1's seed 1, where the units differ;
#: the rules with ``bound_map = False`` keep "auto-no-bounds" under "auto")
for _name in ("pcei", "cei", "slack-cei", "rpol-ucb", "config", *_DEFAULT_BUDGETS):
    VARIANTS[f"{_name}-no-bounds"] = _with_params(_name, _NO_BOUNDS)
#: ``pcei-b0-first-admissible`` (``-b1-``, ``-b5-``): the default's budget variants whose search for a
#: first feasible point keeps to the points the allowance can pay for (``budget_first="admissible"``);
#: their records are the runs whose design holds no feasible point, the others being the default's
for _name in ("pcei-b0", "pcei-b1", "pcei-b5"):
    VARIANTS[f"{_name}-first-admissible"] = _with_params(_name, {"budget_first": "admissible"})
#: ``pcei-b0-no-lipschitz`` (``pcei-b0-feasible-design-no-lipschitz``): a zero budget without the trust
#: region's radii certified by the constraints' observed slopes (``budget_lipschitz=None``), pcei's rule
#: before it; every other zero-budget variant above was measured before it too and keeps it (a positive
#: budget never reaches it)
_pin(
    {"budget_lipschitz": None},
    lambda name, policy, options: options.get("budget_in_scales") == 0.0 and name not in _DEFAULT_BUDGETS,
)
for _name in ("pcei-b0", "pcei-b0-feasible-design"):
    VARIANTS[f"{_name}-no-lipschitz"] = _with_params(_name, {"budget_lipschitz": None})
#: ``pcei-b1-certify-allowance``: budget 1 with every constraint certified against each ask's allowance
#: (``budget_certify="allowance"``)
VARIANTS["pcei-b1-certify-allowance"] = _with_params("pcei-b1", {"budget_certify": "allowance"})
#: ``pcei-b1-certify-zero`` (``pcei-b5-certify-zero``): a positive budget without certified radii
#: (``budget_certify="zero"``: only the constraints whose budget is zero are certified), pcei's rule
#: before "left"; every other positive-budget variant above was measured before it too and keeps it (a
#: zero budget is certified the same way under both)
_pin(
    {"budget_certify": "zero"},
    lambda name, policy, options: (
        policy == "pcei"
        and options.get("budget_in_scales", 0.0) > 0.0
        and name not in _DEFAULT_BUDGETS
        and "budget_certify" not in options.get("params", {})
    ),
)
for _name in ("pcei-b1", "pcei-b5"):
    VARIANTS[f"{_name}-certify-zero"] = _with_params(_name, {"budget_certify": "zero"})
#: ``pcei-bilog-constraints-left-b1`` (``-b5``): the constraints' log map under budgets of 1 and 5 scales
#: with the default certification against what is left; ``pcei-bilog-constraints-b0`` under a zero
#: budget with the default certified radii (measured on the welded beam)
for _b in (1, 5):
    VARIANTS[f"pcei-bilog-constraints-left-b{_b}"] = _with_params(
        f"pcei-b{_b}", {"outcome_transform": "bilog-constraints"}
    )
VARIANTS["pcei-bilog-constraints-b0"] = _with_params("pcei-b0", {"outcome_transform": "bilog-constraints"})
#: ``slack-cei-endgame``: slack-cei exploring until the expected improvement falls below ``endgame_ei``
#: and exploiting for good from then on (``exploit="endgame"``), its rule before the horizon rule; every
#: other slack-cei variant above was measured before it too and keeps it
_pin(
    {"exploit": "endgame"},
    lambda name, policy, options: policy == "slack-cei" and "exploit" not in options.get("params", {}),
)
VARIANTS["slack-cei-endgame"] = ("slack-cei", {"params": {"exploit": "endgame"}})
#: ``slack-cei-pof-linear``: slack-cei's rule before its first search weighed the expected improvement
#: and its units modelled a minimized objective spanning decades by its log (``first_value="probability"``,
#: ``objective_log=False``); every slack-cei variant above was measured before them and keeps them
_pin(
    {"first_value": "probability", "objective_log": False},
    lambda name, policy, options: policy == "slack-cei",
)
VARIANTS["slack-cei-pof-linear"] = (
    "slack-cei",
    {"params": {"first_value": "probability", "objective_log": False}},
)
#: ``slack-cei-exploit-maximizer``: slack-cei's exploiting choice by the maximizer alone, before it also
#: scored the evaluated points (``exploit_seen=False``); every slack-cei variant above keeps it
_pin({"exploit_seen": False}, lambda name, policy, options: policy == "slack-cei")
VARIANTS["slack-cei-exploit-maximizer"] = ("slack-cei", {"params": {"exploit_seen": False}})
#: ``pcei-exact-refine``: the default pcei (refinement near the incumbent, bound map) told the problem is
#: noise-free (``exact=True``), where ``pcei-exact`` keeps the rule before both; ``pcei-leap-cost-exact``:
#: the priced leaps told the same (measured on Gramacy's problem, against ``qlognei-exact``)
VARIANTS["pcei-exact-refine"] = ("pcei", {"params": {"exact": True}})
VARIANTS["pcei-leap-cost-exact"] = _with_params("pcei-leap-cost", {"exact": True})
#: ``pcei-no-expand``: pcei before its endgame expanded the admissible set toward the best optimistically
#: feasible point (``expand_kappa=None``); every pcei variant above was measured before the expansion and
#: keeps that rule (a violation budget turns the expansion off, so the default's budgets need no pin)
_pin(
    {"expand_kappa": None},
    lambda name, policy, options: policy == "pcei" and name not in _DEFAULT_BUDGETS,
)
VARIANTS["pcei-no-expand"] = ("pcei", {"params": {"expand_kappa": None}})
#: ``pcei-ls20``: pcei before its maximizer's line search was cut to 10 steps (``max_line_search=20``,
#: SciPy's); every pcei variant above was measured before and keeps it, the default's violation budgets
#: included (their records were not run again)
_pin({"max_line_search": 20}, lambda name, policy, options: policy == "pcei")
VARIANTS["pcei-ls20"] = ("pcei", {"params": {"max_line_search": 20}})


def known_methods() -> list[str]:
    return ckb_policies() + list(BASELINE_METHODS)


def variant_methods() -> list[str]:
    """The variants (not run by default; name them with ``--methods``)."""
    return list(VARIANTS)


def feasible_design(problem: Problem, n: int, seed: int) -> np.ndarray:
    """The first ``n`` feasible points (true constraints) of a scrambled Sobol sequence seeded by ``seed``
    over the problem's box: a known-feasible initial design, as a user with earlier feasible runs has."""
    from ckb.optimizer.space import _sobol_unit

    dom = problem.domain
    found: list[np.ndarray] = []
    k = 1024
    while len(found) < n and k <= 2**22:
        U = _sobol_unit(dom.d, k, seed)
        X = dom.lower + U * (dom.upper - dom.lower)
        found = [x for x in X if np.all(np.asarray(problem.evaluate(-1, x)[1]) <= 0.0)]
        k *= 4
    if len(found) < n:
        raise InvalidInputError(f"fewer than {n} feasible points in 2^22 Sobol points of {problem.name}.")
    return np.array(found[:n])


@dataclass(frozen=True)
class RunConfig:
    """One run: ``method`` on benchmark ``problem`` with ``seed``; ``params``: the method's parameters."""

    method: str
    problem: str
    seed: int
    budget: int = DEFAULT_BUDGET
    n_init: int | None = None
    params: dict[str, Any] = field(default_factory=dict)

    def path(self, out: str | Path) -> Path:
        return Path(out) / "runs" / self.problem / self.method / f"seed-{self.seed:03d}.json"

    def identity(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "problem": self.problem,
            "seed": self.seed,
            "budget": self.budget,
            "n_init": self.n_init,
            "params": json.loads(json.dumps(self.params)),
        }


def make_method(
    method: str, lower, upper, m: int, *, budget: int, minimize: bool, n_init: int | None, seed: int, params
):
    """An ask/tell object for ``method``: a baseline, or ``ckb.Optimizer`` with that policy."""
    from ckb.benchmarking.baselines import BASELINES

    common = {"budget": budget, "minimize": minimize, "n_init": n_init, "seed": seed}
    if method in BASELINES:
        from ckb._validation import check_params

        check_params(BASELINES[method], params, f"baseline {method!r}", skip=("lower", "upper", "m", *common))
        return BASELINES[method](lower, upper, m, **common, **params)
    from ckb.optimizer import Optimizer

    return Optimizer(lower, upper, m, policy=method, **common, **params)


_VERSIONS: dict[str, str] | None = None

#: the subpackages of ckb whose sources decide what ckb.Optimizer asks
DECISION_SOURCES = ("optimizer", "rules", "exploration")


def source_digest(root: Path) -> str:
    """A digest (16 hex digits) of the ``.py`` files of :data:`DECISION_SOURCES` under the package
    directory ``root``."""
    import hashlib

    digest = hashlib.sha256()
    for sub in DECISION_SOURCES:
        for path in sorted((Path(root) / sub).rglob("*.py")):
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _versions() -> dict[str, str]:
    """Package versions and a digest of the sources ckb's optimizer decides with (``ckb/optimizer``,
    the rules of ``ckb/rules`` and the widths of ``ckb/exploration``; under the key ``ckb.optimizer``),
    taken once per process (when the optimizer's modules are first imported, so it names the code the
    process runs)."""
    global _VERSIONS
    if _VERSIONS is None:
        import importlib.metadata as md

        import ckb

        _VERSIONS = {"ckb.optimizer": source_digest(Path(ckb.__file__).parent)}
        for pkg in ("numpy", "scipy", "torch", "botorch", "gpytorch"):
            try:
                _VERSIONS[pkg] = md.version(pkg)
            except md.PackageNotFoundError:  # pragma: no cover
                pass
    return dict(_VERSIONS)


def _variant_params(cfg: RunConfig, problem: Problem) -> tuple[str, dict[str, Any]]:
    """The policy and the optimizer keywords of ``cfg.method`` (a variant resolved on its problem)."""
    if cfg.method not in VARIANTS:
        return cfg.method, dict(cfg.params)
    policy, options = VARIANTS[cfg.method]
    params = {**options.get("params", {}), **cfg.params}
    bench = CONSTRAINED_BENCHMARKS[cfg.problem]
    if "budget_in_scales" in options:
        params["violation_budget"] = [options["budget_in_scales"] * s for s in bench.constraint_scale]
    if options.get("feasible_design"):
        n = cfg.n_init if cfg.n_init is not None else 2 * problem.domain.d + 2
        params["initial_design"] = feasible_design(problem, n, cfg.seed)
    return policy, params


def open_run(cfg: RunConfig) -> tuple[Problem, Any]:
    """``cfg``'s problem and its method built on it (bad method parameters raise here)."""
    problem = CONSTRAINED_BENCHMARKS[cfg.problem].make()
    dom = problem.domain
    method, params = _variant_params(cfg, problem)
    opt = make_method(
        method,
        dom.lower,
        dom.upper,
        problem.m,
        budget=cfg.budget,
        minimize=problem.minimize,
        n_init=None if "initial_design" in params else cfg.n_init,
        seed=cfg.seed,
        params=params,
    )
    return problem, opt


def run_one(cfg: RunConfig) -> dict[str, Any]:
    """Run ``cfg`` and return its record: the configuration, every point, its true ``f`` and ``g``, the
    observations, and the seconds of each ask + tell."""
    if cfg.method != "sobol":
        _import_gp_stack()  # imports are not the method's per-iteration cost
    versions = _versions()
    problem, opt = open_run(cfg)
    n_init = int(getattr(opt, "n_init", 2 * problem.domain.d + 2))
    record = measure_run(cfg, problem, opt.ask, opt.tell, n_init=n_init, versions=versions)
    record["extra"] = {k: getattr(opt, k) for k in ("fallbacks", "fit_failures") if hasattr(opt, k)}
    if hasattr(opt, "close"):
        opt.close()
    return record


def measure_run(
    cfg: RunConfig, problem: Problem, ask, tell, *, n_init: int, versions: dict
) -> dict[str, Any]:
    """``cfg.budget`` rounds of ``x = ask()``, the problem's true values and their noisy observation (a
    generator seeded by the run's seed alone, so every method sees the same noise), ``tell(x, y, c)``;
    the record of :func:`run_one` (``extra`` empty), the seconds of each ask + tell measured around
    those two calls only."""
    dom = problem.domain
    noise_rng = np.random.default_rng(np.random.SeedSequence(cfg.seed, spawn_key=(1,)))  # shared by methods
    X, F, G, Y, C, sec, cpu = [], [], [], [], [], [], []
    start = time.perf_counter()
    for _ in range(cfg.budget):
        t0, p0 = time.perf_counter(), time.process_time()
        x = np.asarray(ask(), dtype=float)
        t1, p1 = time.perf_counter(), time.process_time()
        f, g = problem.evaluate(-1, x)
        y, c = problem.noise.sample(noise_rng, -1, f, g)
        t2, p2 = time.perf_counter(), time.process_time()
        tell(x, y, c)
        sec.append((t1 - t0) + (time.perf_counter() - t2))
        cpu.append((p1 - p0) + (time.process_time() - p2))
        X.append(x.tolist())
        F.append(float(f))
        G.append(np.asarray(g, dtype=float).tolist())
        Y.append(float(y))
        C.append(np.asarray(c, dtype=float).tolist())
    return {
        "config": cfg.identity(),
        **cfg.identity(),
        "n_init": n_init,
        "minimize": problem.minimize,
        "d": dom.d,
        "m": problem.m,
        "X": X,
        "f": F,
        "g": G,
        "y": Y,
        "c": C,
        "seconds": sec,
        "cpu_seconds": cpu,
        "wall_seconds": time.perf_counter() - start,
        "extra": {},
        "versions": versions,
    }


def _import_gp_stack() -> None:
    import botorch.acquisition.logei
    import botorch.fit
    import botorch.models
    import botorch.optim  # noqa: F401
    import gpytorch.mlls  # noqa: F401

    import ckb.optimizer.acquisition
    import ckb.optimizer.models
    import ckb.optimizer.policies  # noqa: F401


def _write_record(path: Path, record: dict[str, Any]) -> None:
    text = json.dumps(record).encode()
    atomic_write(path, lambda fh: fh.write(text))


def load_record(path: str | Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text())


def _worker(task: tuple[dict[str, Any], str]) -> dict[str, Any]:
    """Executor entry: run one configuration and return a status with its record (never raises). The
    driver writes the record, so runs on remote Ray nodes land in the driver's ``out``."""
    cfg_dict, _ = task
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover - sobol needs no torch
        pass
    cfg = RunConfig(**cfg_dict)
    try:
        record = run_one(cfg)
    except Exception:
        return {"ok": False, "error": traceback.format_exc()}
    return {"ok": True, "wall_seconds": record["wall_seconds"], "record": record}


def _cfg_dict(cfg: RunConfig) -> dict[str, Any]:
    return {
        "method": cfg.method,
        "problem": cfg.problem,
        "seed": cfg.seed,
        "budget": cfg.budget,
        "n_init": cfg.n_init,
        "params": dict(cfg.params),
    }


def plan(
    problems: Iterable[str] | None = None,
    methods: Iterable[str] | None = None,
    seeds: int | Iterable[int] = 20,
    budget: int = DEFAULT_BUDGET,
    *,
    n_init: int | None = None,
    method_params: dict[str, dict[str, Any]] | None = None,
) -> list[RunConfig]:
    """Validate the names and return every (problem, method, seed) configuration."""
    problems = list(CONSTRAINED_BENCHMARKS) if problems is None else list(problems)
    methods = known_methods() if methods is None else list(methods)
    known = known_methods() + variant_methods()
    for p in problems:
        if p not in CONSTRAINED_BENCHMARKS:
            raise UnknownNameError(
                f"Unknown benchmark problem {p!r}.{did_you_mean(p, CONSTRAINED_BENCHMARKS)}"
            )
    for mth in methods:
        if mth not in known:
            raise UnknownNameError(f"Unknown method {mth!r}.{did_you_mean(mth, known)}")
    if not problems or not methods:
        raise InvalidInputError(f"need at least one problem and one method, got {problems} and {methods}.")
    for what, names in (("problem", problems), ("method", methods)):
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:  # one record file per (problem, method, seed): a repeat would be counted as two seeds
            raise InvalidInputError(f"the {what} {twice[0]!r} is named twice; name each {what} once.")
    budget = check_scalar(budget, "budget", low=2, integer=True)
    for p in problems:
        d = CONSTRAINED_BENCHMARKS[p].make(np.random.default_rng(0)).domain.d
        design = 2 * d + 2 if n_init is None else int(n_init)
        if budget < design:
            raise InvalidInputError(
                f"budget {budget} is smaller than the initial design of {p!r} ({design} points), which "
                f"every run evaluates first; give a budget of at least {design}."
            )
    if isinstance(seeds, (int, np.integer)):
        seeds = list(range(check_scalar(seeds, "seeds", low=1, integer=True)))
    seeds = [check_scalar(s, "seed", low=0, integer=True) for s in seeds]
    if not seeds:
        raise InvalidInputError("need at least one seed.")
    method_params = method_params or {}
    for mth in method_params:
        if mth not in methods:
            raise InvalidInputError(f"method_params names {mth!r}, which is not among the methods {methods}.")
    # seed-major: an interrupted benchmark has whole seeds (every problem and method) on disk
    return [
        RunConfig(mth, p, s, budget, n_init, dict(method_params.get(mth, {})))
        for s in seeds
        for p in problems
        for mth in methods
    ]


class _RecordStore:
    """The benchmark's runs in :mod:`ckb.runner.sweep`'s terms: ``OUT/runs/PROBLEM/METHOD/seed-NNN.json``,
    identified by ``cfg.identity()``, written by the driver from the worker's status (so runs on remote
    Ray nodes land in the driver's ``out``); a failed run is not written, so a re-run retries it."""

    noun = "run"

    def path(self, out: Path, cfg: RunConfig) -> Path:
        return cfg.path(out)

    def identity(self, cfg: RunConfig) -> dict[str, Any]:
        return cfg.identity()

    def stored(self, path: Path) -> dict[str, Any]:
        try:
            return load_record(path)["config"]
        except (OSError, ValueError, KeyError) as exc:
            raise CKBError(f"cannot read the finished run {path} ({exc}); delete it to re-run it.") from None

    def task(self, cfg: RunConfig, path: Path) -> tuple[dict[str, Any], str]:
        return _cfg_dict(cfg), str(path)

    def finish(self, path: Path, status: dict[str, Any]) -> None:
        if status["ok"]:
            _write_record(path, status.pop("record"))


RECORDS = _RecordStore()


@dataclass
class SweepOutcome:
    """What a benchmark sweep leaves: the records on disk (of the configurations asked for), the failed
    runs, how many runs were executed and reused, and the sweep's wall time."""

    records: list[dict[str, Any]]
    errors: list[dict[str, Any]]
    executed: int
    reused: int
    seconds: float


def sweep_runs(
    configs: list[RunConfig],
    out: str | Path,
    *,
    on_done: Callable[[RunConfig, bool, dict[str, Any]], None] | None = None,
    **options: Any,
) -> SweepOutcome:
    """Run every configuration not yet on disk under ``out`` (:func:`ckb.runner.sweep.plan_sweep` and
    :func:`~ckb.runner.sweep.execute` with the benchmark's records): finished runs of the same
    configuration are reused, a run of another configuration stops everything before it starts.
    ``options``: ``workers``, ``executor``, ``executor_options``; ``on_done(cfg, skipped, status)`` as
    :func:`run_benchmark`'s."""
    from ckb.runner.sweep import execute, plan_sweep

    out = Path(out)
    todo, reused = plan_sweep(configs, out, RECORDS)
    for cfg in reused:
        if on_done:
            on_done(cfg, True, {"ok": True})
    errors = []
    started = time.perf_counter()
    for cfg, _, status in execute(todo, _worker, RECORDS, **options):
        if not status["ok"]:
            errors.append({**cfg.identity(), "error": status["error"]})
        if on_done:
            on_done(cfg, False, status)
    records = [load_record(c.path(out)) for c in configs if c.path(out).exists()]
    return SweepOutcome(records, errors, len(todo) - len(errors), len(reused), time.perf_counter() - started)


def outcome_summary(outcome: SweepOutcome) -> dict[str, Any]:
    """:func:`summarize` of the records, with ``errors``, ``run_seconds``, ``runs_executed``, ``runs_reused``."""
    summary = summarize(outcome.records)
    summary["errors"] = outcome.errors
    summary["run_seconds"] = outcome.seconds
    summary["runs_executed"] = outcome.executed
    summary["runs_reused"] = outcome.reused
    return summary


def output_names(problems: Iterable[str]) -> list[str]:
    """The files a benchmark of ``problems`` writes under its folder, besides its runs."""
    return ["summary.json", "table.md", *(f"plots/{plot_name(p)}" for p in dict.fromkeys(problems))]


def check_benchmark_folder(configs: list[RunConfig], out: str | Path) -> Path:
    """``out`` if the runs ``configs`` may be written there, else a one-line :class:`CKBError` naming it,
    by the checks of ``ckb experiment``: a folder (or a path to create) that is writable
    (:func:`~ckb.framework.pipeline.check_output_dir`), not another experiment's
    (:func:`~ckb.framework.pipeline.check_results_folder` with the layout
    :data:`~ckb.framework.pipeline.BENCHMARK_RUNS`), and holding no file of someone else's where the
    benchmark writes one (:func:`~ckb.framework.pipeline.check_outputs`). Reads only."""
    from ckb.framework.pipeline import (
        BENCHMARK_RUNS,
        check_output_dir,
        check_outputs,
        check_results_folder,
        holds_record,
    )

    out = check_output_dir(out)
    check_results_folder(None, out, layout=BENCHMARK_RUNS)
    if out.is_dir():
        check_outputs(out, output_names(c.problem for c in configs), recorded=holds_record(out))
    return out


def write_outputs(out: str | Path, summary: dict[str, Any]) -> None:
    """``out/summary.json`` and ``out/table.md``."""
    write_json(Path(out) / "summary.json", summary)
    (Path(out) / "table.md").write_text(markdown_table(summary) + "\n" + regime_tables(summary))


def run_benchmark(
    configs: list[RunConfig],
    out: str | Path,
    *,
    workers: int | None = 2,
    executor: str = "process",
    executor_options: dict[str, Any] | None = None,
    on_done: Callable[[RunConfig, bool, dict[str, Any]], None] | None = None,
    plots: bool = True,
) -> dict[str, Any]:
    """Run every configuration not yet on disk under ``out`` and write the summary, table and plots.

    ``executor``: ``process`` (default), ``serial`` or ``ray`` (``executor_options``: ``address``,
    ``runtime_env``; each run is a Ray task and its record is written here by the driver).

    ``on_done(cfg, skipped, status)`` is called once per configuration (``skipped``: reused from disk;
    ``status["ok"]`` False with ``status["error"]`` for a run that raised; it is not written, so a re-run
    retries it). Returns the summary (also in ``out/summary.json``), with ``errors`` listing failed runs.

    ``out`` is checked first (:func:`check_benchmark_folder`) and written under
    :func:`~ckb.framework.pipeline.folder_lock` (a second run into it meanwhile is refused at once);
    ``out/spec.json`` records that it holds a benchmark's runs.
    """
    from ckb.framework.pipeline import BENCHMARK_RUNS, folder_lock, sweep_recorded

    out = check_benchmark_folder(configs, out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CKBError(f"cannot create the output folder {str(out)!r}: {exc}") from None
    opts = {"workers": workers, "executor": executor, "executor_options": executor_options}
    with folder_lock(out):
        check_benchmark_folder(configs, out)  # again: another run may have written there before the lock
        outcome = sweep_recorded(
            lambda done: sweep_runs(configs, out, on_done=done, **opts), None, out, on_done, BENCHMARK_RUNS
        )
        summary = outcome_summary(outcome)
        write_outputs(out, summary)
        if plots:
            summary["plots"] = [str(p) for p in plot_curves(outcome.records, out / "plots")]
    return summary


# ------------------------------------------------------------------------------------------ report


def _quantiles(values: Sequence[float], qs=(0.25, 0.5, 0.75)) -> list[float]:
    """Quantiles that treat +-inf as larger/smaller than everything (inf results stay inf)."""
    v = np.asarray(values, dtype=float)
    big = 1e300
    w = np.clip(np.where(np.isposinf(v), big, np.where(np.isneginf(v), -big, v)), -big, big)
    q = np.quantile(w, qs)
    return [math.inf if x >= 1e299 else -math.inf if x <= -1e299 else float(x) for x in q]


def _stat(values: Sequence[float]) -> dict[str, Any]:
    q25, med, q75 = _quantiles(values)
    vals = [float(v) for v in values]
    finite = [v for v in vals if math.isfinite(v)]
    return {
        "median": _json_num(med),
        "q25": _json_num(q25),
        "q75": _json_num(q75),
        "mean": _json_num(float(np.mean(finite))) if len(finite) == len(vals) else None,
        "values": [_json_num(v) for v in vals],
    }


def _json_num(v: float) -> float | None:
    """JSON has no infinity: ``None`` stands for an undefined or infinite value (no feasible point)."""
    return float(v) if math.isfinite(v) else None


def _curve_stats(curves: np.ndarray) -> dict[str, list]:
    qs = np.array([_quantiles(col) for col in curves.T]) if curves.size else np.zeros((0, 3))
    return {k: [_json_num(v) for v in qs[:, i]] for i, k in enumerate(("q25", "median", "q75"))}


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per problem and method: the metrics over seeds (median, quartiles, values) and the curves."""
    problems: dict[str, Any] = {}
    by_pm: dict[tuple[str, str], list[dict]] = {}
    for r in records:
        by_pm.setdefault((r["problem"], r["method"]), []).append(r)
    for (p, mth), rs in by_pm.items():
        rs = sorted(rs, key=lambda r: r["seed"])
        bench = CONSTRAINED_BENCHMARKS[p]
        ms = [run_metrics(r, bench) for r in rs]
        sign = -1.0 if rs[0]["minimize"] else 1.0
        gaps = [m["final_gap"] for m in ms]
        # best feasible value in utility units (-inf before the first feasible point), back to f
        util = np.array(
            [
                np.where(np.isnan(m["best_feasible_curve"]), -np.inf, sign * m["best_feasible_curve"])
                for m in ms
            ]
        )
        ustats = _curve_stats(util)
        fcurve = {k: [None if v is None else sign * v for v in vals] for k, vals in ustats.items()}
        if sign < 0:  # quartiles swap when the sign flips
            fcurve["q25"], fcurve["q75"] = fcurve["q75"], fcurve["q25"]
        entry = problems.setdefault(
            p, {"facts": bench.to_dict(), "n_init": int(rs[0]["n_init"]), "d": rs[0]["d"], "methods": {}}
        )
        entry["methods"][mth] = {
            "seeds": [r["seed"] for r in rs],
            "budget": rs[0]["budget"],
            "final_gap": _stat(gaps),
            "solved": int(sum(g < GAP_TOLERANCE for g in gaps)),
            "no_feasible": int(sum(not math.isfinite(g) for g in gaps)),
            "scaled_violation": _stat([m["scaled_violation"] for m in ms]),
            "scaled_violation_after_init": _stat([m["scaled_violation_after_init"] for m in ms]),
            "scaled_soft_violation": _stat([m["scaled_soft_violation"] for m in ms]),
            "violating_evaluations": _stat([m["violating_evaluations"] for m in ms]),
            "violating_after_init": _stat([m["violating_after_init"] for m in ms]),
            "cumulative_regret": _stat([m["cumulative_regret"] for m in ms]),
            "scaled_soft_violation_after_init": _stat([m["scaled_soft_violation_after_init"] for m in ms]),
            "found_feasible": int(sum(m["found_feasible"] for m in ms)),
            "within_budget": None
            if ms[0]["within_budget"] is None
            else int(sum(m["within_budget"] for m in ms)),
            "repeated_evaluations": _stat([m["repeated_evaluations"] for m in ms]),
            "seconds_per_iteration": _stat([m["seconds_per_iteration"] for m in ms]),
            "cpu_seconds_per_iteration": _stat([m["cpu_seconds_per_iteration"] for m in ms]),
            "best_feasible_curve": fcurve,
            "gap_curve": _curve_stats(np.array([m["gap_curve"] for m in ms])),
            "extra": _sum_extra(rs),
            # digests of the optimizer code the runs used: more than one means mixed code versions
            "code": sorted({c for r in rs if (c := (r.get("versions") or {}).get("ckb.optimizer"))}),
        }
    for p, entry in problems.items():
        entry["initial_design_shared"] = _design_shared([r for r in records if r["problem"] == p])
    return {
        "benchmark": "constrained",
        "gap_tolerance": GAP_TOLERANCE,
        "definitions": {
            "final_gap": "(u* - best feasible u) / scale, u = f (max) or -f (min); scale = |f*|, or range(f) "
            "on the box when |f*| < 0.1 range(f); null (inf) when no evaluation was feasible",
            "solved": f"final gap < {GAP_TOLERANCE}",
            "scaled_violation": "|| (sum_t [g_j(x_t)]^+ / s_j)_j ||_2, s_j the problem's stated typical magnitude "
            "(the std of g_j on the box; the median |g_j| for the engineering problems); all evaluations, the "
            "shared design included",
            "cumulative_regret": "sum_t (u* - u(x_t)) / scale over every evaluation (the online regime; "
            "infeasible points with u > u* count negatively, their violation is counted apart)",
            "repeated_evaluations": "evaluations at a point evaluated before (the problems are exact)",
            "scaled_soft_violation": "|| [(sum_t g_j(x_t) / s_j)_j]^+ ||_2: the cumulative constraint's violation "
            "(feasible evaluations offset violating ones; what the primal-dual policies bound)",
            "violating_evaluations": "#{t : max_j g_j(x_t) > 0}, the shared design included",
            "within_budget": "runs of a budget variant (budget b scales) with sum_{t after the design} "
            "[g_j(x_t)]^+ <= b s_j for every j; with a known-feasible design, no violating evaluation at all; "
            "null for methods without a budget",
            "seconds_per_iteration": "mean ask + tell wall time after the design",
            "cpu_seconds_per_iteration": "mean ask + tell CPU time of the process after the design (one "
            "thread; less inflated than wall time by other load on the machine, but not immune to it)",
        },
        "problems": problems,
    }


def _sum_extra(rs: list[dict]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in rs:
        for k, v in (r.get("extra") or {}).items():
            out[k] = out.get(k, 0) + int(v)
    return out


def _design_shared(records: list[dict]) -> bool:
    """Whether every method saw the same first ``n_init`` points at each seed."""
    first: dict[int, np.ndarray] = {}
    for r in records:
        X = np.asarray(r["X"], dtype=float)[: int(r["n_init"])]
        ref = first.setdefault(int(r["seed"]), X)
        if ref.shape != X.shape or not np.allclose(ref, X, rtol=0, atol=1e-12):
            return False
    return True


def _fmt(v: float | None, digits: int = 2) -> str:
    if v is None:
        return "inf"
    if v == 0:
        return "0"
    return f"{v:.{digits}g}" if abs(v) < 1e4 else f"{v:.3g}"


def markdown_table(summary: dict[str, Any]) -> str:
    """One markdown table per problem: a row per method."""
    lines = []
    for p, entry in summary["problems"].items():
        facts = entry["facts"]
        rows = entry["methods"]
        counts = sorted({len(r["seeds"]) for r in rows.values()})
        runs = (
            f"{counts[0]} seeds"
            if len(counts) == 1
            else f"{counts[0]}-{counts[-1]} seeds, each method's in its 'gap < 2%' column"
        )
        budget = next(iter(rows.values()))["budget"]
        lines.append(
            f"**{p}** ({facts['source']}; d = {entry['d']}, m = {len(facts['constraint_scale'])}, "
            f"f* = {facts['f_star']:.6g}, gap / {facts['gap_normaliser']} = {facts['gap_scale']:.4g}, "
            f"s = {facts['constraint_scale']}; {budget} evaluations incl. {entry['n_init']} Sobol, {runs})"
        )
        lines.append("")
        lines.append(
            "| method | final gap, median [IQR] | gap < 2% | no feasible | scaled Σ[g]+, median [IQR] "
            "| scaled [Σg]+, median | violating evals, median (after design) | s / iteration, wall (CPU) |"
        )
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|")
        for mth, r in rows.items():
            g, v = r["final_gap"], r["scaled_violation"]
            n = len(r["seeds"])
            lines.append(
                f"| {mth} | {_fmt(g['median'])} [{_fmt(g['q25'])}, {_fmt(g['q75'])}] | {r['solved']}/{n} "
                f"| {r['no_feasible']} | {_fmt(v['median'])} [{_fmt(v['q25'])}, {_fmt(v['q75'])}] "
                f"| {_fmt(r['scaled_soft_violation']['median'])} "
                f"| {_fmt(r['violating_evaluations']['median'], 3)} ({_fmt(r['violating_after_init']['median'], 3)}) "
                f"| {_fmt(r['seconds_per_iteration']['median'], 2)} "
                f"({_fmt(r['cpu_seconds_per_iteration']['median'], 2)}) |"
            )
        lines.append("")
    return "\n".join(lines)


def regime_tables(summary: dict[str, Any]) -> str:
    """The two regimes side by side, one row per method, one column per problem (medians over seeds):
    best-feasible (solved / seeds, violating evaluations after the design, scaled Σ[g]+ after the design)
    and cumulative (scaled cumulative regret, scaled [Σg]+, scaled Σ[g]+, all evaluations); then, when
    budget variants ran, their budgets (runs within budget / seeds, :func:`within_budget`; median final
    gap; solved)."""
    problems = list(summary["problems"])
    methods: list[str] = []
    for entry in summary["problems"].values():
        methods += [m for m in entry["methods"] if m not in methods]

    def table(title: str, cell, rows: list[str]) -> list[str]:
        out = [f"**{title}**", "", "| method | " + " | ".join(problems) + " |"]
        out.append("|---|" + "---:|" * len(problems))
        for mth in rows:
            cells = []
            for p in problems:
                r = summary["problems"][p]["methods"].get(mth)
                cells.append("" if r is None else cell(r))
            out.append(f"| {mth} | " + " | ".join(cells) + " |")
        return [*out, ""]

    best = table(
        "Best-feasible regime: solved / seeds, violating evaluations after the design, scaled Σ[g]+ after "
        "the design (medians)",
        lambda r: (
            f"{r['solved']}/{len(r['seeds'])}, {_fmt(r['violating_after_init']['median'], 3)}, "
            f"{_fmt(r['scaled_violation_after_init']['median'])}"
        ),
        methods,
    )
    online = table(
        "Cumulative regime: scaled cumulative regret, scaled [Σg]+, scaled Σ[g]+ (medians, every evaluation)",
        lambda r: (
            f"{_fmt(r['cumulative_regret']['median'], 3)}, {_fmt(r['scaled_soft_violation']['median'])}, "
            f"{_fmt(r['scaled_violation']['median'])}"
        ),
        methods,
    )
    budgeted = [
        m
        for m in methods
        if any(e["methods"].get(m, {}).get("within_budget") is not None for e in summary["problems"].values())
    ]
    if not budgeted:
        return "\n".join(best + online)
    budget = table(
        "Violation budget: runs within budget / seeds, median final gap, solved",
        lambda r: f"{r['within_budget']}/{len(r['seeds'])}, {_fmt(r['final_gap']['median'])}, {r['solved']}",
        budgeted,
    )
    return "\n".join(best + online + budget)


def plot_name(problem: str) -> str:
    """The file :func:`plot_curves` draws ``problem``'s curves in (under its ``out`` folder)."""
    return f"best-feasible-{problem}.png"


def plot_curves(records: list[dict[str, Any]], out: str | Path) -> list[Path]:
    """Per problem: median best feasible value (IQR band) and median gap (log scale) against evaluations."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summary = summarize(records)
    minimized = {r["problem"]: bool(r["minimize"]) for r in records}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for p, entry in summary["problems"].items():
        facts = entry["facts"]
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
        for mth, r in entry["methods"].items():
            for ax, curve in ((ax1, r["best_feasible_curve"]), (ax2, r["gap_curve"])):
                t = np.arange(1, len(curve["median"]) + 1)
                med = np.array([np.nan if v is None else v for v in curve["median"]], dtype=float)
                lo = np.array([np.nan if v is None else v for v in curve["q25"]], dtype=float)
                hi = np.array([np.nan if v is None else v for v in curve["q75"]], dtype=float)
                if ax is ax2:  # log scale: a gap of 0 (optimum hit exactly) drawn at 1e-8
                    med, lo, hi = (np.maximum(a, 1e-8) for a in (med, lo, hi))
                (line,) = ax.plot(t, med, label=mth)
                ax.fill_between(t, lo, hi, color=line.get_color(), alpha=0.15)
        ax1.axhline(facts["f_star"], color="k", ls="--", lw=1, label="f*")
        for ax in (ax1, ax2):
            ax.axvline(entry["n_init"] + 0.5, color="grey", ls=":", lw=1)
            ax.set_xlabel("evaluations")
        ax1.set_ylabel("best feasible f (median, IQR)")
        ax2.set_yscale("log")
        ax2.axhline(GAP_TOLERANCE, color="grey", ls="--", lw=1)
        # the gap is u* - u(best) with u = f maximized or -f minimized: f* - f_best or f_best - f*
        diff = "f_best - f*" if minimized[p] else "f* - f_best"
        ax2.set_ylabel(f"gap ({diff}) / {facts['gap_normaliser']} (median, IQR)")
        ax1.legend(fontsize=7)
        fig.suptitle(f"{p}: {facts['source']}")
        fig.tight_layout()
        path = out / plot_name(p)
        save_figure(fig, path)
        paths.append(path)
    return paths
