"""Extreme values told to ``ckb.Optimizer`` (fault-injection suite): huge, tiny, denormal and constant
values are stored exactly and the next asks still depend on the other observations (no overflow
turned into silent zeros or NaNs); NaN and inf are refused with a clear error and nothing is stored."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import ckb
from ckb.errors import CKBError
from tests.faults import _workers as W

N_INIT = 5


def _opt(tmp_path, name="s", policy="cei"):
    return ckb.Optimizer(W.LOWER, W.UPPER, m=1, policy=policy, budget=30, n_init=N_INIT, minimize=True,
                         storage=str(tmp_path / f"{name}.db"), study_name=name, seed=4, **W.RUNTIME)  # fmt: skip


def _told(opt, values, normal_shift=0.0):
    """Tell the design points: the first gets ``values`` (objective, constraint), the others the README
    problem (the second one's objective and constraint moved by ``normal_shift``: a heavy-tailed objective
    is modelled by its ranks, which a small move of one value need not change, so the constraint moves too)."""
    for i in range(N_INIT):
        x = opt.ask()
        y, g = W.evaluate(x)
        if i == 0:
            y, g = values[0], [values[1]]
        if i == 1:
            y, g = y + normal_shift, [gj + normal_shift for gj in np.atleast_1d(g)]
        opt.tell(x, y, g)


EXTREMES = {
    "1e155": (1e155, -1.0),
    "1e300": (1e300, 1e300),
    "-1e300": (-1e300, -1e300),
    "max-float": (sys.float_info.max, -sys.float_info.max),
    "denormal": (5e-324, 5e-324),
    "constant-constraint": (0.5, -2.0),  # every constraint value the same (capped) constant
}


@pytest.mark.parametrize("case", list(EXTREMES))
def test_extreme_values_are_stored_exactly_and_the_next_ask_still_uses_the_other_data(tmp_path, case):
    y0, g0 = EXTREMES[case]
    points = []
    for k, shift in enumerate((0.0, 0.7)):
        opt = _opt(tmp_path, f"s{k}")
        if case == "constant-constraint":  # every constraint value the same constant
            for _ in range(N_INIT):
                x = opt.ask()
                opt.tell(x, W.evaluate(x)[0] + (shift if _ == 1 else 0.0), [g0])
        else:
            _told(opt, (y0, g0), shift)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            x = opt.ask()
        overflow = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
        assert not overflow, f"numpy warned during the ask ({case}): {overflow}"
        assert np.all(np.isfinite(x)) and np.all(x >= W.LOWER) and np.all(x <= W.UPPER)
        h = opt.history()
        if case != "constant-constraint":
            assert h[0]["objective"] == y0 and h[0]["constraints"].tolist() == [g0]  # bit for bit
        else:
            assert all(t["constraints"].tolist() == [g0] for t in h if t["state"] == "complete")
        met = opt.metrics()
        assert all(np.isfinite(v) for v in met["positive_violation_per_constraint"])
        points.append(x)
        opt.close()
    # the next ask depends on the normal observations: moving one of them moves the asked point
    assert not np.array_equal(points[0], points[1]), f"the ask ignored the other observations ({case})"


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
@pytest.mark.parametrize("where", ["objective", "constraint"])
def test_nan_and_inf_are_refused_and_nothing_is_stored(tmp_path, bad, where):
    opt = _opt(tmp_path)
    x = opt.ask()
    before = opt.history()
    y, g = W.evaluate(x)
    with pytest.raises(CKBError) as info:
        opt.tell(x, bad if where == "objective" else y, [bad] if where == "constraint" else g)
    msg = str(info.value)
    assert "finite" in msg and "Nothing was recorded" in msg and "\n" not in msg
    after = opt.history()
    assert len(after) == len(before) and after[0]["state"] == "pending"
    assert opt.metrics()["evaluations"] == 0
    opt.tell(x, y, g)  # the point can still be told
    assert opt.history()[0]["objective"] == y
    opt.close()
