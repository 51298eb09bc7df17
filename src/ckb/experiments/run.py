"""Run an experiment spec of any kind end to end (:func:`run_experiment`: the framework's one pipeline),
the single-agent kind's hooks (registered here), and ``--beta-scale`` sweeps.

The single-agent kind (:class:`SingleAgentKind`, the default of a spec without ``kind``): trials of
:class:`ckb.runner.Trial` swept as traces (:func:`ckb.runner.sweep.run_sweep`), summarized by
:func:`ckb.experiments.report.summarize`, plotted by :func:`ckb.experiments.report.plot_curves`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ckb.experiments.report import plot_curves, plot_names, summarize
from ckb.experiments.spec import ExperimentSpec, deprecated
from ckb.framework import DEFAULT_KIND, KINDS, Kind, register_kind, run_pipeline
from ckb.framework.report import TextTable, doc_line
from ckb.runner.sweep import load_traces, run_sweep


class SingleAgentKind(Kind):
    """The default kind: one policy per label on a problem, trials of :class:`ckb.runner.Trial`."""

    name = DEFAULT_KIND
    spec = ExperimentSpec

    def sweep(self, spec, out, **options):
        return load_traces(run_sweep(spec.configs(), out, **options))

    summarize = staticmethod(summarize)

    def plot(self, out, spec, summary, curves):
        return plot_curves(out, spec.name, curves, report=spec.report)

    def outputs(self, spec):
        return ["summary.json", *plot_names()]

    def listing(self) -> list[TextTable]:
        from ckb.policies import POLICIES
        from ckb.problems import PROBLEMS
        from ckb.runner.environment import ENVIRONMENTS

        policies = [
            [n, ", ".join(POLICIES.aliases_of(n)), doc_line(POLICIES.get(n))] for n in POLICIES.names()
        ]
        problems = [[n, doc_line(PROBLEMS.get(n))] for n in PROBLEMS.names()]
        environments = [[n, doc_line(ENVIRONMENTS.get(n))] for n in ENVIRONMENTS.names()]
        return [
            TextTable("algorithms (policies)", ["name", "aliases", "summary"], policies),
            TextTable("problems", ["name", "summary"], problems),
            TextTable("environments (a spec's environment)", ["name", "summary"], environments),
        ]


register_kind(SingleAgentKind())


#: run a spec of any kind: validate, sweep, summarize, write, plot (the framework's one pipeline)
run_experiment = run_pipeline


def __getattr__(name: str) -> Any:
    if name == "RUNNERS":  # the import-string registry this module had before ckb.framework.KINDS
        message = (
            "ckb.experiments.run.RUNNERS is deprecated; every kind runs through ckb.experiments.run_experiment "
            "(ckb.framework.run_pipeline with the kind's hooks)."
        )
        target = f"{run_pipeline.__module__}:{run_pipeline.__name__}"
        return deprecated(message, {k: target for k in KINDS.names() if k != DEFAULT_KIND})
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def takes_beta_scale(spec: ExperimentSpec) -> dict[str, bool]:
    """Per algorithm label of ``spec``: whether its policy takes ``beta_scale``."""
    from ckb.policies import POLICIES, init_parameters

    return {
        label: "beta_scale" in init_parameters(POLICIES.get(policy))
        for label, (policy, _) in spec.algorithms.items()
    }


def with_beta_scale(spec: ExperimentSpec, scale: float) -> ExperimentSpec:
    """A copy of ``spec`` whose every algorithm that takes ``beta_scale`` uses ``scale``."""
    if not isinstance(spec, ExperimentSpec):
        from ckb.errors import SpecError

        raise SpecError(
            f"--beta-scale is for single-agent experiments; {spec.name!r} is of kind {spec.kind!r}: set a "
            "method's width with --set algorithms.LABEL.beta=VALUE."
        )
    sets = [
        f"algorithms.{label}.beta_scale={scale!r}" for label, takes in takes_beta_scale(spec).items() if takes
    ]
    return spec.with_overrides(sets=sets)


#: what a beta-scale sweep's folder holds (its ``spec.json`` records the spec before scaling)
BETA_SWEEP = "beta-scale sweep"


def beta_scale_folder(scale: float) -> str:
    """The folder of one scale under a sweep's output folder: ``beta-scale-<scale:g>``."""
    return f"beta-scale-{scale:g}"


def check_beta_scales(scales, what: str = "beta scales") -> list[float]:
    """``scales`` as floats if each is a finite number >= 0 (the range of every policy's ``beta_scale``)
    and no two share a folder (:func:`beta_scale_folder`); else :class:`~ckb.errors.CKBError` naming the
    value (``what``: how the caller calls them, e.g. ``--beta-scale``)."""
    import math

    from ckb.errors import CKBError

    out: list[float] = []
    folders: dict[str, float] = {}
    for v in scales:
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
            raise CKBError(
                f"{what}: {v!r} is not a valid scale; expected finite numbers >= 0 (beta is multiplied by each)."
            )
        v = float(v) + 0.0  # -0.0 -> 0.0
        folder = beta_scale_folder(v)
        if folder in folders:
            same = (
                "twice"
                if folders[folder] == v
                else f"and {folders[folder]!r}, which share the folder {folder}"
            )
            raise CKBError(f"{what}: lists {v!r} {same}; expected distinct scales.")
        folders[folder] = v
        out.append(v)
    if not out:
        raise CKBError(f"{what}: expected at least one scale.")
    return out


