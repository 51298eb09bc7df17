"""Bad multi-agent problem inputs get one InvalidInputError naming the value (probe report A3-A6, C3, D1)."""

import math

import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.multiagent.methods import build_setup
from ckb.multiagent.problems import (
    MAX_POWER_ALLOCATION_VALUES,
    MultiAgentProblem,
    grid_optimum,
    is_feasible,
    make_multiagent_problem,
    water_filling,
)
from tests.multiagent.ma_helpers import small_problem

X = np.linspace(0.0, 1.0, 5)[:, None]
F = [np.arange(5.0), np.arange(5.0)[::-1].copy()]
G = [np.arange(5.0)[:, None] - 2, np.zeros((5, 1)) - 0.5]
K = {"type": "se", "lengthscale": 0.3}


def _problem(**kw):
    args = {"name": "p", "grids": [X, X], "f": F, "g": G, "kernel": K}
    args.update(kw)
    return MultiAgentProblem(**args)


def _raises(match, fn, *args, **kwargs):
    with pytest.raises(InvalidInputError, match=match) as exc:
        fn(*args, **kwargs)
    assert "\n" not in str(exc.value)
    return str(exc.value)


def _power(**params):
    return make_multiagent_problem("power-allocation", np.random.default_rng(0), **params)


# ------------------------------------------------------------------------------------ A3: hints
@pytest.mark.parametrize(
    "hints, match",
    [
        ({"xi": math.inf}, r"^hints\['xi'\].* must be finite, got inf\.$"),
        ({"xi": math.nan}, r"^hints\['xi'\].* must be finite, got nan\.$"),
        ({"xi": "big"}, r"^hints\['xi'\].* must be a real number, got 'big'"),
        ({"xi": 0.0}, r"^hints\['xi'\].* must be > 0\.0, got 0\.0\.$"),
        ({"rho": -1}, r"^hints\['rho'\].* must be > 0\.0, got -1"),
        ({"rho": "x"}, r"^hints\['rho'\].* must be a real number"),
        ({"B": math.nan}, r"^hints\['B'\].* must be finite, got nan\.$"),
        ({"B": -1.0}, r"^hints\['B'\].* must be >= 0\.0, got -1\.0\.$"),
        ({"Xi": 0.5}, r"^hints has no constant 'Xi' \(C, xi, rho, B\)\. Did you mean 'xi'\?"),
    ],
)
def test_problem_checks_its_hints(hints, match):
    _raises(match, _problem, hints=hints)


def test_problem_keeps_valid_hints_and_unknown_xi():
    p = _problem(hints={"xi": 0.5, "rho": None, "B": 2})
    assert p.hints["xi"] == 0.5 and p.hints["rho"] is None and p.hints["B"] == 2.0


def test_theory_mode_names_a_bad_hint_set_after_construction():
    p = small_problem(m=1, affine=True)
    p.hints["xi"] = math.nan
    _raises(
        r"^xi \(hints\['xi'\].* must be finite, got nan\.$",
        build_setup,
        "dmabo",
        p,
        {"mode": "theory"},
        5,
        0,
        0,
    )
    p.hints["xi"], p.hints["rho"] = 0.5, math.nan
    _raises(r"^rho \(hints\['rho'\].* must be finite", build_setup, "dmabo", p, {"mode": "theory"}, 5, 0, 0)


def test_theory_mode_refuses_constants_that_overflow():
    p = small_problem(m=1, affine=True)
    p.hints["xi"] = 1e-300
    _raises(
        r"^theory mode: Theorem 4\.1's constants overflow.*xi = 1e-300",
        build_setup,
        "dmabo",
        p,
        {"mode": "theory"},
        5,
        0,
        0,
    )


# ------------------------------------------------------------------------ A4: power allocation grid
@pytest.mark.parametrize(
    "params, match",
    [
        (
            {"n_agents": 5, "budget_fraction": 0.333},
            r"grid_size = 101 .*budget_fraction = 0\.333.*33\.3 must be an integer.*budget_fraction = 0\.33 or 0\.34 or grid_size = 1001\.$",
        ),
        (
            {"n_agents": 3, "grid_size": 4, "budget_fraction": 0.3},
            r"grid_size = 4 .*budget_fraction = 0\.3\b.*grid_size = 11\.$",
        ),
        ({"grid_size": 2}, r"grid_size = 2 .*use grid_size = 6\.$"),
    ],
)
def test_power_allocation_refuses_a_grid_without_p_over_n(params, match):
    _raises(r"^power-allocation: the grid of " + match, _power, **params)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"grid_size": 1001},
        {"n_agents": 3, "grid_size": 21},
        {"n_agents": 2, "grid_size": 11},
        {"budget_fraction": 0.25, "grid_size": 5},
    ],
)
def test_power_allocation_grid_contains_p_over_n(params):
    p = _power(**params)
    share = p.metadata["budget"] / p.n_agents
    k = int(np.argmin(np.abs(p.grids[0][:, 0] - share)))
    assert abs(p.grids[0][k, 0] - share) < 1e-12
    assert is_feasible(p, [k] * p.n_agents)  # the exhaustive search's exact test


