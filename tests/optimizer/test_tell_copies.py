"""A told point that is the asked point up to a float32 copy or a rounding answers the asked trial (it was
recorded as a new user trial: the asked one stayed pending for good, the budget was used twice and a
design point was charged to the violation budget), also a few ulps outside the box; a point near a
pending one but not it is recorded as new with a warning naming the trial."""

import warnings

import numpy as np
import pytest

import ckb

FAST = {"num_restarts": 2, "raw_samples": 32, "maxiter": 20}


def _quiet_tell(opt, x, y, g):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return opt.tell(x, y, g)


@pytest.mark.parametrize(
    "copy", [lambda x: x.astype(np.float32), lambda x: np.round(x, 6), lambda x: x.tolist()]
)
def test_a_copy_of_the_asked_point_answers_it(copy):
    opt = ckb.Optimizer([0, 0], [10, 10], m=1, budget=8, n_init=3, violation_budget=0.0, seed=0)
    x = opt.ask()
    assert _quiet_tell(opt, copy(x), 1.0, [0.5]) == 0
    assert opt.pending() == [] and [h["source"] for h in opt.history()] == ["init"]
    np.testing.assert_array_equal(opt.history()[0]["x"], x)  # the asked point is kept, not the copy
    m = opt.metrics()
    assert m["remaining"] == 7 and m["violation_spent"] == [0.0]  # a design point is not charged


def test_a_float32_copy_a_few_ulps_outside_the_box_answers_the_asked_trial():
    opt = ckb.Optimizer([0, 0], [0.1, 0.1], m=1, budget=6, n_init=1, initial_design=[[0.1, 0.05]])
    x = opt.ask()
    assert float(np.float32(x[0])) > 0.1  # the copy lies outside the box
    assert _quiet_tell(opt, x.astype(np.float32), 1.0, [-1.0]) == 0
    assert opt.pending() == []


def test_a_copy_of_a_design_point_not_asked_is_that_design_point():
    opt = ckb.Optimizer([0, 0], [10, 10], m=1, budget=8, n_init=3, seed=0)
    design = ckb.Optimizer([0, 0], [10, 10], m=1, budget=8, n_init=3, seed=0)
    points = [design.ask() for _ in range(3)]
    _quiet_tell(opt, np.round(points[1], 6), 2.0, [-1.0])
    (h,) = opt.history()
    assert h["source"] == "init" and h["info"]["design_index"] == 1
    np.testing.assert_array_equal(h["x"], points[1])


def test_a_point_near_a_pending_one_but_not_it_is_new_and_said():
    opt = ckb.Optimizer([0, 0], [10, 10], m=1, budget=8, n_init=3, seed=0)
    x = opt.ask()
    with pytest.warns(UserWarning, match=r"from pending trial 0 but not that point.*trial=0"):
        number = opt.tell(x + np.array([1e-3, 0.0]), 1.0, [0.5])
    assert number == 1 and [p["trial"] for p in opt.pending()] == [0]


def test_in_a_box_narrow_next_to_its_distance_from_0_each_result_goes_to_its_own_trial():
    """A probe found the band relative to |x| covering a tenth of [1e6, 1e6 + 10] (all of [1000,
    1000.001]): results of ask(4) told in reverse order were stored against other trials' points, a
    user's point before any ask was replaced by a design point, and a point 30% of the width outside the
    box answered a pending trial."""
    opt = ckb.Optimizer([1e6], [1e6 + 10], m=1, budget=12, n_init=4, seed=0, **FAST)
    for _ in range(4):
        x = opt.ask()
        _quiet_tell(opt, x, float(np.sin(x[0] * 50)), [float(np.cos(x[0] * 37))])
    X = opt.ask(4)
    assert np.min(np.abs(np.diff(np.sort(X[:, 0])))) < 1.0  # within the old band of each other
    for x in X[::-1]:  # workers finish in another order
        _quiet_tell(opt, x, float(x[0]), [0.0])  # objective: the x evaluated
    assert all(h["x"][0] == h["objective"] for h in opt.history()[4:])
    opt = ckb.Optimizer([1000], [1000.001], m=1, budget=12, n_init=4, seed=0)
    _quiet_tell(opt, [1000.0009], 5.0, [-1.0])
    assert opt.history()[0]["x"].tolist() == [1000.0009] and opt.history()[0]["source"] == "user"
    opt.ask()
    with pytest.raises(ckb.errors.OutOfDomainError):
        opt.tell([1000.0013], 1.0, [0.0])
