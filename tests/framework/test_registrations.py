"""Registrations are checked (:mod:`ckb.registry`): names, aliases and the objects registered; a refused
registration changes nothing, and a plugin that fails keeps none of its registrations."""

import sys

import pytest

from ckb.errors import CKBError, UnknownNameError
from ckb.framework.plugins import load_plugins
from ckb.policies import POLICIES
from ckb.problems import PROBLEMS
from ckb.registry import Registry


def _policy_registry():
    reg = Registry("policy")
    reg.add("ckb-ucb", POLICIES.get("ckb-ucb"), aliases=("cbo-ucb",))
    reg.add("igp-ucb", POLICIES.get("igp-ucb"), aliases=("gp-ucb",))
    return reg


def test_an_alias_cannot_take_over_a_registered_alias_or_name():
    reg = _policy_registry()
    with pytest.raises(CKBError, match="alias 'cbo-ucb'.*already.*'ckb-ucb'"):
        reg.add("my-igp", POLICIES.get("igp-ucb"), aliases=("cbo-ucb",))
    assert reg.canonical("cbo-ucb") == "ckb-ucb" and "my-igp" not in reg
    with pytest.raises(CKBError, match="alias 'igp-ucb'.*already"):
        reg.add("my-igp", POLICIES.get("igp-ucb"), aliases=("igp-ucb",))
    with pytest.raises(CKBError, match="alias 'me'.*its own name"):
        reg.add("me", POLICIES.get("igp-ucb"), aliases=("me",))
    assert "my-igp" not in reg and "me" not in reg
    # the shipped registry refuses the takeover too, and stays as it was
    with pytest.raises(CKBError):
        POLICIES.add("my-igp", POLICIES.get("igp-ucb"), aliases=("cbo-ucb",))
    assert POLICIES.canonical("cbo-ucb") == "ckb-ucb" and "my-igp" not in POLICIES


def test_a_duplicate_name_is_a_ckb_error_and_still_a_value_error():
    reg = _policy_registry()
    with pytest.raises(CKBError, match="policy 'ckb-ucb' is already registered") as err:
        reg.add("ckb-ucb", POLICIES.get("igp-ucb"))
    assert isinstance(err.value, ValueError)


@pytest.mark.parametrize("name", [7, "", "  ", None])
def test_a_name_must_be_a_non_empty_string(name):
    reg = Registry("problem")
    with pytest.raises(CKBError, match="name"):
        reg.add(name, lambda rng: None)
    with pytest.raises(CKBError, match="alias"):
        reg.add("ok", lambda rng: None, aliases=(name,))
    assert reg.names() == []
    with pytest.raises(UnknownNameError, match="Unknown problem 'nope'"):
        reg.get("nope")


def test_aliases_must_be_a_tuple_of_names_not_a_string():
    with pytest.raises(CKBError, match="aliases"):
        Registry("problem").add("ok", lambda rng: None, aliases="abc")


@pytest.mark.parametrize(
    "kind, obj, expected",
    [
        ("problem", 42, "callable"),
        ("problem", lambda: None, "rng"),
        ("policy", dict, "Policy"),
        ("policy", lambda info, rng: 5, "Policy"),
        ("environment", 3, "class"),
    ],
)
def test_registered_objects_are_checked(kind, obj, expected):
    reg = Registry(kind)
    with pytest.raises(CKBError, match=expected):
        reg.add("x", obj)
    assert "x" not in reg


def test_an_unknown_name_lookup_still_works_after_a_refused_non_string_name():
    with pytest.raises(CKBError):
        PROBLEMS.register(7)(lambda rng: None)
    with pytest.raises(UnknownNameError, match="Unknown problem"):
        PROBLEMS.get("definitely-not-a-problem")


def test_a_plugin_that_registers_then_raises_keeps_no_registration(tmp_path, monkeypatch):
    (tmp_path / "ckbtest_regthenraise.py").write_text(
        "from ckb.problems import PROBLEMS\n"
        "PROBLEMS.register('ckbtest-half-registered')(lambda rng: None)\n"
        "raise RuntimeError('boom after registering')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("CKB_PLUGINS", "")
    for _ in range(2):
        with pytest.raises(CKBError, match="boom after registering"):
            load_plugins(["ckbtest_regthenraise"])
        assert "ckbtest-half-registered" not in PROBLEMS
    sys.modules.pop("ckbtest_regthenraise", None)
