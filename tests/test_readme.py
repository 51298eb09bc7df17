"""The README stays a short, true map: its length, its links, its quick start and its example."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_LINES = 200


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _fenced(text: str, lang: str) -> list[str]:
    """The bodies of the ```lang fenced blocks of ``text``, in order."""
    return [m.group(1) for m in re.finditer(rf"^```{lang}\n(.*?)^```", text, re.S | re.M)]


def _section(text: str, heading: str) -> str:
    """The text under ``## heading`` up to the next heading of level 2."""
    m = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert m, f"README.md has no '## {heading}' section"
    return m.group(1)


def _slug(heading: str) -> str:
    """GitHub's anchor for a markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.replace("`", "").strip().lower())
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", _text(path), flags=re.S | re.M)
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*$", text, re.M)}


def _markdown_files() -> list[Path]:
    return [README, ROOT / "benchmarks" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _relative_links(path: Path) -> list[str]:
    text = re.sub(r"^```.*?^```", "", _text(path), flags=re.S | re.M)  # no links inside code blocks
    text = re.sub(r"`[^`\n]*`", "", text)  # nor inside code spans
    targets = re.findall(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", text)
    return [t for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:", t)]  # http:, https:, mailto:


def test_readme_is_at_most_200_lines() -> None:
    n = len(_text(README).splitlines())
    assert n <= MAX_LINES, (
        f"README.md has {n} lines; keep it to {MAX_LINES} (results go to docs/, performance to "
        "benchmarks/README.md)."
    )


@pytest.mark.parametrize("path", _markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_to_existing_files_and_headings(path: Path) -> None:
    broken = []
    for target in _relative_links(path):
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            broken.append(
                f"{target} (no file {dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest})"
            )
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target} (no heading with anchor #{anchor} in {dest.name})")
    assert not broken, f"{path.relative_to(ROOT)} has broken links: {broken}"


def test_quick_start_commands_are_the_ones_ci_runs() -> None:
    blocks = _fenced(_section(_text(README), "Quick start"), "bash")
    assert len(blocks) == 2, f"the quick start should be two commands, found {len(blocks)} blocks"
    run, tests = (b.strip() for b in blocks)
    assert "\n" not in run and "\n" not in tests, "each quick-start command is one line"
    ci_lines = [line.strip() for line in _text(ROOT / ".ci" / "run").splitlines()]
    assert tests in ci_lines, (
        f"README quick-start command 2 {tests!r} is not what .ci/run runs; they must be identical "
        "(CI runs the README's test command verbatim)."
    )
    # command 1 installs the same way and runs a shipped experiment
    prefix = "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && "
    assert run.startswith(prefix), run
    m = re.fullmatch(r"ckb experiment ([\w-]+)(?: .*)?", run[len(prefix) :])
    assert m, f"quick-start command 1 should run `ckb experiment NAME`: {run!r}"
    from ckb.experiments import shipped

    assert m.group(1) in shipped(), f"quick-start command 1 runs {m.group(1)!r}, which is not shipped"


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("botorch") is None, reason="the example needs ckb[botorch]")
def test_readme_optimizer_example_runs_and_resumes(tmp_path: Path) -> None:
    blocks = _fenced(_text(README), "python")
    assert len(blocks) == 2, "the README has two Python examples: ckb.Optimizer and Optuna"
    script = tmp_path / "example.py"
    script.write_text(blocks[0], encoding="utf-8")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

    def run() -> str:
        # verbatim, in a scratch folder: its study file (storage="pump.db") lands there
        out = subprocess.run(
            [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
        )
        assert out.returncode == 0, f"the README example failed:\n{out.stderr[-3000:]}"
        return out.stdout

    first = run()
    assert (tmp_path / "pump.db").exists(), "the example's study file was not written where it says"
    assert "objective" in first, first
    # "re-running resumes the study": the finished study is loaded, nothing is asked again
    assert run() == first


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("optuna") is None, reason="the example needs ckb[optuna]")
def test_readme_optuna_example_runs(tmp_path: Path) -> None:
    block = _fenced(_text(README), "python")[1]
    script = tmp_path / "optuna_example.py"
    script.write_text(
        block + "\nprint(len(study.trials), study.best_trials[0].number if study.best_trials else None)\n"
    )
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    out = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split()[0] == "30" and (tmp_path / "tune.db").exists()


def test_the_papers_table_gives_each_reports_tally() -> None:
    """The README's "reproduced / partly / not" cells are typed by hand; each must be its report's tally
    (they drifted whenever a report was rewritten)."""
    from ckb.reproduce.report import read_tally

    cells = re.findall(r"\[(\d+) / (\d+) / (\d+)\]\(docs/reproduction/([\w-]+)\.md\)", _text(README))
    reports = sorted((ROOT / "docs" / "reproduction").glob("*.md"))
    assert sorted(name for *_, name in cells) == sorted(p.stem for p in reports if p.name != "README.md")
    for reproduced, partly, not_reproduced, name in cells:
        tally = read_tally(ROOT / "docs" / "reproduction" / f"{name}.md")
        assert tally is not None, name
        want = (tally["reproduced"], tally["partly"], tally["not reproduced"])
        assert (int(reproduced), int(partly), int(not_reproduced)) == want, name


@pytest.mark.parametrize("path", [README, ROOT / "docs" / "optimizer.md"], ids=lambda p: p.name)
def test_the_optimizer_policy_lists_name_every_registered_policy(path: Path) -> None:
    """The sentence "Policies ... reference" lists the optimizer's policies by hand; it must name each
    registered one (aliases aside) once, and nothing else, so a new policy cannot be left out of it."""
    from ckb.optimizer.policies import OPTIMIZER_POLICIES

    m = re.search(r"(?:^|\. )Policies:? (.*?)reference\b", _text(path), re.S | re.M)
    assert m, f"{path.name} has no sentence listing the optimizer's policies"
    listed = re.findall(r"`([a-z][\w-]*)`", m.group(1))
    assert sorted(listed) == sorted(OPTIMIZER_POLICIES.names()), path.name


def test_the_design_map_has_a_row_for_every_subpackage() -> None:
    """The map lets a newcomer "find your room": every package under ``src/ckb/`` has its row in the
    README's design table (two were missing), and every row names something that exists."""
    section = _section(_text(README), "Design: find your room")
    rows = re.findall(r"^\| `([\w*.]+?)/?`", section, re.M)
    src = ROOT / "src" / "ckb"
    packages = {p.name for p in src.iterdir() if (p / "__init__.py").exists()}
    assert packages - set(rows) == set(), "subpackages without a row in the README's design map"
    named = [r for r in rows if "*" not in r]
    assert [r for r in named if not (src / r).exists()] == []
