"""The experiment command's overrides and the beta-scale sweep's table, as a harness probe found them:
- a second sweep into the folder of a first printed the first sweep's rows under the new scales;
- ``-n 3 --set trials=5`` ran 5 trials and ``--beta-scale 0.3 --set ...beta_scale=0.7`` ran 0.3, silently;
- a top-level ``beta_scale = nan`` was blamed on an algorithm;
- ``ckb spec FILE`` on a spec file was a KeyError traceback;
- one ``--beta-scale S`` went into the spec's own folder, where the plain run's results refused it."""

import json
import re

from typer.testing import CliRunner

from ckb.cli import app


def _run(*args):
    return CliRunner().invoke(app, ["experiment", "gpucb-synthetic", "-n", "2", "-T", "60", *args])


def _rows(output: str) -> list[tuple[float, float]]:
    """(scale, R(T)) of every row of a sweep's table."""
    rows = re.findall(r"│ igp-ucb\s+│\s+(\S+) │(?:[^│]*│){4}\s+(\S+) │", output)
    return [(float(s), float(r)) for s, r in rows]


def test_a_second_sweep_into_the_folder_shows_each_scale_with_its_own_numbers(tmp_path):
    out = tmp_path / "sw"
    first = _run("--beta-scale", "0.1,0.5", "-o", str(out), "-w", "1")
    second = _run("--beta-scale", "1,2", "-o", str(out), "-w", "1")
    assert first.exit_code == 0 and second.exit_code == 0, second.output
    table = json.loads((out / "beta_scale_sweep.json").read_text())
    regret = table["algorithms"]["igp-ucb"]["regret"]
    assert table["scales"] == [0.1, 0.5, 1.0, 2.0]
    shown = _rows(second.output)
    assert [s for s, _ in shown] == [0.1, 0.5, 1.0, 2.0]
    assert [r for _, r in shown] == [float(f"{v:.4g}") for v in regret]
    assert _rows(first.output) == shown[:2]


def test_a_field_set_twice_on_the_command_line_is_refused(tmp_path):
    res = _run("--set", "trials=5", "-o", str(tmp_path / "a"))
    assert res.exit_code == 2
    assert res.output.strip() == "error: --trials 2 and --set trials=5 both set 'trials'; give it once."
    res = _run("--set", "horizon=40", "-o", str(tmp_path / "a"))
    assert "--horizon 60 and --set horizon=40 both set 'horizon'" in res.output
    res = _run("--beta-scale", "0.3", "--set", "algorithms.igp-ucb.beta_scale=0.7", "-o", str(tmp_path / "b"))
    assert res.exit_code == 2 and "--beta-scale 0.3 and --set algorithms.igp-ucb.beta_scale=0.7" in res.output
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_non_finite_top_level_beta_scale_is_named_as_itself(tmp_path):
    for bad in ("nan", "inf"):
        res = _run("--set", f"beta_scale={bad}", "-o", str(tmp_path / "c"))
        assert res.exit_code == 2
        assert (
            "field 'beta_scale'" in res.output and f"must be a finite number >= 0, got {bad}." in res.output
        )
        assert "algorithms" not in res.output


def test_ckb_spec_on_a_spec_file_says_what_to_do(tmp_path):
    path = tmp_path / "my.toml"
    path.write_text(CliRunner().invoke(app, ["spec", "gpucb-synthetic"]).output)
    res = CliRunner().invoke(app, ["spec", str(path)])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "is a spec file already" in res.output and f"ckb experiment {path}" in res.output.replace("\n", "")


def test_one_beta_scale_runs_beside_the_plain_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _run("--no-plots", "-w", "1").exit_code == 0
    res = _run("--beta-scale", "1", "--no-plots", "-w", "1")
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == [
        "gpucb-synthetic",
        "gpucb-synthetic-beta-scale-1",
    ]


def test_ckb_spec_into_a_full_device_is_one_line():
    """``ckb spec NAME > /dev/full`` was a 30-line OSError traceback."""
    import os
    import subprocess
    import sys

    import pytest

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    with open("/dev/full", "w") as full:
        res = subprocess.run(
            [sys.executable, "-m", "ckb.cli", "spec", "gpucb-synthetic"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert res.returncode == 2
    assert res.stderr.strip() == "error: cannot write the spec to standard output: No space left on device."


def test_a_narrow_terminal_folds_the_results_table_instead_of_cutting_it(tmp_path):
    """dmabo-scaling's labels N8-T100 and N8-T1600 both read 'N8-T1…' at 80 columns, and numbers were cut
    to '0.000…'."""
    res = CliRunner().invoke(
        app,
        ["experiment", "gpucb-synthetic", "-n", "2", "-T", "30", "-o", str(tmp_path / "o"), "--no-plots"],
        env={"COLUMNS": "60"},
    )
    assert res.exit_code == 0, res.output
    table = res.output[res.output.index("┏") : res.output.index("┘")]
    assert "…" not in table


def test_benchmark_flags_are_named_in_their_errors(tmp_path):
    for args, text in (
        (["--seeds", "0"], "error: --seeds must be >= 1, got 0."),
        (["--budget", "1"], "error: --budget/-T must be >= 2, got 1."),
    ):
        res = CliRunner().invoke(app, ["benchmark", "constrained", *args, "-o", str(tmp_path / "b")])
        assert res.exit_code == 2 and res.output.strip() == text, res.output
    assert not (tmp_path / "b").exists()


def test_usage_errors_of_the_console_script_are_one_line():
    """Typer printed a usage error (``-T 1e3``, ``--bogus``, a missing argument) in a box of several lines;
    the console script (``ckb.cli:main``) now prints one ``error:`` line naming the command's --help, with
    click's exit code 2, and every other exit code as before."""
    import subprocess
    import sys

    def ckb(*args):
        return subprocess.run(
            [sys.executable, "-m", "ckb.cli", *args], capture_output=True, text=True, timeout=120
        )

    for args, text in (
        (["experiment", "gpucb-synthetic", "-T", "1e3"], "error: Invalid value for '--horizon' / '-T': "),
        (["experiment", "gpucb-synthetic", "--bogus", "3"], "error: No such option: --bogus"),
        (["study", "show"], "error: Missing argument 'file'."),
    ):
        res = ckb(*args)
        assert res.returncode == 2 and res.stderr.startswith(text), res.stderr
        assert res.stderr.count("\n") == 1 and res.stderr.rstrip().endswith(" --help)")
    assert ckb("--version").returncode == 0
    assert ckb("spec", "nope").returncode == 2  # ckb's own one-line errors keep their code


def test_a_value_typer_cannot_parse_is_repeated_in_the_error():
    """A probe: ``-T abc``, ``-n 1.5`` and ``--workers x`` said "Input should be a valid integer" without
    the value given; every other bad value is named in its message."""
    import subprocess
    import sys

    for args, given in (
        (["experiment", "gpucb-synthetic", "-T", "abc"], "got 'abc' (see "),
        (["experiment", "gpucb-synthetic", "--trials=1.5"], "got '1.5' (see "),
        (["reproduce", "zhou-ji-2022", "--workers", "x"], "got 'x' (see "),
        (["benchmark", "constrained", "--seeds", "2", "--seeds", "y"], "got 'y' (see"),  # the last one given
    ):
        res = subprocess.run(
            [sys.executable, "-m", "ckb.cli", *args], capture_output=True, text=True, timeout=120
        )
        assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
        assert given in res.stderr, res.stderr
