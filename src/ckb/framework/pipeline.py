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

from ckb.errors import CKBError
from ckb.framework.kinds import kind_of


def check_output_dir(out: str | Path) -> Path:
    """``out`` if results can be saved there, checked before anything is computed: it is a folder or can
    be created (its nearest existing ancestor is a folder), and a file can be created in it (or in that
    ancestor) and in every existing folder of traces under it; else :class:`CKBError` naming it."""
    import tempfile

    out = Path(out)
    probe = out
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise CKBError(
            f"output folder {str(out)!r}: {str(probe)!r} is a file, expected a folder (or a path to create)."
        )
    folders = [probe]
    traces = out / "traces"
    if traces.is_dir():
        folders += [traces] + [p for p in sorted(traces.iterdir()) if p.is_dir()]
    for folder in folders:
        try:
            with tempfile.TemporaryFile(dir=folder, prefix=".ckb-write-check-"):
                pass
        except OSError as exc:
            raise CKBError(
                f"output folder {str(out)!r} is not writable ({folder}: {exc.strerror or exc}); nothing was "
                "computed. Choose another --out or fix its permissions."
            ) from None
    return out


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
    spec.check_size()
    out = check_output_dir(out)
    spec.validate()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CKBError(f"cannot create the output folder {str(out)!r}: {exc}") from None
    results = kind.sweep(
        spec, out, workers=workers, executor=executor, executor_options=executor_options, on_done=on_done
    )
    summary, curves = kind.summarize(spec, results)
    kind.write(out, spec, summary)
    if plots:
        summary["plots"] = [str(p) for p in kind.plot(out, spec, summary, curves)]
    kind.finish(out, spec, summary)
    return summary
