"""Experiments: the top of the experiment framework. Shipped specs, loading a spec of any kind, running
it (:func:`run_experiment`), reports; and the single-agent kind.

Importing this package registers every shipped kind in :data:`ckb.framework.KINDS`: the single-agent
kind (:mod:`ckb.experiments.run`), ``multiagent`` (:mod:`ckb.multiagent.run`) and ``benchmark``
(:mod:`ckb.benchmarking.experiment`). They import the framework below them, never this package.
"""

from ckb.benchmarking import experiment as _benchmark_kind  # noqa: F401  (registers the kind)
from ckb.experiments.run import run_experiment
from ckb.experiments.spec import ExperimentSpec, load_spec, shipped
from ckb.multiagent import run as _multiagent_kind  # noqa: F401  (registers the kind)

__all__ = ["ExperimentSpec", "load_spec", "run_experiment", "shipped"]
