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
    bound_log,
    bound_log_inverse,
    crowded_bound,
    robust_scale,
    stored_transform,
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
@pytest.mark.parametrize("transform", ["auto", "rms", "bilog", "auto-bounds"])
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
        match="outcome_transform must be one of 'auto', 'rms', 'bilog', 'bilog-constraints', 'auto-bounds', 'auto-no-bounds', 'auto-log-objective', got 'log'",
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


# ----------------------------------------------------------------------------------- auto-bounds
def _ratio_constraints(n, seed):
    """Two constraints written as engineering ratios: g0 = 1 - r (a cap at 1), g1 = r' - 1 (a floor at
    -1), with r, r' > 0 spanning five decades; and a well-spread normal one."""
    rng = np.random.default_rng(seed)
    r = 10.0 ** rng.uniform(-5, 0.5, n)
    r2 = 10.0 ** rng.uniform(-5, 0.5, n)
    return np.c_[1.0 - r, r2 - 1.0, rng.normal(size=n)]


def test_crowded_bound_finds_a_cap_and_a_floor_just_past_the_extreme():
    c = _ratio_constraints(12, 0)
    cap, floor = crowded_bound(c[:, 0]), crowded_bound(c[:, 1])
    # the bound lies past every value, by the robust scale of the distances to the extreme
    z0, z1 = c[:, 0].max() - c[:, 0], c[:, 1] - c[:, 1].min()
    assert cap == c[:, 0].max() + robust_scale(z0) and 1.0 > c[:, 0].max()
    assert floor == c[:, 1].min() - robust_scale(z1)
    assert crowded_bound(c[:, 2]) is None  # spread values crowd against neither side
    assert crowded_bound(np.r_[0.1, 0.2]) is None  # too few values
    # a bound on the wrong side of 0 (0 would lie past it) is not used
    assert crowded_bound(c[:, 0] - 5.0) is None


def test_auto_bounds_maps_ratio_constraints_by_the_log_distance_to_their_bound():
    c = _ratio_constraints(20, 1)
    y = np.random.default_rng(1).normal(size=20)
    auto = OutcomeUnits(y, c, minimize=True, m=3, transform="auto")
    units = OutcomeUnits(y, c, minimize=True, m=3, transform="auto-bounds")
    assert units.describe()["constraints"] == ["bound", "bound", "rms"]
    assert auto.describe()["constraints"][2] == "rms"
    w = units.c(c)
    # hand-computed: -sign(b) log(1 - g / b)
    b0, b1 = units.c_bound[:2]
    np.testing.assert_allclose(w[:, 0], -np.log(1.0 - c[:, 0] / b0), rtol=1e-13)
    np.testing.assert_allclose(w[:, 1], np.log(1.0 - c[:, 1] / b1), rtol=1e-13)
    np.testing.assert_array_equal(w[:, 2], auto.c(c)[:, 2])
    # near the cap the map is the log of the ratio: its decades spread evenly
    assert np.corrcoef(w[:, 0], -np.log(1.0 - c[:, 0] + (b0 - 1.0)))[0, 1] > 0.999
    # exact inverse on numpy and torch, 0 -> 0, monotone, finite gradients
    np.testing.assert_allclose(units.c_to_raw(w), c, rtol=1e-12, atol=1e-15)
    wt = torch.tensor(w, requires_grad=True)
    rt = units.c_to_raw(wt)
    np.testing.assert_allclose(rt.detach().numpy(), c, rtol=1e-12, atol=1e-15)
    rt.sum().backward()
    assert torch.all(torch.isfinite(wt.grad)) and torch.all(wt.grad > 0)
    assert np.all(units.c(np.zeros(3)) == 0) and np.all(units.c_to_raw(np.zeros(3)) == 0)
    grid = np.linspace(-800, 800, 4001)[:, None] * np.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        raw = units.c_to_raw(grid)
    assert np.all(np.isfinite(raw)) and np.all(np.diff(raw, axis=0) >= 0)
    assert np.all(raw[:, 0] <= b0)  # the model's cap is never exceeded


def test_auto_bounds_gradients_stay_finite_far_out_in_every_column():
    """Acquisitions may differentiate through c_to_raw in torch: in a first version a model value far
    below a cap or far above a floor (e^800 past the float range), or far out in an rms column beside a
    bound map (the branch torch.where did not take), made the gradient NaN. Now every gradient is
    finite."""
    c = _ratio_constraints(20, 1)
    units = OutcomeUnits(np.zeros(20), c, minimize=True, m=3, transform="auto-bounds")
    assert units.describe()["constraints"] == ["bound", "bound", "rms"]
    grid = torch.linspace(-2000, 2000, 801, dtype=torch.float64)[:, None] * torch.ones(3, dtype=torch.float64)
    grid.requires_grad_(True)
    raw = units.c_to_raw(grid)
    raw.sum().backward()
    assert torch.all(torch.isfinite(raw)) and torch.all(torch.isfinite(grid.grad))
    assert torch.all(grid.grad >= 0)
    # torch's and numpy's exp may differ in the last bit (on an AMD EPYC here, by 1 ulp beyond 1e170)
    eps = np.finfo(np.float64).eps
    np.testing.assert_allclose(
        raw.detach().numpy(), units.c_to_raw(grid.detach().numpy()), rtol=4 * eps, atol=0
    )


