r"""The base of every agent: its grid, its affine block, its local system and model, its own RNG.

An agent is built only from picklable keyword arguments (numbers, lists, numpy arrays, strings, seeds
as ``[entropy, *spawn_key]``), so the same class runs in-process or as a Ray actor on any machine
(:mod:`ckb.multiagent.backends`):

``agent``
    its index ``i``;
``grid``
    ``(G, n_i)`` points of :math:`\mathcal X^i` (Xu et al. (2023), App. D: the primal step is a grid search);
``A``
    ``(l, n_i)`` its block :math:`A_i` of the known affine constraints (``l = 0``: none);
``m``
    the number of coupled black-box constraints;
``system``
    the environment side (:class:`~ckb.multiagent.environment.LocalSystem` kwargs: true tables ``f``,
    ``g``, noise levels, noise seed);
``model``
    the surrogate (:class:`~ckb.multiagent.models.LocalModel` kwargs);
``seed``
    the agent's own decision randomness (tie-breaking, initial points);
``horizon``
    ``T``.

Public methods an algorithm's coordinator may call take one message and return one message (declared
in the subclass's ``protocol``: ``{method: (message in, message out)}``). The remaining public methods
are the harness's channel, never an algorithm's: ``environment_log`` (ground truth for metrics),
``state_dict`` / ``load_state_dict`` (checkpoints) and ``observations`` (tests).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ckb._validation import (
    check_choice,
    check_finite_array,
    check_params,
    check_scalar,
    is_count,
    load_or_restore,
    short_repr,
)
from ckb.errors import InvalidInputError
from ckb.exploration import argmax_random_tie
from ckb.multiagent.environment import EnvironmentLog, LocalSystem, rng_state, seed_sequence, set_rng_state
from ckb.multiagent.models import LocalModel

#: agent methods that belong to the run harness (instrumentation, persistence), not to any algorithm
HARNESS_METHODS = ("environment_log", "state_dict", "load_state_dict", "observations")

_TIE_BREAKS = ("random", "first")


def _check_part(value: Any, name: str, init, agent: int, skip: tuple[str, ...]) -> None:
    """An agent's ``system`` or ``model`` table: a dict of the keyword parameters ``init`` takes."""
    if not isinstance(value, dict):
        raise InvalidInputError(
            f"agent {agent}: {name} must be a dict of keyword parameters, got {short_repr(value, 60)}."
        )
    check_params(init, value, f"agent {agent}'s {name}", skip=skip)


