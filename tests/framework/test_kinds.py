"""Kinds: the registry, loading a spec by kind, the names kept for old callers."""

import pytest

from ckb.errors import SpecError
from ckb.experiments import load_spec
from ckb.framework import KINDS, Kind, kind_of, register_kind, spec_from_dict


def test_the_shipped_kinds_are_registered_with_their_spec_classes():
    assert KINDS.names() == ["benchmark", "multiagent", "single-agent"]
    for name in ("gpucb-synthetic", "dmabo-power", "constrained-bo"):
        s = load_spec(name)
        assert isinstance(s, kind_of(s).spec) and kind_of(s).name == s.kind


def test_an_unknown_kind_is_named_with_the_closest():
    with pytest.raises(SpecError, match=r"x.toml: unknown kind 'multi-agent'.*Did you mean 'multiagent'"):
        spec_from_dict({"kind": "multi-agent", "name": "x"}, source="x.toml")
    with pytest.raises(SpecError, match="unknown kind 3"):
        spec_from_dict({"kind": 3})


def test_a_kind_must_name_its_spec_class_kind():
    class Wrong(Kind):
        name = "other"
        spec = KINDS.get("benchmark").spec

    with pytest.raises(ValueError, match="must name its spec class's kind"):
        register_kind(Wrong())
    with pytest.raises(ValueError, match="already registered"):
        register_kind(KINDS.get("benchmark"))


def test_a_refused_kind_is_a_registration_error_naming_it():
    """A plugin's wrong kind is a one-line RegistrationError (it was a plain ValueError, and a kind whose
    ``spec`` is not a spec class an AttributeError), and nothing is registered."""
    from ckb.registry import RegistrationError

    class NoSpec(Kind):
        name = "nospec"
        spec = None

    class Wrong(Kind):
        name = "other"
        spec = KINDS.get("benchmark").spec

    before = KINDS.names()
    for bad, needle in (
        (NoSpec(), r"^kind 'nospec': its spec must be a ckb.framework.SpecBase subclass, got None\.$"),
        (Wrong(), r"^kind 'other' must name its spec class's kind \('benchmark'\)\.$"),
        (
            "single-agent",
            r"^register_kind takes a ckb.framework.Kind instance, got 'single-agent' \(str\)\.$",
        ),
    ):
        with pytest.raises(RegistrationError, match=needle):
            register_kind(bad)
    assert KINDS.names() == before


def test_the_import_string_tables_are_deprecated_but_still_answer():
    import importlib

    from ckb.experiments import run as run_module
    from ckb.experiments import spec as spec_module

    with pytest.warns(DeprecationWarning, match=r"ckb.framework.KINDS"):
        spec_kinds = spec_module.SPEC_KINDS
    assert set(spec_kinds) == {"multiagent", "benchmark"}
    for kind, target in spec_kinds.items():
        module, cls = target.split(":")
        assert getattr(importlib.import_module(module), cls) is KINDS.get(kind).spec
    with pytest.warns(DeprecationWarning, match="run_experiment"):
        runners = run_module.RUNNERS
    module, fn = runners["multiagent"].split(":")
    assert getattr(importlib.import_module(module), fn) is run_module.run_experiment
