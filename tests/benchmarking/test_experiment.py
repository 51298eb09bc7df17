"""The constrained benchmark as an experiment spec (kind = "benchmark")."""

import json

import pytest
from typer.testing import CliRunner

from ckb.benchmarking.constrained import CONSTRAINED_BENCHMARKS, known_methods
from ckb.benchmarking.experiment import BenchmarkSpec
from ckb.cli import app
from ckb.errors import SpecError
from ckb.experiments import load_spec
from ckb.experiments.spec import spec_from_dict

TINY = {
    "kind": "benchmark",
    "name": "tiny-bench",
    "horizon": 8,
    "trials": 1,
    "problems": ["gardner-1"],
    "algorithms": {"sobol": {}, "config": {"num_restarts": 2, "raw_samples": 32}},
}


TINY_TOML = """
kind = "benchmark"
name = "tiny-bench"
horizon = 8
trials = 1
problems = ["gardner-1"]
[algorithms.sobol]
[algorithms.config]
num_restarts = 2
raw_samples = 32
"""


def tiny(**changes):
    raw = {k: (dict(v) if isinstance(v, dict) else v) for k, v in TINY.items()}
    raw.update(changes)
    return BenchmarkSpec.from_dict(raw, source="tiny.toml")


def test_shipped_benchmark_spec_covers_every_method_problem_and_seed():
    spec = load_spec("constrained-bo")
    assert isinstance(spec, BenchmarkSpec) and spec.kind == "benchmark"
    assert sorted(spec.algorithms) == sorted(known_methods())
    assert set(spec.problems) <= set(CONSTRAINED_BENCHMARKS)
    assert spec.horizon == 60 and spec.seeds == list(range(20))
    cfgs = spec.configs()
    assert len(cfgs) == 20 * len(spec.problems) * len(known_methods())
    assert {c.budget for c in cfgs} == {60}


def test_overrides_set_budget_seeds_and_parameters():
    spec = tiny().with_overrides(trials=3, horizon=12, seed=5, sets=["algorithms.config.beta=2.5"])
    assert spec.seeds == [5, 6, 7] and spec.horizon == 12
    cfg = next(c for c in spec.configs() if c.method == "config")
    assert cfg.params == {"num_restarts": 2, "raw_samples": 32, "beta": 2.5} and cfg.budget == 12
    assert next(c for c in spec.configs() if c.method == "sobol").params == {}


@pytest.mark.parametrize(
    "changes, match",
    [
        ({"problems": ["gardner1"]}, "problems.*'gardner1'.*Did you mean 'gardner-1'"),
        ({"problems": []}, "at least one problem"),
        ({"algorithms": {}}, "at least one method"),
        ({"algorithms": {"best": {"method": "config"}}}, "labels are method names"),
        ({"n_init": 0}, "'n_init'.*>= 1"),
        ({"horizon": 0}, "'horizon'.*>= 1"),
        ({"problem": {"name": "x"}}, "unknown field 'problem'.*Did you mean 'problems'"),
        ({"kind": "multiagent"}, "'kind'.*'benchmark'"),
    ],
)
def test_bad_fields_are_named(changes, match):
    with pytest.raises(SpecError, match=match):
        tiny(**changes)


@pytest.mark.parametrize(
    "algorithms, match",
    [
        ({"qlogne": {}}, "qlogne.*Did you mean 'qlognei'"),
        ({"config": {"betta": 1.0}}, "algorithms.config.*betta"),
        ({"sobol": {"beta": 1.0}}, "algorithms.sobol.*beta"),
    ],
)
def test_validate_rejects_unknown_methods_and_parameters(algorithms, match):
    with pytest.raises(SpecError, match=match):
        tiny(algorithms=algorithms).validate()


def test_unknown_kind_is_named():
    with pytest.raises(SpecError, match="unknown kind 'benchmarks'.*Did you mean 'benchmark'"):
        spec_from_dict({**TINY, "kind": "benchmarks"}, source="x.toml")


def test_cli_runs_a_benchmark_spec_and_resumes(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(TINY_TOML)
    out = tmp_path / "out"
    args = ["experiment", str(path), "--executor", "serial", "--out", str(out), "--no-plots"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "| config |" in res.output and "| sobol |" in res.output
    for method in ("config", "sobol"):
        record = json.loads((out / "runs" / "gardner-1" / method / "seed-000.json").read_text())
        assert len(record["X"]) == 8 and record["n_init"] == 6
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["problems"]["gardner-1"]["methods"]) == {"config", "sobol"}
    assert summary["problems"]["gardner-1"]["initial_design_shared"]
    res = CliRunner().invoke(app, args)  # everything on disk: reused, nothing re-run
    assert res.exit_code == 0 and "0 run(s), 2 reused" in res.output


def test_beta_scale_is_refused_for_benchmark_specs(tmp_path):
    res = CliRunner().invoke(
        app, ["experiment", "constrained-bo", "--beta-scale", "0.5", "--out", str(tmp_path)]
    )
    assert res.exit_code == 2 and "single-agent" in res.output


def test_ray_executor_runs_a_benchmark_spec_and_the_driver_writes_every_record(ray_local, tmp_path):
    from ckb.experiments import run_experiment

    spec = tiny(algorithms={"sobol": {}}, trials=2)
    serial = run_experiment(spec, tmp_path / "serial", executor="serial", plots=False)
    on_ray = run_experiment(spec, tmp_path / "ray", executor="ray", workers=2, plots=False)
    for seed in (0, 1):
        a, b = (
            json.loads((tmp_path / d / "runs" / "gardner-1" / "sobol" / f"seed-{seed:03d}.json").read_text())
            for d in ("serial", "ray")
        )
        assert a["X"] == b["X"] and a["g"] == b["g"]
    assert on_ray["problems"]["gardner-1"]["methods"]["sobol"]["seeds"] == [0, 1]
    assert (
        "| sobol |" in on_ray["table"]
        and serial["problems"]["gardner-1"]["methods"]["sobol"]["solved"]
        == (on_ray["problems"]["gardner-1"]["methods"]["sobol"]["solved"])
    )


def test_run_benchmark_experiment_is_a_deprecated_name_for_run_experiment(tmp_path):
    from ckb.benchmarking.experiment import run_benchmark_experiment

    with pytest.warns(DeprecationWarning, match="ckb.experiments.run_experiment"), pytest.raises(SpecError):
        run_benchmark_experiment(tiny(algorithms={"qlogne": {}}), tmp_path)
    assert not (tmp_path / "runs").exists()
