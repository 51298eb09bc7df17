import dataclasses
import math

import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.multiagent.agent import HARNESS_METHODS
from ckb.multiagent.coordinator import play_rounds
from ckb.multiagent.dmabo import DMABOAgent, DMABOCoordinator, theory_parameters
from ckb.multiagent.messages import PriceBroadcast, Proposal
from ckb.multiagent.methods import build_setup
from ckb.multiagent.problems import make_multiagent_problem
from tests.multiagent.ma_helpers import RecordingBackend, ReversedBackend, small_problem


def oracle_agent(**over):
    kw = dict(
        agent=0,
        grid=[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]],
        m=2,
        A=[[1.0, 2.0]],
        eta=0.5,
        tie_break="first",
        system={"f": [0.0, -1.0, -0.5], "g": [[0.0, 0.0], [1.0, -1.0], [-1.0, 2.0]], "noise_std": 0.0},
        model={
            "kind": "oracle",
            "values": {"f": [0.0, -1.0, -0.5], "g": [[0.0, 0.0], [1.0, -1.0], [-1.0, 2.0]]},
        },
    )
    kw.update(over)
    return DMABOAgent(**kw)


def test_primal_step_hand_computed():
    # scores f + eta lam^T g + eta mu^T A x with eta = 0.5, lam = (1, 0.5), mu = 0.2:
    # x0: 0; x1: -1 + 0.5 (1 - 0.5) + 0.5 * 0.2 * 1 = -0.65; x2: -0.5 + 0.5 (-1 + 1) + 0.5 * 0.2 * 2 = -0.3
    agent = oracle_agent()
    p = agent.step(PriceBroadcast(1, lam=(1.0, 0.5), mu=(0.2,)))
    assert p == Proposal(0, 1, a_x=(1.0,), g_lcb=(1.0, -1.0))
    # a larger affine price makes x0 (A x = 0) the minimizer: x1: -1 + 0.25 + 0.5 mu; x0: 0
    agent2 = oracle_agent()
    p2 = agent2.step(PriceBroadcast(1, lam=(1.0, 0.5), mu=(1.5,)))
    assert p2.a_x == (0.0,) and p2.g_lcb == (0.0, 0.0)


def test_primal_step_without_affine_or_without_blackbox():
    # m = 0: f + eta mu A x; l = 0: f + eta lam g
    no_g = dict(
        m=0,
        system={"f": [0.0, -1.0, -0.5], "g": np.zeros((3, 0))},
        model={"kind": "oracle", "values": {"f": [0.0, -1.0, -0.5], "g": np.zeros((3, 0))}},
    )
    # mu = 0.9: x0: 0, x1: -1 + 0.45 = -0.55, x2: -0.5 + 0.9 = 0.4; mu = 2.5: x1: 0.25, x2: 2 -> x0
    assert oracle_agent(**no_g).step(PriceBroadcast(1, lam=(), mu=(0.9,))) == Proposal(0, 1, (1.0,), ())
    assert oracle_agent(**no_g).step(PriceBroadcast(1, lam=(), mu=(2.5,))) == Proposal(0, 1, (0.0,), ())
    b = oracle_agent(A=None)
    p = b.step(PriceBroadcast(1, lam=(3.0, 0.0), mu=()))  # x1: -1 + 1.5 = 0.5, x2: -0.5 - 1.5 = -2
    assert p.a_x == () and p.g_lcb == (-1.0, 2.0)


def test_agent_rejects_wrong_round_and_wrong_sizes():
    agent = oracle_agent()
    with pytest.raises(InvalidInputError, match="round 1 but received a message for round 2"):
        agent.step(PriceBroadcast(2, lam=(0.0, 0.0), mu=(0.0,)))
    with pytest.raises(InvalidInputError, match="m = 2 and l = 1"):
        agent.step(PriceBroadcast(1, lam=(0.0,), mu=(0.0,)))


def props(*rows):
    return [Proposal(i, 1, a_x=a, g_lcb=g) for i, (a, g) in enumerate(rows)]


def test_dual_update_with_and_without_slack_projects_only_lambda():
    rows = ((1.0,), (0.3, -0.1)), ((2.0,), (0.1, -0.2))  # sum g = (0.4, -0.3), sum A x = 3
    c = DMABOCoordinator(2, b=[5.0], eps=0.1, lam1=[0.5, 0.1], mu1=[0.3])
    c.update(props(*rows))
    np.testing.assert_allclose(c.lam, [0.5 + 0.4 + 0.1, 0.0])  # 0.1 - 0.3 + 0.1 = -0.1 -> 0
    np.testing.assert_allclose(c.mu, [0.3 + 3.0 - 5.0])  # -1.7: no projection on mu
    c0 = DMABOCoordinator(2, b=[5.0], eps=0.0, lam1=[0.5, 0.1], mu1=[0.3])
    c0.update(props(*rows))
    np.testing.assert_allclose(c0.lam, [0.9, 0.0])
    assert c.t == 2
    assert c.outgoing() == [PriceBroadcast(2, lam=c.lam, mu=c.mu)] * 2


