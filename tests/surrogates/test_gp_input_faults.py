"""Bad input to ExactGP found by a probe: a one-line ckb error naming the value, and the model unchanged.

Covers the noise floor relative to the kernel's scale, ``fit``'s shapes and arms, ``predict``'s input
dimension, its reading of a 1-D input and empty queries, and the scalar arguments of ``update_arm``,
``update``, ``sample`` and ``covariance``.
"""

import numpy as np
import pytest
from scipy.linalg import solve_triangular

from ckb.errors import InvalidInputError, OutOfDomainError
from ckb.kernels import Matern, PrecomputedKernel, SquaredExponential
from ckb.surrogates import ExactGP
from ckb.surrogates.gp import MIN_NOISE
from tests.checks import one_line as _one_line

C1 = np.linspace(0, 1, 200)[:, None]
METHODS = ("cholesky", "dense", "auto")


def _snapshot(gp: ExactGP) -> dict:
    """Every array a refused call must leave alone (copies)."""
    snap = {"t": gp.t, "mode": gp.mode, "info_gain": gp.info_gain, "X": gp.X.copy(), "y": gp.y.copy()}
    snap["arms"] = gp.arms.copy()
    if gp.candidates is not None:
        snap["mean"] = gp.mean.copy()
        snap["var"] = gp.var.copy()
    return snap


def _assert_unchanged(gp: ExactGP, snap: dict) -> None:
    assert gp.t == snap["t"] and gp.mode == snap["mode"] and gp.info_gain == snap["info_gain"]
    for key in ("X", "y", "arms", "mean", "var"):
        if key in snap:
            np.testing.assert_array_equal(getattr(gp, key), snap[key])


def _gp2(method: str = "cholesky", t: int = 3) -> ExactGP:
    C = np.random.default_rng(0).random((10, 2))
    gp = ExactGP(SquaredExponential(0.3), 0.1, C, method=method)
    for i in range(t):
        gp.update_arm(i, float(i) - 1.0)
    return gp


# ------------------------------------------------------------ 1. noise floor relative to the kernel


@pytest.mark.parametrize("with_candidates", [True, False])
def test_noise_below_the_floor_relative_to_the_kernel_variance_is_refused(with_candidates):
    # noise 1e-12 with variance 1e4 (ratio 1e-16) passed the absolute floor and gave infinite means
    kernel = SquaredExponential(0.05, variance=1e4)
    with pytest.raises(InvalidInputError) as exc:
        ExactGP(kernel, noise=1e-12, candidates=C1 if with_candidates else None)
    msg = _one_line(exc)
    assert "noise (lambda" in msg and "variance" in msg  # names the value, the kernel variance, the floor
    assert "got 1e-12" in msg and "10000" in msg and ">= 1e-08" in msg and "ratio 1e-16" in msg


def test_the_floor_of_a_precomputed_kernel_is_its_largest_diagonal_entry():
    K = np.diag([1.0, 100.0, 4.0])
    with pytest.raises(InvalidInputError, match=r"100.*>= 1e-10.*got 1e-11"):
        ExactGP(PrecomputedKernel(K), 1e-11)  # no candidates: the kernel's own matrix
    with pytest.raises(InvalidInputError, match=r"100.*>= 1e-10.*got 1e-11"):
        ExactGP(PrecomputedKernel(K), 1e-11, np.arange(3.0)[:, None])
    ExactGP(PrecomputedKernel(K), 1e-10, np.arange(3.0)[:, None])  # at the floor: accepted


def test_unit_variance_keeps_the_absolute_message():
    with pytest.raises(InvalidInputError) as exc:
        ExactGP(SquaredExponential(0.3), 1e-13, C1)
    assert _one_line(exc) == "noise (lambda) must be >= 1e-12, got 1e-13."


