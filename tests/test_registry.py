"""The registries (:mod:`ckb.registry`): names, aliases, the names classes learn."""

import pytest

from ckb.errors import UnknownNameError
from ckb.policies import POLICIES
from ckb.registry import Registry


def test_a_registered_subclass_learns_its_own_name_not_its_bases():
    reg = Registry("thing")

    class Base:
        name = ""

    class Sub(Base):
        pass

    class Named(Base):
        name = "mine"

    reg.add("base", Base)
    reg.add("sub", Sub, aliases=("s",))
    reg.add("other", Named)
    assert (Base.name, Sub.name, Named.name) == ("base", "sub", "mine")
    assert reg.get("s") is Sub and reg.aliases_of("sub") == ["s"]
    with pytest.raises(UnknownNameError, match="Did you mean 'sub'"):
        reg.get("sab")
    # policies that subclass registered ones (ckb-ucb of ckb, scgp-ucb of igp-ucb) report their own name
    for name in ("ckb-ucb", "rpol-sw-ucb", "scgp-ucb", "igp-ucb"):
        assert POLICIES.get(name).name == name
