import json
from pathlib import Path

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


def test_error_messages_are_not_wrapped_or_parsed_as_markup(monkeypatch, tmp_path):
    # A long message on a narrow terminal stays one line (CI clones live at long paths),
    # and brackets in a message are text, not rich markup.
    from ckb import cli

    monkeypatch.setattr(cli.err, "width", 30)
    monkeypatch.chdir(tmp_path)  # the default output folder: not the checkout's runs/
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


# --------------------------------------------------------------------- robustness: one-line errors
def _spec_file(tmp_path, name="my.toml"):
    path = tmp_path / name
    path.write_text(runner.invoke(app, ["spec", "gpucb-synthetic"]).output)
    return path


def _one_line_error(res, *fragments):
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    text = " ".join(res.output.split())
    for fragment in fragments:
        assert fragment in text, text


def test_version():
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output.startswith("ckb ")


def test_bad_inputs_are_one_line_errors_before_anything_runs(tmp_path):
    spec = _spec_file(tmp_path)
    small = ["-n", "1", "-T", "5", "--no-plots", "-w", "1"]
    cases = [
        (["experiment", str(spec), *small, "--set", "environment.bogus=1"], ["environment.bogus"]),
        (["experiment", str(tmp_path)], ["is a directory"]),
        (["experiment", str(spec), *small, "-o", str(spec)], ["is a file"]),
        (["experiment", str(spec), *small, "--set", "problem.n_grid=0"], ["field 'problem'", "n_grid"]),
        (["experiment", str(spec), *small, "--set", "problem.lengthscale=-1"], ["field 'problem'"]),
        (["experiment", str(spec), *small, "--set", "problem.reward_std=-1"], ["field 'problem'"]),
        (["experiment", str(spec), "-T", "1000000000000"], ["T = 1000000000000", "memory"]),
        (["experiment", str(spec), "--trials", "100000000"], ["100000000 trial(s)", "memory"]),
        (["experiment", str(spec), *small, "--set", "name=../../x"], ["field 'name'", "../../x"]),
        (["experiment", "constrained-bo", "--horizon", "10"], ["field 'horizon'", "initial design"]),
    ]
    for argv, fragments in cases:
        res = runner.invoke(app, argv, env={"COLUMNS": "300"})
        _one_line_error(res, *fragments)
    assert not list(tmp_path.parent.glob("x")) and not (tmp_path / "runs").exists()


def test_an_algorithm_label_with_a_path_is_refused(tmp_path):
    spec = _spec_file(tmp_path)
    spec.write_text(spec.read_text().replace("[algorithms.igp-ucb]", '[algorithms."../../x"]'))
    res = runner.invoke(app, ["experiment", str(spec), "-n", "1", "-T", "5", "-o", str(tmp_path / "o")])
    _one_line_error(res, "field 'algorithms.../../x'")
    assert not (tmp_path / "o").exists()


def test_an_unwritable_output_folder_fails_before_computing(tmp_path, monkeypatch):
    import tempfile

    out = tmp_path / "ro"
    out.mkdir()

    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(
        tempfile, "TemporaryFile", refuse
    )  # as for a read-only folder (tests may run as root)
    ran = []
    monkeypatch.setattr("ckb.experiments.run_experiment", lambda *a, **k: ran.append(1))
    res = runner.invoke(app, ["experiment", "gpucb-synthetic", "-n", "1", "-T", "5", "-o", str(out)])
    _one_line_error(res, "not writable", "nothing was computed")
    assert not ran


def test_a_spec_by_path_defaults_to_runs_slash_its_stem(tmp_path, monkeypatch):
    # the README's next step: `ckb spec gpucb-synthetic > my.toml`, edit, run: no collision with runs/gpucb-synthetic
    from ckb.cli import default_out
    from ckb.experiments import load_spec

    spec = _spec_file(tmp_path)
    assert default_out(str(spec), load_spec(spec)) == Path("runs") / "my"
    assert default_out("gpucb-synthetic", load_spec("gpucb-synthetic")) == Path("runs") / "gpucb-synthetic"
    monkeypatch.chdir(tmp_path)
    args = ["-n", "1", "-T", "5", "-w", "1", "--no-plots"]
    assert runner.invoke(app, ["experiment", "gpucb-synthetic", *args]).exit_code == 0
    res = runner.invoke(app, ["experiment", "my.toml", *args, "--set", "algorithms.igp-ucb.B=2.0"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "runs" / "my" / "summary.json").exists()


def test_list_shows_clean_whole_summaries():
    res = runner.invoke(app, ["list"], env={"COLUMNS": "400"})
    assert res.exit_code == 0
    assert ":math:" not in res.output and "``" not in res.output


def test_list_shows_what_a_spec_can_name_as_its_environment():
    from ckb.runner.environment import ENVIRONMENTS

    res = runner.invoke(app, ["list"], env={"COLUMNS": "400"})
    assert res.exit_code == 0 and "environments" in res.output
    assert all(f"│ {name} " in res.output for name in ENVIRONMENTS.names())


def test_a_bad_spec_is_named_before_the_folder_is_compared(monkeypatch, tmp_path):
    """The README's quick start leaves runs/gpucb-synthetic of the full spec in the checkout: a run with a
    bad --set there must name the bad value, not the folder's other spec."""
    monkeypatch.chdir(tmp_path)
    done = runner.invoke(app, ["experiment", "gpucb-synthetic", "--trials", "1", "--horizon", "20"])
    assert done.exit_code == 0, done.output
    res = runner.invoke(app, ["experiment", "gpucb-synthetic", "--set", "algorithms.igp-ucb.B=[1,2]"])
    assert res.exit_code == 2
    assert "B must be a real number" in res.output and "another experiment" not in res.output