class GridAgent:
    """Common state and helpers of the agents of every multi-agent algorithm."""

    #: ``{method: (input message type or None, output message type)}`` the coordinator may call
    protocol: ClassVar[dict[str, tuple[type | None, type]]] = {}

    def __init__(
        self,
        *,
        agent: int,
        grid: Any,
        m: int,
        system: dict,
        model: dict,
        A: Any = None,
        seed: Any = 0,
        horizon: int = 1,
        tie_break: str = "random",
    ) -> None:
        self.agent = int(check_scalar(agent, "agent", low=0, integer=True))
        grid = check_finite_array(grid, f"agent {agent} grid")
        if grid.ndim == 1:
            grid = grid[:, None]
        if grid.ndim != 2 or grid.shape[0] < 1:
            raise InvalidInputError(f"agent {agent}: grid must be (G, n_i) points, got shape {grid.shape}.")
        self.grid = grid
        G, n_i = grid.shape
        self.m = int(check_scalar(m, "m", low=0, integer=True))
        self.horizon = int(check_scalar(horizon, "horizon (T)", low=1, integer=True))
        if A is None:
            A = np.zeros((0, n_i))
        A = check_finite_array(A, f"agent {agent} A_i", ndim=2)
        if A.shape[1] != n_i:
            raise InvalidInputError(f"agent {agent}: A_i must have n_i = {n_i} columns, got shape {A.shape}.")
        self.A = A
        self.l = A.shape[0]
        self.ax_grid = grid @ A.T  # (G, l): A_i x for every grid point
        self.tie_break = check_choice(tie_break, "tie_break", _TIE_BREAKS)
        self.rng = np.random.default_rng(seed_sequence(seed))
        _check_part(system, "system", LocalSystem.__init__, agent, ("self", "agent", "grid", "horizon"))
        _check_part(model, "model", LocalModel.__init__, agent, ("self", "grid", "m", "horizon"))
        self.system = LocalSystem(self.agent, grid, horizon=self.horizon, **system)
        if self.system.m != self.m:
            raise InvalidInputError(
                f"agent {agent}: system has {self.system.m} constraints, expected m = {self.m}."
            )
        self.model = LocalModel(grid, self.m, horizon=self.horizon, **model)
        self.t = 0  # rounds played

    # ---------------------------------------------------------------- helpers
    def _argmin(self, score: np.ndarray) -> int:
        if np.isnan(score).any():
            raise InvalidInputError(f"agent {self.agent}: the acquisition has NaN values.")
        if self.tie_break == "first":
            return int(np.argmin(score))
        return argmax_random_tie(-score, self.rng)

    def _argmax(self, score: np.ndarray) -> int:
        return self._argmin(-score)

    def _check_round(self, msg: Any, kind: type) -> int:
        if not isinstance(msg, kind):
            raise InvalidInputError(
                f"agent {self.agent} expected a {kind.__name__}, got {type(msg).__name__}."
            )
        if msg.round != self.t + 1:
            raise InvalidInputError(
                f"agent {self.agent} is at round {self.t + 1} but received a message for round {msg.round}."
            )
        return msg.round

    def _evaluate(self, k: int) -> tuple[float, np.ndarray]:
        """Query the local system at grid index ``k`` (line 4) and condition the model on it (line 5)."""
        y_f, y_g = self.system.evaluate(k)
        self.model.update(k, y_f, y_g)
        return y_f, y_g

    # ------------------------------------------------------- harness channel
    def environment_log(self, _: None = None) -> EnvironmentLog:
        """Ground truth of the queried points (for metrics; the harness's channel, not a message)."""
        return self.system.log()

    def observations(self, _: None = None) -> np.ndarray:
        """``(t, m+1)`` noisy readings held by the model (tests check none of them is ever sent)."""
        return self.model.observations()

    def _extra_state(self) -> dict[str, Any]:
        return {}

    def _load_extra_state(self, state: dict[str, Any]) -> None:
        pass

    def state_dict(self, _: None = None) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "t": self.t,
            "rng": rng_state(self.rng),
            "system": self.system.state_dict(),
            "model": self.model.state_dict(),
            "extra": self._extra_state(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict` of this agent. It is checked first (this agent's, one GP state per
        function, the rounds of the agent, its system and its model in step); a state that does not load
        leaves the agent as it was, and the error is one line."""
        self._check_state(state)
        load_or_restore(
            self._apply_state, state, self.state_dict(), f"agent {self.agent}: cannot load this state"
        )

    def _check_state(self, state: Any) -> None:
        who = f"agent {self.agent} state"
        keys = ("t", "rng", "system", "model")
        if not isinstance(state, dict) or any(k not in state for k in keys):
            raise InvalidInputError(
                f"{who}: expected a dict with the keys {list(keys)}, got {short_repr(state, 60)}."
            )
        if state.get("agent", self.agent) != self.agent:  # states saved before the key existed have none
            raise InvalidInputError(
                f"{who}: it is the state of agent {short_repr(state['agent'], 20)} (agents in another order?)."
            )
        t = state["t"]
        if not is_count(t):
            raise InvalidInputError(f"{who}: t = {short_repr(t, 20)} must be a round >= 0.")
        model, system = state["model"], state["system"]
        gps = model.get("gps") if isinstance(model, dict) else None
        want = len(self.model.gps)
        if not isinstance(gps, list) or len(gps) != want:
            got = len(gps) if isinstance(gps, list) else short_repr(gps, 20)
            raise InvalidInputError(
                f"{who}: the model holds {got} GP state(s), expected {want} (f and m = {self.m})."
            )
        rounds = {"model": model.get("t"), "system": system.get("t") if isinstance(system, dict) else None}
        if rounds["model"] != rounds["system"]:
            raise InvalidInputError(
                f"{who}: the model has {rounds['model']!r} observation(s) but the system {rounds['system']!r} "
                "evaluation(s)."
            )

    def _apply_state(self, state: dict[str, Any]) -> None:
        self.t = int(state["t"])
        set_rng_state(self.rng, state["rng"])
        self.system.load_state_dict(state["system"])
        self.model.load_state_dict(state["model"])
        self._load_extra_state(state.get("extra", {}))
