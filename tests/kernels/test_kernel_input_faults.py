"""Bad or extreme input to the kernels: a one-line ckb error naming the value, or the
right finite values where the settings are extreme but valid; ordinary inputs keep their bits.

Covers ``make_kernel`` given something other than a table (a string) or a mistyped parameter,
``PrecomputedKernel``'s ``psd_tol`` and the way it shows an out-of-range index, and the Matérn kernel
at a tiny lengthscale or a huge variance (NaN and inf from ``inf * 0`` and ``v p(s)`` overflowing).
"""

from decimal import Decimal, getcontext

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from ckb.errors import InvalidInputError, NotPositiveDefiniteError, OutOfDomainError, SpecError
from ckb.kernels import Matern, PrecomputedKernel, SquaredExponential, make_kernel
from ckb.surrogates import ExactGP
from tests.checks import one_line as _one_line


# ------------------------------------------------------------------------------ make_kernel
@pytest.mark.parametrize("spec", ["se", 0.2, ["se", 0.2], None])
def test_make_kernel_says_what_a_kernel_spec_looks_like(spec):
    with pytest.raises(SpecError, match=r"kernel must be a table such as \{type = \"se\"") as err:
        make_kernel(spec)
    assert repr(spec) in _one_line(err)


def test_a_policy_given_a_kernel_name_gets_the_same_message():
    from ckb.policies import make_policy
    from ckb.problems import make_problem

    info = make_problem(
        "rkhs-synthetic", np.random.default_rng(0), n_grid=20, constraint="neg-f-plus-h"
    ).info()
    with pytest.raises(SpecError, match="kernel must be a table such as") as err:
        make_policy("ckb-ucb", info, np.random.default_rng(0), horizon=5, R=0.1, kernel="se")
    assert "'se'" in _one_line(err)


def test_make_kernel_returns_a_kernel_as_it_is():
    k = Matern(0.3, nu=1.5)
    assert make_kernel(k) is k


@pytest.mark.parametrize(
    "spec, hint",
    [
        ({"type": "se", "lenghtscale": 1.0}, "Did you mean 'lengthscale'?"),
        ({"type": "matern", "nuu": 1.5}, "Did you mean 'nu'?"),
        ({"type": "rbf", "varaince": 2.0}, "Did you mean 'variance'?"),
    ],
)
def test_a_mistyped_kernel_parameter_gets_a_did_you_mean(spec, hint):
    with pytest.raises(SpecError, match="bad kernel parameters") as err:
        make_kernel(spec)
    text = _one_line(err)
    assert hint in text and "__init__" not in text
    assert repr(next(k for k in spec if k != "type")) in text


def test_make_kernel_of_valid_tables_is_unchanged():
    k = make_kernel({"type": "matern", "lengthscale": [0.2, 0.4], "variance": 2.0, "nu": 1.5})
    assert isinstance(k, Matern) and k.nu == 1.5 and k.variance == 2.0
    assert isinstance(make_kernel({"type": "rbf", "lengthscale": 0.5}), SquaredExponential)


# ------------------------------------------------------------------------- PrecomputedKernel
@pytest.mark.parametrize(
    "psd_tol, pattern",
    [
        (float("nan"), "must be finite, got nan"),
        (float("inf"), "must be finite, got inf"),
        (-1, r"must be >= 0.0, got -1"),
        ("1e-3", "must be a real number, got '1e-3'"),
        (True, "must be a real number, got True"),
    ],
)
def test_psd_tol_must_be_a_finite_number_at_least_zero(psd_tol, pattern):
    with pytest.raises(InvalidInputError, match=pattern) as err:
        PrecomputedKernel(np.eye(2), psd_tol=psd_tol)
    assert "psd_tol" in _one_line(err)


def test_a_nan_tolerance_no_longer_lets_an_indefinite_matrix_through():
    with pytest.raises(InvalidInputError, match="psd_tol"):
        PrecomputedKernel([[1, 2], [2, 1]], psd_tol=float("nan"))
    with pytest.raises(NotPositiveDefiniteError, match="smallest eigenvalue"):
        PrecomputedKernel([[1, 2], [2, 1]])  # smallest eigenvalue -1
    assert PrecomputedKernel(np.eye(2), psd_tol=0.0).min_eigenvalue == 1.0


def test_an_out_of_range_index_is_shown_with_its_fraction():
    k = PrecomputedKernel(np.eye(2))
    with pytest.raises(OutOfDomainError, match=r"arm index 1\.0000000001, outside 0\.\.1") as err:
        k([[1.0000000001]])
    _one_line(err)
    with pytest.raises(OutOfDomainError, match=r"arm index 5, outside 0\.\.1"):  # whole numbers stay plain
        k([[5.0]])
    with pytest.raises(InvalidInputError, match=r"integer arm indices, got 0\.5\."):
        k([[0.5]])


