r"""The coordinator side and the round driver shared by every multi-agent algorithm.

A :class:`Coordinator` owns the global state of an algorithm (DMABO: the scaled duals
:math:`\lambda, \mu`; DCEI: the sums and the incumbent; the penalty heuristic: the ADMM variables). One
round is

1. ``outgoing()``: the message for each agent of round ``t`` from the coordinator's state;
2. ``backend.call(coordinator.agent_method, messages)``: every agent runs its local step (decide,
   evaluate its own system, update its own model) and answers with one message;
3. ``update(replies)``: the coordinator's global step; ``t`` advances.

The driver (:func:`play_rounds`) only moves messages between the two; it never sees an agent's data.
Because the outgoing messages are a function of the coordinator's state, a checkpoint needs only the
coordinator's ``state_dict`` and the agents' (no message in flight).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ckb._validation import check_scalar
from ckb.errors import InvalidInputError


class Coordinator:
    """Base class: subclasses set ``agent_method`` and ``reply_type`` and implement the three steps."""

    agent_method = "step"
    reply_type: type = object

    def __init__(self, n_agents: int) -> None:
        self.n_agents = int(check_scalar(n_agents, "n_agents", low=1, integer=True))
        self.t = 1  # the round whose messages ``outgoing`` builds

    def outgoing(self) -> list[Any]:  # pragma: no cover - interface
        raise NotImplementedError

    def update(self, replies: list[Any]) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def internals(self) -> dict[str, np.ndarray]:
        """Global quantities after the last update (recorded per round by the harness)."""
        return {}

    def state_dict(self) -> dict[str, Any]:  # pragma: no cover - interface
        raise NotImplementedError

    def load_state_dict(self, state: dict[str, Any]) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def _check_replies(self, replies: list[Any]) -> None:
        if len(replies) != self.n_agents:
            raise InvalidInputError(f"expected {self.n_agents} replies, got {len(replies)}.")
        for i, r in enumerate(replies):
            if not isinstance(r, self.reply_type):
                raise InvalidInputError(
                    f"agent {i} replied with a {type(r).__name__}, expected a {self.reply_type.__name__}."
                )
            if r.agent != i or r.round != self.t:
                raise InvalidInputError(
                    f"reply {i} is from agent {r.agent} for round {r.round}; expected agent {i}, round {self.t}."
                )


def play_rounds(
    backend: Any,
    coordinator: Coordinator,
    rounds: int,
    on_round: Callable[[int, float, dict[str, np.ndarray]], None] | None = None,
) -> None:
    """Play ``rounds`` rounds; ``on_round(t, seconds, internals)`` after each (wall time of the round)."""
    for _ in range(int(rounds)):
        t = coordinator.t
        start = time.perf_counter()
        replies = backend.call(coordinator.agent_method, coordinator.outgoing())
        coordinator.update(replies)
        seconds = time.perf_counter() - start
        if on_round is not None:
            on_round(t, seconds, coordinator.internals())
