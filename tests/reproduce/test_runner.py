"""End to end: ``ckb reproduce --quick`` on the cheapest paper (src/ckb/reproduce/runner.py, report.py)."""

import pytest
from typer.testing import CliRunner

from ckb.cli import app


def _empty_runs(runs, paper, scale=None):
    """A summary.json for each of ``paper``'s specs under ``runs``, measuring nothing, at the spec's paper
    scale (or at ``scale``, a dict of horizon and trials)."""
    import json

    from ckb.experiments.spec import load_spec

    for spec in paper.specs:
        (runs / spec).mkdir(parents=True, exist_ok=True)
        size = scale or {"horizon": load_spec(spec).horizon, "trials": load_spec(spec).trials}
        (runs / spec / "summary.json").write_text(json.dumps({**size, "algorithms": {}}))


def test_quick_reproduction_writes_a_report_with_one_row_per_claim(tmp_path):
    from ckb.reproduce import load_paper

    paper = load_paper("000")
    res = CliRunner().invoke(
        app, ["reproduce", "000", "--quick", "--out", str(tmp_path), "--workers", "2"], catch_exceptions=False
    )
    assert res.exit_code == 0, res.output
    report = (tmp_path / f"{paper.short}.md").read_text()
    assert "Quick run" in report and paper.title in report
    for c in paper.claims:
        assert f"| {c.id} |" in report
    assert "not run 0" in report  # every claim was measured from a summary
    # rewriting from disk gives the same report (nothing typed by hand)
    res = CliRunner().invoke(
        app, ["reproduce", "000", "--quick", "--out", str(tmp_path), "--report-only"], catch_exceptions=False
    )
    assert res.exit_code == 0 and (tmp_path / f"{paper.short}.md").read_text() == report


def test_list_names_every_paper():
    res = CliRunner().invoke(app, ["reproduce", "--list"], catch_exceptions=False)
    assert res.exit_code == 0 and "xu-et-al-2023" in res.output and "zhou-ji-2022" in res.output


def test_a_paper_scale_report_copies_each_runs_figures_and_links_them(tmp_path):

    from ckb.reproduce import load_paper, reproduce

    paper = load_paper("shi-eryilmaz-2022")
    runs = tmp_path / "runs"
    from ckb.experiments.spec import load_spec

    _empty_runs(runs, paper)  # at the spec's paper scale, measuring nothing
    (runs / paper.specs[0] / "regret.png").write_bytes(b"png")
    out = reproduce(paper.short, runs, run=False, report_dir=tmp_path / "docs")
    text = (tmp_path / "docs" / f"{paper.short}.md").read_text()
    assert out["report"].endswith(f"{paper.short}.md")
    assert (tmp_path / "docs" / paper.short / paper.specs[0] / "regret.png").read_bytes() == b"png"
    for spec in paper.specs:  # and the summaries the verdicts read, so --report-only can rebuild it
        kept = tmp_path / "docs" / paper.short / spec / "summary.json"
        assert kept.read_bytes() == (runs / spec / "summary.json").read_bytes()
    assert f"![{paper.specs[0]}]({paper.short}/{paper.specs[0]}/regret.png)" in text
    assert "violation.png" not in text  # not drawn: not linked
    spec = load_spec(paper.specs[0])  # every departure the spec states is in the report
    assert "## Choices and departures" in text and spec.choices
    assert all(f"- **{key}**: " in text for key in spec.choices)
    index = (tmp_path / "docs" / "README.md").read_text()
    n = len(paper.claims)
    assert f"| {paper.citation} | 0 | 0 | 0 | {n} | {n} | [{paper.short}.md]({paper.short}.md) |" in index


def test_a_figure_the_new_run_did_not_draw_is_not_left_beside_its_report(tmp_path):
    """Rewriting a report from runs without a figure (drawn with --no-plots, or deleted) unlinked it from the
    report but left the earlier run's PNG in the report folder, beside the new run's summary."""

    from ckb.reproduce import load_paper, reproduce

    paper = load_paper("shi-eryilmaz-2022")
    runs, docs = tmp_path / "runs", tmp_path / "docs"
    _empty_runs(runs, paper)
    (runs / paper.specs[0] / "regret.png").write_bytes(b"old")
    reproduce(paper.short, runs, run=False, report_dir=docs)
    kept = docs / paper.short / paper.specs[0] / "regret.png"
    assert kept.read_bytes() == b"old"
    (runs / paper.specs[0] / "regret.png").unlink()
    reproduce(paper.short, runs, run=False, report_dir=docs)
    assert not kept.exists() and "regret.png" not in (docs / f"{paper.short}.md").read_text()
    assert (docs / paper.short / paper.specs[0] / "summary.json").exists()


def test_a_report_that_cannot_be_written_is_one_line_and_the_runs_are_kept(tmp_path, monkeypatch):
    """A full disk (or a folder the user may not write) while copying the figures and summaries, or
    writing the report, ended in an OSError traceback."""
    import errno
    import shutil

    from ckb.errors import CKBError
    from ckb.reproduce import load_paper, reproduce

    paper = load_paper("shi-eryilmaz-2022")
    runs = tmp_path / "runs"
    _empty_runs(runs, paper)
    before = {p: p.read_bytes() for p in runs.rglob("*") if p.is_file()}

    def full(src, dst, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(dst))

    monkeypatch.setattr(shutil, "copyfile", full)
    with pytest.raises(CKBError, match=r"No space left on device: .*summary.json\); the runs in .* are kept"):
        reproduce(paper.short, runs, run=False, report_dir=tmp_path / "docs")
    assert {p: p.read_bytes() for p in runs.rglob("*") if p.is_file()} == before


