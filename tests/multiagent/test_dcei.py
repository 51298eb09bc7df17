import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import norm

from ckb.errors import InvalidInputError
from ckb.multiagent.coordinator import play_rounds
from ckb.multiagent.dcei import DCEIAgent, DCEICoordinator, expected_improvement_min, prob_nonpositive
from ckb.multiagent.messages import CEIBroadcast, PosteriorSummary
from ckb.multiagent.methods import build_setup
from ckb.multiagent.problems import make_multiagent_problem
from tests.multiagent.ma_helpers import RecordingBackend, small_problem


@pytest.mark.parametrize("mean, std, best", [(0.3, 0.5, 0.0), (-1.0, 0.2, 0.1), (2.0, 1.5, 2.5)])
def test_expected_improvement_is_the_integral(mean, std, best):
    ref = quad(lambda y: (best - y) * norm.pdf(y, mean, std), -np.inf, best)[0]
    assert expected_improvement_min(np.array([mean]), np.array([std]), best)[0] == pytest.approx(
        ref, abs=1e-9
    )
    assert expected_improvement_min(np.array([mean]), np.array([0.0]), best)[0] == max(best - mean, 0.0)
    assert prob_nonpositive(np.array([mean]), np.array([std]))[0] == pytest.approx(norm.cdf(0, mean, std))
    assert prob_nonpositive(np.array([0.0, 1e-3]), np.array([0.0, 0.0])).tolist() == [1.0, 0.0]


def oracle_dcei():
    f, g = [0.0, -1.0, 1.0], [[0.5], [-0.5], [2.0]]
    return DCEIAgent(
        agent=0,
        grid=[[0.0], [1.0], [2.0]],
        m=1,
        seed=[0, 0, 2, 0],
        system={"f": f, "g": g},
        model={"kind": "oracle", "values": {"f": f, "g": g}},
    )


def test_agent_adds_the_others_posterior_and_maximizes_constrained_ei():
    agent = oracle_dcei()
    s1 = agent.step(CEIBroadcast(1))  # round 1: a random grid point
    k = [0.0, -1.0, 1.0].index(s1.f_mean)
    assert (s1.y_f, s1.f_var, s1.g_var) == (s1.f_mean, 0.0, (0.0,))
    # others: f mean 2, var 0.25; g mean -1, var 0.16; incumbent 1.5
    b = CEIBroadcast(
        2, f_mean=s1.f_mean + 2.0, f_var=0.25, g_mean=(s1.g_mean[0] - 1.0,), g_var=(0.16,), incumbent=1.5
    )
    acq = agent.acquisition(b)
    f, g = np.array([0.0, -1.0, 1.0]), np.array([0.5, -0.5, 2.0])
    want = expected_improvement_min(f + 2.0, np.full(3, 0.5), 1.5) * norm.cdf(-(g - 1.0) / 0.4)
    np.testing.assert_allclose(acq, want)
    s2 = agent.step(b)
    assert s2.f_mean == f[int(np.argmax(want))]
    assert k in (0, 1, 2)
    # without an incumbent: the probability of feasibility alone
    b0 = CEIBroadcast(3, f_mean=s2.f_mean + 2.0, f_var=0.25, g_mean=(s2.g_mean[0] - 1.0,), g_var=(0.16,))
    np.testing.assert_allclose(agent.acquisition(b0), norm.cdf(-(g - 1.0) / 0.4))


def test_coordinator_sums_and_keeps_the_best_feasible_observed_total():
    c = DCEICoordinator(2, 1)
    assert c.outgoing() == [CEIBroadcast(1)] * 2

    def summ(i, t, yf, yg):
        return PosteriorSummary(i, t, 1.0 + i, 0.1, (0.5,), (0.2,), yf, (yg,))

    c.update([summ(0, 1, 1.0, 0.5), summ(1, 1, 2.0, 0.1)])  # total g = 0.6 > 0: infeasible
    assert c.incumbent is None
    msg = c.outgoing()[0]
    assert (msg.round, msg.f_mean, msg.f_var, msg.g_mean, msg.g_var) == (2, 3.0, 0.2, (1.0,), (0.4,))
    c.update([summ(0, 2, 1.0, -0.5), summ(1, 2, 2.0, 0.1)])  # feasible, total 3
    c.update([summ(0, 3, 5.0, -0.5), summ(1, 3, 2.0, 0.1)])  # feasible but worse
    assert c.incumbent == 3.0


def test_dcei_end_to_end_and_its_own_messages_only():
    problem = make_multiagent_problem("gp-samples", np.random.default_rng(0), grid_size=30)
    s = build_setup("dcei", problem, {}, 10, 0, 0)
    backend = RecordingBackend(s.agent_cls, s.agent_kwargs)
    play_rounds(backend, s.coordinator, 10)
    for method, args, out in backend.log:
        assert method == "step"
        assert all(type(a) is CEIBroadcast for a in args) and all(type(o) is PosteriorSummary for o in out)
    with pytest.raises(InvalidInputError, match="no affine constraints"):
        build_setup("dcei", small_problem(), {}, 10, 0, 0)
