"""Tests of the stationary kernels (squared exponential, Matérn 3/2 and 5/2)."""

import math

import numpy as np
import pytest
from scipy.special import gamma, kv

from ckb.errors import InvalidInputError, SpecError
from ckb.kernels import Matern, SquaredExponential, make_kernel

# --------------------------------------------------------------------------- closed forms by hand


def _points_at_distances(lengthscale, multiples):
    """1-D points 0, m_1 l, m_2 l, ...: the distance of point j to point 0 is ``r = m_j`` in units of l."""
    return np.array([0.0, *(m * lengthscale for m in multiples)])[:, None]


@pytest.mark.parametrize("lengthscale, variance", [(1.0, 1.0), (0.7, 1.3), (3.0, 0.25)])
def test_squared_exponential_closed_form_at_0_l_2l(lengthscale, variance):
    k = SquaredExponential(lengthscale, variance)
    X = _points_at_distances(lengthscale, [1, 2])
    K = k(X)
    # k(r) = v exp(-r^2 / 2), r in units of the lengthscale
    assert K[0, 0] == pytest.approx(variance, rel=1e-14)
    assert K[0, 1] == pytest.approx(variance * math.exp(-0.5), rel=1e-12)
    assert K[0, 2] == pytest.approx(variance * math.exp(-2.0), rel=1e-12)
    assert K[1, 2] == pytest.approx(variance * math.exp(-0.5), rel=1e-12)


@pytest.mark.parametrize("lengthscale, variance", [(1.0, 1.0), (0.4, 2.0)])
def test_matern_15_closed_form_at_0_l_2l(lengthscale, variance):
    k = Matern(lengthscale, variance, nu=1.5)
    K = k(_points_at_distances(lengthscale, [1, 2]))
    s3 = math.sqrt(3.0)
    assert K[0, 0] == pytest.approx(variance, rel=1e-14)
    assert K[0, 1] == pytest.approx(variance * (1 + s3) * math.exp(-s3), rel=1e-12)
    assert K[0, 2] == pytest.approx(variance * (1 + 2 * s3) * math.exp(-2 * s3), rel=1e-12)


@pytest.mark.parametrize("lengthscale, variance", [(1.0, 1.0), (0.4, 2.0)])
def test_matern_25_closed_form_at_0_l_2l(lengthscale, variance):
    k = Matern(lengthscale, variance, nu=2.5)
    K = k(_points_at_distances(lengthscale, [1, 2]))
    s5 = math.sqrt(5.0)
    assert K[0, 0] == pytest.approx(variance, rel=1e-14)
    assert K[0, 1] == pytest.approx(variance * (1 + s5 + 5 / 3) * math.exp(-s5), rel=1e-12)
    assert K[0, 2] == pytest.approx(variance * (1 + 2 * s5 + 20 / 3) * math.exp(-2 * s5), rel=1e-12)


def test_matern_default_nu_is_25():
    assert Matern(0.5).nu == 2.5


@pytest.mark.parametrize("nu", [1.5, 2.5])
def test_matern_matches_general_bessel_formula(nu):
    """k(r) = v 2^(1-nu)/Gamma(nu) (sqrt(2 nu) r)^nu K_nu(sqrt(2 nu) r): an independent route to the value."""
    ls, v = 0.8, 1.7
    r = np.array([0.05, 0.3, 1.0, 1.7, 2.5, 4.0])
    X = np.concatenate([[0.0], r * ls])[:, None]
    got = Matern(ls, v, nu=nu)(X[:1], X[1:])[0]
    z = np.sqrt(2 * nu) * r
    want = v * 2 ** (1 - nu) / gamma(nu) * z**nu * kv(nu, z)
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_ard_closed_form_per_dimension_lengthscales():
    l1, l2, v = 0.5, 2.0, 1.1
    X = np.array([[0.0, 0.0], [l1, 0.0], [0.0, l2], [l1, l2]])
    K = SquaredExponential([l1, l2], v)(X)
    assert K[0, 1] == pytest.approx(v * math.exp(-0.5), rel=1e-12)  # r = 1 along x1
    assert K[0, 2] == pytest.approx(v * math.exp(-0.5), rel=1e-12)  # r = 1 along x2
    assert K[0, 3] == pytest.approx(v * math.exp(-1.0), rel=1e-12)  # r = sqrt(2)
    s5 = math.sqrt(5.0)
    Km = Matern([l1, l2], v, nu=2.5)(X)
    r = math.sqrt(2.0)
    assert Km[0, 3] == pytest.approx(v * (1 + s5 * r + 5 * r * r / 3) * math.exp(-s5 * r), rel=1e-12)


