import math

import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.io import load_state, save_state
from ckb.kernels import Matern
from ckb.policies import POLICIES, make_policy
from ckb.policies.admmbo import (
    ADMMBO,
    adapt_rho,
    admm_residuals,
    dual_update,
    expected_improvement,
    max_admm_iterations,
    prob_feasible,
    z_step_ei,
)
from ckb.problems import BoxDomain, FiniteDomain, GaussianNoise, Observation, Problem
from ckb.runner.environment import Environment

# a small smooth problem: max -(x - a)^2 s.t. x1 + x2 <= 1; the optimum is a's projection on the line
A = np.array([0.7, 0.6])
X_STAR = A - (A.sum() - 1.0) / 2.0  # (0.55, 0.45)
F_STAR = -float(np.sum((X_STAR - A) ** 2))  # -0.045


def _problem(m=1, grid=None, noise=0.01, c_noise=0.01):
    dom = BoxDomain([0.0, 0.0], [1.0, 1.0], grid=grid)
    f = lambda X: -np.sum((X - A) ** 2, axis=1)
    g = lambda X: np.column_stack([X[:, 0] + X[:, 1] - 1.0 + 0.1 * j for j in range(m)])
    return Problem("toy", dom, f, g, GaussianNoise(noise, c_noise), kernel=Matern(0.3))


def _run(pol, env, rounds):
    actions = []
    for _ in range(rounds):
        a = pol.ask()
        out = env.step(a)
        for obs in env.deliver(out):
            pol.tell(obs)
        actions.append((a, pol.internals()))
    return actions


# ------------------------------------------------------------------------------------- formulas
def test_z_step_ei_in_its_three_regimes():
    Q = np.array([-0.5, 0.0, 0.4, 0.999, 1.0, 1.5])
    p = np.array([0.9, 0.3, 0.25, 0.5, 0.2, 0.8])
    # Q < 0: 0;  0 <= Q < 1: Q p;  Q >= 1: Q - (1 - p)
    expected = [0.0, 0.0, 0.1, 0.4995, 0.2, 1.3]
    np.testing.assert_allclose(z_step_ei(Q, p), expected, rtol=1e-12, atol=1e-15)


def test_feasibility_probability_uses_the_standard_deviation():
    # c ~ N(0.5, 0.25): Pr[c <= 0] = Phi(-0.5 / 0.5) = Phi(-1) (the original's normcdf(0, m, s2) would
    # give Phi(-2))
    assert prob_feasible(np.array([0.5]), np.array([0.25]))[0] == pytest.approx(
        0.15865525393145707, rel=1e-12
    )
    np.testing.assert_array_equal(prob_feasible(np.array([-1.0, 0.0, 1.0]), np.zeros(3)), [1.0, 1.0, 0.0])


def test_expected_improvement_hand_values():
    # best = mean: sigma phi(0); best - mean = sigma: sigma (Phi(1) + phi(1)); sigma = 0: max(best - mean, 0)
    ei = expected_improvement(1.0, np.array([1.0, 0.0, 0.5, 2.0]), np.array([4.0, 1.0, 0.0, 0.0]))
    np.testing.assert_allclose(
        ei, [2 * 0.3989422804014327, 0.8413447460685429 + 0.24197072451914337, 0.5, 0.0], rtol=1e-12
    )


def test_dual_update_and_stopping_rule_on_hand_computed_numbers():
    x, rho = np.array([1.0, 2.0]), 0.5
    z = np.array([[1.1, 2.0]])
    y = dual_update(np.array([[0.2, -0.1]]), x, z, rho)
    np.testing.assert_allclose(y, [[0.15, -0.1]])  # 0.2 + 0.5 (1.0 - 1.1), -0.1 + 0.5 (2 - 2)
    res = admm_residuals(x, z, np.array([[1.5, 2.0]]), y, rho)
    # r = ||x - z|| = 0.1;  s = ||0.5 (z - z_old)|| = 0.2
    # eps_pri = sqrt(2) 0.05 + 1.5 0.05 max(sqrt(5), sqrt(5.21)) = 0.24190137
    # eps_dual = sqrt(2) 0.05 + 1.5 0.05 ||0.5 (0.15, -0.1)|| = 0.07747109
    assert res["r"][0] == pytest.approx(0.1)
    assert res["s"][0] == pytest.approx(0.2)
    assert res["eps_pri"][0] == pytest.approx(0.24190137, abs=1e-8)
    assert res["eps_dual"][0] == pytest.approx(0.07747109, abs=1e-8)
    assert not res["converged"][0]  # the dual residual is too large
    res = admm_residuals(x, z, z, y, rho)  # z did not move: s = 0
    assert res["converged"][0]
    res = admm_residuals(x, np.array([[1.4, 2.0]]), np.array([[1.4, 2.0]]), y, rho)
    assert res["r"][0] == pytest.approx(0.4) and not res["converged"][0]  # 0.4 > eps_pri = 0.2460


