"""Sweeps: many trials (algorithms x trial indices) in parallel, each written to disk when it finishes.

Layout: ``OUT/traces/<algorithm>/trial-<k>.npz``. A trace that already exists with the same
configuration hash is skipped, so an interrupted sweep re-run with the same command loses nothing and
redoes nothing. A trace with a *different* configuration is never overwritten: the sweep stops with an
error naming it (use another ``--out``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ckb.errors import CKBError
from ckb.io import load_state
from ckb.runner.executors import get_executor
from ckb.runner.metrics import final_metrics
from ckb.runner.trace import Trace
from ckb.runner.trial import Trial, TrialConfig


class SweepConflictError(CKBError, FileExistsError):
    """The output directory holds a trace of a different configuration."""


def trace_path(out: Path, config: TrialConfig) -> Path:
    return Path(out) / "traces" / config.algorithm / f"trial-{config.trial:04d}.npz"


def stored_hash(path: Path) -> str | None:
    try:
        return load_state(path)["meta"]["config_hash"]
    except Exception:  # unreadable / partial file: treat as not done (atomic writes make this rare)
        return None


def run_one(task: tuple[dict, str]) -> dict[str, float]:
    """Worker entry point: run one trial from its config dict and save its trace at ``path``."""
    config_dict, path = task
    trial = Trial(TrialConfig(**config_dict))
    trace = trial.run()
    trace.save(path)
    return final_metrics(trace)


def run_sweep(
    configs: Sequence[TrialConfig],
    out: str | Path,
    *,
    workers: int | None = None,
    executor: str = "process",
    executor_options: Mapping[str, Any] | None = None,
    on_done: Callable[[TrialConfig, bool], None] | None = None,
    worker: Callable[[tuple[dict, str]], Any] = run_one,
) -> dict[tuple[str, int], Path]:
    """Run every config not already on disk; return ``{(algorithm, trial): trace path}``.

    ``executor_options`` go to the executor (``ray``: ``address``, ``runtime_env``).
    ``on_done(config, skipped)`` is called once per config (for progress bars). ``worker`` runs one
    ``(config dict, trace path)`` task in a worker process (a picklable top-level function; the
    multi-agent harness passes its own); a config needs ``algorithm``, ``trial``, ``config_hash()`` and
    ``to_dict()``.
    """
    out = Path(out)
    paths: dict[tuple[str, int], Path] = {}
    todo: list[tuple[dict, str]] = []
    by_path: dict[str, TrialConfig] = {}
    for cfg in configs:
        path = trace_path(out, cfg)
        paths[(cfg.algorithm, cfg.trial)] = path
        if path.exists():
            h = stored_hash(path)
            if h == cfg.config_hash():
                if on_done:
                    on_done(cfg, True)
                continue
            if h is not None:
                raise SweepConflictError(
                    f"{path} holds a trial of a different configuration (hash {h}, expected {cfg.config_hash()}); "
                    "nothing was overwritten. Use another --out directory or remove that file."
                )
        path.parent.mkdir(parents=True, exist_ok=True)
        todo.append((cfg.to_dict(), str(path)))
        by_path[str(path)] = cfg
    ex = get_executor(executor, workers if len(todo) > 1 else 1, **(executor_options or {}))
    for task, _ in ex.map_unordered(worker, todo):
        if on_done:
            on_done(by_path[task[1]], False)
    return paths


def load_traces(paths: dict[tuple[str, int], Path]) -> dict[str, list[Trace]]:
    """Load traces grouped by algorithm, in trial order."""
    out: dict[str, list[Trace]] = {}
    for (alg, _), path in sorted(paths.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        out.setdefault(alg, []).append(Trace.load(path))
    return out
