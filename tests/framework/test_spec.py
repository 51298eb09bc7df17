"""The spec base: one parse / print / override path for every kind."""

import pytest

from ckb.errors import SpecError
from ckb.experiments import load_spec, shipped
from ckb.experiments.spec import ExperimentSpec
from ckb.framework import DEFAULT_KIND, spec_from_dict

NAMES = sorted(shipped())
ONE_PER_KIND = ["gpucb-synthetic", "dmabo-power", "constrained-bo"]


@pytest.mark.parametrize("name", NAMES)
def test_every_shipped_spec_round_trips(name):
    s = load_spec(name)
    raw = s.to_dict()
    assert type(s).from_dict(raw, s.source) == s
    assert spec_from_dict(raw, s.source) == s
    assert ("kind" in raw) == (s.kind != DEFAULT_KIND)


@pytest.mark.parametrize("name", ONE_PER_KIND)
def test_overrides_keep_every_field_and_settings_leave_out_the_prose(name):
    s = load_spec(name)
    assert s.description and s.reference  # the shipped specs state both
    o = s.with_overrides(trials=1, seed=3)
    assert (o.trials, o.seed) == (1, 3)
    assert (o.description, o.reference, o.choices, o.title, o.paper) == (
        s.description,
        s.reference,
        s.choices,
        s.title,
        s.paper,
    )
    settings = s.settings()
    assert "description" not in settings and "reference" not in settings
    assert {**settings, "description": s.description, "reference": s.reference} == s.to_dict()


def test_to_dict_is_a_deep_copy():
    s = load_spec("dmabo-power")
    raw = s.to_dict()
    label = next(iter(raw["algorithms"]))
    raw["algorithms"][label]["beta"] = -1.0
    raw["reference"]["new"] = 1
    assert s.to_dict() != raw


def test_the_default_kind_may_be_named():
    raw = load_spec("gpucb-synthetic").to_dict()
    s = spec_from_dict({**raw, "kind": DEFAULT_KIND})
    assert isinstance(s, ExperimentSpec) and s.kind == DEFAULT_KIND
    with pytest.raises(SpecError, match="'kind'.*'single-agent' here, got 'multiagent'"):
        ExperimentSpec.from_dict({**raw, "kind": "multiagent"})


@pytest.mark.parametrize(
    "changes, match",
    [
        ({"name": 3}, "'name'.*string"),
        ({"seed": -1}, "'seed'.*>= 0"),
        ({"trials": True}, "'trials'.*integer"),
        ({"reference": "x"}, "'reference'.*table"),
        ({"choice": {}}, "unknown field 'choice'.*Did you mean 'choices'"),
    ],
)
def test_common_fields_are_checked_alike_for_every_kind(changes, match):
    for name in ONE_PER_KIND:
        raw = load_spec(name).to_dict()
        with pytest.raises(SpecError, match=match):
            spec_from_dict({**raw, **changes}, source="x.toml")


def test_a_label_too_long_for_a_file_name_is_refused_before_anything_runs(tmp_path):
    """A 300-character label passed every check, wrote spec.json, then ended in OSError: File name too long."""
    from typer.testing import CliRunner

    from ckb.cli import app

    override = "algorithms={" + "a" * 300 + '={policy="igp-ucb"}}'
    args = [
        "experiment",
        "gpucb-synthetic",
        "-n",
        "1",
        "-T",
        "5",
        "-o",
        str(tmp_path / "LL"),
        "--set",
        override,
    ]
    res = CliRunner().invoke(app, args, env={"COLUMNS": "1000"})
    assert res.exit_code == 2 and "Traceback" not in res.output
    line = res.output.strip().splitlines()[-1]
    assert line.startswith("error: ") and "at most 200 bytes long" in line and "got 300" in line
    assert "gpucb-synthetic.toml with --set" in line  # the bad value came from --set
    assert not (tmp_path / "LL").exists()
