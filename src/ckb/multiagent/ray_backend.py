"""Ray backend: each agent a Ray actor, the coordinator (this process) driving the rounds.

Agent ``i`` lives in its own Ray actor process, built there as ``agent_cls(**agent_kwargs[i])``; its
data, GPs and random generator never leave that process. ``call(method, args)`` sends
``agents[i].<method>(args[i])`` to all N actors at once (the agents compute concurrently, on as many
cores or machines as the cluster has), then collects the N results in agent order. Ray runs the calls of
one caller on one actor in submission order, and each agent owns all its randomness, so the decisions are
exactly those of :class:`~ckb.multiagent.backends.InProcessBackend` for the same kwargs (tested).

Where the actors run (see :mod:`ckb._parallel`): a private local Ray instance (``num_cpus`` CPUs,
default all cores), started by the backend and stopped by :meth:`RayBackend.close`; or an existing
cluster (``address=`` or ``RAY_ADDRESS``; ``"auto"`` for one started with ``ray start`` on this machine),
which close only disconnects from; or a Ray session already initialized in this process, used as is.
On a cluster, ckb (the same version) must be installed on every node, or shipped with ``runtime_env``;
``agent_cls`` must be importable there too (the DMABO agents are; a class defined in a script is sent by
value by Ray's cloudpickle).

Choices (nothing prescribes them):
- ``num_cpus_per_agent=None`` (default) uses Ray's actor default: a CPU is needed to place an actor but
  none is held while it runs, so N may exceed the number of cores (32 agents on a 2-core laptop) and the
  agents share the cores. A number (e.g. 1) reserves that many CPUs per agent; the backend checks that the
  cluster has N times that many before creating any actor, instead of hanging on an unschedulable actor.
- ``scheduling_strategy="SPREAD"``: agents spread over the cluster's nodes (one node: no effect).
- Each actor pins BLAS to one thread (agents' matrices are small; many agents share the cores).
- Actors are not restarted (``max_restarts=0``): a restarted agent would have lost its data, so its
  decisions would silently differ. An actor that dies, or an agent method that raises, surfaces as
  :class:`AgentError` naming the agent, the method and the original error (kept as ``__cause__``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ckb._parallel import RaySession, check_ray_options, explain_worker_error, pin_blas_threads
from ckb.errors import CKBError, InvalidInputError
from ckb.multiagent.backends import _check_agent_kwargs, _check_call


class AgentError(CKBError, RuntimeError):
    """An agent failed (its method raised, its constructor raised, or its actor process died).

    ``agent`` is the agent's index, ``method`` the method called (``"__init__"`` for construction),
    ``cause`` the original exception (also ``__cause__``)."""

    def __init__(self, message: str, *, agent: int, method: str, cause: BaseException | None) -> None:
        super().__init__(message)
        self.agent, self.method, self.cause = agent, method, cause


class _AgentHost:
    """The Ray actor: builds and holds one agent, runs its methods (module-level, so workers import it)."""

    def __init__(self, agent_cls: type, kwargs: dict) -> None:
        pin_blas_threads(1)
        self.agent, self.error = None, None
        try:
            self.agent = agent_cls(**kwargs)
        except Exception as exc:  # reported by ready() as a plain task error (an actor that died in its
            self.error = exc  # constructor would only say so in a long ActorDiedError)

    def ready(self) -> bool:
        if self.error is not None:
            raise self.error
        return True

    def call(self, method: str, arg: Any) -> Any:
        fn = getattr(self.agent, method, None)
        if fn is None or not callable(fn):
            raise InvalidInputError(f"{type(self.agent).__name__} has no method {method!r}.")
        return fn(arg)


def _cause(exc: BaseException) -> BaseException:
    """The agent's own exception inside a Ray error (a RayTaskError's ``cause``), else ``exc``."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, BaseException) else exc


def check_ray_backend_options(options: dict[str, Any]) -> None:
    """Check the options of :class:`RayBackend` (``backend_options`` of a spec's label, the keywords of
    ``make_backend("ray", ...)``) without starting Ray: known names (the closest suggested), then their
    values (:func:`ckb._parallel.check_ray_options`); a one-line :class:`InvalidInputError` naming the bad
    one."""
    from ckb._validation import check_params

    check_params(
        RayBackend.__init__, options, "the 'ray' backend", skip=("self", "agent_cls", "agent_kwargs")
    )
    check_ray_options(options)


