"""Bad input to ``ckb reproduce`` (src/ckb/cli_reproduce.py, src/ckb/reproduce/runner.py): a one-line
``error:`` (exit code 2) naming the value and what was expected, checked before anything is run or
written; and a report on disk is never replaced by one that judged fewer claims."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ckb.cli import app

PAPER = "zhou-ji-2022"
COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "reproduction" / f"{PAPER}.md"


def _invoke(*args: str):
    return CliRunner().invoke(app, ["reproduce", *args])


def _one_line_error(res) -> str:
    """The single line a failed command printed (exit code 2, no traceback)."""
    text = res.stdout + res.stderr
    assert res.exit_code == 2, (res.exit_code, text, res.exception)
    assert "Traceback" not in text
    lines = text.strip().splitlines()  # not even a blank line from a progress bar
    assert len(lines) == 1 and lines[0].startswith("error: "), text
    return lines[0]


def _a_report(folder: Path) -> Path:
    """``folder/PAPER.md``: the committed paper-scale report (every claim judged)."""
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copyfile(COMMITTED, folder / f"{PAPER}.md"))


def test_unknown_paper_is_one_line_with_the_hint_once():
    line = _one_line_error(_invoke("zhou-ji"))
    assert "Unknown paper 'zhou-ji'" in line
    assert line.count("Did you mean 'zhou-ji-2022'?") == 1 and line.count("Known:") == 1


def test_unknown_executor_is_one_line_and_nothing_is_created(tmp_path):
    out = tmp_path / "r"
    line = _one_line_error(_invoke(PAPER, "--quick", "--executor", "foo", "--out", str(out)))
    assert "Unknown executor 'foo'" in line and "process, ray, serial" in line
    assert line.count("Known:") <= 1
    assert not out.exists()


@pytest.mark.parametrize("workers", ["0", "-5"])
def test_workers_below_one_is_refused_like_ckb_experiment(tmp_path, workers):
    out, docs = tmp_path / "runs", tmp_path / "docs"
    line = _one_line_error(
        _invoke(PAPER, "--report-only", "--workers", workers, "--out", str(out), "--report-dir", str(docs))
    )
    assert line == f"error: --workers must be >= 1, got {workers}."
    assert not docs.exists()


def test_report_only_without_runs_refuses_and_keeps_the_report(tmp_path):
    docs = tmp_path / "docs"
    report = _a_report(docs)
    before = report.read_text()
    typo = tmp_path / "runs" / "typo"
    line = _one_line_error(_invoke(PAPER, "--report-only", "--out", str(typo), "--report-dir", str(docs)))
    assert str(typo) in line and "no runs" in line
    assert report.read_text() == before
    assert sorted(p.name for p in docs.iterdir()) == [f"{PAPER}.md"]  # no index, no figures folder


def test_a_report_is_not_replaced_by_one_that_judged_fewer_claims(tmp_path):
    from ckb.errors import CKBError
    from ckb.reproduce import load_paper, reproduce

    docs = tmp_path / "docs"
    report = _a_report(docs)
    before = report.read_text()
    runs = tmp_path / "runs"  # one spec's summary, measuring nothing: every claim "not run"
    spec = load_paper(PAPER).specs[0]
    (runs / spec).mkdir(parents=True)
    from ckb.experiments.spec import load_spec

    scale = {"horizon": load_spec(spec).horizon, "trials": load_spec(spec).trials}  # paper scale
    (runs / spec / "summary.json").write_text(json.dumps({**scale, "algorithms": {}}))
    n = len(load_paper(PAPER).claims)
    line = _one_line_error(_invoke(PAPER, "--report-only", "--out", str(runs), "--report-dir", str(docs)))
    assert f"judged 0 of {n} claims" in line and str(report) in line
    with pytest.raises(CKBError, match=f"judged 0 of {n} claims"):
        reproduce(PAPER, runs, run=False, report_dir=docs)
    assert report.read_text() == before
    assert sorted(p.name for p in docs.iterdir()) == [f"{PAPER}.md"]


def _paper_scale_summary(runs: Path, body, spec: str | None = None) -> Path:
    """``runs/<spec>/summary.json`` (the first spec by default) holding ``body`` (text, or a table merged
    with the paper scale)."""
    from ckb.experiments.spec import load_spec
    from ckb.reproduce import load_paper

    spec = spec or load_paper(PAPER).specs[0]
    (runs / spec).mkdir(parents=True)
    if not isinstance(body, str):
        body = json.dumps({"horizon": load_spec(spec).horizon, "trials": load_spec(spec).trials, **body})
    path = runs / spec / "summary.json"
    path.write_text(body)
    return path


@pytest.mark.parametrize("body", ["garbage", "[1, 2]", "null"])
def test_report_only_over_an_unreadable_summary_is_one_line(tmp_path, body):
    docs = tmp_path / "docs"
    before = _a_report(docs).read_text()
    path = _paper_scale_summary(tmp_path / "runs", body)
    line = _one_line_error(
        _invoke(PAPER, "--report-only", "--out", str(tmp_path / "runs"), "--report-dir", str(docs))
    )
    assert str(path) in line and "is not an experiment summary" in line
    assert (docs / f"{PAPER}.md").read_text() == before


def test_report_only_over_a_summary_of_another_layout_is_one_line(tmp_path):
    from ckb.reproduce import load_paper

    claim = load_paper(PAPER).claims[0]
    bad = {"algorithms": {claim.algorithm: {claim.metric: {claim.stat: "x", "values": "x"}}}}
    _paper_scale_summary(tmp_path / "runs", bad, claim.experiment)
    docs = tmp_path / "docs"
    before = _a_report(docs).read_text()
    line = _one_line_error(
        _invoke(PAPER, "--report-only", "--out", str(tmp_path / "runs"), "--report-dir", str(docs))
    )
    assert f"summary.json cannot be read for the claim {claim.id!r}" in line
    assert (docs / f"{PAPER}.md").read_text() == before


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_report_only_over_a_non_finite_statistic_is_one_line_and_keeps_the_report(tmp_path, bad):
    """A reproduce probe put a NaN into a summary's mean: it was judged, the reason blamed the reference
    ("penalty-5's mean affine_shift is 0"), and the correct report on disk was replaced (exit code 0)."""
    from ckb.reproduce import load_paper

    claim = next(c for c in load_paper(PAPER).claims if c.stat in ("mean", "median") and c.algorithm)
    body = {"algorithms": {claim.algorithm: {claim.metric: {claim.stat: bad, "values": [1.0]}}}}
    _paper_scale_summary(tmp_path / "runs", body, claim.experiment)  # json writes NaN and Infinity
    docs = tmp_path / "docs"
    before = _a_report(docs).read_text()
    line = _one_line_error(
        _invoke(PAPER, "--report-only", "--out", str(tmp_path / "runs"), "--report-dir", str(docs))
    )
    assert f"summary.json cannot be read for the claim {claim.id!r}" in line
    assert f"{claim.algorithm}'s {claim.stat} {claim.metric} is {bad}, not a finite number" in line
    assert (docs / f"{PAPER}.md").read_text() == before


def test_a_report_dir_that_is_a_file_is_refused_before_any_run(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("mine")
    out = tmp_path / "runs"
    line = _one_line_error(_invoke(PAPER, "--quick", "--out", str(out), "--report-dir", str(afile)))
    assert str(afile) in line and "is a file" in line
    assert not out.exists() and afile.read_text() == "mine"
