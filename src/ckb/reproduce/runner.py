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

from ckb.errors import CKBError
from ckb.reproduce.claims import Paper, load_paper
from ckb.reproduce.report import check_index, check_report, read_tally, write_index, write_report
from ckb.reproduce.verdict import NOT_RUN, judge

QUICK_TRIALS = 2
QUICK_HORIZON = 60


def quick_spec(spec, paper: Paper):
    """``spec`` at the reduced scale of ``--quick``."""
    trials = int(paper.quick.get("trials", QUICK_TRIALS))
    horizon = int(paper.quick.get("horizon", QUICK_HORIZON))
    sets = list(paper.quick.get("set", {}).get(spec.name, []))
    return spec.with_overrides(trials=min(spec.trials, trials), horizon=min(spec.horizon, horizon), sets=sets)


def load_summary(path: Path) -> dict[str, Any] | None:
    """The summary at ``path`` (None when there is none); :class:`CKBError` naming the file when it is
    not a JSON table."""
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        data, why = None, f"not readable as JSON: {exc}"
    else:
        why = f"a JSON {type(data).__name__}, not a table"
    if not isinstance(data, dict):
        raise CKBError(
            f"{path} is not an experiment summary ({why}); the report was not rewritten. Re-run the paper "
            "(without --report-only) to rewrite it, or give the --out of a finished run."
        )
    return data


def _judge_all(paper: Paper, summaries: dict[str, dict[str, Any] | None], out: Path) -> list:
    """Every claim's verdict; a summary whose layout the claims cannot read is one :class:`CKBError`."""
    verdicts = []
    for claim in paper.claims:
        try:
            verdicts.append(judge(claim, summaries.get(claim.experiment)))
        except (TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:
            raise CKBError(
                f"{out / claim.experiment / 'summary.json'} cannot be read for the claim {claim.id!r} "
                f"({type(exc).__name__}: {exc}); the report was not rewritten. Re-run the paper to rewrite it."
            ) from None
    return verdicts


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
    report from the summaries on disk. Returns ``{"paper", "report", "verdicts": [...]}``.

    A report holds results, so it is never lost to a mistake (:class:`~ckb.errors.CKBError`, nothing
    written): ``run=False`` with no run of the paper under ``out`` (a mistyped or empty folder) is refused,
    and so is any new report that judged fewer claims (fewer verdicts other than "not run") than the report
    it would replace, or a quick report that would replace a paper-scale one; to replace it anyway, delete
    it first. An unknown ``executor`` (or options it does
    not take) is refused before anything is run."""
    from ckb.experiments import run_experiment
    from ckb.experiments.spec import load_spec
    from ckb.framework.pipeline import report_writes
    from ckb.runner.executors import get_executor

    paper = load_paper(name)
    get_executor(executor, workers, **(executor_options or {}))  # its checks only: nothing is started
    out = Path(out)
    target = Path(report_dir) if report_dir is not None else (out if quick else Path("docs/reproduction"))
    if (target.exists() or target.is_symlink()) and not target.is_dir():
        raise CKBError(f"report folder {str(target)!r} is a file, expected a folder; nothing was run.")
    if not quick:  # before any run: a folder whose README.md is not ours is refused up front
        check_index(target)
    check_report(target / f"{paper.short}.md")  # and so is a PAPER.md we did not write
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
        if not quick:
            _check_paper_scale(spec, summaries[spec_name], where)
    if not run and not any(s is not None for s in summaries.values()):
        raise CKBError(
            f"no runs of paper {paper.short!r} in {str(out)!r} (expected <spec>/summary.json there for "
            f"{', '.join(paper.specs)}); the report was not rewritten. Give the --out of a finished run."
        )
    verdicts = _judge_all(paper, summaries, out)
    _keep_better_report(target / f"{paper.short}.md", verdicts, out, quick)
    kept = f"the runs in {str(out)!r} are kept: fix the cause, then run with --report-only."
    with report_writes(target, "the report", kept):  # a full disk, a read-only report folder: one line
        figures = _copy_run_files(out, paper.specs, target / paper.short) if not quick else {}
        report = write_report(
            paper, verdicts, summaries, target / f"{paper.short}.md", quick=quick, figures=figures
        )
        if not quick:
            write_index(target)
    return {"paper": paper.short, "report": str(report), "verdicts": verdicts}


def _check_paper_scale(spec, summary: dict[str, Any] | None, where: Path) -> None:
    """Refuse runs below the spec's scale for a paper-scale report (``--report-only`` over a ``--quick``
    folder judged every claim from T = 40 and 2 trials and replaced the paper-scale report without a
    word): a :class:`~ckb.errors.CKBError`, nothing written."""
    if summary is None:
        return
    horizon, trials = summary.get("horizon"), summary.get("trials")
    if horizon != spec.horizon or not isinstance(trials, int) or trials < spec.trials:
        raise CKBError(
            f"the runs in {str(where)!r} are at T = {horizon}, {trials} trial(s), not the paper scale of "
            f"{spec.name} (T = {spec.horizon}, {spec.trials} trials; a --quick run?); the report was not "
            "rewritten. Pass --quick for a quick report, or run at paper scale."
        )


def _keep_better_report(path: Path, verdicts, out: Path, quick: bool) -> None:
    """Refuse to replace the report at ``path`` by one that judged fewer claims than it did, or a
    paper-scale report by a quick one."""
    old = read_tally(path)
    if quick and old is not None and not old["quick"]:
        raise CKBError(
            f"{str(path)!r} is a paper-scale report, and a --quick run does not replace it (nothing was "
            "written; runs on disk are kept). Leave out --report-dir to write the quick report under --out."
        )
    judged = sum(v.verdict != NOT_RUN for v in verdicts)
    if old is not None and judged < old["judged"]:
        raise CKBError(
            f"the runs in {str(out)!r} judged {judged} of {len(verdicts)} claims, fewer than the "
            f"{old['judged']} of {old['claims']} of the report {str(path)!r}: it was not replaced (runs on disk "
            "are kept). Check --out; delete the report first to replace it anyway."
        )


#: the plots a report shows per experiment, when drawn (the curves the papers' figures are cited for; the
#: affine shift only for multi-agent runs with an affine constraint)
FIGURES = ("regret.png", "violation.png", "affine_shift.png")


def _copy_run_files(out: Path, specs, folder: Path) -> dict[str, list[str]]:
    """Copy each run's :data:`FIGURES` (``out/<spec>/``, drawn by the pipeline), which the report links,
    and its ``summary.json``, which the verdicts read, to ``folder/<spec>/``: the report folder then holds
    all it was computed from, and ``--report-only --out folder`` rebuilds it. Returns spec -> the
    figures' relative paths. A file already in place (``--out`` is ``folder``) is left as it is; a figure
    an earlier run left there that this run did not draw is removed, so the folder holds this run's."""
    found: dict[str, list[str]] = {}
    for spec_name in specs:
        for name in (*FIGURES, "summary.json"):
            src, dst = out / spec_name / name, folder / spec_name / name
            if not src.exists():  # an earlier run's file would be kept beside this run's report: drop it
                if dst.is_file() and name in FIGURES:
                    dst.unlink()
                continue
            if not (dst.exists() and dst.resolve() == src.resolve()):
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)
            if name in FIGURES:
                found.setdefault(spec_name, []).append(f"{folder.name}/{spec_name}/{name}")
    return found
