import dataclasses

import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.multiagent.messages import (
    ADMMTarget,
    Allocation,
    CEIBroadcast,
    PosteriorSummary,
    PriceBroadcast,
    Proposal,
)


def test_dmabo_messages_hold_only_their_declared_fields():
    assert [f.name for f in dataclasses.fields(PriceBroadcast)] == ["round", "lam", "mu"]
    assert [f.name for f in dataclasses.fields(Proposal)] == ["agent", "round", "a_x", "g_lcb"]


def test_messages_are_frozen_tuples_of_floats():
    p = Proposal(1, 3, a_x=np.array([1.5]), g_lcb=np.array([0.25, -1.0]))
    assert p.a_x == (1.5,) and p.g_lcb == (0.25, -1.0)
    assert all(type(v) is float for v in p.a_x + p.g_lcb)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.a_x = (2.0,)
    assert p.numbers() == [1.5, 0.25, -1.0]
    assert hash(p) == hash(Proposal(1, 3, (1.5,), (0.25, -1.0)))


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: PriceBroadcast(1, lam=[-0.1], mu=[]), "lam must be >= 0"),
        (lambda: PriceBroadcast(0, lam=[0.1], mu=[]), "round"),
        (lambda: Proposal(-1, 1, [0.0], [0.0]), "agent"),
        (lambda: Proposal(0, 1, [np.nan], [0.0]), "a_x must be finite"),
        (lambda: PosteriorSummary(0, 1, 0.0, np.inf, [], [], 0.0, []), "f_var must be finite"),
        (lambda: ADMMTarget(True, [1.0]), "round"),
    ],
)
def test_bad_messages_are_rejected_with_a_named_field(make, match):
    with pytest.raises(InvalidInputError, match=match):
        make()


def test_cei_broadcast_first_round_is_empty():
    b = CEIBroadcast(1)
    assert b.f_mean is None and b.g_mean is None and b.incumbent is None and b.numbers() == []
    b = CEIBroadcast(2, 1.0, 0.5, [0.1], [0.2], None)
    assert b.numbers() == [1.0, 0.5, 0.1, 0.2]
    assert Allocation(0, 1, [2.0]).numbers() == [2.0]
