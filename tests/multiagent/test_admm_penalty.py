import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.multiagent.admm_penalty import ADMMCoordinator, ADMMPenaltyAgent
from ckb.multiagent.coordinator import play_rounds
from ckb.multiagent.messages import ADMMTarget, Allocation
from ckb.multiagent.methods import build_setup
from ckb.multiagent.problems import make_multiagent_problem


def test_admm_coordinator_hand_computed():
    c = ADMMCoordinator(2, [3.0])
    assert [m.target for m in c.outgoing()] == [(1.5,), (1.5,)]  # z = b / N, u = 0
    c.update([Allocation(0, 1, (2.0,)), Allocation(1, 1, (2.0,))])  # v = (2, 2): z = v - 1/2, u = a - z
    np.testing.assert_allclose(c.z[:, 0], [1.5, 1.5])
    np.testing.assert_allclose(c.u[:, 0], [0.5, 0.5])
    assert [m.target for m in c.outgoing()] == [(1.0,), (1.0,)]
    c.update([Allocation(0, 2, (1.0,)), Allocation(1, 2, (1.5,))])  # v = (1.5, 2): z = v - 0.25
    np.testing.assert_allclose(c.z[:, 0], [1.25, 1.75])
    np.testing.assert_allclose(c.u[:, 0], [0.25, 0.25])
    # the cumulative shift sum_t (sum_i a_i - b) = (4 - 3) + (2.5 - 3) equals sum_i u_i
    assert c.u.sum() == pytest.approx(0.5)
    c0 = ADMMCoordinator(2, [3.0], dual=False)
    c0.update([Allocation(0, 1, (2.0,)), Allocation(1, 1, (2.0,))])
    assert np.all(c0.u == 0) and [m.target for m in c0.outgoing()] == [(1.5,), (1.5,)]


def agent(**over):
    f = [0.0, -0.3, -0.5, -0.6, -0.65]
    kw = dict(
        agent=0,
        grid=np.linspace(0, 2, 5)[:, None],
        m=0,
        A=[[1.0]],
        Q=5.0,
        system={"f": f, "g": np.zeros((5, 0)), "noise_std": 0.0},
        model={"kernel": {"type": "se", "lengthscale": 0.5}, "noise": 1e-4, "beta": 3.0},
    )
    kw.update(over)
    return ADMMPenaltyAgent(**kw)


def test_agent_goes_to_the_target_before_any_data_then_trades_ei_against_the_penalty():
    a = agent()
    assert a.step(ADMMTarget(1, (0.6,))) == Allocation(0, 1, (0.5,))
    acq = a.acquisition(np.array([0.6]))
    mu, var = a.model.mean_var()
    from ckb.multiagent.dcei import expected_improvement_min

    want = (
        expected_improvement_min(mu[:, 0], np.sqrt(var[:, 0]), -0.3) - 2.5 * (np.linspace(0, 2, 5) - 0.6) ** 2
    )
    np.testing.assert_allclose(acq, want)
    with pytest.raises(InvalidInputError, match="m = 0"):
        agent(m=1, system={"f": np.zeros(5), "g": np.zeros((5, 1))})


def test_penalty_heuristic_end_to_end():
    problem = make_multiagent_problem("power-allocation", np.random.default_rng(0), n_agents=3, grid_size=21)
    s = build_setup("admm-penalty", problem, {"Q": 5.0}, 15, 0, 0)
    from ckb.multiagent.backends import InProcessBackend

    b = InProcessBackend(s.agent_cls, s.agent_kwargs)
    play_rounds(b, s.coordinator, 15)
    logs = b.call("environment_log", [None] * 3)
    shift = sum(lg.x[:, 0] for lg in logs).sum() - 15 * problem.b[0]
    assert shift == pytest.approx(s.coordinator.u.sum())
    with pytest.raises(InvalidInputError, match="has no parameter 'q'"):
        build_setup("admm-penalty", problem, {"q": 5.0}, 15, 0, 0)