@pytest.mark.parametrize("variance", [1e-8, 1.0, 1e4, 1e8])
@pytest.mark.parametrize("method", METHODS)
def test_noise_at_the_relative_floor_keeps_a_finite_posterior(variance, method):
    """The repro of the probe at noise = MIN_NOISE * variance: noiseless data |y| <= sqrt(v) keeps
    |mean| <= sqrt(v) (up to round-off) over 300 updates at every kernel scale, in every form."""
    gp = ExactGP(SquaredExponential(0.05, variance=variance), MIN_NOISE * variance, C1, method=method)
    rng = np.random.default_rng(0)
    for _ in range(300):
        i = int(rng.integers(200))
        gp.update_arm(i, np.sqrt(variance) * np.sin(10 * C1[i, 0]))
    assert np.all(np.isfinite(gp.mean)) and np.all(np.isfinite(gp.var))
    assert np.abs(gp.mean).max() <= 1.01 * np.sqrt(variance)


# ------------------------------------------------------------------------------------- 2. fit


def test_fit_refuses_x_rows_that_do_not_match_the_targets():
    rng = np.random.default_rng(0)
    gp = ExactGP(SquaredExponential(0.3), 0.1)
    gp.update(np.array([0.5]), 1.0)
    snap = _snapshot(gp)
    with pytest.raises(InvalidInputError) as exc:  # was refit silently as five 2-D points
        gp.fit(rng.random((10, 1)), rng.standard_normal(5))
    assert "10" in _one_line(exc) and "5" in str(exc.value) and "X" in str(exc.value)
    _assert_unchanged(gp, snap)
    with pytest.raises(InvalidInputError, match="X has 10 row"):  # with candidates: spoke of X1/X2
        _gp2().fit(rng.random((10, 2)), rng.standard_normal(5))


def test_fit_refuses_points_of_the_wrong_dimension():
    gp = _gp2()
    snap = _snapshot(gp)
    with pytest.raises(InvalidInputError, match=r"X has 3 coordinate\(s\) but this GP's points have d = 2"):
        gp.fit(np.zeros((4, 3)), np.zeros(4))
    _assert_unchanged(gp, snap)


@pytest.mark.parametrize("y", [5.0, [[1.0, 2.0]], "ab", [1.0, np.nan]])
def test_fit_refuses_targets_that_are_not_a_finite_vector(y):
    gp = _gp2()
    snap = _snapshot(gp)
    with pytest.raises(InvalidInputError, match="y must"):
        gp.fit(np.zeros((1, 2)), y)
    _assert_unchanged(gp, snap)


@pytest.mark.parametrize(
    "arms, pattern",
    [
        ([0, 1, 2], r"arms must be a 1-D array of 5 candidate indices.*one per target, got shape \(3,\)"),
        ([0, 1, 2, 3, 25], r"arms\[4\] = 25 is outside -1..19"),
        ([0, 1, 2, 3, -2], r"arms\[4\] = -2 is outside -1..19"),
        ([0, 1, 2, 3, 1.5], r"arms must hold integer candidate indices.*1.5"),
        ([0, 1, 2, 3, "4"], r"arms must"),
        ([[0, 1, 2, 3, 4]], r"arms must be a 1-D array of 5 candidate indices.*shape \(1, 5\)"),
    ],
)
def test_fit_refuses_bad_arms(arms, pattern):
    rng = np.random.default_rng(1)
    C = rng.random((20, 2))
    gp = ExactGP(SquaredExponential(0.3), 0.1, C)
    gp.update_arm(7, 2.0)
    snap = _snapshot(gp)
    with pytest.raises(InvalidInputError, match=pattern) as exc:
        gp.fit(C[:5], rng.standard_normal(5), arms=arms)
    _one_line(exc)
    _assert_unchanged(gp, snap)


