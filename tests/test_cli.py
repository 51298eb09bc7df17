import json

from typer.testing import CliRunner

from ckb.cli import app

runner = CliRunner()


def test_list_shows_everything():
    res = runner.invoke(app, ["list"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    for name in ("gpucb-synthetic", "igp-ucb", "rkhs-synthetic"):
        assert name in res.output
    # every kind: its experiments and what its specs can name
    for kind, experiment, entry in (
        ("single-agent", "gpucb-synthetic", "igp-ucb"),
        ("multiagent", "dmabo-power", "power-allocation"),
        ("benchmark", "constrained-bo", "gardner-1"),
    ):
        assert any(experiment in line and kind in line for line in res.output.splitlines())
        assert entry in res.output
    assert "benchmark methods" in res.output and "qlognei" in res.output


def test_spec_prints_toml_that_runs_by_path(tmp_path):
    res = runner.invoke(app, ["spec", "gpucb-synthetic"])
    assert res.exit_code == 0
    path = tmp_path / "copy.toml"
    path.write_text(res.output)
    out = tmp_path / "out"
    res = runner.invoke(
        app,
        [
            "experiment",
            str(path),
            "--trials",
            "2",
            "--horizon",
            "60",
            "--workers",
            "1",
            "--out",
            str(out),
            "--no-plots",
        ],
    )
    assert res.exit_code == 0, res.output
    assert (out / "summary.json").exists()


def test_experiment_writes_summary_traces_and_plots(tmp_path):
    out = tmp_path / "run"
    args = [
        "experiment",
        "gpucb-synthetic",
        "--trials",
        "3",
        "--horizon",
        "200",
        "--workers",
        "2",
        "--out",
        str(out),
    ]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    s = json.loads((out / "summary.json").read_text())
    assert s["experiment"] == "gpucb-synthetic" and s["horizon"] == 200 and s["trials"] == 3
    m = s["algorithms"]["igp-ucb"]
    for metric in ("regret", "violation", "positive_violation", "violating_rounds", "seconds_per_round"):
        assert set(m[metric]) >= {"mean", "stderr", "values"} and len(m[metric]["values"]) == 3
    assert "note" in s["reference"] and s["settings"]["problem"]["name"] == "rkhs-synthetic"
    for png in ("regret.png", "violation.png", "positive_violation.png", "violating_rounds.png"):
        assert (out / png).stat().st_size > 1000
    assert len(list((out / "traces" / "igp-ucb").glob("trial-*.npz"))) == 3
    again = runner.invoke(app, args)  # re-run: everything reused, same numbers
    assert "0 trial(s) run, 3 reused" in again.output
    assert json.loads((out / "summary.json").read_text())["algorithms"] == s["algorithms"]


def test_errors_exit_cleanly_with_a_message(tmp_path):
    res = runner.invoke(app, ["experiment", "gpucb-synthetc"])
    assert res.exit_code == 2 and "gpucb-synthetic" in res.output
    res = runner.invoke(app, ["experiment", "gpucb-synthetic", "--horizon", "0"])
    assert res.exit_code == 2 and "--horizon must be >= 1" in res.output
    res = runner.invoke(
        app, ["experiment", "gpucb-synthetic", "--set", "algorithms.igp-ucb.B=-2", "--out", str(tmp_path)]
    )
    assert res.exit_code == 2 and "B must be >= 0" in res.output
    res = runner.invoke(app, ["experiment", "gpucb-synthetic", "--address", "auto"])
    assert res.exit_code == 2 and "--address auto needs --executor ray" in res.output


def test_unreachable_ray_address_is_a_clear_error(tmp_path):
    # In a fresh process: inside the test session another test may already have started Ray, and a
    # process with Ray running reuses that instance (ckb._parallel.RaySession).
    import subprocess
    import sys

    args = ["experiment", "gpucb-synthetic", "--executor", "ray", "--address", "127.0.0.1:1"]
    args += ["--trials", "1", "--horizon", "5", "--out", str(tmp_path / "r"), "--no-plots"]
    res = subprocess.run(
        [sys.executable, "-c", "from ckb.cli import app; app()", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2
    assert "Cannot reach the Ray cluster at '127.0.0.1:1'" in res.stdout + res.stderr


def test_error_messages_are_not_wrapped_or_parsed_as_markup(monkeypatch):
    # A long message on a narrow terminal stays one line (CI clones live at long paths),
    # and brackets in a message are text, not rich markup.
    from ckb import cli

    monkeypatch.setattr(cli.err, "width", 30)
    res = runner.invoke(app, ["experiment", "gpucb-synthetic", "--set", "algorithms.igp-ucb.B=[1,2]"])
    assert res.exit_code == 2
    assert "B must be a real number, got [1, 2] (list)." in res.output


def test_beta_scale_sweep_tabulates_each_scale(tmp_path):
    out = tmp_path / "sweep"
    res = runner.invoke(
        app,
        [
            "experiment",
            "gpucb-synthetic",
            "--trials",
            "2",
            "--horizon",
            "80",
            "--workers",
            "1",
            "--out",
            str(out),
            "--beta-scale",
            "0.5,2",
        ],
    )
    assert res.exit_code == 0, res.output
    s = json.loads((out / "beta_scale_sweep.json").read_text())
    assert s["scales"] == [0.5, 2.0] and len(s["algorithms"]["igp-ucb"]["regret"]) == 2
    spec_half = json.loads((out / "beta-scale-0.5" / "summary.json").read_text())["settings"]
    assert spec_half["algorithms"]["igp-ucb"]["beta_scale"] == 0.5
    bad = runner.invoke(app, ["experiment", "gpucb-synthetic", "--beta-scale", "a,b"])
    assert bad.exit_code == 2 and "--beta-scale expects numbers" in bad.output


def test_benchmark_constrained_rejects_unknown_methods_before_running(tmp_path):
    res = runner.invoke(
        app, ["benchmark", "constrained", "--methods", "qlogne", "--seeds", "1", "--out", str(tmp_path)]
    )
    assert res.exit_code == 2 and "qlognei" in res.output
    assert not (tmp_path / "runs").exists()
