"""Ray backend: agents as Ray actors give the in-process backend's results, in agent order, and a DMABO
run with 8 agents makes exactly the in-process decisions; errors name the agent.

One local Ray instance (2 CPUs) per test process serves every Ray test. Starting an actor costs a
worker process (about a second of CPU: Python, Ray, the agent's imports), so the tests use few actors."""

import builtins
import os

import numpy as np
import pytest

from ckb.errors import CKBError, InvalidInputError
from ckb.multiagent.backends import InProcessBackend, make_backend

ray = pytest.importorskip("ray")

from ckb.multiagent.ray_backend import AgentError, RayBackend  # noqa: E402


class NoisyAgent:
    """A stand-in agent: private random stream, private state, a message in, a message out."""

    def __init__(self, index, seed, fail_in_init=False):
        if fail_in_init:
            raise ValueError(f"bad parameters for agent {index}")
        self.index = index
        self.rng = np.random.default_rng(seed)
        self.total = 0.0

    def step(self, price):
        draw = float(self.rng.normal())
        self.total += price * draw
        return (self.index, draw, self.total)

    def pid(self, _):
        return os.getpid()

    def fragile(self, _):
        if self.index in (1, 2):
            raise ZeroDivisionError(f"agent {self.index} divides by zero")
        return self.index


def kwargs(n):
    return [{"index": i, "seed": 100 + i} for i in range(n)]


def test_results_in_agent_order_equal_to_in_process_and_errors_name_the_agent(ray_local):
    n = 3
    local = InProcessBackend(NoisyAgent, kwargs(n))
    backend = make_backend("ray", NoisyAgent, kwargs(n))
    assert isinstance(backend, RayBackend) and backend.n_agents == n
    for r in range(3):
        prices = [0.5 * i + r for i in range(n)]
        got = backend.call("step", prices)
        assert [g[0] for g in got] == list(range(n))  # agent order
        assert got == local.call("step", prices)  # bit-identical: same draws, same private state
    pids = backend.call("pid", [None] * n)
    assert len(set(pids)) == n and os.getpid() not in pids  # one process per agent

    with pytest.raises(
        AgentError, match=r"agent 1 \(NoisyAgent\) failed in fragile\(\): ZeroDivisionError: agent 1 divides"
    ) as info:
        backend.call("fragile", [None] * n)  # agents 1 and 2 fail: the first is named
    assert info.value.agent == 1 and isinstance(info.value.cause, ZeroDivisionError)
    assert backend.call("step", [1.0] * n) == local.call("step", [1.0] * n)  # agents survive their errors
    with pytest.raises(InvalidInputError, match="no method 'stepp'"):
        backend.call("stepp", [None] * n)
    with pytest.raises(InvalidInputError, match="one argument per agent"):
        backend.call("step", [1.0] * (n - 1))

    backend.close()
    backend.close()  # idempotent
    with pytest.raises(CKBError, match="closed"):
        backend.call("step", [0.0] * n)
    assert ray_local.is_initialized()  # the backend did not start this session: it stays up

    bad = kwargs(2)
    bad[1]["fail_in_init"] = True
    with pytest.raises(
        AgentError, match=r"agent 1 \(NoisyAgent\) could not be built: ValueError: bad parameters"
    ):
        RayBackend(NoisyAgent, bad)


def test_reserved_cpus_are_checked_before_any_actor_starts(ray_local):
    with pytest.raises(
        CKBError, match=r"8 agents x num_cpus_per_agent=1 need 8 CPUs, but the Ray cluster has 2"
    ):
        RayBackend(NoisyAgent, kwargs(8), num_cpus_per_agent=1)
    with pytest.raises(InvalidInputError, match="num_cpus_per_agent must be a number > 0"):
        RayBackend(NoisyAgent, kwargs(2), num_cpus_per_agent=0)


def test_dmabo_with_8_agents_decides_the_same_on_ray_as_in_process(ray_local):
    from ckb.multiagent import MultiAgentTrial, MultiAgentTrialConfig

    cfg = MultiAgentTrialConfig(
        algorithm="dmabo",
        method="dmabo",
        problem="gp-samples",
        horizon=25,
        seed=7,
        problem_params={"n_agents": 8, "m": 1, "grid_size": 30},
    )
    with MultiAgentTrial(cfg) as trial:
        local = trial.run()
    with MultiAgentTrial(cfg, backend="ray") as trial:
        assert isinstance(trial.backend, RayBackend) and trial.backend.n_agents == 8
        remote = trial.run()
    assert local.index.shape == (25, 8)
    assert len(np.unique(local.index)) > 8  # the agents explore: a non-trivial sequence of decisions
    np.testing.assert_array_equal(remote.index, local.index)  # every agent's decision in every round
    np.testing.assert_array_equal(remote.f, local.f)
    np.testing.assert_array_equal(remote.g, local.g)
    assert remote.internals.keys() == local.internals.keys() == {"lam", "mu"}
    for k in local.internals:  # the coordinator's duals, bit for bit
        np.testing.assert_array_equal(remote.internals[k], local.internals[k], err_msg=k)


def test_missing_ray_gives_the_install_command(monkeypatch):
    real_import = builtins.__import__

    def no_ray(name, *args, **kw):
        if name == "ray" or name.startswith("ray."):
            raise ImportError("No module named 'ray'")
        return real_import(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(ImportError, match=r"pip install -e '\.\[ray\]' in your ckb checkout"):
        make_backend("ray", NoisyAgent, kwargs(2))