# ------------------------------------------------------------------------- structural properties

KERNELS = [
    pytest.param(lambda d: SquaredExponential(0.3, 1.5), id="se"),
    pytest.param(lambda d: Matern(0.4, 0.8, nu=1.5), id="matern15"),
    pytest.param(lambda d: Matern(0.4, 2.0, nu=2.5), id="matern25"),
    pytest.param(lambda d: SquaredExponential(np.linspace(0.2, 1.0, d), 1.0), id="se-ard"),
    pytest.param(lambda d: Matern(np.linspace(0.3, 0.9, d), 1.2, nu=1.5), id="matern15-ard"),
    pytest.param(lambda d: Matern(np.linspace(0.3, 0.9, d), 0.7, nu=2.5), id="matern25-ard"),
]


@pytest.mark.parametrize("make", KERNELS)
def test_gram_matrix_symmetric_and_psd(make, rng):
    d = 3
    k = make(d)
    X = rng.uniform(size=(60, d))
    K = k(X)
    assert K.shape == (60, 60)
    np.testing.assert_allclose(K, K.T, rtol=0, atol=1e-15)
    assert np.linalg.eigvalsh(K)[0] >= -1e-10
    # cross-kernel symmetry k(X, Y) = k(Y, X)^T
    Y = rng.uniform(size=(7, d))
    np.testing.assert_allclose(k(X, Y), k(Y, X).T, rtol=1e-14, atol=0)


@pytest.mark.parametrize("make", KERNELS)
def test_diag_equals_variance_and_gram_diagonal(make, rng):
    k = make(2)
    X = rng.uniform(-3, 3, size=(25, 2))
    np.testing.assert_array_equal(k.diag(X), np.full(25, k.variance))
    np.testing.assert_allclose(np.diag(k(X)), k.diag(X), rtol=1e-15)


@pytest.mark.parametrize("make", KERNELS)
def test_values_in_range_and_decreasing_with_distance(make):
    k = make(2)
    steps = np.linspace(0, 5, 40)
    X = np.column_stack([steps, steps])
    row = k(X[:1], X)[0]
    assert np.all(row <= k.variance * (1 + 1e-15)) and np.all(row > 0)
    assert np.all(np.diff(row) < 0)


@pytest.mark.parametrize("cls, kw", [(SquaredExponential, {}), (Matern, {"nu": 1.5}), (Matern, {"nu": 2.5})])
def test_ard_equals_isotropic_kernel_on_rescaled_inputs(cls, kw, rng):
    ls = np.array([0.3, 1.7, 0.9])
    X, Y = rng.uniform(size=(10, 3)), rng.uniform(size=(6, 3))
    ard = cls(ls, 1.4, **kw)
    iso = cls(1.0, 1.4, **kw)
    np.testing.assert_allclose(ard(X, Y), iso(X / ls, Y / ls), rtol=1e-12)
    # equal per-dimension lengthscales are the isotropic kernel
    np.testing.assert_allclose(cls(np.full(3, 0.6), 1.4, **kw)(X, Y), cls(0.6, 1.4, **kw)(X, Y), rtol=1e-12)
    assert ard.input_dim == 3 and iso.input_dim is None


