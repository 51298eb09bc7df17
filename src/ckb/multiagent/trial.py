"""One multi-agent trial: a seeded run of a method on a problem instance, on a backend, checkpointable.

Seeds follow :mod:`ckb.runner.trial`: trial ``k`` of a run with seed ``s`` draws the instance from
``SeedSequence(s, spawn_key=(k, 0))``; agent ``i``'s system noise uses ``spawn_key=(k, 1, i)`` and its
decision randomness ``spawn_key=(k, 2, i)``. Every method of an experiment sees the same instances and
noise streams, and the backend (in-process or Ray) cannot change a decision.

**The two channels.** The trial drives the algorithm only through its coordinator
(:func:`~ckb.multiagent.coordinator.play_rounds`: algorithm messages). Separately, as the experimenter,
it reads each agent's :class:`~ckb.multiagent.environment.EnvironmentLog` (true values of the queried
points) to build the :class:`MultiAgentTrace` that metrics use, and the agents' ``state_dict`` for
checkpoints. Neither reaches the coordinator.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ckb._config import SeededConfig
from ckb._validation import check_finite_array, check_scalar, one_line, short_repr
from ckb.errors import DataFileError, InvalidInputError
from ckb.io import SavedState, checkpoint_part, read_checkpoint, save_state
from ckb.multiagent.backends import make_backend
from ckb.multiagent.coordinator import play_rounds
from ckb.multiagent.methods import build_setup
from ckb.multiagent.problems import make_multiagent_problem


@dataclass(frozen=True)
class MultiAgentTrialConfig(SeededConfig):
    """Everything that determines a multi-agent trial (``algorithm`` is the spec's label)."""

    algorithm: str
    method: str
    problem: str
    horizon: int
    trial: int = 0
    seed: int = 0
    method_params: dict[str, Any] = field(default_factory=dict)
    problem_params: dict[str, Any] = field(default_factory=dict)
    backend: str = "inprocess"
    backend_options: dict[str, Any] = field(default_factory=dict)

    #: the hash covers what determines the numbers: not the trial index, not where Ray runs
    _hash_exclude = ("trial", "backend_options")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.backend, str):
            raise InvalidInputError(
                f"MultiAgentTrialConfig.backend must be a backend name ('inprocess' or 'ray'), got "
                f"{short_repr(self.backend, 40)} ({type(self.backend).__name__})."
            )
        for name in ("method_params", "problem_params", "backend_options"):
            value = getattr(self, name)
            if not isinstance(value, Mapping):
                raise InvalidInputError(
                    f"MultiAgentTrialConfig.{name} must be a table (a dict of name -> value), got "
                    f"{value!r:.60} ({type(value).__name__})."
                )


#: what a :class:`MultiAgentTrace` is made of: its constructor's keywords, in the order it saves them
_TRACE_FIELDS = ("index", "x", "f", "g", "d", "seconds", "internals", "f_star", "horizon", "meta")