def test_report_only_refuses_runs_below_paper_scale_and_a_foreign_index(tmp_path):
    """--report-only over a --quick folder (T = 40, 2 trials) judged every claim and replaced the
    paper-scale report without a 'quick' banner; and the index replaced any README.md in the report
    folder (a user's own, when run from their project)."""
    import json

    from ckb.errors import CKBError
    from ckb.reproduce import load_paper, reproduce

    paper = load_paper("shi-eryilmaz-2022")
    runs, docs = tmp_path / "runs", tmp_path / "docs"
    for spec in paper.specs:
        (runs / spec).mkdir(parents=True)
        (runs / spec / "summary.json").write_text(json.dumps({"horizon": 40, "trials": 2, "algorithms": {}}))
    with pytest.raises(
        CKBError, match=r"are at T = 40, 2 trial\(s\), not the paper scale of .*a --quick run"
    ):
        reproduce(paper.short, runs, run=False, report_dir=docs)
    assert not docs.exists()
    docs.mkdir()
    (docs / "README.md").write_text("# My project\n")
    _empty_runs(runs, paper)
    with pytest.raises(CKBError, match="is not the index ckb reproduce writes"):
        reproduce(paper.short, runs, run=False, report_dir=docs)
    assert sorted(p.name for p in docs.iterdir()) == ["README.md"]
    assert (docs / "README.md").read_text() == "# My project\n"


@pytest.mark.parametrize("quick", [False, True])
def test_a_report_file_ckb_did_not_write_is_refused_before_any_run(tmp_path, quick):
    """A user's own PAPER.md in the report folder (e.g. their notes on the paper, beside their project's
    docs) was replaced by the report without a word; a folder of that name would end in a traceback."""

    from ckb.errors import CKBError
    from ckb.reproduce import load_paper, reproduce

    paper = load_paper("shi-eryilmaz-2022")
    runs, docs = tmp_path / "runs", tmp_path / "docs"
    _empty_runs(runs, paper, {"horizon": 10, "trials": 1} if quick else None)
    docs.mkdir()
    mine = docs / f"{paper.short}.md"
    mine.write_text("# My notes on Shi & Eryilmaz\n\nVerdicts: mine.\n")
    with pytest.raises(
        CKBError, match=r"shi-eryilmaz-2022\.md' exists and is not a report ckb reproduce wrote"
    ):
        reproduce(paper.short, runs, run=False, quick=quick, report_dir=docs)
    assert mine.read_text() == "# My notes on Shi & Eryilmaz\n\nVerdicts: mine.\n"
    assert sorted(p.name for p in docs.iterdir()) == [mine.name]
    mine.unlink()
    mine.mkdir()
    with pytest.raises(CKBError, match="is not a report ckb reproduce wrote"):
        reproduce(paper.short, runs, run=False, quick=quick, report_dir=docs)
    mine.rmdir()  # a report ckb wrote is replaced, as before
    reproduce(paper.short, runs, run=False, quick=quick, report_dir=docs)
    assert mine.read_text().startswith("# Reproduction: ")
    reproduce(paper.short, runs, run=False, quick=quick, report_dir=docs)


def test_a_quick_run_does_not_replace_a_paper_scale_report(tmp_path):
    """``--quick --report-dir DIR`` over a paper-scale report replaced it by the quick verdicts (under the
    banner "not a reproduction") with exit 0: refused now, the report left byte for byte."""
    import json

    from ckb.errors import CKBError
    from ckb.experiments.spec import load_spec
    from ckb.reproduce import load_paper, reproduce

    paper = load_paper("shi-eryilmaz-2022")
    for folder, quick in (("paper", False), ("quick", True)):
        for spec in paper.specs:
            (tmp_path / folder / spec).mkdir(parents=True)
            scale = (
                {"horizon": 10, "trials": 1}
                if quick
                else {
                    "horizon": load_spec(spec).horizon,
                    "trials": load_spec(spec).trials,
                }
            )
            (tmp_path / folder / spec / "summary.json").write_text(json.dumps({**scale, "algorithms": {}}))
    docs = tmp_path / "docs"
    reproduce(paper.short, tmp_path / "paper", run=False, report_dir=docs)
    report = docs / f"{paper.short}.md"
    before = report.read_bytes()
    with pytest.raises(CKBError, match="paper-scale report, and a --quick run does not replace it"):
        reproduce(paper.short, tmp_path / "quick", quick=True, run=False, report_dir=docs)
    assert report.read_bytes() == before
    # a quick report may replace a quick one
    reproduce(paper.short, tmp_path / "quick", quick=True, run=False, report_dir=tmp_path / "q")
    reproduce(paper.short, tmp_path / "quick", quick=True, run=False, report_dir=tmp_path / "q")
    assert "Quick run" in (tmp_path / "q" / f"{paper.short}.md").read_text()
