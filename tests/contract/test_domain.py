import numpy as np
import pytest

from ckb.contract import BoxDomain, FiniteDomain
from ckb.errors import InvalidInputError, OutOfDomainError


def test_finite_domain_index_and_point_actions():
    dom = FiniteDomain(np.array([[0.0, 0.0], [1.0, 2.0], [3.0, 1.0]]))
    assert dom.n == 3 and dom.d == 2
    i, x = dom.check_action(1)
    assert i == 1 and np.array_equal(x, [1.0, 2.0])
    i, x = dom.check_action(np.array([3.0, 1.0]))  # a point maps back to its arm
    assert i == 2


@pytest.mark.parametrize("bad", [-1, 3, 10])
def test_finite_domain_rejects_out_of_range_index(bad):
    dom = FiniteDomain.arms(3)
    with pytest.raises(OutOfDomainError, match=str(bad)):
        dom.check_action(bad)


def test_finite_domain_rejects_unknown_point_and_bad_shape():
    dom = FiniteDomain(np.array([[0.0], [1.0]]))
    with pytest.raises(OutOfDomainError, match="not one of the 2 arms"):
        dom.check_action(np.array([0.5]))
    with pytest.raises(InvalidInputError, match="shape"):
        dom.check_action(np.array([0.0, 1.0]))
    with pytest.raises(InvalidInputError, match="finite"):
        dom.check_action(np.array([np.nan]))


def test_box_grid_is_full_tensor_grid_including_bounds():
    dom = BoxDomain([0, 0], [6, 6], grid=[4, 3])
    assert dom.n == 12
    assert set(np.unique(dom.candidates[:, 0])) == {0.0, 2.0, 4.0, 6.0}
    assert set(np.unique(dom.candidates[:, 1])) == {0.0, 3.0, 6.0}


def test_box_rejects_points_outside_and_bad_bounds():
    dom = BoxDomain([0, 0], [1, 1])
    assert dom.candidates is None
    idx, x = dom.check_action(np.array([0.5, 1.0]))
    assert idx == -1
    with pytest.raises(OutOfDomainError, match="coordinate 1 = 1.5"):
        dom.check_action(np.array([0.5, 1.5]))
    with pytest.raises(InvalidInputError, match="index but this domain is a continuous box"):
        dom.check_action(3)
    with pytest.raises(InvalidInputError, match="must exceed"):
        BoxDomain([0, 1], [1, 1])
    with pytest.raises(OutOfDomainError):
        BoxDomain([0], [1], grid=np.array([[0.5], [2.0]]))
