import numpy as np
import pytest
from scipy.optimize import minimize

from ckb.errors import InvalidInputError
from ckb.multiagent.problems import (
    MultiAgentProblem,
    distribution_optimum,
    grid_optimum,
    make_multiagent_problem,
    slater_margin,
    water_filling,
)


def random_problem(rng, N=3, G=6, m=2):
    grid = np.arange(G, dtype=float)[:, None]
    return MultiAgentProblem(
        "r",
        [grid] * N,
        [rng.normal(size=G) for _ in range(N)],
        [rng.normal(size=(G, m)) + 0.3 for _ in range(N)],
        A=[np.ones((1, 1))] * N,
        b=np.array([float(G)]),  # integer grid: the equality is attainable
    )


@pytest.mark.parametrize("seed", range(5))
def test_milp_equals_exhaustive_search(seed):
    rng = np.random.default_rng(seed)
    p = random_problem(rng)
    try:
        ex = grid_optimum(p, "exhaustive")
    except InvalidInputError:
        with pytest.raises(InvalidInputError):
            grid_optimum(p, "milp")
        return
    mi = grid_optimum(p, "milp")
    assert mi["f_star"] == pytest.approx(ex["f_star"])
    idx = mi["indices"]
    assert sum(idx) == 6 and np.all(sum(p.g[i][k] for i, k in enumerate(idx)) <= 1e-9)
    # the best distribution is at least as good as the best point
    assert distribution_optimum(p) <= ex["f_star"] + 1e-9


@pytest.mark.parametrize("seed", range(4))
def test_water_filling_is_the_constrained_optimum(seed):
    rng = np.random.default_rng(seed)
    a = np.exp(rng.uniform(np.log(0.2), np.log(5.0), 5))
    P, pmax = 4.0, 2.0
    p, w = water_filling(a, P, pmax)
    assert p.sum() == pytest.approx(P) and np.all((p >= 0) & (p <= pmax))
    res = minimize(
        lambda x: -np.sum(np.log1p(a * x)),
        np.full(5, P / 5),
        method="SLSQP",
        bounds=[(0, pmax)] * 5,
        constraints=[{"type": "eq", "fun": lambda x: x.sum() - P}],
        options={"ftol": 1e-12},
    )
    assert np.sum(np.log1p(a * p)) >= -res.fun - 1e-8
    # KKT: the marginal utility a/(1 + a p) equals 1/w wherever 0 < p < pmax
    inner = (p > 1e-9) & (p < pmax - 1e-9)
    np.testing.assert_allclose(a[inner] / (1 + a[inner] * p[inner]), 1 / w, rtol=1e-8)


def test_power_allocation_instance():
    p = make_multiagent_problem("power-allocation", np.random.default_rng(0), n_agents=3, grid_size=51)
    assert (p.n_agents, p.m, p.l) == (3, 0, 1)
    assert p.b[0] == pytest.approx(0.4 * 3 * 2.0)
    x = np.array(p.optimum["x_star"])
    gains = np.array(p.metadata["gains"])
    assert p.f_star == pytest.approx(-np.sum(np.log1p(gains * x)))
    # the continuous optimum is at least as good as the best joint grid point
    assert p.f_star <= grid_optimum(p, "exhaustive")["f_star"] + 1e-12
    assert p.hints["rho"] == pytest.approx(0.8) and p.hints["B"] == pytest.approx(3.6)  # max(2.4, 6 - 2.4)
    assert p.utility


def test_counterexample_ground_truth():
    p = make_multiagent_problem("counterexample", np.random.default_rng(0))
    opt = p.optimum
    assert opt["f_star"] == 0.5 and opt["x_star"] == [[0.0]] and opt["active"]
    assert opt["zeta"] == pytest.approx(-1.5)  # Condition 2 fails: x = 1 is infeasible and better
    assert distribution_optimum(p) == pytest.approx(1 / 3)  # 2/3 at -1, 1/3 at 1 (App. B)
    assert slater_margin(p) == pytest.approx(1.0)  # x = -1


def test_gp_samples_filter_and_hints():
    p = make_multiagent_problem(
        "gp-samples", np.random.default_rng(3), m=1, grid_size=40, require_active=True
    )
    assert p.optimum["active"] and p.hints["xi"] >= 0.05
    assert p.hints["xi"] == pytest.approx(-sum(g.min() for g in p.g))  # m = 1: best point of every agent
    C = np.array(p.hints["C"])
    assert C.shape == (3, 2) and C[0, 0] == pytest.approx(np.abs(p.f[0]).max())
    with pytest.raises(InvalidInputError, match="no gp-samples instance"):
        make_multiagent_problem(
            "gp-samples", np.random.default_rng(0), grid_size=10, min_slater=100.0, max_tries=3
        )
    with pytest.raises(InvalidInputError, match="has no parameter 'n_agent'"):
        make_multiagent_problem("gp-samples", np.random.default_rng(0), n_agent=2)


def test_problem_validation():
    with pytest.raises(InvalidInputError, match="same number m"):
        MultiAgentProblem(
            "x", [np.zeros((2, 1))] * 2, [np.zeros(2)] * 2, [np.zeros((2, 1)), np.zeros((2, 2))]
        )
    with pytest.raises(InvalidInputError, match=r"A_1 must have shape"):
        MultiAgentProblem(
            "x", [np.zeros((2, 1))] * 2, [np.zeros(2)] * 2, A=[np.ones((1, 1)), np.ones((1, 2))], b=[1.0]
        )
