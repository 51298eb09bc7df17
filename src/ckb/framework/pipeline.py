"""One pipeline for every experiment kind: validate -> sweep -> summarize -> write -> plot -> finish.

Each step is a hook of the spec's kind (:class:`~ckb.framework.kinds.Kind`); the steps, their order and
the promises are the same for all: nothing runs before the whole spec is validated, the sweep reuses
every finished task on disk and never overwrites a task of another configuration
(:func:`ckb.runner.sweep.run_sweep`), and the summary is written before plots are drawn, so an
interrupted or failing report loses no run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ckb.framework.kinds import kind_of


def run_pipeline(
    spec,
    out: str | Path,
    *,
    workers: int | None = None,
    executor: str = "process",
    executor_options: Mapping[str, Any] | None = None,
    on_done: Callable | None = None,
    plots: bool = True,
) -> dict[str, Any]:
    """Validate ``spec``, run every task not yet on disk under ``out``, and write its report.

    ``executor``: ``process``, ``serial`` or ``ray`` (``executor_options``: ``address``, ``runtime_env``);
    ``on_done(task, skipped)`` is called once per task (``task.algorithm``, ``task.trial``: for progress
    bars). Returns the summary (also written under ``out``), with ``plots`` (their paths) if drawn.
    """
    kind = kind_of(spec)
    spec.validate()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    results = kind.sweep(
        spec, out, workers=workers, executor=executor, executor_options=executor_options, on_done=on_done
    )
    summary, curves = kind.summarize(spec, results)
    kind.write(out, spec, summary)
    if plots:
        summary["plots"] = [str(p) for p in kind.plot(out, spec, summary, curves)]
    kind.finish(out, spec, summary)
    return summary
