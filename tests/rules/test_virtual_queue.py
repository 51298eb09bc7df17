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
