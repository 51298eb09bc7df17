"""Robustness of the finite-arm policies' ``tell``, ``state_dict`` / ``load_state_dict`` and rng checks:
a refused call raises a one-line InvalidInputError naming the bad value and changes nothing."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from ckb.contract import Observation
from ckb.errors import InvalidInputError
from ckb.policies import POLICIES, init_parameters, make_policy
from ckb.problems import make_problem
from ckb.runner.environment import ENVIRONMENTS

FINITE = [
    "ckb-rand",
    "ckb-restart-ucb",
    "ckb-ts",
    "ckb-ucb",
    "config",
    "igp-ucb",
    "penalty-noiseless",
    "penalty-noisy",
    "rpol-censored-ucb",
    "rpol-sw-ucb",
    "rpol-ucb",
    "safeopt",
    "sgp-ucb",
    "stageopt",
]


def _problem():
    return make_problem("rkhs-synthetic", np.random.default_rng(0), n_grid=20, constraint="independent")


def _policy(name, problem=None):
    p = problem or _problem()
    kw = {"R": 0.1} if "R" in init_parameters(POLICIES.get(name)) else {}
    return make_policy(name, p.info(), np.random.default_rng(1), horizon=20, **kw)


def _played(name, rounds=4):
    """A policy after ``rounds`` rounds of the basic environment."""
    p = _problem()
    po = _policy(name, p)
    env = ENVIRONMENTS.get("basic")(p, np.random.default_rng(2))
    for _ in range(rounds):
        out = env.step(po.ask())
        for o in env.deliver(out):
            po.tell(o)
    return po


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return a == b


def _refused(po, call, *match):
    """``call()`` raises a one-line InvalidInputError containing every ``match``; the state is unchanged."""
    before = copy.deepcopy(po.state_dict())
    with pytest.raises(InvalidInputError) as info:
        call()
    msg = str(info.value)
    assert "\n" not in msg, msg
    for s in match:
        assert s in msg, msg
    assert _same(before, po.state_dict()), "a refused call changed the state"
    return msg


def _obs(po, y=0.5, c=(0.1,), index=None, t=1, x=None, **kw):
    i = 3 if index is None else index
    if x is None:
        x = po.info.domain.candidates[3]
    return Observation(t, i, x, y, c if not isinstance(c, tuple) else np.asarray(c, float), **kw)


# ---------------------------------------------------------------------------------------- item 1
@pytest.mark.parametrize("name", ["ckb-ucb", "ckb-ts", "config", "rpol-ucb", "rpol-sw-ucb"])
def test_failed_tell_changes_nothing(name):
    po = _policy(name)
    po.ask()
    _refused(po, lambda: po.tell(_obs(po, c=(np.nan,))), "nan")
    po.tell(_obs(po))  # the corrected retry counts the reward once
    gp_f = po.gp_f
    assert gp_f.t == 1 and po.gp_g[0].t == 1


# ---------------------------------------------------------------------------------------- item 2
@pytest.mark.parametrize(
    "kw, match",
    [
        ({"y": np.nan}, "nan"),
        ({"y": None}, "None"),
        ({"c": (np.nan,)}, "nan"),
        ({"index": 25}, "25"),
        ({"index": "3"}, "'3'"),
        ({"index": 1.5}, "1.5"),
        ({"t": 999}, "999"),
        ({"t": -3}, "-3"),
    ],
)
def test_censored_tell_checks_its_input(kw, match):
    po = _policy("rpol-censored-ucb")
    po.ask()
    _refused(po, lambda: po.tell(_obs(po, **kw)), match)
    po.tell(_obs(po))  # still usable
    po.ask()


# ---------------------------------------------------------------------------------------- item 3
def test_censored_state_dict_before_first_ask():
    po = _policy("rpol-censored-ucb")
    state = po.state_dict()
    fresh = _policy("rpol-censored-ucb")
    fresh.load_state_dict(state)
    assert fresh.ask() == po.ask()


# ---------------------------------------------------------------------------------------- item 4
@pytest.mark.parametrize("name", FINITE)
@pytest.mark.parametrize(
    "kw, match",
    [
        ({"c": 0.1}, "c"),
        ({"c": [[0.1]]}, "(1, 1)"),
        ({"y": "abc"}, "'abc'"),
        ({"y": None}, "None"),
        ({"y": np.array([1.0, 2.0])}, "y"),
        ({"index": "3"}, "'3'"),
        ({"index": True}, "True"),
    ],
)
def test_tell_checks_observation_fields(name, kw, match):
    po = _policy(name)
    po.ask()
    _refused(po, lambda: po.tell(_obs(po, **kw)), match)


@pytest.mark.parametrize("name", FINITE)
def test_tell_needs_an_observation(name):
    po = _policy(name)
    po.ask()
    _refused(po, lambda: po.tell((3, 0.5, [0.1])), "Observation", "tuple")


@pytest.mark.parametrize("name", FINITE)
def test_tell_accepts_a_list_of_costs(name):
    po = _policy(name)
    po.ask()
    po.tell(_obs(po, c=[0.1]))
    po.ask()


# ---------------------------------------------------------------------------------------- item 5
@pytest.mark.parametrize("name", FINITE)
@pytest.mark.parametrize(
    "kw, match",
    [
        ({"c": (-np.inf,)}, "-inf"),
        ({"c": (np.inf,)}, "inf"),
        ({"c": (np.nan,)}, "nan"),
        ({"index": -5}, "-5"),
        ({"index": -1, "x": np.array([99.0])}, "-1"),
        ({"index": 20}, "20"),
    ],
)
def test_tell_rejects_nonfinite_costs_and_non_arms(name, kw, match):
    po = _policy(name)
    po.ask()
    _refused(po, lambda: po.tell(_obs(po, **kw)), match)


@pytest.mark.parametrize("name", FINITE)
def test_tell_refuses_a_point_that_is_not_its_arm(name):
    """An observation of arm 3 whose ``x`` is arm 4's point (or no point) was recorded as arm 3's: the two
    must agree (to round-off), and the arm's own point is what policies read."""
    po = _policy(name)
    po.ask()
    cand = po.info.domain.candidates
    _refused(po, lambda: po.tell(_obs(po, x=cand[4])), "observation x", str(cand[4].tolist()), "arm 3")
    _refused(po, lambda: po.tell(_obs(po, x=np.array([np.nan]))), "observation x", "arm 3")
    _refused(po, lambda: po.tell(_obs(po, x=[[cand[3][0]]])), "observation x", "arm 3")
    po.tell(_obs(po, x=list(cand[3] * (1 + 1e-13))))  # round-off is the same point


