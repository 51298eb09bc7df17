import builtins

import numpy as np
import pytest

from ckb.errors import InvalidInputError, UnknownNameError
from ckb.multiagent.backends import AgentBackend, InProcessBackend, make_backend


class Echo:
    def __init__(self, index, seed):
        self.index = index
        self.rng = np.random.default_rng(seed)

    def step(self, x):
        return (self.index, x, float(self.rng.random()))


def test_inprocess_calls_every_agent_with_its_argument_in_order():
    b = make_backend("inprocess", Echo, [{"index": i, "seed": i} for i in range(4)])
    assert isinstance(b, AgentBackend) and b.n_agents == 4
    out = b.call("step", ["a", "b", "c", None])
    assert [o[:2] for o in out] == [(0, "a"), (1, "b"), (2, "c"), (3, None)]
    assert out[2][2] == np.random.default_rng(2).random()
    b.close()


def test_inprocess_errors_name_the_problem():
    b = InProcessBackend(Echo, [{"index": 0, "seed": 0}])
    with pytest.raises(InvalidInputError, match="one argument per agent"):
        b.call("step", [1, 2])
    with pytest.raises(InvalidInputError, match="no method 'nope'"):
        b.call("nope", [None])
    with pytest.raises(InvalidInputError, match="public agent method"):
        b.call("_private", [None])
    with pytest.raises(InvalidInputError, match="one keyword dict per agent"):
        InProcessBackend(Echo, [])
    with pytest.raises(UnknownNameError, match="inprocess"):
        make_backend("in-process", Echo, [{"index": 0, "seed": 0}])
    with pytest.raises(InvalidInputError, match="takes no options"):
        make_backend("inprocess", Echo, [{"index": 0, "seed": 0}], address="auto")


def test_ray_without_ray_says_how_to_install(monkeypatch):
    real_import = builtins.__import__

    def no_ray(name, *args, **kw):
        if name == "ray" or name.startswith("ray.") or name == "ckb.multiagent.ray_backend":
            raise ImportError("No module named 'ray'")
        return real_import(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(ImportError, match=r"pip install -e '\.\[ray\]'` in your ckb checkout"):
        make_backend("ray", Echo, [{"index": 0, "seed": 0}])