def test_fit_refuses_arms_that_do_not_match_the_points_or_a_missing_candidate_set():
    rng = np.random.default_rng(2)
    C = rng.random((20, 2))
    gp = ExactGP(SquaredExponential(0.3), 0.1, C)
    with pytest.raises(InvalidInputError, match=r"X\[1\] is not candidates\[arms\[1\]\] = candidates\[9\]"):
        gp.fit(C[[0, 1]], [1.0, 2.0], arms=[0, 9])
    assert gp.t == 0
    gp.fit(np.vstack([C[0], [0.5, 0.5]]), [1.0, 2.0], arms=[0, -1])  # -1: a point that is not an arm
    np.testing.assert_array_equal(gp.arms, [0, -1])
    cont = ExactGP(SquaredExponential(0.3), 0.1)
    with pytest.raises(InvalidInputError, match="no candidate set"):
        cont.fit(C[:2], [1.0, 2.0], arms=[0, 1])
    cont.fit(C[:2], [1.0, 2.0], arms=[-1, -1])
    assert cont.t == 2


def test_fit_refuses_k_xc_of_the_wrong_shape():
    rng = np.random.default_rng(3)
    C = rng.random((20, 2))
    gp = ExactGP(SquaredExponential(0.3), 0.1, C)
    gp.update_arm(1, 1.0)
    snap = _snapshot(gp)
    with pytest.raises(InvalidInputError, match=r"K_XC must have shape \(4, 20\), got \(4, 19\)"):
        gp.fit(C[:4], rng.standard_normal(4), K_XC=np.zeros((4, 19)))
    with pytest.raises(InvalidInputError, match="K_XC must be finite"):
        gp.fit(C[:4], rng.standard_normal(4), K_XC=np.full((4, 20), np.nan))
    _assert_unchanged(gp, snap)
    with pytest.raises(InvalidInputError, match="K_XC.*no candidate set"):
        ExactGP(SquaredExponential(0.3), 0.1).fit(C[:4], np.zeros(4), K_XC=np.zeros((4, 20)))


def test_fit_on_a_factor_that_fails_is_named_and_keeps_the_old_data():
    """A kernel matrix PSD only up to round-off (accepted by PrecomputedKernel) plus a tiny noise can be
    indefinite: fit() raised a bare LinAlgError after dropping the old data."""
    from ckb.errors import NotPositiveDefiniteError

    Q, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(3, 3)))
    kernel = PrecomputedKernel(Q @ np.diag([1.0, 0.5, -5e-11]) @ Q.T)
    gp = ExactGP(kernel, 1e-12, np.arange(3.0)[:, None], method="cholesky")
    gp.update_arm(0, 1.0)
    snap = _snapshot(gp)
    with pytest.raises(NotPositiveDefiniteError, match="not positive definite") as exc:
        gp.fit(np.arange(3.0), [1.0, 2.0, 3.0], arms=[0, 1, 2])
    _one_line(exc)
    _assert_unchanged(gp, snap)


def test_fit_of_valid_data_is_the_same_arithmetic_as_before():
    """Bit-for-bit: one Cholesky of K + λI, then triangular solves, as fit() always computed them."""
    rng = np.random.default_rng(4)
    C = rng.random((30, 2))
    kernel = Matern(0.4, nu=2.5)
    arms = rng.integers(0, 30, 12)
    X, y = C[arms], rng.standard_normal(12)
    gp = ExactGP(kernel, 0.3, C, method="cholesky")
    gp.fit(X, y, arms=arms)
    L = np.linalg.cholesky(kernel(X) + 0.3 * np.eye(12))
    alpha = solve_triangular(L, y, lower=True)
    V = solve_triangular(L, kernel(X, C), lower=True)
    np.testing.assert_array_equal(gp.mean, V.T @ alpha)
    np.testing.assert_array_equal(gp.var, np.maximum(kernel.diag(C) - np.einsum("ij,ij->j", V, V), 0))
    assert gp.info_gain == float(np.sum(np.log(np.diag(L))) - 0.5 * 12 * np.log(0.3))
    gp2 = ExactGP(kernel, 0.3, C, method="cholesky")
    gp2.fit(X, y, arms=arms, K_XC=kernel(X, C))
    np.testing.assert_array_equal(gp2.mean, gp.mean)