def test_coordinator_checks_replies():
    c = DMABOCoordinator(2, b=[1.0], eps=0.0, lam1=[0.0], mu1=[0.0])
    with pytest.raises(InvalidInputError, match="expected agent 1, round 1"):
        c.update([Proposal(0, 1, (1.0,), (0.0,)), Proposal(0, 1, (1.0,), (0.0,))])
    with pytest.raises(InvalidInputError, match="expected m = 1 and l = 1"):
        c.update([Proposal(0, 1, (1.0,), ()), Proposal(1, 1, (1.0,), (0.0,))])
    with pytest.raises(InvalidInputError, match="lambda_1 must be >= 0"):
        DMABOCoordinator(1, b=[], eps=0.0, lam1=[-1.0], mu1=[])


def test_theory_parameters_hand_computed():
    # N = 2, m = 1: C0 = 2, C1 = 3, ||C||^2 = 9, xi = 1, T = 100 (eta = 0.1), no affine constraint
    th = theory_parameters(
        100, [[1.0, 2.0], [1.0, 1.0]], xi=1.0, beta_T=[[2.0], [2.0]], gamma_T=[[4.0], [9.0]]
    )
    assert th["eta"] == pytest.approx(0.1)
    assert th["H1"] == pytest.approx(0.5 * (80.0 + 36.0) ** 2)  # 6728
    assert th["H2"] == 0.0
    K = 6728.0 + 2 * 2 / 0.1 + 2 * 9
    assert th["eps2"] == pytest.approx(math.sqrt(2 * K) / 100)
    assert th["eps2_main_text"] == pytest.approx(math.sqrt(2 * K / 0.1) / 100)
    assert th["eps1"] == pytest.approx((math.sqrt(2 * K) + 8 * (2 * 20 + 2 * 30)) / 100)
    np.testing.assert_allclose(th["lam1"], [math.sqrt(6728.0)])
    assert th["eps_bound"] == pytest.approx(0.5)  # min(xi/2, C_1 = 3)
    # with an affine constraint: rho = 0.5, B = 2
    th = theory_parameters(100, [[1.0, 2.0], [1.0, 1.0]], xi=1.0, rho=0.5, B=2.0, l=1)
    assert th["H1"] == pytest.approx(0.5 * (80.0 + 44.0) ** 2)
    assert th["H2"] == pytest.approx(4 * 4 / (0.25 * 0.01) * 4 + 4 / 0.25 * (18 + 4) ** 2)


def run_dmabo(problem, T, params, backend_cls=RecordingBackend, seed=0):
    s = build_setup("dmabo", problem, params, T, seed, 0)
    backend = backend_cls(s.agent_cls, s.agent_kwargs)
    rec = []
    play_rounds(backend, s.coordinator, T, lambda t, sec, internals: rec.append(internals))
    return s, backend, rec


def test_invariants_shift_equals_dual_and_lambda_dominates():
    problem = small_problem()
    T = 25
    s, backend, rec = run_dmabo(problem, T, {"eps": 0.05, "lam1": 0.2, "mu1": 0.5})
    proposals = [out for method, _, out in backend.log if method == "step"]
    sum_ax = sum(np.sum([p.a_x for p in props_], axis=0) - problem.b for props_ in proposals)
    # Lemma A.10: sum_t (A x^t - b) = mu_{T+1} - mu_1 exactly
    np.testing.assert_allclose(sum_ax, s.coordinator.mu - 0.5, atol=1e-12)
    # proof of A.9: lambda_{T+1} >= lambda_1 + sum_t g_lcb^t + T eps
    sum_g = sum(np.sum([p.g_lcb for p in props_], axis=0) for props_ in proposals)
    assert np.all(s.coordinator.lam >= 0.2 + sum_g + T * 0.05 - 1e-12)
    # and the true shift of the played points is the same number (harness's channel)
    logs = backend.call("environment_log", [None] * problem.n_agents)
    d = sum(problem.ax_tables[i][logs[i].index] for i in range(problem.n_agents)) - problem.b
    np.testing.assert_allclose(d.sum(axis=0), s.coordinator.mu - 0.5, atol=1e-12)
    assert len(rec) == T and rec[-1]["mu"] == pytest.approx(s.coordinator.mu)