@settings(max_examples=200, deadline=None)
@given(
    v=arrays(np.float64, st.integers(1, 8), elements=st.floats(-1e6, 0.999)),
    b=st.sampled_from([1.0, 1e-3, 1e3]),
    sign=st.sampled_from([1.0, -1.0]),
)
def test_bound_log_inverse_is_exact_below_a_cap_and_above_a_floor(v, b, sign):
    v, b = sign * v * b, sign * b
    w = bound_log(v, b)
    assert np.all(np.isfinite(w)) and np.all(np.sign(w) == np.sign(v))
    np.testing.assert_allclose(bound_log_inverse(w, b), v, rtol=1e-9, atol=1e-12 * abs(b))
    order = np.argsort(v, kind="stable")
    assert np.all(np.diff(w[order]) >= 0)


def test_crowded_bound_with_an_offset_wants_the_crowd_far_from_zero():
    """Hand-computed: values 1 - k e-3 (k = 0..4) and -10 crowd against the top; the distances to it,
    1e-3 .. 4e-3 and 11, have the robust scale 3e-3 (median of the distinct nonzero ones), so the
    ratio is 11 / 3e-3 and the bound 1.003; the top lies 1 / 3e-3 = 333 scales from 0."""
    v = np.r_[1.0 - np.arange(5) * 1e-3, -10.0]
    assert crowded_bound(v) == pytest.approx(1.003, rel=1e-12)
    assert crowded_bound(v, offset=30.0) == pytest.approx(1.003, rel=1e-12)
    assert crowded_bound(v, offset=400.0) is None
    # a sentinel far above O(1) values around 0: they crowd against their floor, but near 0
    rng = np.random.default_rng(3)
    w = np.r_[rng.normal(size=12), 1e10, 1e10]
    assert crowded_bound(w) is not None and crowded_bound(w, offset=30.0) is None


def test_auto_takes_the_bound_map_only_where_the_bound_lies_far_from_zero():
    """The default maps a constraint by its distance to a bound when its values crowd against one
    side far from 0 (ratios 1 - r, r - 1 with r spanning decades); a sentinel or spike above values
    around 0 keeps the double log, whose sign accuracy is the better there (5 seeds, 30 Sobol points,
    a constraint set to 1e10 on 30% of the box: 0.93 against 0.71 for the bound map; one value of 1e6:
    0.89 against 0.77; ckb.optimizer.models)."""
    c = _ratio_constraints(20, 1)
    y = np.random.default_rng(1).normal(size=20)
    assert OutcomeUnits(y, c, minimize=True, m=3).describe()["constraints"] == ["bound", "bound", "rms"]
    before = OutcomeUnits(y, c, minimize=True, m=3, transform="auto-no-bounds").describe()["constraints"]
    assert "bound" not in before
    rng = np.random.default_rng(5)
    s = np.r_[rng.normal(size=20), 1e10, 1e10, 1e10][:, None]
    kinds = {
        t: OutcomeUnits(np.zeros(23), s, minimize=True, m=1, transform=t).describe()["constraints"]
        for t in ("auto", "auto-bounds", "auto-no-bounds")
    }
    assert kinds == {"auto": ["bilog2"], "auto-bounds": ["bound"], "auto-no-bounds": ["bilog2"]}


def test_a_spec_stored_before_units_version_2_reads_auto_as_auto_no_bounds():
    assert stored_transform({"outcome_transform": "auto"}) == "auto-no-bounds"
    assert stored_transform({}) == "auto-no-bounds"  # the default then was auto
    assert stored_transform({"outcome_transform": "auto", "units": 2}) == "auto"
    assert stored_transform({"outcome_transform": "rms"}) == "rms"
    assert stored_transform({"outcome_transform": "auto-bounds"}) == "auto-bounds"


def test_auto_bounds_changes_nothing_where_no_constraint_crowds_against_a_bound():
    rng = np.random.default_rng(4)
    y, c = rng.normal(size=30), np.c_[rng.normal(size=30), rng.standard_cauchy(30)]
    a = OutcomeUnits(y, c, minimize=False, m=2, transform="auto")
    b = OutcomeUnits(y, c, minimize=False, m=2, transform="auto-bounds")
    assert a.describe() == b.describe() and a.c(c).tobytes() == b.c(c).tobytes()


@pytest.mark.parametrize(
    "y, minimize, kind",
    [
        ([0.01, 0.5, 3.0, 20.0], True, "log"),  # minimized, positive, 2e3 apart
        ([1.0, 5.0, 20.0, 90.0], True, "standardize"),  # 90 apart: within two decades
        ([0.01, 0.5, 3.0, 20.0], False, "standardize"),  # maximized: its log would crowd the best values
        ([-0.01, 0.5, 3.0, 20.0], True, "standardize"),  # not positive
    ],
)
def test_auto_log_objective_models_a_minimized_objective_spanning_decades_by_its_log(y, minimize, kind):
    units = OutcomeUnits(
        np.array(y), np.zeros((4, 1)), minimize=minimize, m=1, transform="auto-log-objective"
    )
    assert units.describe()["objective"] == kind
    if kind == "log":  # -log y standardized: the order kept (smaller is better), mean 0, sd 1
        z = -np.log(np.array(y))
        np.testing.assert_allclose(units.y(np.array(y)), (z - z.mean()) / z.std())
        np.testing.assert_allclose(units.y(np.array([1.0])), (0.0 - z.mean()) / z.std())
