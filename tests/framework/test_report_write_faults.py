"""Faults a fault-injection probe found around a run's folder, each a one-line error that keeps what is stored:
- a full disk or a file the user may not replace while writing summary.json or a plot after the sweep ended
  in a traceback of the PNG writer's internals;
- ``--out ""`` wrote the run's files into the working folder;
- a spec record that is JSON but not an object was explained as "list indices must be integers";
- a data file that is a directory was reported as "not found"."""

import errno
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ckb.cli import app
from ckb.problems.data import DataFileError, find_data_file
from tests.framework.test_output_folder_faults import _one_line_error

runner = CliRunner()
SMALL = ["-n", "1", "-T", "5", "--executor", "serial"]


def _failing_replace(monkeypatch, suffix, error):
    """``os.replace`` fails with ``error`` for targets ending in ``suffix`` (atomic writes rename into place)."""
    real = os.replace

    def replace(src, dst, *args, **kwargs):
        if str(dst).endswith(suffix):
            raise OSError(error, os.strerror(error), str(src), None, str(dst))
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)


@pytest.mark.parametrize(
    ("suffix", "error", "plots", "what"),
    [
        ("summary.json", errno.EPERM, "--no-plots", "the summary"),
        (".png", errno.ENOSPC, "--plots", "the plots"),
    ],
)
def test_a_report_that_cannot_be_written_is_one_line_and_the_trials_are_kept(
    tmp_path, monkeypatch, suffix, error, plots, what
):
    out = tmp_path / "run"
    _failing_replace(monkeypatch, suffix, error)
    res = runner.invoke(
        app, ["experiment", "gpucb-synthetic", *SMALL, plots, "-o", str(out)], env={"COLUMNS": "400"}
    )
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    errors = [line for line in res.output.splitlines() if "error" in line.lower()]  # after the header and bar
    assert len(errors) == 1 and errors[0].startswith("error: "), res.output
    for fragment in (
        f"cannot write {what} under {str(out)!r}",
        os.strerror(error),
        "re-run the same command",
    ):
        assert fragment in errors[0], errors[0]
    traces = sorted(p.relative_to(out) for p in (out / "traces").rglob("*.npz"))
    assert traces and not list(out.rglob("*.tmp"))
    monkeypatch.undo()
    again = runner.invoke(app, ["experiment", "gpucb-synthetic", *SMALL, plots, "-o", str(out)])
    assert again.exit_code == 0 and "0 trial(s) run" in again.output, again.output
    assert (out / "summary.json").is_file()


@pytest.mark.parametrize(
    "flag", [["experiment", "gpucb-synthetic", "-o"], ["benchmark", "constrained", "-o"]]
)
@pytest.mark.parametrize("blank", ["", "  "])
def test_a_blank_out_is_refused_not_read_as_the_working_folder(tmp_path, monkeypatch, flag, blank):
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, [*flag, blank, *(SMALL if flag[0] == "experiment" else [])])
    _one_line_error(res, f"--out must be a folder path, got {blank!r}")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("flag", ["--out", "--report-dir"])
def test_a_blank_reproduce_folder_is_refused(tmp_path, monkeypatch, flag):
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["reproduce", "zhou-ji-2022", "--report-only", flag, ""])
    _one_line_error(res, f"{flag} must be a folder path, got ''")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("[1, 2, 3]", "a JSON list, expected an object"),
        ('"spec"', "a JSON str, expected an object"),
        ("7", "a JSON int, expected an object"),
        ("{}", "no 'layout' field"),  # the reason was a bare "'layout'"
        ('{"layout": "experiment"}', "no 'spec' field"),
    ],
)
def test_a_spec_record_that_is_not_an_object_is_named_as_such(tmp_path, text, kind):
    out = tmp_path / "run"
    assert (
        runner.invoke(app, ["experiment", "gpucb-synthetic", *SMALL, "--no-plots", "-o", str(out)]).exit_code
        == 0
    )
    (out / "spec.json").write_text(text)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    res = runner.invoke(
        app, ["experiment", "gpucb-synthetic", *SMALL, "--no-plots", "-o", str(out)], env={"COLUMNS": "400"}
    )
    _one_line_error(res, f"does not say which spec its results come from ({kind}")
    assert "indices" not in res.output
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_a_data_file_that_is_a_directory_is_named_as_such(tmp_path):
    (tmp_path / "fin.csv").mkdir()
    with pytest.raises(
        DataFileError, match=r"fin\.csv' is a directory or another non-file .*expected the file"
    ):
        find_data_file("fin.csv", tmp_path)
    with pytest.raises(DataFileError, match="not found"):  # absent: as before
        find_data_file("iw_data_all.mat", Path(tmp_path))