def test_penalty_error_names_the_input_cost():
    po = _policy("penalty-noiseless")
    po.ask()
    with np.errstate(all="raise"):  # no RuntimeWarning on the way to the error
        _refused(po, lambda: po.tell(_obs(po, c=(1e200,))), "1e+200")


def test_cost_of_wrong_shape_names_the_shape():
    po = _policy("penalty-noisy")
    po.ask()
    msg = _refused(po, lambda: po.tell(_obs(po, c=np.array([[0.1]]))), "(1, 1)")
    assert "has 1 constraint" not in msg


# ---------------------------------------------------------------------------------------- item 6
def _swap_errors(po, state, *match):
    return _refused(po, lambda: po.load_state_dict(state), *match)


@pytest.mark.parametrize("name", FINITE)
def test_load_state_from_another_policy_is_refused(name):
    po = _played(name)
    other = "igp-ucb" if name != "igp-ucb" else "ckb-ucb"
    _swap_errors(po, _played(other).state_dict(), name)


def test_load_state_of_a_sibling_class_is_refused():
    po = _played("rpol-ucb")
    _swap_errors(po, _played("config").state_dict(), "config", "rpol-ucb")
    po = _played("ckb-ucb")
    _swap_errors(po, _played("config").state_dict(), "config")


@pytest.mark.parametrize("name", FINITE)
def test_load_malformed_state_is_refused(name):
    po = _played(name)
    good = po.state_dict()
    _swap_errors(po, None, "NoneType")
    _swap_errors(po, {}, "t")
    _swap_errors(po, {**good, "t": "abc"}, "'abc'")
    for key in good:
        if key == "policy":
            continue
        _swap_errors(po, {k: v for k, v in good.items() if k != key}, repr(key))
    bad_rng = {**good, "rng": {"bit_generator": "MT19937", "state": 1}}
    _swap_errors(po, bad_rng, "rng")
    po.load_state_dict(good)  # the original still loads


@pytest.mark.parametrize("name", FINITE)
def test_load_bad_arrays_is_refused(name):
    po = _played(name)
    good = po.state_dict()
    gp_key = "gp_f" if "gp_f" in good else "gp"
    bad = copy.deepcopy(good)
    bad[gp_key]["X"] = bad[gp_key]["X"][:2]
    _swap_errors(po, bad, gp_key)
    for field in ("mean", "y"):
        bad = copy.deepcopy(good)
        bad[gp_key][field] = bad[gp_key][field].copy()
        bad[gp_key][field][0] = np.nan
        _swap_errors(po, bad, "nan")
    po.load_state_dict(good)


def test_trial_resume_file_errors(tmp_path):
    from ckb.errors import CKBError
    from ckb.io import load_state, save_state
    from ckb.runner.trial import Trial, TrialConfig

    cfg = TrialConfig(
        "a",
        "ckb-ucb",
        "rkhs-synthetic",
        horizon=8,
        policy_params={"R": 0.1},
        problem_params={"n_grid": 20, "constraint": "independent"},
    )
    tr = Trial(cfg)
    tr.run(until=5)
    path = tmp_path / "ck.npz"
    tr.save_checkpoint(path)

    def refused(p, *match):
        with pytest.raises(CKBError) as info:
            Trial.resume(p)
        msg = str(info.value)
        assert "\n" not in msg
        for s in match:
            assert s in msg, msg

    refused(tmp_path / "missing.npz", "missing.npz")
    (tmp_path / "empty.npz").write_bytes(b"")
    refused(tmp_path / "empty.npz", "empty.npz")
    (tmp_path / "garbage.npz").write_bytes(b"\x00garbage" * 10)
    refused(tmp_path / "garbage.npz", "garbage.npz")
    good = load_state(path)
    for key in ("policy", "env", "config", "trace"):
        save_state(tmp_path / "k.npz", {k: v for k, v in good.items() if k != key})
        refused(tmp_path / "k.npz", repr(key))
    save_state(tmp_path / "x.npz", {**good, "config": {**good["config"], "bogus": 1}})
    refused(tmp_path / "x.npz", "bogus")
    save_state(tmp_path / "h.npz", {**good, "config": {**good["config"], "horizon": 3}})
    refused(tmp_path / "h.npz", "3")
    bad = copy.deepcopy(good)
    bad["trace"]["t"] = 7
    save_state(tmp_path / "t.npz", bad)
    refused(tmp_path / "t.npz")
    assert Trial.resume(path).t == 5


# --------------------------------------------------------------------------------------- item 10
@pytest.mark.parametrize("rng", [None, 0, np.random.RandomState(0)])
def test_policy_rng_is_checked(rng):
    with pytest.raises(InvalidInputError, match="Generator"):
        make_policy("igp-ucb", _problem().info(), rng)
