"""Helpers shared by the multi-agent tests (imported as a plain module: tests/ is not a package)."""

import numpy as np

from ckb.multiagent.backends import InProcessBackend
from ckb.multiagent.problems import MultiAgentProblem

#: a tiny multi-agent spec table (two agents, one DMABO label) for the spec tests; deep-copy before editing
TINY_SPEC = {
    "kind": "multiagent",
    "name": "tiny",
    "horizon": 4,
    "trials": 1,
    "seed": 0,
    "problem": {"name": "power-allocation", "n_agents": 2, "grid_size": 11},
    "algorithms": {"dmabo": {"method": "dmabo", "beta": 3.0}},
}


class RecordingBackend(InProcessBackend):
    """In-process backend that records every call: (method, args, results)."""

    def __init__(self, agent_cls, agent_kwargs):
        super().__init__(agent_cls, agent_kwargs)
        self.log = []

    def call(self, method, args):
        args = list(args)
        out = super().call(method, args)
        self.log.append((method, args, out))
        return out


class ReversedBackend(InProcessBackend):
    """Calls the agents in reverse order (a stand-in for any concurrent schedule)."""

    def call(self, method, args):
        args = list(args)
        out = [None] * self.n_agents
        for i in reversed(range(self.n_agents)):
            out[i] = getattr(self.agents[i], method)(args[i])
        return out


def small_problem(seed=0, n_agents=3, m=1, affine=True, G1=5):
    """N agents on a (G1 x G1) grid of [0, 1]^2 with smooth random f, g and A_i = [1, 1] (x_i not
    recoverable from A_i x_i)."""
    rng = np.random.default_rng(seed)
    g1 = np.linspace(0.0, 1.0, G1)
    grid = np.array([[a, b] for a in g1 for b in g1])
    f, g = [], []
    for _ in range(n_agents):
        c = rng.normal(size=3)
        f.append(np.sin(3 * grid[:, 0] + c[0]) + np.cos(2 * grid[:, 1] + c[1]))
        g.append(
            np.column_stack([grid @ rng.uniform(0.5, 1.5, 2) - 0.8 + 0.1 * j for j in range(m)])
            if m
            else None
        )
    return MultiAgentProblem(
        "small",
        [grid] * n_agents,
        f,
        g if m else None,
        A=[np.array([[1.0, 1.0]])] * n_agents if affine else None,
        b=np.array([1.0 * n_agents]) if affine else None,
        noise_std=0.05,
        kernel={"type": "se", "lengthscale": 0.4, "variance": 1.0},
        gp_noise=0.05**2,
        hints={"xi": 0.5, "rho": 0.25},
    )