def test_one_dimensional_array_is_a_column_of_points_for_isotropic_kernels():
    k = SquaredExponential(0.5)
    x = np.array([0.0, 0.5, 1.0])
    np.testing.assert_array_equal(k(x), k(x[:, None]))


def test_to_dict_and_make_kernel_round_trip(rng):
    X = rng.uniform(size=(5, 2))
    for k in (SquaredExponential(0.3, 2.0), Matern([0.2, 0.4], 1.0, nu=1.5), Matern(0.5, nu=2.5)):
        k2 = make_kernel(k.to_dict())
        assert type(k2) is type(k)
        np.testing.assert_array_equal(k2(X), k(X))
        assert type(k).__name__ in repr(k)


def test_make_kernel_unknown_type_suggests_name():
    with pytest.raises(SpecError, match="'matern'"):
        make_kernel({"type": "matérn", "lengthscale": 0.2})
    with pytest.raises(SpecError, match="lengthscales"):
        make_kernel({"type": "se", "lengthscales": 0.2})


# ----------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("cls", [SquaredExponential, Matern])
@pytest.mark.parametrize(
    "lengthscale, shown",
    [(0.0, "0.0"), (-1.5, "-1.5"), ([1.0, 0.0], r"\[1.0, 0.0\]"), ([0.5, -2.0], "-2.0"), (np.nan, "nan")],
)
def test_non_positive_or_nan_lengthscale_is_rejected_naming_the_value(cls, lengthscale, shown):
    with pytest.raises(InvalidInputError, match="lengthscale") as info:
        cls(lengthscale)
    assert info.match(shown)


@pytest.mark.parametrize("cls", [SquaredExponential, Matern])
def test_matrix_lengthscale_is_rejected(cls):
    with pytest.raises(InvalidInputError, match="lengthscale"):
        cls([[0.5, 0.5]])


@pytest.mark.parametrize("cls", [SquaredExponential, Matern])
@pytest.mark.parametrize("variance", [0.0, -1.0, np.inf])
def test_non_positive_variance_is_rejected(cls, variance):
    with pytest.raises(InvalidInputError, match="variance"):
        cls(1.0, variance)


@pytest.mark.parametrize("nu", [0.5, 2.0, 3.5, "2.5"])
def test_matern_nu_outside_15_25_is_rejected(nu):
    with pytest.raises(InvalidInputError, match="nu") as info:
        Matern(1.0, nu=nu)
    assert info.match(repr(nu).replace(".", r"\."))


@pytest.mark.parametrize("make", KERNELS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_points_are_rejected(make, bad):
    k = make(2)
    X = np.zeros((4, 2))
    X[2, 1] = bad
    with pytest.raises(InvalidInputError, match="finite") as info:
        k(X)
    assert info.match(str(bad))
    with pytest.raises(InvalidInputError, match="finite"):
        k(np.zeros((3, 2)), X)
    with pytest.raises(InvalidInputError, match="finite"):
        k.diag(X)


@pytest.mark.parametrize("cls, kw", [(SquaredExponential, {}), (Matern, {"nu": 1.5})])
def test_wrong_number_of_columns_is_rejected(cls, kw):
    ard = cls([0.5, 0.5], **kw)
    with pytest.raises(InvalidInputError, match=r"3 column\(s\).*lengthscale \[0\.5, 0\.5\] has 2 entries"):
        ard(np.zeros((4, 3)))
    with pytest.raises(InvalidInputError, match="column"):
        ard(np.zeros((4, 2)), np.zeros((2, 1)))
    with pytest.raises(InvalidInputError, match="column"):
        ard.diag(np.zeros((4, 3)))
    iso = cls(0.5, **kw)
    with pytest.raises(InvalidInputError, match="2 columns but X2 has 3"):
        iso(np.zeros((4, 2)), np.zeros((1, 3)))


@pytest.mark.parametrize("cls", [SquaredExponential, Matern])
def test_three_dimensional_point_array_is_rejected(cls):
    with pytest.raises(InvalidInputError, match="2-D"):
        cls(0.5)(np.zeros((2, 2, 2)))
