"""The outcome units of ckb.Optimizer (``ckb.optimizer.models.OutcomeUnits``): the rms units bit for bit,
the robust maps on heavy tails, exact inverses, and no overflow anywhere."""

import warnings

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from ckb.optimizer.core import policy_units
from ckb.optimizer.models import (
    CONSTRAINT_LOG_RATIO,
    HEAVY_RATIO,
    OutcomeUnits,
    bilog,
    bilog_inverse,
    robust_scale,
)

DBL_MAX = float(np.finfo(float).max)


def _old_policy_units(y, c, minimize, m):
    """policy_units as written before outcome transforms existed (the reference for bit-identity)."""
    u = -y if minimize else y
    mean = float(u.mean()) if u.size else 0.0
    sd = float(u.std(ddof=1)) if u.size > 1 else 1.0
    sd = sd if sd > 1e-12 * max(1.0, abs(mean)) else 1.0
    rms = np.sqrt(np.mean(c**2, axis=0)) if len(c) else np.ones(m)
    rms = np.where(rms > 0, rms, 1.0)
    return (u - mean) / sd, c / rms


@pytest.mark.parametrize("n", [1, 2, 7, 9, 40, 200])
@pytest.mark.parametrize("minimize", [False, True])
def test_well_behaved_data_get_the_rms_units_bit_for_bit(n, minimize):
    rng = np.random.default_rng(n)
    y = rng.normal(3.0, 2.0, n)
    c = rng.normal(0.0, [1.0, 50.0, 1e-3], (n, 3))
    ref_y, ref_c = _old_policy_units(y, c, minimize, 3)
    units = OutcomeUnits(y, c, minimize=minimize, m=3, transform="auto")
    assert units.describe() == {"objective": "standardize", "constraints": ["rms"] * 3}
    assert units.y(y).tobytes() == ref_y.tobytes() and units.c(c).tobytes() == ref_c.tobytes()
    y_p, c_p, scales = policy_units(y, c, minimize, 3)
    assert y_p.tobytes() == ref_y.tobytes() and c_p.tobytes() == ref_c.tobytes()
    assert set(scales) == {"y_mean", "y_sd", "c_rms"}


def test_auto_picks_the_robust_map_per_constraint_on_heavy_tails():
    rng = np.random.default_rng(0)
    c = rng.normal(0.0, 1.0, (20, 3))
    c[4, 1] = 1e10  # one huge value: heavy
    c[:, 2] = 1e200 * (1.0 + 0.1 * rng.random(20))  # well spread but its square overflows
    units = OutcomeUnits(rng.normal(size=20), c, minimize=False, m=3)
    assert units.describe()["constraints"] == ["rms", "bilog2", "bilog"]
    assert units.c_ratio[0] < HEAVY_RATIO < units.c_ratio[1]
    # the explicit choices
    assert OutcomeUnits(np.zeros(20), c, minimize=False, m=3, transform="rms").c_kind == ["rms"] * 3
    assert OutcomeUnits(np.zeros(20), c, minimize=False, m=3, transform="bilog").c_kind == [
        "bilog",
        "bilog2",
        "bilog",
    ]


def test_auto_logs_a_constraint_beyond_the_constraint_threshold_once():
    """A constraint whose largest value exceeds CONSTRAINT_LOG_RATIO (30) robust scales of the design's
    values gets the log map once (twice only beyond HEAVY_RATIO); 20 scales stay rms, and an objective
    65 robust scales from its median stays standardized (its threshold is HEAVY_RATIO)."""
    design = np.array([-1.0, -0.5, 0.5, 1.0, 2.0, -2.0])  # robust scale 1
    ref = np.r_[np.ones(6, bool), np.zeros(2, bool)]
    y = np.r_[np.arange(6.0), 100.0, 3.0]  # median 2.5, robust scale 1.5 over the design
    c = np.c_[np.r_[design, -20.0, 0.3], np.r_[design, -100.0, 0.3], np.r_[design, -2e3, 0.3]]
    units = OutcomeUnits(y, c, minimize=False, m=3, reference=ref)
    assert units.c_ratio.tolist() == [20.0, 100.0, 2e3]
    assert units.c_ratio[0] < CONSTRAINT_LOG_RATIO < units.c_ratio[1] < HEAVY_RATIO < units.c_ratio[2]
    assert units.describe() == {"objective": "standardize", "constraints": ["rms", "bilog", "bilog2"]}