def test_fit_reads_a_1d_x_as_scalar_points_on_a_1d_gp():
    gp = ExactGP(SquaredExponential(0.3), 0.1, C1)
    gp.fit(np.array([0.1, 0.5, 0.9]), [1.0, 0.0, -1.0])
    ref = ExactGP(SquaredExponential(0.3), 0.1, C1)
    ref.fit(np.array([[0.1], [0.5], [0.9]]), [1.0, 0.0, -1.0])
    np.testing.assert_array_equal(gp.X, ref.X)
    np.testing.assert_array_equal(gp.mean, ref.mean)


# --------------------------------------------------------------------------------- 3. predict


@pytest.mark.parametrize("t", [0, 3])
def test_predict_refuses_points_of_the_wrong_dimension(t):
    gp = _gp2(t=t)
    with pytest.raises(InvalidInputError) as exc:  # at t = 0 the prior came back silently
        gp.predict(np.zeros((3, 3)))
    assert _one_line(exc) == "X has 3 coordinate(s) but this GP's points have d = 2."


def test_predict_refuses_the_wrong_dimension_on_a_continuous_gp_after_data():
    gp = ExactGP(SquaredExponential(0.3), 0.1)
    gp.update(np.array([0.1, 0.2]), 1.0)
    with pytest.raises(InvalidInputError, match=r"X has 1 coordinate\(s\) but this GP's points have d = 2"):
        gp.predict(np.zeros((4, 1)))


@pytest.mark.parametrize("method", ["cholesky", "dense"])
@pytest.mark.parametrize("t", [0, 3])
def test_predict_reads_a_1d_input_as_one_point_like_update(method, t):
    gp = _gp2(method, t)
    x = np.array([0.1, 0.2])
    for got, want in zip(gp.predict(x), gp.predict(x[None, :])):
        assert got.shape == (1,)
        np.testing.assert_array_equal(got, want)
    with pytest.raises(InvalidInputError, match=r"X has 3 coordinate\(s\) but this GP's points have d = 2"):
        gp.predict(np.array([0.1, 0.2, 0.3]))


def test_predict_reads_a_1d_input_as_scalar_points_on_a_1d_gp():
    gp = ExactGP(SquaredExponential(0.3), 0.1, C1)
    gp.update_arm(3, 1.0)
    x = np.array([0.1, 0.2, 0.7])
    for got, want in zip(gp.predict(x), gp.predict(x[:, None])):
        np.testing.assert_array_equal(got, want)


def test_predict_refuses_an_ambiguous_1d_input_before_the_dimension_is_known():
    gp = ExactGP(SquaredExponential(0.3), 0.1)  # no candidates, no observations: d unknown
    with pytest.raises(InvalidInputError, match=r"1-D.*\(3,\).*d is not known yet.*2-D"):
        gp.predict(np.array([0.1, 0.2, 0.3]))
    assert gp.predict(np.zeros((3, 2)))[0].shape == (3,)
    gp.update(np.array([0.1, 0.2]), 1.0)  # now d = 2: a 1-D input is one point, as in update
    assert gp.predict(np.array([0.1, 0.2]))[0].shape == (1,)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("t", [0, 3, 12])
def test_an_empty_query_returns_empty_arrays(method, t):
    gp = _gp2(method, 0)
    for i in range(t):
        gp.update_arm(i % 10, float(i))
    mean, var = gp.predict(np.zeros((0, 2)))  # the Cholesky form crashed in a numpy concatenate
    assert mean.shape == (0,) and var.shape == (0,)
    mean, cov = gp.predict(np.zeros((0, 2)), full_cov=True)
    assert mean.shape == (0,) and cov.shape == (0, 0)


# -------------------------------------------------------------------------------- 4. scalars


@pytest.mark.parametrize("y", ["1", True, np.True_, b"1", 1 + 0j, [1.0, 2.0], np.array([2.5])])
def test_update_arm_refuses_observations_that_are_not_real_numbers(y):
    gp = _gp2()
    snap = _snapshot(gp)
    with pytest.raises(InvalidInputError, match="observation must be a real number") as exc:
        gp.update_arm(0, y)
    _one_line(exc)
    _assert_unchanged(gp, snap)


