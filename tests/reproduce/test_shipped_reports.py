"""The shipped reports in docs/reproduction are what their stored summaries and today's claims and
verdict rules give (src/ckb/reproduce/runner.py, report.py, verdict.py, claims/*.toml): a change to a
claim or a rule that would alter a shipped verdict fails here until the report is rebuilt
(``ckb reproduce PAPER --report-only --out docs/reproduction/PAPER``)."""

from pathlib import Path

import pytest

from ckb.reproduce import reproduce
from ckb.reproduce.claims import PAPERS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "reproduction"


@pytest.mark.parametrize("name", PAPERS)
def test_each_shipped_report_is_rebuilt_byte_for_byte_from_its_stored_summaries(tmp_path, name):
    shipped = DOCS / f"{name}.md"
    if not shipped.exists():
        pytest.skip(f"{name} has no shipped report")
    reproduce(name, DOCS / name, run=False, report_dir=tmp_path)
    assert (tmp_path / f"{name}.md").read_text() == shipped.read_text()
    for png in (tmp_path / name).rglob("*.png"):  # the figures it links are the shipped ones
        assert png.read_bytes() == (DOCS / name / png.relative_to(tmp_path / name)).read_bytes()
    index = (tmp_path / "README.md").read_text().splitlines()
    row = next(line for line in index if f"[{name}.md]({name}.md)" in line)
    assert row in (DOCS / "README.md").read_text().splitlines()


def test_a_report_rebuilds_in_place_from_its_own_folder(tmp_path):
    """``--report-only --out docs/reproduction/PAPER`` reads the summaries kept beside the figures and
    copies nothing onto itself (shutil.copyfile refuses a file onto itself)."""
    import shutil

    name = "guo-zhu-liu-2023"
    docs = tmp_path / "docs"
    shutil.copytree(DOCS / name, docs / name)
    shutil.copyfile(DOCS / f"{name}.md", docs / f"{name}.md")
    shutil.copyfile(DOCS / "README.md", docs / "README.md")
    before = {p: p.read_bytes() for p in docs.rglob("*") if p.is_file()}
    reproduce(name, docs / name, run=False, report_dir=docs)
    assert {p: p.read_bytes() for p in docs.rglob("*") if p.is_file() and p.name != "README.md"} == {
        p: b for p, b in before.items() if p.name != "README.md"
    }
