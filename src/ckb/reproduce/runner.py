"""Run a paper's experiments (:func:`reproduce`) and write its report.

Each spec of the paper runs through the framework's one pipeline (:func:`ckb.experiments.run_experiment`)
under ``out/<spec>/``: resumable (finished tasks on disk are reused), with any executor. ``quick`` runs a
reduced version for tests and CI: ``trials`` and ``horizon`` cut to the paper's ``[paper.quick]`` values
(default 2 trials, horizon at most 60); its report says so at the top and is written under ``out``, never
over the paper-scale report in ``docs/reproduction/``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ckb.reproduce.claims import Paper, load_paper
from ckb.reproduce.report import write_index, write_report
from ckb.reproduce.verdict import judge

QUICK_TRIALS = 2
QUICK_HORIZON = 60


def quick_spec(spec, paper: Paper):
    """``spec`` at the reduced scale of ``--quick``."""
    trials = int(paper.quick.get("trials", QUICK_TRIALS))
    horizon = int(paper.quick.get("horizon", QUICK_HORIZON))
    sets = list(paper.quick.get("set", {}).get(spec.name, []))
    return spec.with_overrides(trials=min(spec.trials, trials), horizon=min(spec.horizon, horizon), sets=sets)


def load_summary(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text()) if path.exists() else None


def reproduce(
    name: str,
    out: str | Path,
    *,
    quick: bool = False,
    report_dir: str | Path | None = None,
    workers: int | None = None,
    executor: str = "process",
    executor_options: dict[str, Any] | None = None,
    on_spec: Callable[[str, int], None] | None = None,
    on_done: Callable | None = None,
    run: bool = True,
) -> dict[str, Any]:
    """Run paper ``name``'s specs under ``out`` and write ``PAPER.md`` (with its figures) to ``report_dir``
    (default ``docs/reproduction`` at paper scale, ``out`` with ``quick``). ``run=False`` only rewrites the
    report from the summaries on disk. Returns ``{"paper", "report", "verdicts": [...]}``."""
    from ckb.experiments import run_experiment
    from ckb.experiments.spec import load_spec

    paper = load_paper(name)
    out = Path(out)
    summaries: dict[str, dict[str, Any] | None] = {}
    for spec_name in paper.specs:
        spec = load_spec(spec_name)
        if quick:
            spec = quick_spec(spec, paper)
        where = out / spec_name
        if run:
            if on_spec is not None:
                on_spec(spec_name, len(spec.configs()) if hasattr(spec, "configs") else 0)
            run_experiment(
                spec,
                where,
                workers=workers,
                executor=executor,
                executor_options=executor_options,
                on_done=on_done,
                plots=not quick,
            )
        summaries[spec_name] = load_summary(where / "summary.json")
    verdicts = [judge(c, summaries.get(c.experiment)) for c in paper.claims]
    target = Path(report_dir) if report_dir is not None else (out if quick else Path("docs/reproduction"))
    figures = _copy_figures(out, paper.specs, target / paper.short) if not quick else {}
    report = write_report(
        paper, verdicts, summaries, target / f"{paper.short}.md", quick=quick, figures=figures
    )
    if not quick:
        write_index(target)
    return {"paper": paper.short, "report": str(report), "verdicts": verdicts}


#: the plots a report shows per experiment, when drawn (the curves the papers' figures are cited for; the
#: affine shift only for multi-agent runs with an affine constraint)
FIGURES = ("regret.png", "violation.png", "affine_shift.png")


def _copy_figures(out: Path, specs, folder: Path) -> dict[str, list[str]]:
    """Copy each run's :data:`FIGURES` (``out/<spec>/``, drawn by the pipeline) to ``folder/<spec>/``, which
    the report links; spec -> relative paths."""
    found: dict[str, list[str]] = {}
    for spec_name in specs:
        for name in FIGURES:
            src = out / spec_name / name
            if not src.exists():
                continue
            dst = folder / spec_name / name
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
            found.setdefault(spec_name, []).append(f"{folder.name}/{spec_name}/{name}")
    return found