# ----------------------------------------------------------------------------------- Matérn
def _matern_exact(s: float, variance: float, nu: float) -> float:
    """``v p(s) exp(-s)`` in 50-digit decimal arithmetic (no overflow or underflow)."""
    getcontext().prec = 50
    s_ = Decimal(s)
    p = 1 + s_ if nu == 1.5 else 1 + s_ + s_ * s_ / 3
    return float(Decimal(variance) * p * (-s_).exp())


@pytest.mark.parametrize("nu", [1.5, 2.5])
@pytest.mark.parametrize("lengthscale", [1e-200, 1e-310])
def test_a_tiny_lengthscale_gives_the_identity_not_nan(nu, lengthscale):
    X = np.linspace(0, 1, 5)[:, None]
    np.testing.assert_array_equal(Matern(lengthscale, nu=nu)(X), np.eye(5))
    np.testing.assert_array_equal(Matern(lengthscale, nu=nu).diag(X), np.ones(5))
    np.testing.assert_array_equal(SquaredExponential(lengthscale)(X), np.eye(5))


def test_the_gp_of_a_tiny_matern_lengthscale_keeps_a_finite_mean():
    gp = ExactGP(Matern(1e-200), 0.1, np.linspace(0, 1, 5)[:, None])
    gp.update_arm(0, 1.0)
    np.testing.assert_allclose(gp.mean, [1.0 / 1.1, 0.0, 0.0, 0.0, 0.0], rtol=1e-15)
    assert np.all(np.isfinite(gp.var))


@pytest.mark.parametrize("nu", [1.5, 2.5])
@pytest.mark.parametrize("variance", [1e308, 1e300])
@pytest.mark.parametrize("r", [0.5, 1.0, 3.0, 300.0, 420.0])
def test_a_huge_variance_gives_the_true_value_not_inf(nu, variance, r):
    k = Matern(1.0, variance=variance, nu=nu)
    got = k(np.array([[0.0]]), np.array([[r]]))[0, 0]
    s = (3.0 if nu == 1.5 else 5.0) ** 0.5 * r
    exact = _matern_exact(s, variance, nu)
    assert np.isfinite(got)
    # near-exact; absolutely, relative to k(x, x) = variance, where the plain product underflows (as before)
    assert got == pytest.approx(exact, rel=1e-12, abs=1e-300 * variance)


def test_a_huge_variance_value_against_a_reference():
    got = Matern(1.0, variance=1e308)(np.array([[0.0], [1.0]]))
    assert got[0, 1] == pytest.approx(5.239941088318203e307, rel=1e-14) and got[0, 0] == 1e308


@pytest.mark.parametrize("nu", [1.5, 2.5])
@pytest.mark.parametrize("lengthscale, variance", [(0.2, 1.0), ([0.3, 0.05], 2.5), (1e-3, 1e-3)])
def test_ordinary_inputs_keep_the_bits_of_the_original_expression(nu, lengthscale, variance):
    rng = np.random.default_rng(3)
    X1, X2 = rng.uniform(size=(30, 2)), rng.uniform(size=(20, 2))
    k = Matern(lengthscale, variance=variance, nu=nu)
    ls = np.asarray(lengthscale, dtype=float)
    s = np.sqrt(nu * 2.0) * np.sqrt(cdist(X1 / ls, X2 / ls, "sqeuclidean"))
    if nu == 1.5:
        want = k.variance * (1.0 + s) * np.exp(-s)
    else:
        want = k.variance * (1.0 + s + s * s / 3.0) * np.exp(-s)
    np.testing.assert_array_equal(k(X1, X2), want)
    se = SquaredExponential(lengthscale, variance)
    np.testing.assert_array_equal(
        se(X1, X2), se.variance * np.exp(-0.5 * cdist(X1 / ls, X2 / ls, "sqeuclidean"))
    )


def test_points_of_another_dimension_than_the_lengthscales_name_the_lengthscale():
    """A probe wrote ``lengthscale = [0.1, 0.2]`` for a 1-D problem and read "X1 has 1 column(s) but the
    kernel expects d = 2 inputs", naming neither the lengthscale nor its value."""
    from ckb.errors import InvalidInputError
    from ckb.kernels import Matern, SquaredExponential

    for kernel in (SquaredExponential([0.1, 0.2]), Matern([0.1, 0.2], nu=1.5)):
        with pytest.raises(
            InvalidInputError,
            match=r"X1 has 1 column\(s\) but the kernel's lengthscale \[0\.1, 0\.2\] "
            r"has 2 entries, one per input: give 1 \(or one scalar\)\.",
        ):
            kernel(np.zeros((3, 1)))
    with pytest.raises(InvalidInputError, match=r"X has 3 column\(s\) but the kernel's lengthscale"):
        SquaredExponential([0.1, 0.2]).diag(np.zeros((2, 3)))
