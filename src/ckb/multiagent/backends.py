"""Execution backends: where the agents live and how the coordinator calls them.

The coordinator drives rounds; an *agent backend* owns the N agent objects and runs one method on all
of them per call. The contract (``AgentBackend``) is deliberately tiny so that a distributed backend
(``ray``: each agent a Ray actor, see ``ckb.multiagent.ray_backend``) and the in-process one give the
same decisions for the same seeds:

- agents are built **only** from picklable keyword dicts (plain numbers, lists, numpy arrays, strings,
  seeds as ints or ``SeedSequence`` spawn keys): agent ``i = agent_cls(**agent_kwargs[i])``;
- ``call(method, args)`` invokes ``agents[i].<method>(args[i])`` for every agent ``i``; ``args[i]`` is one
  message object (a frozen dataclass of ``ckb.multiagent.messages``) or ``None``; the results come back
  in agent order, one message per agent;
- all randomness lives in each agent's own ``numpy.random.Generator`` seeded from its kwargs, so the order
  (or concurrency) in which a backend runs the agents cannot change any decision.

``make_backend(name, agent_cls, agent_kwargs, **options)`` builds one by name: ``"inprocess"`` (the
default: plain objects called in order in this process; deterministic and fast) or ``"ray"`` (imported
lazily from ``ckb.multiagent.ray_backend``; ``options`` such as ``address=`` go to ``RayBackend``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from ckb._validation import did_you_mean
from ckb.errors import InvalidInputError, UnknownNameError


@runtime_checkable
class AgentBackend(Protocol):
    """What the coordinator needs from a backend (see the module docstring)."""

    n_agents: int

    def call(self, method: str, args: Sequence[Any]) -> list[Any]:
        """Invoke ``agents[i].<method>(args[i])`` for every agent ``i`` (``args[i]`` a message or None) and
        return the results in agent order. Concurrent across agents where the backend can."""
        ...

    def close(self) -> None: ...


def _check_agent_kwargs(agent_cls: type, agent_kwargs: Sequence[dict]) -> list[dict]:
    if not isinstance(agent_cls, type):
        raise InvalidInputError(f"agent_cls must be a class, got {agent_cls!r}.")
    kwargs = list(agent_kwargs)
    if not kwargs:
        raise InvalidInputError("agent_kwargs must hold one keyword dict per agent, got none.")
    for i, kw in enumerate(kwargs):
        if not isinstance(kw, dict):
            raise InvalidInputError(f"agent_kwargs[{i}] must be a dict, got {type(kw).__name__}.")
    return kwargs


def _check_call(n_agents: int, method: str, args: Sequence[Any]) -> list[Any]:
    if not isinstance(method, str) or method.startswith("_"):
        raise InvalidInputError(f"method must be the name of a public agent method, got {method!r}.")
    args = list(args)
    if len(args) != n_agents:
        raise InvalidInputError(
            f"call({method!r}) needs one argument per agent ({n_agents}), got {len(args)}."
        )
    return args


class InProcessBackend:
    """Agents are plain objects in this process, called one after the other in agent order."""

    name = "inprocess"

    def __init__(self, agent_cls: type, agent_kwargs: Sequence[dict]) -> None:
        kwargs = _check_agent_kwargs(agent_cls, agent_kwargs)
        self.agent_cls = agent_cls
        self.agents = [agent_cls(**kw) for kw in kwargs]
        self.n_agents = len(self.agents)

    def call(self, method: str, args: Sequence[Any]) -> list[Any]:
        args = _check_call(self.n_agents, method, args)
        out = []
        for i, (agent, arg) in enumerate(zip(self.agents, args)):
            fn = getattr(agent, method, None)
            if fn is None or not callable(fn):
                raise InvalidInputError(f"agent {i} ({type(agent).__name__}) has no method {method!r}.")
            out.append(fn(arg))
        return out

    def close(self) -> None:
        self.agents = []

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _ray_factory(agent_cls: type, agent_kwargs: Sequence[dict], **options: Any) -> AgentBackend:
    try:
        from ckb.multiagent.ray_backend import RayBackend, check_ray_backend_options
    except ImportError as exc:  # ray itself missing, or the backend module not installed
        raise ImportError(
            "The 'ray' backend needs Ray: install it with `pip install -e '.[ray]'` in your ckb checkout (or `pip install ray`)."
            f" ({exc})"
        ) from exc
    check_ray_backend_options(options)
    return RayBackend(agent_cls, agent_kwargs, **options)


def _inprocess_factory(agent_cls: type, agent_kwargs: Sequence[dict], **options: Any) -> AgentBackend:
    if options:
        raise InvalidInputError(f"the 'inprocess' backend takes no options, got {sorted(options)}.")
    return InProcessBackend(agent_cls, agent_kwargs)


BACKENDS: dict[str, Callable[..., AgentBackend]] = {"inprocess": _inprocess_factory, "ray": _ray_factory}


def make_backend(name: str, agent_cls: type, agent_kwargs: Sequence[dict], **options: Any) -> AgentBackend:
    """Build the backend ``name`` ("inprocess" or "ray") holding ``agent_cls(**agent_kwargs[i])``."""
    return BACKENDS[check_backend_name(name)](agent_cls, agent_kwargs, **options)


def check_backend_name(name: Any) -> str:
    """``name`` if it names a backend of :data:`BACKENDS`, else a one-line :class:`UnknownNameError`."""
    if not isinstance(name, str):
        raise UnknownNameError(
            f"the agents' backend must be a backend name ({', '.join(repr(b) for b in BACKENDS)}), got {name!r:.60} "
            f"({type(name).__name__})."
        )
    if name not in BACKENDS:
        raise UnknownNameError(f"unknown backend {name!r}.{did_you_mean(name, BACKENDS)}")
    return name
