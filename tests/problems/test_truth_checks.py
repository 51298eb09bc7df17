"""A problem's true functions are checked where they are evaluated: shape and finiteness, once, with an
error naming the problem, the function and the point (a continuous box is never tabulated)."""

import numpy as np
import pytest

from ckb.errors import CKBError, InvalidInputError
from ckb.kernels.stationary import SquaredExponential
from ckb.problems import PROBLEMS, BoxDomain, FiniteDomain, GaussianNoise, Problem, make_problem


def _box(f, g, name="box-p"):
    return Problem(
        name,
        BoxDomain([0.0], [1.0]),
        f,
        g,
        GaussianNoise(0.05, 0.05),
        kernel=SquaredExponential(lengthscale=0.2),
        optimum=([0.0], 0.0),
    )


def test_a_valid_box_problem_evaluates_as_before():
    p = _box(lambda Z: Z[:, 0] ** 2, lambda Z: Z - 0.5)
    f, g = p.evaluate(-1, np.array([0.3]))
    assert f == 0.3**2 and g.tolist() == [0.3 - 0.5] and isinstance(f, float)
    p0 = _box(lambda Z: float(Z[0, 0]), None)  # a scalar for one point is accepted, as before
    assert p0.evaluate(-1, np.array([0.25])) == (0.25, pytest.approx(np.zeros(0)))


def test_a_nan_constraint_on_a_box_names_the_problem_the_function_and_the_point():
    p = _box(lambda Z: Z[:, 0], lambda Z: np.where(Z > 0.2, np.nan, Z))
    assert p.evaluate(-1, np.array([0.1]))[1].tolist() == [0.1]
    with pytest.raises(InvalidInputError, match=r"problem 'box-p'.*constraints.*nan.*0\.7") as err:
        p.evaluate(-1, np.array([0.7]))
    assert "\n" not in str(err.value)


def test_a_nan_objective_on_a_box_is_blamed_on_the_objective_not_an_observation():
    p = _box(lambda Z: np.where(Z[:, 0] > 0.3, np.nan, Z[:, 0]), lambda Z: Z - 0.5)
    with pytest.raises(InvalidInputError, match=r"problem 'box-p'.*objective.*nan.*0\.5"):
        p.evaluate(-1, np.array([0.5]))


def test_an_objective_of_the_wrong_shape_is_not_silently_truncated():
    p = _box(lambda Z: np.zeros((len(Z), 3)), lambda Z: Z - 0.5)
    with pytest.raises(InvalidInputError, match=r"problem 'box-p'.*objective.*\(1, 3\)"):
        p.evaluate(-1, np.array([0.5]))


def test_a_constraint_whose_width_changes_is_a_clear_error():
    p = _box(lambda Z: Z[:, 0], lambda Z: np.zeros((len(Z), 1 if Z[0, 0] == 0 else 3)))
    with pytest.raises(InvalidInputError, match=r"problem 'box-p'.*constraints.*m = 1"):
        p.evaluate(-1, np.array([0.5]))


def test_constraints_returning_strings_are_a_clear_error():
    with pytest.raises(InvalidInputError, match="constraints"):
        _box(lambda Z: Z[:, 0], lambda Z: [["a"]] * len(Z))
    X = np.linspace(0, 1, 5)[:, None]
    with pytest.raises(InvalidInputError, match="constraints"):
        Problem("p", FiniteDomain(X), X[:, 0], lambda Z: [["a"]] * len(Z), GaussianNoise(0.1, 0.1))


def test_the_parts_of_a_problem_must_have_the_right_types():
    X = np.linspace(0, 1, 5)[:, None]
    with pytest.raises(InvalidInputError, match="domain.*Domain.*list"):
        Problem("p", [[0.0], [1.0]], np.zeros(2), None, GaussianNoise(0.1, 0.1))
    with pytest.raises(InvalidInputError, match="noise.*ObservationModel.*'gaussian'"):
        Problem("p", FiniteDomain(X), X[:, 0], None, "gaussian")
    with pytest.raises(InvalidInputError, match="name.*string.*123"):
        Problem(123, FiniteDomain(X), X[:, 0], None, GaussianNoise(0.1, 0.1))


@pytest.fixture
def registered():
    names = []

    def add(name, factory):
        PROBLEMS.add(name, factory)
        names.append(name)

    yield add
    for name in names:
        PROBLEMS._items.pop(name, None)


@pytest.mark.parametrize("value", [None, {"name": "x"}])
def test_a_factory_that_returns_no_problem_is_a_clear_error(registered, value):
    registered("truth-test-returns", lambda rng: value)
    with pytest.raises(
        InvalidInputError, match="'truth-test-returns' returned .*expected a ckb.problems.Problem"
    ):
        make_problem("truth-test-returns", np.random.default_rng(0))


def test_a_factory_without_an_rng_parameter_is_refused_at_registration():
    with pytest.raises(CKBError, match="factory.*rng"):
        PROBLEMS.add("truth-test-no-rng", lambda: None)
    assert "truth-test-no-rng" not in PROBLEMS
