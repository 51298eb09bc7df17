"""``ckb.data``: the deprecated alias of :mod:`ckb.problems.data`."""

import importlib
import sys

import pytest

import ckb.problems.data


def test_ckb_data_warns_and_reexports(monkeypatch):
    monkeypatch.delitem(sys.modules, "ckb.data", raising=False)
    with pytest.warns(DeprecationWarning, match=r"ckb\.data is deprecated.*ckb\.problems\.data"):
        alias = importlib.import_module("ckb.data")
    for name in alias.__all__:
        assert getattr(alias, name) is getattr(ckb.problems.data, name), name
    assert set(alias.__all__) >= {"find_data_file", "load_finance", "load_light_sensor", "FINANCE_FILE"}
    assert alias._checkout_candidates is ckb.problems.data._checkout_candidates  # private names too
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        alias.nope  # noqa: B018