class MultiAgentTrace(SavedState):
    """Per-round record of a trial (true values; saved as a pickle-free ``.npz``).

    ``index`` (T, N) grid indices, ``x`` (T, n) stacked points, ``f`` (T, N) true :math:`f_i`,
    ``g`` (T, N, m) true :math:`g_i`, ``d`` (T, l) :math:`\\sum_i A_i x_i - b`, ``seconds`` (T,) wall time of
    each round (all agents' steps and the coordinator's update, on the trial's backend), ``internals``
    (coordinator quantities after each round's update, e.g. the duals), ``f_star`` and ``meta``.
    """

    def __init__(
        self, *, index, x, f, g, d, seconds, internals, f_star: float, horizon: int, meta: dict
    ) -> None:
        self.index = np.asarray(index, dtype=np.int64)
        self.x = np.asarray(x, dtype=float)
        self.f = np.asarray(f, dtype=float)
        self.g = np.asarray(g, dtype=float)
        self.d = np.asarray(d, dtype=float)
        self.seconds = np.asarray(seconds, dtype=float)
        self.internals = {k: np.asarray(v, dtype=float) for k, v in internals.items()}
        self.f_star = float(f_star)
        self.horizon = int(horizon)
        self.meta = dict(meta)

    @property
    def t(self) -> int:
        return self.f.shape[0]

    @property
    def F(self) -> np.ndarray:
        return self.f.sum(axis=1)

    @property
    def G(self) -> np.ndarray:
        return self.g.sum(axis=1)

    def curves(self) -> dict[str, np.ndarray]:
        from ckb.multiagent.metrics import curves

        if self.t == 0:
            raise InvalidInputError(
                "this trace has no rounds yet: run the trial before asking for its curves."
            )

        return curves(self.F, self.G, self.d, self.f_star)

    def state_dict(self) -> dict[str, Any]:
        """The constructor's keywords (:meth:`from_state` builds the trace from them)."""
        return {name: getattr(self, name) for name in _TRACE_FIELDS}

    @classmethod
    def check_finished(cls, s: dict[str, Any]) -> None:
        """Raise ``ValueError`` (saying what is wrong) unless ``s`` is the state of a finished trace: every
        field there, ``horizon`` rounds of each array (``f`` ``(T, N)``, ``g`` ``(T, N, m)``, ``index``
        ``(T, N)``, ``x`` ``(T, n)``, ``d`` ``(T, l)``, ``seconds`` ``(T,)``, the internals) and ``f``,
        ``g``, ``d`` finite. A sweep reuses only such a trace."""
        missing = [k for k in _TRACE_FIELDS if k not in s]
        if missing:
            raise ValueError(f"no {', '.join(missing)}")
        horizon = np.asarray(s["horizon"])
        if horizon.shape != () or not np.issubdtype(horizon.dtype, np.integer) or horizon < 1:
            raise ValueError(f"horizon = {short_repr(s['horizon'], 30)} is not a number of rounds")
        T = int(horizon)
        arrays = {k: np.asarray(s[k]) for k in ("index", "x", "f", "g", "d", "seconds")}
        arrays.update({f"internals.{k}": np.asarray(v) for k, v in dict(s["internals"]).items()})
        ndims = {"index": 2, "x": 2, "f": 2, "g": 3, "d": 2, "seconds": 1}
        for k, a in arrays.items():
            if a.ndim < 1 or a.shape[0] != T or (k in ndims and a.ndim != ndims[k]):
                raise ValueError(f"{k} has shape {a.shape}, expected {T} rounds ({ndims.get(k, 'any')}-D)")
        if arrays["g"].shape[:2] != arrays["f"].shape or arrays["index"].shape != arrays["f"].shape:
            raise ValueError(
                f"g {arrays['g'].shape} and index {arrays['index'].shape} do not match f {arrays['f'].shape}"
            )
        for k in ("f", "g", "d"):
            if not np.all(np.isfinite(arrays[k])):
                raise ValueError(f"{k} holds non-finite values")
        f_star = np.asarray(s["f_star"])
        if f_star.shape != () or not np.issubdtype(f_star.dtype, np.number) or not np.isfinite(f_star):
            raise ValueError(f"f_star = {short_repr(s['f_star'], 30)} is not a finite number")
        if not isinstance(s["meta"], dict) or not isinstance(s["internals"], dict):
            raise ValueError("meta and internals must be tables")

    @classmethod
    def from_state(cls, s: dict[str, Any]) -> MultiAgentTrace:
        return cls(**s)