@pytest.mark.parametrize("y", [1, np.float32(0.5), np.int64(2), np.array(1.5)])
def test_update_arm_still_takes_real_numbers_of_every_kind(y):
    gp = _gp2()
    gp.update_arm(4, y)
    assert gp.y[-1] == float(np.asarray(y).reshape(()))


def test_update_names_a_point_that_is_not_numeric():
    gp = _gp2()
    snap = _snapshot(gp)
    with pytest.raises(InvalidInputError, match="x must.*'ab'") as exc:
        gp.update("ab", 1.0)
    _one_line(exc)
    with pytest.raises(InvalidInputError, match="x must"):
        gp.update([True, False], 1.0)
    with pytest.raises(InvalidInputError, match="observation must be a real number"):
        gp.update([0.1, 0.2], "1")
    _assert_unchanged(gp, snap)


@pytest.mark.parametrize(
    "kwargs, pattern",
    [
        ({"size": -1}, r"size must be >= 0, got -1"),
        ({"size": 1.5}, r"size must be an integer, got 1.5"),
        ({"size": "2"}, r"size must be an integer"),
        ({"size": True}, r"size must be an integer"),
        ({"scale": float("nan")}, r"scale must be finite, got nan"),
        ({"scale": float("inf")}, r"scale must be finite"),
        ({"scale": -1.0}, r"scale must be >= 0"),
        ({"scale": "1"}, r"scale must be a real number"),
    ],
)
@pytest.mark.parametrize("method", ["cholesky", "dense"])
def test_sample_refuses_bad_size_and_scale_without_using_the_generator(kwargs, pattern, method):
    gp = _gp2(method)
    rng = np.random.default_rng(5)
    state = rng.bit_generator.state
    with pytest.raises(InvalidInputError, match=pattern) as exc:
        gp.sample(rng, **kwargs)
    _one_line(exc)
    assert rng.bit_generator.state == state


@pytest.mark.parametrize("method", ["cholesky", "dense"])
@pytest.mark.parametrize("t", [0, 3])
def test_sample_of_size_zero_is_empty(method, t):
    gp = _gp2(method, t)
    out = gp.sample(np.random.default_rng(0), size=0)
    assert out.shape == (0, 10)


@pytest.mark.parametrize("method", ["cholesky", "dense"])
def test_sample_with_valid_arguments_is_unchanged(method):
    gp = _gp2(method)
    a = gp.sample(np.random.default_rng(6), size=np.int64(3), scale=2)
    b = gp.sample(np.random.default_rng(6), size=3, scale=2.0)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (3, 10)


def test_sample_refuses_a_gp_with_off_candidate_points_before_drawing():
    gp = _gp2()
    gp.update(np.array([0.3, 0.3]), 1.0)
    rng = np.random.default_rng(7)
    state = rng.bit_generator.state
    with pytest.raises(InvalidInputError, match="every observation at a candidate arm"):
        gp.sample(rng)
    assert rng.bit_generator.state == state


@pytest.mark.parametrize("method", ["cholesky", "dense"])
@pytest.mark.parametrize(
    "indices, pattern",
    [
        ([1.7], r"candidate indices must be integers, got 1.7"),
        ([0, np.nan], r"candidate indices must be"),
        ([True, False], r"candidate indices must"),
        (["1"], r"candidate indices must"),
        ([1e30], r"candidate index 1e\+30 is outside 0..9"),
    ],
)
def test_covariance_refuses_indices_that_are_not_integers(method, indices, pattern):
    gp = _gp2(method)
    with pytest.raises(InvalidInputError, match=pattern) as exc:  # [1.7] was read as [1]
        gp.covariance(indices)
    _one_line(exc)


def test_covariance_takes_integral_indices_of_every_kind():
    gp = _gp2()
    want = gp.covariance([1, 2])
    np.testing.assert_array_equal(gp.covariance(np.array([1.0, 2.0])), want)
    np.testing.assert_array_equal(gp.covariance(np.array([1, 2], dtype=np.uint8)), want)
    assert gp.covariance([]).shape == (0, 0)
    with pytest.raises(OutOfDomainError, match="candidate index -1"):
        gp.covariance([-1])
