"""Bad input to ExactGP: a one-line ckb error naming the value, and the model
unchanged.

Covers observations whose size makes the posterior mean overflow (``update_arm``, ``update``, ``fit``,
``relabel``, in every form), ``sample`` given something other than a generator, an empty candidate set,
and a saved dense state loaded into a GP of method ``"cholesky"``.
"""

import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.kernels import SquaredExponential
from ckb.surrogates import ExactGP
from tests.checks import one_line as _one_line

C10 = np.linspace(0, 1, 10)[:, None]
METHODS = ("cholesky", "dense", "auto")


def _same_state(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(np.asarray(a[k]), np.asarray(b[k])) for k in a)


# ---------------------------------------------------------------------------- overflowing means
@pytest.mark.parametrize("method", METHODS)
def test_an_observation_that_overflows_the_mean_is_refused_and_changes_nothing(method):
    gp = ExactGP(SquaredExponential(0.2), 0.1, C10, method=method)
    gp.update_arm(1, 1e308)
    before, buffer = gp.state_dict(), gp.mean
    with pytest.raises(
        InvalidInputError, match=r"observation -1e\+308 would make the posterior mean overflow"
    ):
        gp.update_arm(2, -1e308)
    assert _same_state(gp.state_dict(), before) and gp.mean is buffer
    assert np.all(np.isfinite(gp.mean))
    gp.update_arm(5, 1e307)  # the model goes on
    assert gp.t == 2 and np.all(np.isfinite(gp.mean))


def test_update_at_a_point_that_overflows_is_refused_too():
    gp = ExactGP(SquaredExponential(0.2), 0.1)
    gp.update([0.1], 1e308)
    before = gp.state_dict()
    with pytest.raises(InvalidInputError, match="would make the posterior mean overflow") as err:
        gp.update([0.11], -1e308)
    _one_line(err)
    assert _same_state(gp.state_dict(), before)


def test_fit_of_targets_that_overflow_is_refused_and_keeps_the_old_data():
    gp = ExactGP(SquaredExponential(0.2), 0.1, C10, method="cholesky")
    gp.update_arm(3, 1.0)
    before = gp.state_dict()
    with pytest.raises(InvalidInputError, match=r"targets y \(largest \|y\| = 1\.7e\+308\)") as err:
        gp.fit(np.array([[0.0], [1e-4]]), [1.7e308, -1.7e308])
    _one_line(err)
    assert _same_state(gp.state_dict(), before)


@pytest.mark.parametrize("method", ("cholesky", "dense"))
def test_relabel_to_targets_that_overflow_is_refused_and_keeps_the_old_targets(method):
    gp = ExactGP(SquaredExponential(0.2), 0.1, C10, method=method)
    gp.update_arm(1, 1.0)
    gp.update_arm(2, 2.0)
    before, buffer = gp.state_dict(), gp.mean
    with pytest.raises(InvalidInputError, match="would make the posterior mean overflow") as err:
        gp.relabel([1.7e308, -1.7e308])
    _one_line(err)
    assert _same_state(gp.state_dict(), before) and gp.mean is buffer
    gp.relabel([3.0, 4.0])
    np.testing.assert_array_equal(gp.y, [3.0, 4.0])


@pytest.mark.parametrize("method", METHODS)
def test_huge_but_representable_observations_are_still_taken(method):
    # the exponential penalty of penalty-noisy feeds values like -2.7e195 (test_overflow_guard_caps_kappa)
    gp = ExactGP(SquaredExponential(0.2), 0.1, C10, method=method)
    for i, y in enumerate((1e195, -2.7e195, 1e300, 3.0)):
        gp.update_arm(i, y)
    assert gp.t == 4 and np.all(np.isfinite(gp.mean))


# ----------------------------------------------------------------------------------- sample
@pytest.mark.parametrize("rng", [None, 0, np.random.RandomState(0), "seed"])
def test_sample_refuses_what_is_not_a_generator(rng):
    gp = ExactGP(SquaredExponential(0.2), 0.1, C10)
    with pytest.raises(InvalidInputError, match="rng must be a numpy random Generator") as err:
        gp.sample(rng)
    assert type(rng).__name__ in _one_line(err)


# ------------------------------------------------------------------------------- candidates
def test_an_empty_candidate_set_is_refused_at_construction():
    with pytest.raises(
        InvalidInputError, match=r"candidates must hold at least one point, got shape \(0, 1\)"
    ) as err:
        ExactGP(SquaredExponential(0.2), 1.0, np.zeros((0, 1)))
    assert "candidates=None" in _one_line(err)
    assert ExactGP(SquaredExponential(0.2), 1.0, None).candidates is None


# ------------------------------------------------------------------------------- state load
def test_a_dense_state_is_refused_by_a_cholesky_gp_naming_both():
    dense = ExactGP(SquaredExponential(0.2), 0.1, C10[:4], method="dense")
    dense.update_arm(0, 1.0)
    chol = ExactGP(SquaredExponential(0.2), 0.1, C10[:4], method="cholesky")
    chol.update_arm(1, 2.0)
    before = chol.state_dict()
    with pytest.raises(InvalidInputError, match=r"mode = 'dense'.*method = 'cholesky'") as err:
        chol.load_state_dict(dense.state_dict())
    _one_line(err)
    assert chol.mode == "cholesky" and _same_state(chol.state_dict(), before)
    chol.remove_oldest()  # still the Cholesky form it says it is


def test_a_gp_of_method_auto_still_takes_either_form():
    src = ExactGP(SquaredExponential(0.2), 0.1, C10[:4], method="dense")
    src.update_arm(0, 1.0)
    auto = ExactGP(SquaredExponential(0.2), 0.1, C10[:4], method="auto")
    auto.load_state_dict(src.state_dict())
    assert auto.mode == "dense"
    np.testing.assert_array_equal(auto.mean, src.mean)


@pytest.mark.parametrize(
    "method, how",
    [
        ("cholesky", "update_arm"),
        ("dense", "update_arm"),
        ("cholesky", "fit"),
        ("cholesky", "load"),
        ("dense", "load"),
    ],
)
def test_the_unchecked_fast_update_is_off_once_a_huge_target_is_in_the_model(method, how):
    """Updates skip the overflow check only while every target is within 1e50 (where none can overflow):
    a huge target that came in by an update, a fit or a loaded state turns the check back on, so a later
    overflowing observation is still refused."""
    gp = ExactGP(SquaredExponential(0.2), 0.1, C10, method=method)
    if how == "update_arm":
        gp.update_arm(1, 1e308)
    elif how == "fit":
        gp.fit(C10[[1]], np.array([1e308]))
    else:
        src = ExactGP(SquaredExponential(0.2), 0.1, C10, method=method)
        src.update_arm(1, 1e308)
        gp.load_state_dict(src.state_dict())
    with pytest.raises(InvalidInputError, match="would make the posterior mean overflow"):
        gp.update_arm(2, -1e308)
    tame = ExactGP(SquaredExponential(0.2), 0.1, C10, method=method)
    tame.update_arm(1, 1e50)
    tame.update_arm(2, -1e50)  # within the bound: the fast path, exact as before
    reference = ExactGP(SquaredExponential(0.2), 0.1, C10, method="cholesky")
    reference.fit(C10[[1, 2]], np.array([1e50, -1e50]))
    np.testing.assert_allclose(tame.mean, reference.mean, rtol=1e-9, atol=1e-9 * 1e50)
