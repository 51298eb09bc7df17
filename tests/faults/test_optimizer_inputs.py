"""Bad arguments to ckb.Optimizer get one-line errors naming the value, and nothing stored changes.

Each case here was found by probing the public API and failed (a raw OverflowError, TypeError,
AttributeError or MemoryError, or a silently wrong record) before its fix.
"""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

pytest.importorskip("botorch")

import ckb
from ckb.errors import CKBError, InvalidInputError

HUGE = 10**400  # a Python int no float holds


def _opt(**kwargs):
    return ckb.Optimizer([0.0], [1.0], **{"budget": 10, "policy": "cei", **kwargs})


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"lower": [-HUGE], "upper": [1.0]}, "lower"),
        ({"lower": [0.0], "upper": [HUGE]}, "upper"),
        ({"violation_budget": HUGE}, "violation_budget"),
        ({"initial_design": [[HUGE]]}, "initial_design"),
        ({"candidates": [[0.5], [HUGE]]}, "candidates"),
        ({"batch_separation": HUGE}, "batch_separation"),
        ({"policy": "ckb-ucb", "beta": HUGE}, "beta"),
        ({"lower": [-1e308], "upper": [1e308]}, "width"),
        ({"lower": ["a"], "upper": [1.0]}, "lower"),
        ({"lower": ["0"], "upper": ["1"]}, "lower"),
        ({"lower": [False], "upper": [True]}, "lower"),
        ({"lower": {"a": 0}, "upper": {"a": 1}}, "lower"),
        ({"policy": 3}, "policy"),
        ({"policy": ["cei"]}, "policy"),
        ({"storage": 123}, "storage"),
        ({"storage": ["a.db"]}, "storage"),
        ({"m": 10**12}, "m"),
        ({"n_init": 20}, "n_init"),
        ({"initial_design": [[0.5], [0.5]], "exact": True}, "initial_design point 1"),
    ],
)
def test_a_bad_constructor_argument_is_named(kwargs, match):
    kwargs = {"lower": [0.0], "upper": [1.0], "budget": 10, "policy": "cei", **kwargs}
    with pytest.raises(CKBError, match=match) as err:  # InvalidInputError, or UnknownNameError for a policy
        ckb.Optimizer(kwargs.pop("lower"), kwargs.pop("upper"), **kwargs)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        ((HUGE, [0.0]), {}, "objective"),
        ((1.0, [HUGE]), {}, "constraint"),
        ((True, [0.0]), {}, "objective"),
        (("3.5", [0.0]), {}, "objective"),
        ((1.0, [False]), {}, "constraint"),
        ((1.0, ["-1"]), {}, "constraint"),
        ((1.0, [0.0]), {"failed": "no"}, "failed"),
        ((1.0, [0.0]), {"failed": True}, "failed"),
    ],
)
def test_a_bad_tell_is_named_and_nothing_is_recorded(args, kwargs, match):
    opt = _opt()
    x = opt.ask()
    with pytest.raises(InvalidInputError, match=match) as err:
        opt.tell(x, *args, **kwargs)
    assert "\n" not in str(err.value)
    assert [t["state"] for t in opt.history()] == ["pending"]


def test_a_point_outside_float_range_is_named():
    opt = _opt()
    opt.ask()
    with pytest.raises(InvalidInputError, match="a point must be numeric .real numbers. within float range"):
        opt.tell([HUGE], 1.0, [0.0])


def test_a_note_on_a_result_is_kept():
    opt = _opt()
    n = opt.tell(opt.ask(), 1.0, [0.0], note="valve 3 replaced")
    assert opt.history()[n]["note"] == "valve 3 replaced"


def test_telling_a_told_point_again_warns_that_it_is_a_new_evaluation():
    opt = _opt()
    x = opt.ask()
    opt.tell(x, 1.0, [0.0])
    with pytest.warns(UserWarning, match="trial 0"):
        n = opt.tell(x, 2.0, [0.0])
    assert n == 1 and opt.history()[1]["source"] == "user"


def test_an_int_in_a_1d_box_is_refused_as_ambiguous_and_trial_names_the_trial():
    opt = ckb.Optimizer([0.0], [10.0], budget=10, policy="cei")
    xs = opt.ask(4)
    with pytest.raises(InvalidInputError, match="ambiguous"):
        opt.tell(3, 42.0, [-1.0])
    assert [t["state"] for t in opt.history()] == ["pending"] * 4
    assert opt.tell(trial=3, objective=42.0, constraints=[-1.0]) == 3
    assert opt.history()[3]["objective"] == 42.0 and np.allclose(opt.history()[3]["x"], xs[3])
    with pytest.raises(InvalidInputError, match="no trial number 11"):  # outside the box: a number
        opt.tell(11, 1.0, [0.0])
    with pytest.raises(InvalidInputError, match="x or trial"):
        opt.tell(xs[0], 1.0, [0.0], trial=0)


def test_calls_after_close_say_the_study_is_closed(tmp_path):
    opt = _opt(storage=tmp_path / "s.db")
    opt.close()
    for call in (opt.ask, opt.metrics, opt.history, lambda: opt.tell([0.5], 1.0, [0.0])):
        with pytest.raises(InvalidInputError, match="closed"):
            call()


@pytest.mark.parametrize("name", [3, None, ["s"]])
def test_load_with_a_study_name_that_is_not_a_string_is_named(tmp_path, name):
    _opt(storage=tmp_path / "s.db", study_name="s").close()
    with pytest.raises(InvalidInputError, match="study_name"):
        ckb.Optimizer.load(tmp_path / "s.db", name)
    con = sqlite3.connect(tmp_path / "s.db")
    assert con.execute("SELECT count(*) FROM trials").fetchone()[0] == 0
    con.close()


@pytest.mark.parametrize("policy", ["igp-ucb", "ckb-ucb", "safeopt"])
def test_a_regularizer_too_small_for_the_gp_is_named(policy):
    """noise = 1e-300 made igp-ucb's widths NaN and crashed in the argmax; it is now refused by name."""
    from ckb.policies import make_policy
    from ckb.problems import make_problem

    problem = make_problem("rkhs-synthetic", np.random.default_rng(0), constraint="independent")
    with pytest.raises(InvalidInputError, match=r"noise.* must be >= 1e-12, got 1e-300"):
        make_policy(policy, problem.info(), np.random.default_rng(0), horizon=10, noise=1e-300, R=0.1)


def test_a_closed_in_memory_study_does_not_point_at_a_file_to_reload():
    opt = _opt()
    opt.close()
    with pytest.raises(InvalidInputError, match="in-memory study is gone once closed"):
        opt.ask()
