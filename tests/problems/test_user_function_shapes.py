"""A user's problem written for one point (``x[1]`` on a (k, d) array) raised an IndexError from the
user's own code; now one line says the functions take k points at once. A transposed constraint table
was told it should have shape (20, 20)."""

import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.kernels.stationary import SquaredExponential
from ckb.problems import BoxDomain, FiniteDomain, GaussianNoise, Problem

KERNEL = SquaredExponential(lengthscale=0.5)


def _per_point_f(x):
    return np.cos(2 * x[0]) * np.cos(x[1]) + np.sin(x[0])


def _per_point_g(x):
    return np.array([np.cos(x[0] + x[1]) - 0.5])


@pytest.mark.parametrize(
    "f, g, what",
    [
        (lambda X: X[:, 0], _per_point_g, "constraints"),
        (_per_point_f, lambda X: X[:, :1] - 3.0, "objective"),
    ],
)
def test_a_function_written_for_one_point_is_named(f, g, what):
    with pytest.raises(
        InvalidInputError,
        match=rf"problem 'p': {what}\(X\) raised IndexError: .* shape \(1, 2\); a problem's functions take an array of k points",
    ):
        Problem("p", BoxDomain([0, 0], [6, 6]), f, g, GaussianNoise(0.05, 0.05), kernel=KERNEL)


def test_a_transposed_constraint_table_is_told_the_shape_it_needs():
    x = np.linspace(0, 1, 20)
    g = np.stack([x - 0.5, 0.2 - x])  # (2, 20): transposed
    with pytest.raises(
        InvalidInputError, match=r"must have shape \(20, m\), one row per candidate, got \(2, 20\)"
    ):
        Problem("p", FiniteDomain(x[:, None]), x, g, GaussianNoise(0.05, 0.05), kernel=KERNEL)


def test_a_kernel_table_is_built_and_a_kernel_name_is_refused_naming_the_problem():
    x = np.linspace(0, 1, 5)
    table = Problem(
        "p",
        FiniteDomain(x[:, None]),
        x,
        None,
        GaussianNoise(0.05, 0.05),
        kernel={"type": "se", "lengthscale": 0.2},
    )
    assert table.kernel.to_dict() == {"type": "se", "lengthscale": 0.2, "variance": 1.0}
    with pytest.raises(
        InvalidInputError, match=r"problem 'p': kernel must be a ckb.kernels.Kernel or a table"
    ):
        Problem("p", FiniteDomain(x[:, None]), x, None, GaussianNoise(0.05, 0.05), kernel="se")
    with pytest.raises(
        InvalidInputError, match=r"problem 'p': kernel \{'type': 'sq'\}: kernel.type must be one of"
    ):
        Problem("p", FiniteDomain(x[:, None]), x, None, GaussianNoise(0.05, 0.05), kernel={"type": "sq"})


@pytest.mark.parametrize("bad", [-1.0, float("nan"), "one", True])
def test_a_bound_hint_that_is_not_a_number_at_least_zero_is_named(bad):
    x = np.linspace(0, 1, 5)
    with pytest.raises(InvalidInputError, match=r"problem 'p': hints\['B'\] must be a finite number >= 0"):
        Problem(
            "p", FiniteDomain(x[:, None]), x, None, GaussianNoise(0.05, 0.05), kernel=KERNEL, hints={"B": bad}
        )