class MultiAgentTrial:
    """A running trial; ``run()`` plays to the horizon. Close it (or use ``with``) to release the backend."""

    def __init__(
        self, config: MultiAgentTrialConfig, *, backend: str | None = None, **backend_options: Any
    ) -> None:
        if not isinstance(config, MultiAgentTrialConfig):
            raise InvalidInputError(
                f"MultiAgentTrial takes a MultiAgentTrialConfig, got {type(config).__name__}; build one with "
                "MultiAgentTrialConfig(**table)."
            )
        self.config = config
        T = config.horizon
        self.problem = make_multiagent_problem(config.problem, config.rng(0), **config.problem_params)
        _ = self.problem.optimum  # a problem without a feasible joint point fails here, before any round
        self.setup = build_setup(
            config.method, self.problem, config.method_params, T, config.seed, config.trial
        )
        self.coordinator = self.setup.coordinator
        opts = {**config.backend_options, **backend_options}
        self.backend = make_backend(
            backend or config.backend, self.setup.agent_cls, self.setup.agent_kwargs, **opts
        )
        self.n_agents = self.problem.n_agents
        self._seconds = np.zeros(T)
        self._internals: dict[str, np.ndarray] = {}
        self._closed = False
        self._interrupted: str | None = None  # why the agents are not all at the trial's round

    @property
    def t(self) -> int:
        return self.coordinator.t - 1

    @property
    def done(self) -> bool:
        return self.t >= self.config.horizon

    def _record(self, t: int, seconds: float, internals: dict[str, np.ndarray]) -> None:
        self._seconds[t - 1] = seconds
        for k, v in internals.items():
            v = np.asarray(v, dtype=float).reshape(-1)
            arr = self._internals.get(k)
            if arr is None:
                arr = self._internals[k] = np.full((self.config.horizon, v.shape[0]), np.nan)
            arr[t - 1] = v

    def _usable(self, what: str) -> None:
        """Refuse ``what`` on a closed trial or one whose last round was interrupted part-way."""
        name = f"trial {self.config.trial} of {self.config.algorithm!r}"
        if self._closed:
            raise InvalidInputError(
                f"cannot {what}: {name} is closed (its agents are gone); nothing was done."
            )
        if self._interrupted is not None:
            raise InvalidInputError(
                f"cannot {what}: a round of {name} was interrupted part-way ({self._interrupted}); nothing "
                "was done. Resume from the last checkpoint, or start the trial again."
            )

    def _round_mismatch(self, agent_states: list[dict[str, Any]] | None = None) -> str | None:
        """Why the agents are not all at the coordinator's round (a round interrupted between the agents'
        steps and its record: Ctrl-C or an error in one agent's step), or None."""
        states = (
            agent_states
            if agent_states is not None
            else self.backend.call("state_dict", [None] * self.n_agents)
        )
        rounds = [s["t"] for s in states]
        if any(r != self.t for r in rounds) or len(rounds) != self.n_agents:
            return f"the agents at rounds {rounds}, the coordinator at {self.t}"
        return None

    def run(self, until: int | None = None, callback=None) -> MultiAgentTrace:
        """Play rounds up to ``until`` (default: the horizon); ``callback(t)`` after each round."""
        self._usable("run")
        if until is not None:
            until = check_scalar(until, "until (the last round to play)", low=0, integer=True)
        if callback is not None and not callable(callback):
            raise InvalidInputError(
                f"callback must be a function of the round t, got {short_repr(callback, 40)}."
            )
        stop = self.config.horizon if until is None else min(int(until), self.config.horizon)

        def on_round(t, seconds, internals):
            self._record(t, seconds, internals)
            if callback is not None:
                callback(t)

        try:
            play_rounds(self.backend, self.coordinator, max(stop - self.t, 0), on_round)
        except BaseException:
            try:
                self._interrupted = self._round_mismatch()
            except Exception:  # the backend itself failed: nothing can be said of its agents
                self._interrupted = "the agents' backend failed"
            raise
        return self.trace()

    # ----------------------------------------------------- environment side
    def trace(self) -> MultiAgentTrace:
        """Assemble the trace from the agents' environment logs (the harness channel)."""
        self._usable("assemble the trace")
        logs = self.backend.call("environment_log", [None] * self.n_agents)
        t = self.t
        p = self.problem
        index = (
            np.stack([lg.index[:t] for lg in logs], axis=1)
            if t
            else np.zeros((0, self.n_agents), dtype=np.int64)
        )
        x = (
            np.concatenate([lg.x[:t] for lg in logs], axis=1)
            if t
            else np.zeros((0, sum(X.shape[1] for X in p.grids)))
        )
        f = np.stack([lg.f[:t] for lg in logs], axis=1) if t else np.zeros((0, self.n_agents))
        g = np.stack([lg.g[:t] for lg in logs], axis=1) if t else np.zeros((0, self.n_agents, p.m))
        ax = p.ax_tables
        d = sum(ax[i][index[:, i]] for i in range(self.n_agents)) - p.b if t else np.zeros((0, p.l))
        meta = {
            "config": self.config.to_dict(),
            "config_hash": self.config.config_hash(),
            "problem": p.describe(),
            "method": self.setup.record,
        }
        return MultiAgentTrace(
            index=index,
            x=x,
            f=f,
            g=g.reshape(t, self.n_agents, p.m),
            d=np.asarray(d).reshape(t, p.l),
            seconds=self._seconds[:t].copy(),
            internals={k: v[:t].copy() for k, v in self._internals.items()},
            f_star=p.f_star,
            horizon=self.config.horizon,
            meta=meta,
        )

    # ------------------------------------------------------------ checkpoint
    def state_dict(self) -> dict[str, Any]:
        self._usable("save its state")
        agents = self.backend.call("state_dict", [None] * self.n_agents)
        why = self._round_mismatch(agents)
        if why is not None:
            self._interrupted = why
            self._usable("save its state")
        return {
            "config": self.config.to_dict(),
            "config_hash": self.config.config_hash(),
            "coordinator": self.coordinator.state_dict(),
            "agents": agents,
            "seconds": self._seconds[: self.t].copy(),
            "internals": {k: v[: self.t].copy() for k, v in self._internals.items()},
        }

    def save_checkpoint(self, path: str | Path) -> None:
        """Save the trial at ``path`` (:meth:`resume` continues it bit for bit). A closed trial, or one whose
        last round was interrupted part-way (its agents at different rounds), is refused: nothing is
        written, so an earlier checkpoint at ``path`` is kept."""
        state = self.state_dict()
        try:
            save_state(path, state)
        except OSError as exc:
            raise InvalidInputError(
                f"cannot write checkpoint {str(path)!r} ({exc.strerror or one_line(exc)}); nothing was saved."
            ) from None

    @classmethod
    def resume(
        cls, path: str | Path, *, backend: str | None = None, **backend_options: Any
    ) -> MultiAgentTrial:
        """Rebuild a trial from a checkpoint (on any backend); continuing gives the uninterrupted run.

        A missing, unreadable or inconsistent checkpoint (another configuration, agents' states in another
        order or of other rounds, a GP state missing) gives a one-line error naming the file."""
        path = Path(path)
        state = read_checkpoint(path, ())
        keys = ("config", "coordinator", "agents", "seconds", "internals")
        if not isinstance(state, dict) or not set(keys) <= set(state):
            raise DataFileError(
                f"{str(path)!r} is not a multi-agent checkpoint (MultiAgentTrial.save_checkpoint writes one: "
                f"{', '.join(keys)})."
            )

        def part(what: str, fn):
            return checkpoint_part(path, what, fn)

        config = part("'config'", lambda: MultiAgentTrialConfig(**state["config"]))
        saved_hash = state.get("config_hash", config.config_hash())  # older checkpoints have none
        if saved_hash != config.config_hash():
            raise InvalidInputError(
                f"checkpoint {str(path)!r}: its config was changed after it was saved (hash {saved_hash} "
                f"against {config.config_hash()}); resume it as it was saved."
            )
        trial = part("'config'", lambda: cls(config, backend=backend, **backend_options))
        try:
            agents = state["agents"]
            if not isinstance(agents, list) or len(agents) != trial.n_agents:
                got = len(agents) if isinstance(agents, list) else short_repr(agents, 30)
                raise InvalidInputError(
                    f"checkpoint {str(path)!r} holds {got} agent state(s), expected {trial.n_agents}."
                )
            part("'coordinator'", lambda: trial.coordinator.load_state_dict(state["coordinator"]))
            part("'agents'", lambda: trial.backend.call("load_state_dict", agents))
            why = trial._round_mismatch()
            if why is not None:
                raise InvalidInputError(f"checkpoint {str(path)!r} is inconsistent: {why}.")
            part("'seconds' or 'internals'", lambda: trial._load_records(state))
        except BaseException:
            trial.close()
            raise
        return trial

    def _load_records(self, state: dict[str, Any]) -> None:
        """The per-round wall times and coordinator internals of a checkpoint, one row per round played."""
        t = self.t
        seconds = check_finite_array(state["seconds"], "seconds")
        if seconds.shape != (t,):
            raise InvalidInputError(
                f"seconds has shape {seconds.shape}, expected ({t},) (one per round played)"
            )
        self._seconds[:t] = seconds
        for k, v in dict(state["internals"]).items():
            v = np.asarray(v, dtype=float)
            if v.ndim < 1 or v.shape[0] != t:
                raise InvalidInputError(f"internals[{k!r}] has shape {v.shape}, expected {t} rows")
            v = v.reshape(t, -1)
            self._internals[k] = np.full((self.config.horizon, v.shape[1]), np.nan)
            self._internals[k][:t] = v

    def close(self) -> None:
        self.backend.close()
        self._closed = True

    def __enter__(self) -> MultiAgentTrial:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