class RayBackend:
    """N agents as N Ray actors (see the module docstring).

    Parameters
    ----------
    agent_cls, agent_kwargs:
        Agent ``i`` is ``agent_cls(**agent_kwargs[i])``, built inside its actor (kwargs must be picklable).
    address:
        Ray cluster address; default ``RAY_ADDRESS``, else a private local instance.
    num_cpus:
        CPUs of a local instance (default: all cores); ignored on a cluster.
    num_cpus_per_agent:
        CPUs reserved per actor; ``None`` (default): none held while running, agents share the cores.
    scheduling_strategy:
        Ray scheduling strategy of the actors (default ``"SPREAD"`` over the cluster's nodes).
    runtime_env:
        Ray runtime environment (e.g. to ship ckb to a cluster's workers).
    """

    name = "ray"

    def __init__(
        self,
        agent_cls: type,
        agent_kwargs: Sequence[dict],
        address: str | None = None,
        *,
        num_cpus: int | None = None,
        num_cpus_per_agent: float | None = None,
        scheduling_strategy: str = "SPREAD",
        runtime_env: dict[str, Any] | None = None,
    ) -> None:
        kwargs = _check_agent_kwargs(agent_cls, agent_kwargs)
        check_ray_options(
            {"num_cpus_per_agent": num_cpus_per_agent, "scheduling_strategy": scheduling_strategy}
        )
        self.agent_cls = agent_cls
        self.n_agents = len(kwargs)
        self._actors: list[Any] = []
        self._session = RaySession(
            address, num_cpus=num_cpus, runtime_env=runtime_env, what="The 'ray' multi-agent backend"
        )
        ray = self._ray = self._session.start()
        try:
            options: dict[str, Any] = {"max_restarts": 0, "scheduling_strategy": scheduling_strategy}
            if num_cpus_per_agent is not None:
                need = self.n_agents * num_cpus_per_agent
                have = ray.cluster_resources().get("CPU", 0.0)
                if need > have:
                    raise CKBError(
                        f"{self.n_agents} agents x num_cpus_per_agent={num_cpus_per_agent} need {need:g} "
                        f"CPUs, but the Ray cluster has {have:g}. Use a smaller num_cpus_per_agent, None "
                        "(agents share the cores), or a larger cluster / num_cpus."
                    )
                options["num_cpus"] = num_cpus_per_agent
            actor_cls = ray.remote(_AgentHost).options(**options)
            cls_ref = ray.put(agent_cls)
            self._actors = [actor_cls.remote(cls_ref, kw) for kw in kwargs]
            self._gather([a.ready.remote() for a in self._actors], "__init__")
        except BaseException:
            self.close()
            raise

    def _gather(self, refs: list[Any], method: str) -> list[Any]:
        ray = self._ray
        try:
            return ray.get(refs)
        except Exception:
            pass
        for i, ref in enumerate(refs):  # name the first failing agent in agent order
            try:
                ray.get(ref)
            except Exception as exc:
                explained = explain_worker_error(exc)
                cause = _cause(exc) if explained is exc else explained
                what = "could not be built" if method == "__init__" else f"failed in {method}()"
                raise AgentError(
                    f"agent {i} ({self.agent_cls.__name__}) {what}: {type(cause).__name__}: {cause}",
                    agent=i,
                    method=method,
                    cause=cause,
                ) from cause
        raise CKBError(f"call({method!r}) failed on the Ray backend, but no agent reports an error.")

    def call(self, method: str, args: Sequence[Any]) -> list[Any]:
        """``agents[i].<method>(args[i])`` on all agents concurrently; the results in agent order."""
        if not self._actors:
            raise CKBError("This RayBackend is closed.")
        args = _check_call(self.n_agents, method, args)
        if not callable(getattr(self.agent_cls, method, None)):
            raise InvalidInputError(f"agents ({self.agent_cls.__name__}) have no method {method!r}.")
        return self._gather([a.call.remote(method, arg) for a, arg in zip(self._actors, args)], method)

    def close(self) -> None:
        """Kill the actors; stop a local instance this backend started (a cluster keeps running)."""
        actors, self._actors = self._actors, []
        if actors and self._ray.is_initialized():
            for actor in actors:
                try:
                    self._ray.kill(actor, no_restart=True)
                except Exception:  # already dead
                    pass
        self._session.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
