"""Loading a rule's state (``Rule.load_state_dict``, public through ``ckb.rules``). Before: a value of
another shape or type was a raw ValueError ("cannot reshape array of size 3 into shape (2,)"), a
negative round was taken, a refused state had already replaced the rule's duals (so the next, valid,
load was refused too), and a key the state lacked kept the rule's current value instead of its value
at construction. Now each is one line and a refused state leaves the rule as it was."""

import copy
import json

import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.io import _json_default
from ckb.rules.optimistic import RPOLRule
from ckb.rules.penalty import PenaltyNoisyRule
from ckb.rules.primal_dual import PrimalDualRule


def _used_primal_dual():
    rule = PrimalDualRule(2, 50, B=1.0, G=1.0, R=0.1, delta=0.5)
    rule.phi[:] = [0.3, 0.4]
    rule.t = 7
    return rule


def _plain(state):
    return json.loads(json.dumps(state, default=_json_default))


@pytest.mark.parametrize(
    "state, match",
    [
        (
            {"phi": [1.0, 2.0, 3.0]},
            r"phi = \[1.0, 2.0, 3.0\] does not fit; expected an array of shape \(2,\)",
        ),
        ({"phi": "x"}, r"phi = 'x' does not fit"),
        ({"t": "x"}, r"t = 'x' must be a round >= 0"),
        ({"t": -4}, r"t = -4 must be a round >= 0"),
        ({"t": 2.5}, r"t = 2.5 must be a round >= 0"),
        ({"phi": [-1.0, 0.0]}, r"phi = \[-1.0, 0.0\] must be finite and >= 0"),
        ({"phi": [np.nan, 0.0]}, r"phi = \[nan, 0.0\] must be finite and >= 0"),
        ({"epoch_len": "a"}, r"epoch_len = 'a' does not fit; expected an integer"),
        ({"epoch_len": float("inf")}, r"epoch_len = inf does not fit"),
        ({"last": 5}, r"last = 5 does not fit; expected a dict"),
        ([1, 2], r"PrimalDualRule state must be a dict of its state keys \['phi'"),
    ],
)
def test_a_state_that_does_not_fit_is_one_line_and_changes_nothing(state, match):
    rule = _used_primal_dual()
    before = _plain(rule.state_dict())
    with pytest.raises(InvalidInputError, match=match):
        rule.load_state_dict(state)
    assert _plain(rule.state_dict()) == before
    rule.load_state_dict({**before, "t": 8})  # a valid state still loads afterwards
    assert rule.t == 8 and rule.phi.tolist() == [0.3, 0.4]


def test_a_key_the_state_lacks_takes_its_value_at_construction_not_the_current_one():
    rule = _used_primal_dual()
    rule.load_state_dict({"t": 3})
    assert rule.t == 3 and rule.phi.tolist() == [0.0, 0.0]
    queues = RPOLRule(2, 20, B_f=1.0, B_g=1.0, R_f=0.1, R_g=0.1)
    fresh = copy.deepcopy(queues.state_dict())
    queues.Q = queues.Q + 5.0
    queues.load_state_dict({"t": 0})
    assert queues.Q.tolist() == fresh["Q"].tolist()


def test_a_state_saved_as_json_round_trips():
    rule = _used_primal_dual()
    state = _plain(rule.state_dict())
    other = PrimalDualRule(2, 50, B=1.0, G=1.0, R=0.1, delta=0.5)
    other.load_state_dict(state)
    assert _plain(other.state_dict()) == state


def test_a_penalty_rule_refuses_a_bad_multiplier_list_and_keeps_its_state():
    rule = PenaltyNoisyRule(1, 40, B=1.0, R=0.1, S=10)
    before = _plain(rule.state_dict())
    for state, match in [
        ({**before, "asked": ["a", "b"]}, r"asked = \['a', 'b'\] must be the epoch and m multipliers"),
        ({**before, "width": "w"}, r"width = 'w' must be a number"),
        ({**before, "in_epoch": 99}, r"in_epoch 99"),
    ]:
        with pytest.raises(InvalidInputError, match=match):
            rule.load_state_dict(state)
        assert _plain(rule.state_dict()) == before
