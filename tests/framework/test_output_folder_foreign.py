"""Files in the output folder that are not this run's to replace: a foreign ``summary.json`` or plot, an
entry of the wrong kind (a folder where a file is written, a file where the traces go), and a refused
run's spec record (it must not claim the folder for the refused spec)."""

import json

from typer.testing import CliRunner

from ckb.cli import app
from tests.framework.test_output_folder_faults import SMALL, _one_line_error, _snapshot, _spec

runner = CliRunner()
WIDE = {"COLUMNS": "400"}


def _run(spec, out, *extra):
    return runner.invoke(app, ["experiment", str(spec), *SMALL, "-o", str(out), *extra], env=WIDE)


def test_a_summary_that_is_not_ckbs_is_refused_and_kept(tmp_path):
    spec = _spec(tmp_path)
    for text in ("garbage", '{"x": 1}', "[1, 2]"):
        out = tmp_path / f"foreign{len(text)}"
        out.mkdir()
        (out / "summary.json").write_text(text)
        (out / "notes.txt").write_text("mine")
        _one_line_error(_run(spec, out), "summary.json is not a ckb summary", "move that file away")
        assert _snapshot(out) == {"summary.json": text.encode(), "notes.txt": b"mine"}


def test_a_plot_name_in_a_folder_without_a_record_is_not_replaced(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "regret.png").write_bytes(b"my own figure")
    res = runner.invoke(
        app, ["experiment", str(_spec(tmp_path)), "-n", "1", "-T", "5", "-o", str(out)], env=WIDE
    )
    _one_line_error(res, "regret.png", "which the run would replace")
    assert _snapshot(out) == {"regret.png": b"my own figure"}


def test_a_folder_of_ckbs_own_results_still_replaces_its_plots(tmp_path):
    out, spec = tmp_path / "runs", _spec(tmp_path)
    args = ["experiment", str(spec), "-n", "1", "-T", "5", "--executor", "serial", "-o", str(out)]
    assert runner.invoke(app, args).exit_code == 0
    assert (out / "regret.png").is_file()
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and "0 trial(s) run, 1 reused" in again.output


def test_entries_of_the_wrong_kind_are_refused_before_anything_runs(tmp_path):
    spec = _spec(tmp_path)
    cases = {
        "traces": lambda out: (out / "traces").write_text("x"),
        "summary.json": lambda out: (out / "summary.json").mkdir(),
        "spec.json": lambda out: (out / "spec.json").mkdir(),
        "regret.png": lambda out: (out / "regret.png").mkdir(),
    }
    for name, make in cases.items():
        out = tmp_path / name.replace(".", "-")
        out.mkdir()
        make(out)
        res = runner.invoke(app, ["experiment", str(spec), "-n", "1", "-T", "5", "-o", str(out)], env=WIDE)
        _one_line_error(res, str(out / name), "nothing was")
        assert not (out / "traces").is_dir() and [p.name for p in out.iterdir()] == [name]


def test_a_refused_run_leaves_the_spec_record_as_it_was(tmp_path):
    out, spec = tmp_path / "X", _spec(tmp_path)
    assert _run(spec, out).exit_code == 0
    (out / "spec.json").unlink()  # e.g. a folder from before the record existed, its summary lost
    (out / "summary.json").unlink()
    res = _run(spec, out, "-T", "7")  # refused by the sweep, after the plan line
    assert res.exit_code == 2 and "holds a trial of a different configuration" in res.output.splitlines()[-1]
    assert not (out / "spec.json").exists()  # the refused horizon did not claim the folder
    assert _run(spec, out).exit_code == 0  # the command that made the traces resumes them
    recorded = json.loads((out / "spec.json").read_text())["spec"]["horizon"]
    assert recorded == 5
    before = (out / "spec.json").read_bytes()
    (out / "traces" / "igp-ucb").rename(out / "keep")
    (out / "traces" / "igp-ucb").write_text("x")  # a file where the label's traces go: nothing can run
    res = _run(spec, out, "--set", "description='other prose'")
    assert res.exit_code == 2, res.output
    last = res.output.splitlines()[-1]
    assert last.startswith("error: ") and "igp-ucb is a file, expected the folder of" in last, last
    assert (out / "spec.json").read_bytes() == before  # put back as it was


def test_a_run_with_fewer_trials_says_the_summary_covers_fewer(tmp_path):
    out, spec = tmp_path / "X", _spec(tmp_path)
    assert _run(spec, out, "-n", "3").exit_code == 0
    res = _run(spec, out, "-n", "2")
    assert res.exit_code == 0
    lines = [line for line in res.output.splitlines() if line.startswith("warning:")]
    assert len(lines) == 1 and "covered 3 trials and now covers 2" in lines[0] and "--trials 3" in lines[0]
    assert json.loads((out / "summary.json").read_text())["trials"] == 2
    assert len(list((out / "traces" / "igp-ucb").glob("trial-*.npz"))) == 3  # kept
