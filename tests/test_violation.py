"""ckb.violation: hand-computed cases and invariants of the shared violation vocabulary."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from ckb.errors import InvalidInputError
from ckb.violation import (
    POSITIVE_VIOLATION,
    VIOLATING,
    VIOLATION,
    euclidean_norm,
    instant_violation,
    positive_violation,
    positive_violation_per_constraint,
    soft_violation,
    soft_violation_per_constraint,
    violating_count,
    violation_curves,
)

# three evaluations, two constraints; g = 0 is feasible
G = np.array([[1.0, -1.0], [-2.0, 1.0], [0.5, 0.5]])


def test_hand_computed_two_constraints():
    # positive parts summed per constraint: (1 + 0.5, 1 + 0.5); the norm is outside the sums
    np.testing.assert_array_equal(positive_violation_per_constraint(G), [1.5, 1.5])
    assert positive_violation(G) == pytest.approx(1.5 * math.sqrt(2))
    # signed sums (-0.5, 0.5): only the second constraint is violated on the whole
    np.testing.assert_array_equal(soft_violation_per_constraint(G), [0.0, 0.5])
    assert soft_violation(G) == 0.5
    assert violating_count(G) == 3
    # each evaluation alone: ||[g]^+||: 1, 1, sqrt(0.5)
    np.testing.assert_allclose(instant_violation(G), [1.0, 1.0, math.sqrt(0.5)])


def test_hand_computed_curves():
    c = violation_curves(G)
    # running sums (1,-1), (-1,0), (-0.5,0.5) -> soft 1, 0, 0.5
    np.testing.assert_allclose(c[VIOLATION], [1.0, 0.0, 0.5])
    # running positive sums (1,0), (1,1), (1.5,1.5)
    np.testing.assert_allclose(c[POSITIVE_VIOLATION], [1.0, math.sqrt(2), 1.5 * math.sqrt(2)])
    np.testing.assert_array_equal(c[VIOLATING], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(c["constraint_sum"], [1.0, 0.0, 0.5])  # signed max_j of the sums


def test_scale_divides_each_constraint():
    s = (2.0, 0.5)
    np.testing.assert_array_equal(positive_violation_per_constraint(G, s), [0.75, 3.0])
    np.testing.assert_array_equal(soft_violation_per_constraint(G, s), [0.0, 1.0])
    assert positive_violation(G, s) == pytest.approx(math.hypot(0.75, 3.0))
    np.testing.assert_allclose(violation_curves(G, s)[VIOLATION], [0.5, 0.0, 1.0])
    # the benchmark's order of operations, bit for bit: sum, then divide
    assert positive_violation(G, s) == float(np.linalg.norm(np.maximum(G, 0.0).sum(axis=0) / np.array(s)))
    assert soft_violation(G, s) == float(np.linalg.norm(np.maximum(G.sum(axis=0) / np.array(s), 0.0)))


def test_one_constraint_is_a_plain_sum_and_none_is_zero():
    g = np.array([0.5, -1.0, 0.25, 0.0])  # 1-D: one constraint
    assert positive_violation(g) == 0.75 and soft_violation(g) == 0.0 and violating_count(g) == 2
    np.testing.assert_allclose(violation_curves(g)[VIOLATION], [0.5, 0.0, 0.0, 0.0])
    empty = np.zeros((4, 0))
    assert positive_violation(empty) == soft_violation(empty) == violating_count(empty) == 0
    c = violation_curves(empty)
    assert set(c) == {VIOLATION, POSITIVE_VIOLATION, VIOLATING} and all(np.all(v == 0) for v in c.values())
    np.testing.assert_array_equal(instant_violation(empty), np.zeros(4))


def test_bad_input_is_named():
    with pytest.raises(InvalidInputError, match="2 positive magnitude"):
        positive_violation(G, [1.0])
    with pytest.raises(InvalidInputError, match="positive magnitude"):
        soft_violation(G, [1.0, -1.0])
    with pytest.raises(InvalidInputError, match="positive magnitude"):
        soft_violation(G, [1.0, np.nan])
    with pytest.raises(InvalidInputError, match=r"\(evaluations, m\)"):
        violating_count(np.zeros((2, 2, 2)))


_g = st.integers(1, 12).flatmap(
    lambda t: st.integers(0, 3).flatmap(
        lambda m: arrays(float, (t, m), elements=st.floats(-10, 10, allow_subnormal=False))
    )
)


@settings(max_examples=60, deadline=None)
@given(_g)
def test_invariants(g):
    c = violation_curves(g)
    # the curves end at the totals
    if g.shape[0]:
        assert c[VIOLATION][-1] == pytest.approx(soft_violation(g))
        assert c[POSITIVE_VIOLATION][-1] == pytest.approx(positive_violation(g))
        assert c[VIOLATING][-1] == violating_count(g)
    # cancellation only lowers: [sum g]^+ <= sum [g]^+ per constraint, so the soft violation is smaller
    assert np.all(c[VIOLATION] <= c[POSITIVE_VIOLATION] + 1e-9)
    # no cancellation: the rectified violation and the count never decrease
    assert np.all(np.diff(c[POSITIVE_VIOLATION]) >= -1e-12) and np.all(np.diff(c[VIOLATING]) >= 0)
    # the totals do not depend on the order of the evaluations
    rev = g[::-1]
    assert soft_violation(rev) == pytest.approx(soft_violation(g), abs=1e-9)
    assert positive_violation(rev) == pytest.approx(positive_violation(g), abs=1e-9)
    assert violating_count(rev) == violating_count(g)
    # a scale is the same as dividing the values by it
    s = np.arange(1.0, g.shape[1] + 1)
    assert positive_violation(g, s) == pytest.approx(positive_violation(g / s), abs=1e-9)
    assert soft_violation(g, s) == pytest.approx(soft_violation(g / s), abs=1e-9)
    # feasible everywhere: nothing to report
    feasible = -np.abs(g)
    assert positive_violation(feasible) == soft_violation(feasible) == violating_count(feasible) == 0


def test_feasible_rows_by_hand():
    from ckb.violation import feasible_rows

    g = [[0.0, -1.0], [0.1, -1.0], [-2.0, np.nan], [-0.5, -0.5]]
    np.testing.assert_array_equal(feasible_rows(g), [True, False, False, True])  # 0 is feasible, NaN not
    np.testing.assert_array_equal(feasible_rows([0.0, 1e-12, -3.0]), [True, False, True])  # m = 1
    assert feasible_rows(np.zeros((0, 3))).shape == (0,)


def test_a_nan_constraint_value_is_violating_in_the_count_as_in_feasible_rows():
    """The count counted ``g > 0`` and so passed over NaN, which :func:`feasible_rows` calls infeasible:
    an evaluation was then neither feasible nor violating."""
    from ckb.violation import feasible_rows

    g = [[-1.0, np.nan], [-1.0, -1.0], [2.0, -1.0], [np.nan, np.nan]]
    assert violating_count(g) == 3 == np.sum(~feasible_rows(g))
    np.testing.assert_array_equal(violation_curves(g)[VIOLATING], [1.0, 1.0, 2.0, 3.0])
    assert violating_count(np.zeros((2, 0))) == 0 and violation_curves(np.zeros((2, 0)))[VIOLATING].sum() == 0


def test_the_soft_sum_does_not_depend_on_the_order_of_the_evaluations():
    """A running float sum lost the 3 between 1e300 and -1e300: metrics()["violation"] was 0 for the tells
    1e300, 3, -1e300 and 3 for 1e300, -1e300, 3."""
    for order in ([1e300, 3.0, -1e300], [1e300, -1e300, 3.0], [3.0, -1e300, 1e300]):
        g = np.array(order)[:, None]
        assert soft_violation_per_constraint(g).tolist() == [3.0]
        assert soft_violation(g) == 3.0
    g = np.array([[1e300, 1.0], [2.0, -0.5], [-1e300, -0.5]])
    assert soft_violation_per_constraint(g).tolist() == [2.0, 0.0]


def test_a_finite_norm_is_never_reported_as_inf():
    """``ckb study show`` printed violation inf where metrics() gave 1.4e200: the curves' row norms
    overflowed (sqrt(2e400))."""
    g = np.array([[1e200, 1e200], [-1.0, 0.0]])
    curves = violation_curves(g)
    assert np.allclose(curves[VIOLATION], [math.sqrt(2) * 1e200] * 2, rtol=1e-15)
    assert np.allclose(curves[POSITIVE_VIOLATION], [math.sqrt(2) * 1e200] * 2, rtol=1e-15)
    assert positive_violation(g) == pytest.approx(math.sqrt(2) * 1e200, rel=1e-15)
    assert euclidean_norm([3.0, 4.0]) == 5.0 and euclidean_norm(np.zeros(0)) == 0.0
    rows = euclidean_norm(np.array([[3.0, 4.0], [1e200, 1e200], [0.0, 0.0]]), axis=1)
    assert rows[0] == 5.0 and rows[2] == 0.0 and rows[1] == pytest.approx(math.sqrt(2) * 1e200, rel=1e-15)
    assert euclidean_norm([math.inf, 1.0]) == math.inf  # an infinite value stays infinite


def test_the_curves_end_at_the_exact_soft_violation():
    """violation_curves' running float sum ended at 0.0 where soft_violation's exact sum gave 5.55e-17
    (0.1 ten times, then -1), and at 0.0 for 1e300, 3, -1e300 where the sum is 3: the two public functions
    disagreed on the same data."""
    from ckb.violation import soft_violation, violation_curves

    for g in ([[0.1]] * 10 + [[-1.0]], [[1e300], [3.0], [-1e300]], [[0.2, -0.1], [-0.3, 0.4], [0.1, -0.3]]):
        curves = violation_curves(g)
        assert curves["violation"][-1] == soft_violation(g)
