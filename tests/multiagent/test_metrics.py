import numpy as np
import pytest

from ckb.multiagent.metrics import curves


def test_metrics_hand_computed():
    F = np.array([1.0, 2.0, 0.0])
    G = np.array([[1.0, -1.0], [-2.0, 1.0], [0.5, 0.5]])
    D = np.array([[1.0], [-1.0], [2.0]])
    c = curves(F, G, D, f_star=1.0)
    np.testing.assert_allclose(c["regret"], [0, 1, 0])
    np.testing.assert_allclose(c["violation"], [1, 0, 0.5])  # ||[sum G]^+||: (1,-1), (-1,0), (-.5,.5)
    np.testing.assert_allclose(c["positive_violation"], [1, np.sqrt(2), 1.5 * np.sqrt(2)])
    np.testing.assert_allclose(c["violating_rounds"], [1, 2, 3])
    np.testing.assert_allclose(c["affine_shift"], [1, 0, 2])
    np.testing.assert_allclose(c["constraint_sum"], [1, 0, 0.5])
    # merit (F - f*) + ||[G]^+|| + ||D||: 2, 3, -1 + sqrt(.5) + 2
    np.testing.assert_allclose(c["best_iterate_gap"], [2, 2, 1 + np.sqrt(0.5)])
    np.testing.assert_allclose(c["best_iterate_objective_gap"], [0, 0, -1])
    np.testing.assert_allclose(c["best_iterate_violation"], [1, 1, np.sqrt(0.5)])
    np.testing.assert_allclose(c["affine_shift_over_sqrt_t"], [1, 0, 2 / np.sqrt(3)])


def test_metrics_without_constraints():
    c = curves(np.array([0.5, 0.5]), np.zeros((2, 0)), np.zeros((2, 0)), f_star=0.0)
    assert np.all(c["violation"] == 0) and np.all(c["affine_shift"] == 0)
    assert c["regret"][-1] == pytest.approx(1.0) and "constraint_sum" not in c