@pytest.mark.parametrize("params", [{"grid_size": 10**9}, {"n_agents": 10**8}])
def test_power_allocation_is_capped_before_allocating(params):
    _raises(
        rf"^power-allocation would tabulate n_agents grid_size = .*at most {MAX_POWER_ALLOCATION_VALUES} are allowed\.$",
        _power,
        **params,
    )


# ------------------------------------------------------------------------------- A5: MILP re-check
def _edge(b_extra=None):
    X2 = np.array([[0.0], [1.0]])
    return MultiAgentProblem(
        "edge",
        [X2, X2],
        [np.array([0.0, -1.0])] * 2,
        [np.array([[-1.0], [0.5 + 1e-8]]), np.array([[-1.0], [-0.5]])],
        kernel={"type": "se", "lengthscale": 1.0},
    )


def test_milp_point_is_rechecked_and_falls_back_to_the_exhaustive_search():
    p = _edge()
    exact = grid_optimum(p, "exhaustive")
    got = grid_optimum(p, "milp")
    assert got["f_star"] == exact["f_star"] == -1.0 and got["indices"] == exact["indices"]


def test_milp_point_that_fails_the_exact_test_is_an_error_when_too_large_to_search():
    _raises(
        r"^problem 'edge': the MILP's joint grid point \[1, 1\] violates the constraints",
        grid_optimum,
        _edge(),
        "milp",
        max_joint=1,
    )


def test_milp_still_agrees_on_a_regular_instance():
    p = small_problem(m=1, affine=False, G1=3)
    assert grid_optimum(p, "milp")["f_star"] == pytest.approx(grid_optimum(p, "exhaustive")["f_star"])


# --------------------------------------------------------------------------------- A6: water filling
@pytest.mark.parametrize(
    "gains, budget, p_max, match",
    [
        ([0.0, 1.0], 1.0, 2.0, r"^gains must be > 0"),
        ([-1.0, 1.0], 1.0, 2.0, r"^gains must be > 0"),
        ([np.nan, 1.0], 1.0, 2.0, r"^gains must be finite"),
        ([1.0, 1.0], math.nan, 2.0, r"^budget P must be finite, got nan\.$"),
        ([1.0, 1.0], 1.0, math.inf, r"^p_max must be finite, got inf\.$"),
        ([1.0, 1.0], 1.0, -2.0, r"^p_max must be >= 0\.0, got -2\.0\.$"),
        ([1.0, 1.0], -1.0, 2.0, r"^budget P must be in \[0, N p_max\]"),
    ],
)
def test_water_filling_refuses_bad_input(gains, budget, p_max, match):
    _raises(match, water_filling, np.array(gains), budget, p_max)


def test_water_filling_valid_input_unchanged():
    p, w = water_filling(np.array([1.0, 2.0]), 1.0, 2.0)
    assert p.sum() == pytest.approx(1.0) and w == pytest.approx(0.5 * (1.0 + 1.0 + 0.5))


# --------------------------------------------------------------------- C3: optimum, metadata, g
@pytest.mark.parametrize(
    "kw, match",
    [
        ({"optimum": {"method": "given"}}, r"^optimum must be None or a dict with a finite 'f_star'"),
        ({"optimum": 3.0}, r"^optimum must be None or a dict with a finite 'f_star'.*got 3\.0\.$"),
        ({"optimum": {"f_star": math.nan}}, r"^optimum\['f_star'\] must be finite, got nan\.$"),
        ({"optimum": {"f_star": "x"}}, r"^optimum\['f_star'\] must be a real number"),
        ({"metadata": [1]}, r"^metadata must be a dict .*got \[1\] \(list\)\.$"),
        ({"g": [[["a"]] * 5, G[1]]}, r"^g of agent 0 must hold real numbers"),
        ({"A": [np.ones((1, 1))] * 2}, r"^A was given without b"),
    ],
)
def test_problem_refuses_malformed_arguments(kw, match):
    _raises(match, _problem, **kw)


def test_factory_returning_something_else_is_named(monkeypatch):
    from ckb.multiagent import MULTIAGENT_PROBLEMS

    def bad(rng):
        return {"not": "a problem"}

    monkeypatch.setitem(MULTIAGENT_PROBLEMS._items, "_test-not-a-problem", bad)
    _raises(
        r"^the factory of multi-agent problem '_test-not-a-problem' returned \{'not': 'a problem'\} \(dict\)",
        make_multiagent_problem,
        "_test-not-a-problem",
        np.random.default_rng(0),
    )


# ------------------------------------------------------------------------------ D1: gp_noise, A8
@pytest.mark.parametrize("problem", ["gp-samples", "power-allocation"])
def test_gp_noise_below_the_gp_floor_is_refused_by_the_factory(problem):
    _raises(
        r"^gp_noise \(lambda\) must be >= 1e-12 times the kernel's prior variance",
        make_multiagent_problem,
        problem,
        np.random.default_rng(0),
        gp_noise=1e-300,
    )


def test_gp_samples_refuses_require_active_without_constraints():
    _raises(
        r"^require_active = True needs a black-box constraint \(m >= 1\)",
        make_multiagent_problem,
        "gp-samples",
        np.random.default_rng(0),
        m=0,
        grid_size=10,
        require_active=True,
    )
