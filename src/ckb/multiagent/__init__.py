"""Distributed multi-agent BO with coupled black-box and affine constraints (DMABO of Xu et al. (2023)).

Layout: ``messages`` (what crosses an agent boundary), ``environment`` (each agent's black box and
the ground-truth log, apart from messages), ``models`` (an agent's GPs and clipped confidence bounds),
``agent`` (the base agent), ``coordinator`` (the coordinator base and the round driver), ``backends``
(in-process; Ray in ``ray_backend``), ``dmabo`` / ``dcei`` / ``admm_penalty`` (the method and the two
reconstructed baselines, registered in ``methods.METHODS``), ``problems`` (instances, ground truth),
``metrics``, ``trial`` (seeded, checkpointable runs), ``spec`` and ``run`` (experiments).
"""

from ckb.multiagent import admm_penalty, dcei, dmabo  # noqa: F401  (register the methods)
from ckb.multiagent.backends import AgentBackend, InProcessBackend, make_backend
from ckb.multiagent.methods import METHODS
from ckb.multiagent.problems import MULTIAGENT_PROBLEMS, MultiAgentProblem, make_multiagent_problem
from ckb.multiagent.trial import MultiAgentTrace, MultiAgentTrial, MultiAgentTrialConfig

__all__ = [
    "METHODS",
    "MULTIAGENT_PROBLEMS",
    "AgentBackend",
    "InProcessBackend",
    "MultiAgentProblem",
    "MultiAgentTrace",
    "MultiAgentTrial",
    "MultiAgentTrialConfig",
    "make_backend",
    "make_multiagent_problem",
]