def test_rho_adaptation_and_iteration_formula():
    assert adapt_rho(0.1, np.array([1.0]), np.array([0.05])) == 0.2  # 1 > 10 * 0.05
    assert adapt_rho(0.1, np.array([0.01]), np.array([0.2])) == 0.05  # 10 * 0.01 < 0.2
    assert adapt_rho(0.1, np.array([0.1, 0.3]), np.array([0.2, 0.1])) == 0.1
    assert max_admm_iterations(200, 1, 10, 50, 5) == 15  # toy-1: 1 + round(140 / 10)
    assert max_admm_iterations(200, 1, 20, 20, 2) == 41  # 4-D example: 1 + round(160 / 4)
    assert max_admm_iterations(25, 1, 5, 10, 2) == 4  # 1 + round(2.5), MATLAB rounds halves up


# ---------------------------------------------------------------------------------- state machine
def test_registered():
    assert POLICIES.get("admmbo") is ADMMBO


def test_state_machine_issues_the_right_points_per_iteration(rng):
    """m = 2 with stub observations: initial points, then per iteration the X points and each constraint's
    Z points; x*, z_i and y_i follow the formulas on the policy's own data; then the recommendation."""
    p = _problem(m=2)
    pol = make_policy(
        "admmbo", p.info(), rng, n_initial=2, initial_bud_f=3, initial_bud_c=4, final_bud=2,
        max_iterations=3, abstol=0.0, reltol=0.0, n_candidates=64,
    )  # fmt: skip
    stub = np.random.default_rng(5)
    log = []
    checked = False
    for t in range(1, 40):
        x = pol.ask()
        assert x.shape == (2,) and np.all((x >= 0) & (x <= 1))
        pol.tell(Observation(t, -1, x, float(stub.normal()), stub.normal(size=2)))
        it = pol.internals()
        log.append((int(it["step"]), int(it["constraint"]), int(it["admm_iteration"]), int(it["sample"])))
        if not checked and pol.iteration == 2:  # iteration 1 just ended: check its updates by hand
            checked = True
            P, Y, C = np.array(pol._P), np.array(pol._Y), np.array(pol._C)
            xr = pol._x_rows
            al = -Y[xr] + 2 * 0.1 / 2 * np.sum((P[xr] - 1.0) ** 2, axis=1)  # ybar = 0, zbar = (1, 1)
            np.testing.assert_array_equal(pol.x_star, P[xr][np.argmin(al)])
            for j in range(2):
                zr = pol._z_rows[j]
                h = (C[zr, j] > 0) + 0.1 / (2 * 50) * np.sum((pol.x_star - P[zr]) ** 2, axis=1)
                np.testing.assert_array_equal(pol.z[j], P[zr][np.argmin(h)])
                np.testing.assert_allclose(pol.duals[j], 0.1 * (pol.x_star - pol.z[j]), rtol=1e-15)
    expected = [(0, -1, 0, 1)] * 2 + [(1, -1, 1, 1)] * 3 + [(2, 0, 1, 1)] * 4 + [(2, 1, 1, 1)] * 4
    for k in (2, 3):
        expected += [(1, -1, k, 1)] * 2 + [(2, 0, k, 1)] * 2 + [(2, 1, k, 1)] * 2
    n = len(expected)  # 2 + 3 + 2 * 4 + 2 * 3 * 2 = 25
    assert log[:n] == expected
    assert checked and pol.n_samples == n == 25
    assert len(pol._x_rows) == 2 + 3 + 2 + 2 and [len(r) for r in pol._z_rows] == [2 + 4 + 2 + 2] * 2
    assert all(step == 3 and s == 0 for step, _, _, s in log[n:])  # then only the recommendation
    assert pol.stopped and pol.internals()["stopped"] == 1.0


def test_recommendation_is_the_best_tolerance_feasible_incumbent(rng):
    p = _problem()
    env = Environment(p, np.random.default_rng(1))
    pol = make_policy(
        "admmbo", p.info(), rng, initial_bud_f=2, initial_bud_c=2, final_bud=1, max_iterations=6,
        n_candidates=64, tol_c=0.05,
    )  # fmt: skip
    # record which evaluations ADMMBO offers as incumbents (each x* and z_i it produces)
    checked = []
    update = pol._update_incumbent
    pol._update_incumbent = lambda row: (checked.append(row), update(row))[1]
    observed = []
    while not pol.stopped:
        for o in env.deliver(env.step(pol.ask())):
            observed.append(o)
            pol.tell(o)
    # the incumbent is the best (highest observed y) of the offered evaluations with c <= tol_c
    feasible = [r for r in set(checked) if observed[r].c[0] <= 0.05]
    assert len(feasible) >= 2 and len(set(checked)) > len(feasible)  # a real choice in this run
    best = max(feasible, key=lambda r: observed[r].y)
    last = [r for r in checked if r in feasible][-1]
    assert best != last  # so keeping the last tol-feasible x* / z_i would be caught
    rec = pol.recommendation
    np.testing.assert_array_equal(rec, observed[best].x)
    # and the recommendation is played from now on
    t = len(observed)
    for _ in range(3):
        t += 1
        np.testing.assert_array_equal(pol.ask(), rec)
        pol.tell(Observation(t, -1, rec, 0.0, np.zeros(1)))