def test_values_crowding_near_zero_are_not_heavy_tails():
    """A run that converges on an active constraint makes hundreds of values near 0; the scale comes
    from the initial design (the reference), so the units stay rms (the ratio that decides is the
    largest value over the design's robust scale, about 3 here, not 1e4)."""
    rng = np.random.default_rng(1)
    design = rng.uniform(-1, 1, (6, 1))
    near = rng.normal(0, 1e-4, (50, 1))
    c = np.vstack([design, near])
    ref = np.r_[np.ones(6, bool), np.zeros(50, bool)]
    assert OutcomeUnits(np.arange(56.0), c, minimize=False, m=1, reference=ref).c_kind == ["rms"]
    assert np.max(np.abs(c)) / robust_scale(c) > HEAVY_RATIO  # all values as the reference would say heavy


def test_a_capped_value_counts_once_in_the_robust_scale():
    c = np.r_[np.full(8, 1e6), [0.5, -0.2, 0.1, -1.0]]  # a simulator that caps its output at 1e6
    assert robust_scale(c) == pytest.approx(np.median([0.1, 0.2, 0.5, 1.0, 1e6]))
    units = OutcomeUnits(np.arange(12.0), c[:, None], minimize=False, m=1)
    assert units.c_kind == ["bilog2"]
    w = units.c(c[:, None])[:, 0]
    assert np.all(np.sign(w) == np.sign(c)) and np.max(np.abs(w)) < 5  # the cap no longer dominates


def test_heavy_objective_gets_rank_normal_scores():
    y = np.r_[np.linspace(0, 1, 9), -DBL_MAX]  # a failure returned as -DBL_MAX (maximizing)
    units = OutcomeUnits(y, np.zeros((10, 1)), minimize=False, m=1)
    assert units.y_kind == "rank"
    z = units.y(y)
    assert np.all(np.isfinite(z)) and np.argmin(z) == 9 and np.all(np.diff(z[:9]) > 0)
    np.testing.assert_allclose(z.sum(), 0.0, atol=1e-12)  # normal scores of ranks are symmetric
    # ties share their average rank
    tied = OutcomeUnits(np.r_[1.0, 1.0, 2.0, 1e300], np.zeros((4, 1)), minimize=True, m=1)
    assert tied.y_kind == "rank"
    zt = tied.y(np.r_[1.0, 1.0, 2.0, 1e300])
    assert zt[0] == zt[1] > zt[2] > zt[3]


@pytest.mark.parametrize("big", [1e155, 1e300, DBL_MAX, -DBL_MAX])
@pytest.mark.parametrize("transform", ["auto", "rms", "bilog"])
def test_no_overflow_and_no_silent_zeros(big, transform):
    """One value of 1e155 or more made the RMS or the standard deviation overflow: every value became 0
    (or NaN) in policy units, silently. Now nothing overflows; with the robust maps the other values
    keep their signs and spread."""
    rng = np.random.default_rng(2)
    c = rng.uniform(-1, 1, (12, 2))
    y = rng.normal(size=12)
    c[3, 0] = big
    y[5] = big
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning (overflow) either
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            units = OutcomeUnits(y, c, minimize=False, m=2, transform=transform)
            yp, cp = units.y(y), units.c(c)
            back = units.c_to_raw(cp)
    assert np.all(np.isfinite(yp)) and np.all(np.isfinite(cp)) and np.all(np.isfinite(back))
    np.testing.assert_allclose(back, c, rtol=1e-12)
    others = np.delete(cp[:, 0], 3)
    if transform != "rms":  # rms keeps the user's choice: the others are tiny but not zero
        assert np.all(np.sign(others) == np.sign(np.delete(c[:, 0], 3)))
        assert np.std(others) > 0.1 * np.std(cp[:, 1])
        assert np.std(np.delete(yp, 5)) > 0.3
    else:
        assert np.all(others != 0)


