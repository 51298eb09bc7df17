"""Malformed messages are refused with one line naming the field (probe report C3, D1)."""

import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.multiagent.messages import CEIBroadcast, PosteriorSummary, PriceBroadcast, Proposal


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: PriceBroadcast(1, None, []), r"^message field lam must be a vector .*got None\.$"),
        (lambda: PriceBroadcast(1, "abc", []), r"^message field lam must be a vector .*got 'abc' \(str\)\.$"),
        (lambda: PriceBroadcast(1, {"a": 1}, []), r"^message field lam must be a vector .*\(dict\)\.$"),
        (
            lambda: PriceBroadcast(1, [1 + 2j], []),
            r"^message field lam must hold real numbers, got \[\(1\+2j\)\]\.$",
        ),
        (
            lambda: PriceBroadcast(1, [10**400], []),
            r"^message field lam must hold real numbers within float range",
        ),
        (
            lambda: PriceBroadcast(1, [[1, 2], [3, 4]], []),
            r"^message field lam must be a vector \(1-D\), got shape \(2, 2\)",
        ),
        (lambda: PriceBroadcast(1, [np.nan], []), r"^message field lam must be finite"),
        (lambda: Proposal(0, 1, ["x"], []), r"^message field a_x must hold real numbers"),
        (lambda: CEIBroadcast(1, f_mean="x"), r"^message field f_mean must be a real number, got 'x'\.$"),
        (
            lambda: CEIBroadcast(1, f_mean=[1, 2]),
            r"^message field f_mean must be a real number, got \[1, 2\]\.$",
        ),
        (
            lambda: CEIBroadcast(2, 0.0, -1.0, [0.0], [0.1]),
            r"^message field f_var must be >= 0 \(a variance\), got -1\.0\.$",
        ),
        (
            lambda: CEIBroadcast(2, 0.0, 1.0, [0.0], [-0.1]),
            r"^message field g_var must be >= 0 elementwise, got \[-0\.1\]\.$",
        ),
        (
            lambda: CEIBroadcast(2, 0.0, 1.0, [0.0, 1.0], [0.1]),
            r"^CEIBroadcast: g_mean, g_var must have one entry per constraint",
        ),
        (
            lambda: CEIBroadcast(2, f_mean=0.0),
            r"^CEIBroadcast: f_mean, f_var, g_mean and g_var come together .*got only f_mean\.$",
        ),
        (
            lambda: PosteriorSummary(0, 1, None, 1.0, [], [], 0.0, []),
            r"^message field f_mean is missing \(None\)",
        ),
        (lambda: PosteriorSummary(0, 1, 0.0, -1.0, [], [], 0.0, []), r"^message field f_var must be >= 0"),
        (
            lambda: PosteriorSummary(0, 1, 0.0, 1.0, [0.0], [-1.0], 0.0, [0.0]),
            r"^message field g_var must be >= 0",
        ),
        (
            lambda: PosteriorSummary(0, 1, 0.0, 1.0, [0.0, 1.0], [1.0], 0.0, []),
            r"^PosteriorSummary: g_mean, g_var, y_g must have one entry per constraint \(the same length\), got lengths 2, 1, 0\.$",
        ),
        (
            lambda: PosteriorSummary(0, 1, 0.0, 1.0, None, [], 0.0, []),
            r"^message field g_mean must be a vector",
        ),
    ],
)
def test_malformed_messages_are_one_line_naming_the_field(make, match):
    with pytest.raises(InvalidInputError, match=match) as exc:
        make()
    assert "\n" not in str(exc.value)


def test_valid_messages_unchanged():
    assert PriceBroadcast(1, np.array([0.5]), ()).lam == (0.5,)
    assert CEIBroadcast(1).numbers() == []
    s = PosteriorSummary(np.int64(0), 1, np.float64(1.0), 0.0, np.array([0.5]), np.array([0.0]), 1.5, [2.0])
    assert s.numbers() == [1.0, 0.0, 0.5, 0.0, 1.5, 2.0] and type(s.f_mean) is float
