"""Experiment kinds: what a kind provides, the registry kinds add themselves to, and loading a spec by kind.

A kind is a :class:`Kind` subclass with its spec class (a :class:`~ckb.framework.spec.SpecBase`) and
the hooks :func:`~ckb.framework.pipeline.run_pipeline` calls: ``sweep`` (every task not yet on disk, by
:func:`ckb.runner.sweep.run_sweep`), ``summarize``, ``write``, ``plot``, ``finish``, and for the command line
``render`` (the result as plain tables and lines), ``plan_note``/``footer`` and ``listing`` (what
``ckb list`` shows for the kind). The module that defines a kind registers it on import::

    register_kind(MyKind())

The single-agent kind (``ckb.experiments``, the default of a spec without ``kind``), ``multiagent``
(``ckb.multiagent.run``) and ``benchmark`` (``ckb.benchmarking.experiment``) do; ``ckb.experiments``
imports all three, so loading a spec from there knows every shipped kind. Nothing here imports a kind:
the kinds, above, fill the registry, so no package imports back up.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from ckb._validation import did_you_mean, short_repr
from ckb.errors import SpecError
from ckb.framework.report import ConsoleReport, TextTable, trial_report
from ckb.framework.spec import DEFAULT_KIND, SpecBase
from ckb.io import write_json
from ckb.registry import RegistrationError, Registry


class Kind:
    """An experiment kind: its spec class and the pipeline's hooks (``sweep`` and ``summarize`` required;
    by default the summary goes to ``summary.json``, nothing is plotted, and the printed report is the
    trial-based table of :func:`~ckb.framework.report.trial_report`)."""

    name: ClassVar[str] = ""
    spec: ClassVar[type[SpecBase]] = SpecBase
    #: what one task of the sweep is called in progress bars and messages
    unit: ClassVar[str] = "trial"

    def sweep(self, spec, out: Path, **options: Any) -> Any:
        """Run every task of ``spec`` not yet finished under ``out``; ``options``: ``workers``,
        ``executor``, ``executor_options``, ``on_done(task, skipped)`` (``task.algorithm``, ``task.trial``).
        Returns what :meth:`summarize` reads (e.g. the traces by label)."""
        raise NotImplementedError

    def summarize(self, spec, results: Any) -> tuple[dict[str, Any], Any]:
        """``(summary, curves)``: the JSON-ready summary and what :meth:`plot` draws."""
        raise NotImplementedError

    def write(self, out: Path, spec, summary: dict[str, Any]) -> None:
        write_json(out / "summary.json", summary)

    def outputs(self, spec) -> list[str]:
        """The files :meth:`write` and :meth:`plot` may write, relative to the output folder (checked
        before a run: :func:`~ckb.framework.pipeline.check_outputs`)."""
        return ["summary.json"]

    def plot(self, out: Path, spec, summary: dict[str, Any], curves: Any) -> list[Path]:
        return []

    def finish(self, out: Path, spec, summary: dict[str, Any]) -> None:
        """Last step, after everything is written (e.g. raise for failed tasks)."""

    # ------------------------------------------------------------- command line
    def render(self, spec, summary: dict[str, Any]) -> ConsoleReport:
        """What ``ckb experiment`` prints: by default the table of final metrics (mean ± s.e.), the
        checkpoint notes and the paper's reference."""
        return trial_report(spec, summary)

    def plan_note(self, spec, n_tasks: int) -> str:
        """Appended to the line announcing a run (e.g. the benchmark's number of runs and problems)."""
        return ""

    def footer(self, done: int, reused: int, seconds: float, out: Path) -> str:
        return (
            f"{done} trial(s) run, {reused} reused from disk, {seconds:.1f} s. "
            f"Summary: {out / 'summary.json'}; plots and traces under {out}/"
        )

    def listing(self) -> list[TextTable]:
        """What ``ckb list`` shows for this kind (its methods, problems, ...)."""
        return []


#: kind name -> its :class:`Kind` (filled by the modules that define kinds)
KINDS: Registry[Kind] = Registry("experiment kind")


def register_kind(kind: Kind) -> Kind:
    """Add ``kind`` under its ``name`` (which must be its spec class's ``kind``); a
    :class:`~ckb.registry.RegistrationError` says what is wrong, and nothing is added."""
    if not isinstance(kind, Kind):
        raise RegistrationError(
            f"register_kind takes a ckb.framework.Kind instance, got {short_repr(kind, 60)} "
            f"({type(kind).__name__})."
        )
    if not (isinstance(kind.spec, type) and issubclass(kind.spec, SpecBase)):
        raise RegistrationError(
            f"kind {kind.name!r}: its spec must be a ckb.framework.SpecBase subclass, got "
            f"{short_repr(kind.spec, 60)}."
        )
    if not kind.name or kind.name != kind.spec.kind:
        raise RegistrationError(f"kind {kind.name!r} must name its spec class's kind ({kind.spec.kind!r}).")
    KINDS.add(kind.name, kind)
    return kind


def kind_of(spec) -> Kind:
    """The registered kind of ``spec`` (import the module defining it first; ``ckb.experiments`` does)."""
    return KINDS.get(spec.kind)


def spec_from_dict(raw: dict[str, Any], source: str = ""):
    """The spec of ``raw``'s ``kind`` (the default, single-agent kind when absent)."""
    name = raw.get("kind", DEFAULT_KIND)
    if not isinstance(name, str) or name not in KINDS:
        where = f" in {source}" if source else ""
        raise SpecError(
            f"field 'kind'{where}: unknown kind {name!r}; expected one of {KINDS.names()} (none: "
            f"{DEFAULT_KIND}).{did_you_mean(str(name), KINDS.names())}"
        )
    return KINDS.get(name).spec.from_dict(raw, source=source)