def test_c_to_raw_inverts_on_numpy_and_torch_keeps_zero_and_order():
    rng = np.random.default_rng(3)
    c = np.c_[rng.normal(size=30), rng.standard_cauchy(30), rng.normal(size=30)]
    c[0, 1], c[1, 1] = 0.0, 1e12
    units = OutcomeUnits(rng.normal(size=30), c, minimize=False, m=3)
    assert units.c_kind[0] == "rms" and units.c_kind[1] != "rms"
    w = units.c(c)
    np.testing.assert_allclose(units.c_to_raw(w), c, rtol=1e-12, atol=0)
    wt = torch.tensor(w, requires_grad=True)
    rt = units.c_to_raw(wt)
    assert isinstance(rt, torch.Tensor) and rt.dtype == torch.float64
    np.testing.assert_allclose(rt.detach().numpy(), units.c_to_raw(w), rtol=1e-14)
    rt.sum().backward()
    assert torch.all(torch.isfinite(wt.grad)) and torch.all(wt.grad > 0)  # monotone, differentiable
    assert np.all(units.c_to_raw(np.zeros(3)) == 0) and np.all(units.c(np.zeros(3)) == 0)
    grid = np.linspace(-50, 50, 2001)[:, None] * np.ones(3)
    raw = units.c_to_raw(grid)
    assert np.all(np.diff(raw, axis=0) >= 0)  # monotone (strictly, until the float range ends)


@settings(max_examples=200, deadline=None)
@given(
    v=arrays(np.float64, st.integers(1, 8), elements=st.floats(-DBL_MAX, DBL_MAX, allow_nan=False)),
    scale=st.floats(1e-300, 1e300),
    depth=st.sampled_from([1, 2]),
)
def test_bilog_inverse_is_exact_for_any_finite_value(v, scale, depth):
    # v / scale in the subnormal range has fewer significant bits than a double: not invertible exactly
    with np.errstate(over="ignore"):
        assume(np.all((v == 0) | (np.abs(v) / scale > 1e-290)))
    w = bilog(v, scale, depth)
    assert np.all(np.isfinite(w)) and np.all(np.sign(w) == np.sign(v))
    back = bilog_inverse(w, scale, depth)
    np.testing.assert_allclose(back, v, rtol=1e-11, atol=0)
    order = np.argsort(v, kind="stable")
    assert np.all(np.diff(w[order]) >= 0)


def test_a_bad_transform_is_named():
    from ckb.errors import InvalidInputError

    with pytest.raises(
        InvalidInputError,
        match="outcome_transform must be one of 'auto', 'rms', 'bilog', 'bilog-constraints', got 'log'",
    ):
        OutcomeUnits(np.zeros(2), np.zeros((2, 1)), minimize=False, m=1, transform="log")


def test_bilog_constraints_maps_every_constraint_and_leaves_the_objective_to_auto():
    rng = np.random.default_rng(1)
    c = rng.normal(0.0, 1.0, (20, 2))  # well-behaved: "auto" would keep rms
    plain_y = rng.normal(size=20)
    heavy_y = plain_y.copy()
    heavy_y[3] = 1e12  # beyond HEAVY_RATIO robust scales: "auto" ranks it
    units = OutcomeUnits(plain_y, c, minimize=False, m=2, transform="bilog-constraints")
    assert units.c_kind == ["bilog", "bilog"]
    assert units.y_kind == "standardize"
    assert OutcomeUnits(plain_y, c, minimize=False, m=2).c_kind == ["rms", "rms"]
    assert OutcomeUnits(heavy_y, c, minimize=False, m=2, transform="bilog-constraints").y_kind == "rank"
    # the constraints' map is bilog's, exactly
    both = OutcomeUnits(plain_y, c, minimize=False, m=2, transform="bilog")
    assert np.array_equal(units.c(c), both.c(c))
