import json

import numpy as np
import pytest

from ckb.errors import SpecError
from ckb.experiments import load_spec, run_experiment, shipped
from ckb.multiagent.spec import MultiAgentSpec
from ckb.runner.sweep import SweepConflictError

RAW = {
    "kind": "multiagent",
    "name": "tiny",
    "horizon": 6,
    "trials": 2,
    "seed": 1,
    "problem": {"name": "power-allocation", "n_agents": 2, "grid_size": 11},
    "algorithms": {
        "dmabo": {"method": "dmabo", "beta": 3.0},
        "penalty": {"method": "admm-penalty", "Q": 5.0, "horizon": 4, "problem": {"n_agents": 3}},
    },
    "report": {"relative_to": "penalty"},
}


def test_tiny_multiagent_experiment_runs_resumes_and_refuses_to_overwrite(tmp_path):
    spec = MultiAgentSpec.from_dict(RAW)
    done = []
    s = run_experiment(
        spec, tmp_path, workers=1, executor="serial", plots=False, on_done=lambda c, k: done.append(k)
    )
    assert done == [False] * 4
    saved = json.loads((tmp_path / "summary.json").read_text())
    assert saved["kind"] == "multiagent" and saved["trials"] == 2
    d, p = saved["algorithms"]["dmabo"], saved["algorithms"]["penalty"]
    for key in (
        "regret",
        "violation",
        "positive_violation",
        "affine_shift",
        "seconds_per_round",
        "average_utility",
    ):
        assert len(d[key]["values"]) == 2
    assert (d["horizon"], d["n_agents"], p["horizon"], p["n_agents"]) == (6, 2, 4, 3)
    assert d["relative"]["to"] == "penalty" and p["relative"]["average_utility"] == 0.0
    assert s["checkpoints"]["dmabo"]["t"][-1] == 6
    done.clear()
    run_experiment(
        spec, tmp_path, workers=1, executor="serial", plots=False, on_done=lambda c, k: done.append(k)
    )
    assert done == [True] * 4
    other = spec.with_overrides(sets=["algorithms.dmabo.beta=2.0"])
    with pytest.raises(SweepConflictError, match="different configuration"):
        run_experiment(other, tmp_path, workers=1, executor="serial", plots=False)


def test_spec_errors_name_the_field():
    raw = {k: v for k, v in RAW.items() if k != "report"}
    bad = {**raw, "algorithms": {"x": {"method": "dmab"}}}
    with pytest.raises(SpecError, match=r"algorithms.x.method.*dmabo"):
        MultiAgentSpec.from_dict(bad).validate()
    with pytest.raises(SpecError, match="unknown field 'horizn'"):
        MultiAgentSpec.from_dict({**RAW, "horizn": 3})
    bad = {**raw, "algorithms": {"x": {"method": "dmabo", "eta": -1.0}}}
    with pytest.raises(SpecError, match=r"algorithms.x.*eta"):
        MultiAgentSpec.from_dict(bad).validate()
    with pytest.raises(SpecError, match="relative_to"):
        MultiAgentSpec.from_dict({**RAW, "report": {"relative_to": "nope"}})


@pytest.mark.parametrize("name", sorted(n for n in shipped() if n.startswith("dmabo-")))
def test_shipped_multiagent_specs_validate(name):
    spec = load_spec(name)
    assert isinstance(spec, MultiAgentSpec) and spec.choices
    spec.validate()


def test_cli_runs_a_multiagent_spec(tmp_path):
    from typer.testing import CliRunner

    from ckb.cli import app

    path = tmp_path / "tiny.toml"
    path.write_text(
        'kind = "multiagent"\nname = "tiny"\nhorizon = 5\ntrials = 1\n[problem]\nname = "counterexample"\n'
        '[algorithms.dmabo]\nmethod = "dmabo"\nsurrogate = "oracle"\ntie_break = "first"\n'
    )
    res = CliRunner().invoke(
        app, ["experiment", str(path), "--out", str(tmp_path / "o"), "-w", "1", "--no-plots"]
    )
    assert res.exit_code == 0, res.output
    assert "S(T)" in res.output
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    # eta = 1/sqrt(5), lambda: 0 -> 2 -> 1 -> 3 -> 2 -> 1: plays x = 1, -1, 1, -1, -1, f sums to 1, f* = 0.5
    assert np.isclose(s["algorithms"]["dmabo"]["regret"]["mean"], 1.0 - 5 * 0.5)


def test_beta_scale_is_refused_for_multiagent_specs():
    from ckb.experiments.run import with_beta_scale

    with pytest.raises(SpecError, match="--set algorithms.LABEL.beta"):
        with_beta_scale(MultiAgentSpec.from_dict(RAW), 0.5)


def test_run_multiagent_experiment_is_a_deprecated_name_for_run_experiment(tmp_path):
    from ckb.multiagent.run import run_multiagent_experiment

    spec = MultiAgentSpec.from_dict({**RAW, "trials": 1})
    with pytest.warns(DeprecationWarning, match="ckb.experiments.run_experiment"):
        old = run_multiagent_experiment(spec, tmp_path / "old", executor="serial", plots=False)
    new = run_experiment(spec, tmp_path / "new", executor="serial", plots=False)
    for label in ("dmabo", "penalty"):
        assert old["algorithms"][label]["regret"] == new["algorithms"][label]["regret"]