def check_beta_scale_sweep(
    spec: ExperimentSpec, scales, out: str | Path
) -> list[tuple[float, ExperimentSpec, Path]]:
    """Everything a sweep needs, checked before anything runs or any folder is created: the scales
    (:func:`check_beta_scales`), each scale's spec (size and :meth:`~ExperimentSpec.validate`), and the
    output folders (writable; ``out`` holds no other experiment's sweep and each scale's folder no other
    spec's results, nor a file that is not ckb's where the run writes one:
    :func:`ckb.framework.pipeline.check_run_folder`). Returns ``(scale, spec, folder)`` per scale."""
    from ckb.framework.pipeline import check_output_dir, check_results_folder, check_run_folder

    scales = check_beta_scales(scales)
    out = check_output_dir(out)
    plan = [(s, with_beta_scale(spec, s), out / beta_scale_folder(s)) for s in scales]
    for _, scaled, folder in plan:  # a bad spec is named first, whatever the folders hold
        scaled.check_size()
        check_output_dir(folder)
        scaled.validate()
    check_results_folder(spec, out, layout=BETA_SWEEP)
    for _, scaled, folder in plan:
        check_run_folder(scaled, folder)
    return plan


def _earlier_scales(out: Path, spec: ExperimentSpec, now) -> dict[float, dict[str, Any]]:
    """The scales of ``out``'s earlier ``beta_scale_sweep.json`` not in ``now``, with their summaries, where
    those are on disk at this spec's horizon and number of trials."""
    import json

    try:
        old = json.loads((out / "beta_scale_sweep.json").read_text())["scales"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    found = {}
    for scale in old if isinstance(old, list) else []:
        if isinstance(scale, bool) or not isinstance(scale, int | float) or scale in now:
            continue
        try:
            summary = json.loads((out / beta_scale_folder(scale) / "summary.json").read_text())
        except (OSError, ValueError):
            continue
        if isinstance(summary, dict) and (summary.get("horizon"), summary.get("trials")) == (
            spec.horizon,
            spec.trials,
        ):
            found[float(scale)] = summary
    return found


def run_beta_scale_sweep(
    spec: ExperimentSpec,
    scales: list[float],
    out: str | Path,
    *,
    workers: int | None = None,
    executor: str = "process",
    executor_options: Mapping[str, Any] | None = None,
    on_done: Callable | None = None,
) -> dict[str, Any]:
    """Run ``spec`` once per beta scale (``out/beta-scale-<s>/``) and tabulate N, V and regret against it.

    The violation counts of the primal-dual papers are very sensitive to the width scale; this shows the
    sensitivity instead of hiding it. Every scale, spec and folder is checked first
    (:func:`check_beta_scale_sweep`). Writes ``out/spec.json`` (the spec before scaling) and
    ``out/beta_scale_sweep.json``:
    ``{"experiment", "horizon", "trials", "scales", "algorithms": {ALG: {METRIC: [mean per scale],
    "violating_rounds_median": [median per scale]}}}`` (METRIC: ``violating_rounds``, ``violation``,
    ``positive_violation``, ``regret``). A sweep into the folder of an earlier one with other scales keeps
    the earlier scales' rows (their summaries, at the same horizon and number of trials) in the table.
    """
    from ckb.errors import CKBError
    from ckb.framework.pipeline import record_spec
    from ckb.io import write_json
    from ckb.runner.executors import check_executor

    check_executor(executor, **(executor_options or {}))
    plan = check_beta_scale_sweep(spec, scales, out)
    scales = [s for s, _, _ in plan]
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CKBError(f"cannot create the output folder {str(out)!r}: {exc}") from None
    record_spec(spec, out, layout=BETA_SWEEP)
    options = {"workers": workers, "executor": executor, "executor_options": executor_options}
    summaries = {
        s: run_experiment(scaled, folder, on_done=on_done, plots=False, **options)
        for s, scaled, folder in plan
    }
    earlier = _earlier_scales(out, spec, summaries)
    if earlier:  # a sweep into the folder of an earlier one: its table keeps the earlier scales' rows
        summaries = dict(sorted({**earlier, **summaries}.items()))
        scales = list(summaries)
    table: dict[str, Any] = {}
    for summary in summaries.values():
        for alg, m in summary["algorithms"].items():
            row = table.setdefault(alg, {})
            for metric in ("violating_rounds", "violation", "positive_violation", "regret"):
                row.setdefault(metric, []).append(m[metric]["mean"])
            row.setdefault("violating_rounds_median", []).append(m["violating_rounds"]["median"])
    result = {
        "experiment": spec.name,
        "horizon": spec.horizon,
        "trials": spec.trials,
        "scales": list(scales),
        "algorithms": table,
    }
    write_json(out / "beta_scale_sweep.json", result)
    return result
