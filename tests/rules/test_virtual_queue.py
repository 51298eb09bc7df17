"""Drift-plus-penalty with virtual queues (ckb.rules.virtual_queue): the queues by hand, the score, and the
optimizer policy's queues as a function of the data."""

import numpy as np
import pytest

from ckb.rules.virtual_queue import VirtualQueueRule


def test_queues_are_the_running_sum_reflected_at_zero():
    rule = VirtualQueueRule(2, 10)
    c = [[1.0, -1.0], [-0.5, 0.5], [-2.0, 0.25], [0.75, -1.0]]
    # constraint 0: 1, 0.5, 0 (reflected), 0.75; constraint 1: 0, 0.5, 0.75, 0
    np.testing.assert_allclose(rule.queues(c), [0.75, 0.0])
    np.testing.assert_allclose(rule.queues([]), [0.0, 0.0])


def test_score_penalizes_each_constraint_by_its_queue_over_V():
    rule = VirtualQueueRule(2, 10, V=2.0)
    rule.queues([[1.0, 3.0]])
    f = np.array([1.0, 2.0])
    g = np.array([[0.5, -1.0], [1.0, 1.0]])
    np.testing.assert_allclose(rule.score(f, g), [1.0 - 0.25 + 1.5, 2.0 - 0.5 - 1.5])


def test_queue_ucb_queues_follow_every_observation_in_trial_order():
    pytest.importorskip("botorch")
    import ckb

    opt = ckb.Optimizer([0, 0], [1, 1], m=1, policy="queue-ucb", budget=9, seed=0)
    cs = []
    while opt.metrics()["remaining"] > 0:
        x = opt.ask()
        c = float(x[0] + x[1] - 1.0)
        cs.append(c)
        opt.tell(x, float(x[0] + x[1]), [c])
    h = opt.history()[-1]
    assert h["source"] == "policy"
    # the last decision's queue, from the 8 earlier observations in policy units (divided by their RMS)
    c8 = np.array(cs[:8])
    q = 0.0
    for v in c8 / np.sqrt(np.mean(c8**2)):
        q = max(q + v, 0.0)
    assert h["info"]["Q"] == pytest.approx(q)


def test_feasibility_first_until_some_evaluation_satisfies_every_constraint():
    assert VirtualQueueRule(2, 10).feasibility_first  # on by default
    rule = VirtualQueueRule(2, 10, feasibility_first=True)
    assert rule.searching_feasible([[0.5, -1.0], [-0.5, 0.5]])  # no row feasible in both
    assert not rule.searching_feasible([[0.5, -1.0], [-0.5, 0.0]])  # the second row is (0 counts)
    assert rule.searching_feasible(np.zeros((0, 2)))
    assert not VirtualQueueRule(2, 10, feasibility_first=False).searching_feasible([[1.0, 1.0]])


def test_feasibility_first_without_a_target_is_the_log_probability_of_feasibility():
    torch = pytest.importorskip("torch")
    from scipy.stats import norm

    mu = torch.tensor([[0.5, -1.0], [-2.0, 0.25]], dtype=torch.float64)
    sd = torch.tensor([[1.0, 0.5], [2.0, 0.25]], dtype=torch.float64)
    expected = norm.logcdf(-mu.numpy() / sd.numpy()).sum(-1)
    np.testing.assert_allclose(VirtualQueueRule.first_score(None, None, mu, sd).numpy(), expected, rtol=1e-12)


def test_feasibility_first_aims_at_the_median_observed_objective():
    torch = pytest.importorskip("torch")
    from scipy.stats import norm

    y = [3.0, -1.0, np.nan, 1.0, 2.0]
    assert VirtualQueueRule(1, 10).first_target(y) == pytest.approx(1.5)  # the median of the finite values
    assert VirtualQueueRule(1, 10, first_quantile=0.0).first_target(y) == -1.0
    assert VirtualQueueRule(1, 10, first_quantile=None).first_target(y) is None
    assert VirtualQueueRule(1, 10).first_target([]) is None
    mu_f = torch.tensor([0.5, 2.0], dtype=torch.float64)
    sd_f = torch.tensor([1.0, 0.5], dtype=torch.float64)
    mu_g = torch.tensor([[0.5, -1.0], [-2.0, 0.25]], dtype=torch.float64)
    sd_g = torch.tensor([[1.0, 0.5], [2.0, 0.25]], dtype=torch.float64)
    pof = norm.logcdf(-mu_g.numpy() / sd_g.numpy()).sum(-1)
    got = VirtualQueueRule.first_score(mu_f, sd_f, mu_g, sd_g, 1.5).numpy()
    np.testing.assert_allclose(got, pof + norm.logcdf((mu_f.numpy() - 1.5) / sd_f.numpy()), rtol=1e-12)
    alone = VirtualQueueRule.first_score(mu_f, sd_f, mu_g, sd_g, None).numpy()
    np.testing.assert_allclose(alone, pof, rtol=1e-12)


@pytest.mark.parametrize("first", [True, False])
def test_queue_ucb_searches_for_feasibility_before_its_queue_score(first):
    pytest.importorskip("botorch")
    import ckb

    opt = ckb.Optimizer(
        [0, 0],
        [1, 1],
        m=1,
        policy="queue-ucb",
        budget=6,
        n_init=3,
        seed=0,
        num_restarts=2,
        raw_samples=32,
        maxiter=50,
        feasibility_first=first,
    )
    phases = []
    while opt.metrics()["remaining"] > 0:
        x = opt.ask()
        c = float(0.95 - x[0])  # feasible on 5% of the box only
        opt.tell(x, float(x[1]), [c])
        h = opt.history()[-1]
        if h["source"] == "policy":
            feasible_before = any(t["feasible"] for t in opt.history()[:-1])
            phases.append((h["info"]["phase"], feasible_before))
    if not first:
        assert [p for p, _ in phases] == [1.0] * len(phases)
        return
    assert phases and all(p == (0.0 if not before else 1.0) for p, before in phases)
    assert phases[0][0] == 0.0  # the design (x0 < 0.95) held no feasible point
    design_x0 = max(t["x"][0] for t in opt.history()[:3])
    assert opt.history()[3]["x"][0] > design_x0  # toward feasibility: larger x0
