"""The experiment framework every kind of experiment plugs into (single-agent, multi-agent, benchmark).

- :mod:`~ckb.framework.spec`: :class:`SpecBase`, the fields every spec has (name, horizon, trials,
  seed, title, description, paper, algorithms, reference, choices, report, source) and one
  ``from_dict`` / ``to_dict`` / ``with_overrides`` path, plus the checks the kinds share;
- :mod:`~ckb.framework.kinds`: :class:`Kind` (a spec class and the pipeline's hooks), the registry
  :data:`KINDS` that kinds add themselves to on import, and :func:`spec_from_dict` (a spec by its kind);
- :mod:`~ckb.framework.pipeline`: :func:`run_pipeline`, validate -> sweep -> summarize -> write -> plot;
- :mod:`~ckb.framework.report`: statistics over trials, checkpoints, the summary layout, mean-curve
  plots and the printed report as plain data.

The one sweep (skip finished tasks, refuse to overwrite another configuration's, resume) is
:func:`ckb.runner.sweep.run_sweep`, which each kind's ``sweep`` hook calls with its own store and worker.

Where it sits: this package imports only ckb's base modules (``registry``, ``errors``, ``io``,
``_validation``); the kinds import it (``ckb.experiments`` the single-agent kind, ``ckb.multiagent.run``,
``ckb.benchmarking.experiment``) and register themselves; ``ckb.experiments`` and the CLI, at the top,
import every kind. No module names an upper package, in an import or in a string.
"""

from ckb.framework.kinds import KINDS, Kind, kind_of, register_kind, spec_from_dict
from ckb.framework.pipeline import run_pipeline
from ckb.framework.spec import DEFAULT_KIND, SpecBase

__all__ = [
    "DEFAULT_KIND",
    "KINDS",
    "Kind",
    "SpecBase",
    "kind_of",
    "register_kind",
    "run_pipeline",
    "spec_from_dict",
]