def test_no_raw_data_ever_crosses_an_agent_boundary():
    problem = small_problem(m=2)
    T = 20
    s, backend, _ = run_dmabo(problem, T, {"beta": 2.0})
    calls = [(method, args, out) for method, args, out in backend.log]
    assert {method for method, _, _ in calls} == set(DMABOAgent.protocol) == {"step"}  # nothing else
    # ground truth and persistence go through the harness's own, separately named channel
    assert set(HARNESS_METHODS).isdisjoint(DMABOAgent.protocol)
    observations = np.concatenate(
        [o.ravel() for o in backend.call("observations", [None] * problem.n_agents)]
    )
    logs = backend.call("environment_log", [None] * problem.n_agents)
    true_g = np.concatenate([lg.g.ravel() for lg in logs])
    points = np.concatenate([lg.x.ravel() for lg in logs])
    assert observations.size == T * problem.n_agents * (problem.m + 1)
    sent = []
    for _, args, out in calls:
        for msg in args:
            assert type(msg) is PriceBroadcast
            assert len(msg.lam) == problem.m and len(msg.mu) == problem.l
        for i, msg in enumerate(out):
            assert type(msg) is Proposal and msg.agent == i
            assert [f.name for f in dataclasses.fields(msg)] == ["agent", "round", "a_x", "g_lcb"]
            assert len(msg.a_x) == problem.l and len(msg.g_lcb) == problem.m
            sent += msg.numbers()
    sent = np.array(sent)
    assert not np.isin(sent, observations).any()  # no reading is ever sent
    assert not np.isin(sent, true_g).any()  # nor a true constraint value
    # A_i = [1, 1] on a 2-d grid: the sent a_x do not identify the points (several grid points per value)
    assert points.size == 2 * T * problem.n_agents
    # round 1's g_lcb are the prior's clipped bounds max(0 - beta * 1, -C_ij) (pre-evaluation, no data)
    C = np.asarray(problem.hints["C"])
    for i, p in enumerate(calls[0][2]):
        np.testing.assert_allclose(p.g_lcb, np.maximum(-2.0, -C[i, 1:]))


def test_same_seed_same_decisions_whatever_the_call_order():
    problem = small_problem()
    a, ba, _ = run_dmabo(problem, 15, {}, RecordingBackend, seed=3)
    b, bb, _ = run_dmabo(problem, 15, {}, ReversedBackend, seed=3)
    la = ba.call("environment_log", [None] * 3)
    lb = bb.call("environment_log", [None] * 3)
    for x, y in zip(la, lb):
        np.testing.assert_array_equal(x.index, y.index)
    np.testing.assert_array_equal(a.coordinator.lam, b.coordinator.lam)


@pytest.mark.parametrize("T", [100, 1000])
def test_counterexample_reproduces_table_1(T):
    problem = make_multiagent_problem("counterexample", np.random.default_rng(0))
    params = {"surrogate": "oracle", "tie_break": "first", "eps": 0.0, "lam1": 0.0}
    s, backend, rec = run_dmabo(problem, T, params)
    log = backend.call("environment_log", [None])[0]
    # x = 0 (index 1) is never played; about 1/3 of the rounds at x = 1; V+_T = sum [g]^+ grows like 2T/3
    assert not np.any(log.index == 1)
    share_plus = np.mean(log.index == 2)
    strong = np.maximum(log.g[:, 0], 0.0).sum()
    regret = np.sum(log.f - 0.5)
    expected = {100: (0.36, 72.0, 8.0, -22.0), 1000: (0.341, 682.0, 23.0, -182.0)}[T]  # digest 4.3
    assert (share_plus, strong, log.g.sum(), regret) == pytest.approx(expected)
    # lambda oscillates around 2 / (3 eta) = 2 sqrt(T) / 3 and equals sum_t g (eps = 0, lambda_1 = 0, never clipped)
    lam = np.array([r["lam"][0] for r in rec])
    assert lam[-1] == pytest.approx(log.g.sum())
    assert abs(lam[T // 2 :].mean() - 2 * math.sqrt(T) / 3) < 2.0


def test_theory_mode_records_admissibility_and_caps():
    problem = make_multiagent_problem("gp-samples", np.random.default_rng(1), m=1, grid_size=30)
    beta = {"type": "theory", "delta": 0.1, "sigma": 0.02}
    s2 = build_setup("dmabo", problem, {"mode": "theory", "eps": "eps2", "beta": beta}, 400, 0, 0)
    s1 = build_setup(
        "dmabo", problem, {"mode": "theory", "eps": "eps1", "eps_cap": "xi/2", "beta": beta}, 400, 0, 0
    )
    assert s2.record["eps"] == pytest.approx(s2.record["eps_formula"])
    assert s1.record["eps_formula"] > s2.record["eps_formula"]
    assert s1.record["eps"] == pytest.approx(min(s1.record["eps_formula"], s1.record["eps_bound"]))
    assert s1.record["eps_capped"] == (s1.record["eps_formula"] > s1.record["eps_bound"])
    assert s2.record["eta"] == pytest.approx(0.05)
    th = theory_parameters(400, problem.hints["C"], xi=problem.hints["xi"])
    np.testing.assert_allclose(s2.coordinator.lam, th["lam1"])
    with pytest.raises(InvalidInputError, match=r"eps must be one of \('eps1', 'eps2'\)"):
        build_setup("dmabo", problem, {"mode": "theory", "eps": 0.1, "beta": beta}, 400, 0, 0)
    with pytest.raises(InvalidInputError, match="has no parameter 'etaa'"):
        build_setup("dmabo", problem, {"etaa": 0.1}, 400, 0, 0)