def test_solves_a_small_smooth_problem():
    p = _problem(c_noise=0.0)  # noiseless constraint readings (as in 001 E.1.1)
    env = Environment(p, np.random.default_rng(1))
    pol = make_policy("admmbo", p.info(), np.random.default_rng(2), n_candidates=1024)
    log = _run(pol, env, 160)
    assert pol.stopped
    n = int(sum(it["sample"] for _, it in log))
    assert n == pol.n_samples < 160
    f, g = p.evaluate(-1, pol.recommendation)
    assert g[0] <= 0.01  # feasible up to ADMMBO's tolerance
    assert f >= F_STAR - 0.01  # f* = -0.045; f ranges down to -0.85 on the box
    np.testing.assert_array_equal(log[-1][0], pol.recommendation)


def test_checkpoint_resume_continues_bit_identically(tmp_path):
    p = _problem(m=2)
    kw = dict(initial_bud_f=4, initial_bud_c=4, final_bud=2, n_candidates=128)
    env_a = Environment(p, np.random.default_rng(11))
    a = make_policy("admmbo", p.info(), np.random.default_rng(12), **kw)
    _run(a, env_a, 21)  # in the middle of a Z-step of iteration 2
    save_state(tmp_path / "ckpt", {"policy": a.state_dict(), "env": env_a.state_dict()})
    state = load_state(tmp_path / "ckpt")
    b = make_policy("admmbo", p.info(), np.random.default_rng(999), **kw)
    b.load_state_dict(state["policy"])
    env_b = Environment(p, np.random.default_rng(0))
    env_b.load_state_dict(state["env"])
    for (xa, ia), (xb, ib) in zip(_run(a, env_a, 30), _run(b, env_b, 30)):
        np.testing.assert_array_equal(xa, xb)
        assert ia.keys() == ib.keys()
        for k in ia:
            assert ia[k] == ib[k] or (math.isnan(ia[k]) and math.isnan(ib[k]))
    np.testing.assert_array_equal(a.duals, b.duals)
    assert a.rho == b.rho and a.n_samples == b.n_samples


def test_grid_domain_gets_indices(rng):
    p = _problem(grid=7)
    pol = make_policy(
        "admmbo", p.info(), rng, initial_bud_f=2, initial_bud_c=2, final_bud=1, max_iterations=2
    )
    env = Environment(p, np.random.default_rng(0))
    for a, _ in _run(pol, env, 12):
        assert isinstance(a, int) and 0 <= a < 49
    assert pol.stopped


# --------------------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "params, match",
    [
        ({"rho": 0.0}, "rho must be > 0.0, got 0.0"),
        ({"M": -1.0}, "M must be > 0.0, got -1.0"),
        ({"final_bud": 0}, "final_bud must be >= 1, got 0"),
        ({"initial_bud_f": 1.5}, "initial_bud_f must be an integer, got 1.5"),
        ({"n_candidates": 0}, "n_candidates must be >= 1, got 0"),
        ({"abstol": float("nan")}, "abstol must be finite"),
        ({"tol_c": -0.1}, "tol_c must be >= 0"),
        ({"max_iterations": 0}, "max_iterations must be >= 1, got 0"),
        ({"total_budget": 40}, "total_budget = 40 is too small"),
        ({"ei_noise": "yes"}, "ei_noise must be true or false, got 'yes'"),
        ({"rho0": 1.0}, "Did you mean 'rho'"),
    ],
)
def test_bad_parameters_are_named(rng, params, match):
    with pytest.raises(InvalidInputError, match=match):
        make_policy("admmbo", _problem().info(), rng, **params)


def test_unsuitable_problems_are_rejected(rng):
    dom = BoxDomain([0.0], [1.0])
    free = Problem("free", dom, lambda X: X[:, 0], None, GaussianNoise(0.1, 0.1))
    with pytest.raises(InvalidInputError, match="at least one constraint.*m = 0"):
        make_policy("admmbo", free.info(), rng)
    arms = Problem("arms", FiniteDomain([0.0, 1.0]), np.zeros(2), np.zeros((2, 1)), GaussianNoise(0.1, 0.1))
    with pytest.raises(InvalidInputError, match="box domain.*FiniteDomain"):
        make_policy("admmbo", arms.info(), rng)


def test_protocol_errors_leave_the_state_unchanged(rng):
    p = _problem()
    pol = make_policy("admmbo", p.info(), rng)
    x = pol.ask()
    with pytest.raises(InvalidInputError, match="tell\\(\\) the observation"):
        pol.ask()
    with pytest.raises(InvalidInputError, match="finite"):
        pol.tell(Observation(1, -1, x, float("nan"), np.zeros(1)))
    with pytest.raises(InvalidInputError, match="m = 1"):
        pol.tell(Observation(1, -1, x, 0.0, np.zeros(2)))
    assert pol.n_samples == 0
    pol.tell(Observation(1, -1, x, 0.0, np.zeros(1)))
    assert pol.n_samples == 1
    with pytest.raises(InvalidInputError, match="without a pending ask"):
        pol.tell(Observation(1, -1, x, 0.0, np.zeros(1)))
