"""One trial: a seeded run of a policy on a problem instance for a horizon T, checkpointable.

Seeds are derived deterministically from ``(seed, trial)`` with numpy's ``SeedSequence``: stream 0
draws the problem instance, stream 1 the environment's noise, stream 2 the policy's randomness. They
do not depend on the algorithm, so every algorithm of an experiment sees the same instances and the
same noise stream (common random numbers), and the same command always gives the same numbers.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ckb._config import SeededConfig
from ckb._validation import did_you_mean, one_line, short_repr
from ckb.errors import CKBError, InvalidInputError
from ckb.io import checkpoint_part, read_checkpoint, save_state
from ckb.kernels import Kernel
from ckb.policies import make_policy
from ckb.problems import make_problem
from ckb.runner.environment import ENVIRONMENTS
from ckb.runner.trace import Trace


@dataclass(frozen=True)
class TrialConfig(SeededConfig):
    """Everything that determines a trial. ``algorithm`` is the label (several labels may share a policy)."""

    algorithm: str
    policy: str
    problem: str
    horizon: int
    trial: int = 0
    seed: int = 0
    policy_params: dict[str, Any] = field(default_factory=dict)
    problem_params: dict[str, Any] = field(default_factory=dict)
    environment: str = "basic"
    environment_params: dict[str, Any] = field(default_factory=dict)
    #: content digests of the input files the problem reads (file name -> SHA-256), part of the hash:
    #: a changed data file is a different configuration (:func:`ckb.problems.data.problem_inputs`)
    inputs: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("algorithm", "policy", "problem", "environment"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise InvalidInputError(f"TrialConfig.{name} must be a string (a name), got {value!r}.")
        for name in ("policy_params", "problem_params", "environment_params", "inputs"):
            value = getattr(self, name)
            if not isinstance(value, Mapping):
                raise InvalidInputError(
                    f"TrialConfig.{name} must be a table (a dict of name -> value), got {short_repr(value, 60)} "
                    f"({type(value).__name__})."
                )
            bad = [k for k in value if not isinstance(k, str)]
            if bad:
                raise InvalidInputError(f"TrialConfig.{name}: keys must be strings (names), got {bad[0]!r}.")
        for key in ("kernel", "kernel_g"):
            kernel = self.policy_params.get(key)
            if kernel is not None and not isinstance(kernel, Mapping | Kernel):
                raise InvalidInputError(
                    f'TrialConfig.policy_params[{key!r}] must be a table such as {{type = "se", '
                    f"lengthscale = 0.2}} or a ckb.kernels.Kernel, got {short_repr(kernel, 60)}."
                )
            table = _as_table(kernel) if isinstance(kernel, Kernel) else None
            if table is not None:  # saved and hashed as its table
                object.__setattr__(self, "policy_params", {**self.policy_params, key: table})
        if self.environment in ENVIRONMENTS:  # an unknown name is an UnknownNameError from Trial
            from ckb.policies import init_parameters

            known = [k for k in init_parameters(ENVIRONMENTS.get(self.environment)) if k != "problem"]
            for key in self.environment_params:
                if key not in known:
                    raise InvalidInputError(
                        f"environment {self.environment!r} has no parameter {key!r}; it takes "
                        f"{', '.join(known) or 'no parameters'}.{did_you_mean(key, known)}"
                    )

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        if not d["inputs"]:  # a trial without input files keeps the hash it had before inputs existed
            d.pop("inputs")
        return d


class Trial:
    """A running trial. ``run()`` plays to the horizon; ``save_checkpoint`` / ``resume`` persist it exactly."""

    def __init__(self, config: TrialConfig) -> None:
        self.config = config
        if config.inputs:
            from ckb.problems.data import check_inputs

            check_inputs(config.problem, config.problem_params, config.inputs)
        self.problem = make_problem(config.problem, config.rng(0), **config.problem_params)
        env_cls = ENVIRONMENTS.get(config.environment)
        self.env = env_cls(self.problem, config.rng(1), **config.environment_params)
        params = dict(config.policy_params)
        horizon = params.pop("horizon", config.horizon)  # a spec may set a policy's own horizon
        self.policy = make_policy(
            config.policy, self.problem.info(), config.rng(2), horizon=horizon, **params
        )
        self.env.check_policy(self.policy)  # before the run, not at the first feedback it cannot take
        d = self.problem.domain.d
        self.trace = Trace(
            config.horizon,
            d,
            self.problem.m,
            self.problem.utility_star,
            self.problem.sign,
            meta={
                "config": config.to_dict(),
                "config_hash": config.config_hash(),
                "problem": self.problem.describe(),
            },
            utility_star_plus=self.problem.utility_star_randomized,
        )

    @property
    def t(self) -> int:
        return self.trace.t

    @property
    def done(self) -> bool:
        return self.trace.t >= self.config.horizon

    def step(self) -> None:
        env, policy = self.env, self.policy
        context = env.reveal()
        t0 = time.perf_counter()
        action = policy.ask(context)
        t1 = time.perf_counter()
        outcome = env.step(action)
        t2 = time.perf_counter()
        for obs in env.deliver(outcome):
            policy.tell(obs)
        t3 = time.perf_counter()
        self.trace.record(outcome, (t1 - t0) + (t3 - t2), policy.internals())

    def run(self, until: int | None = None, callback=None) -> Trace:
        """Play rounds up to ``until`` (default: the horizon); ``callback(t)`` after each round."""
        stop = self.config.horizon if until is None else min(int(until), self.config.horizon)
        step = self.step
        while self.trace.t < stop:
            step()
            if callback is not None:
                callback(self.trace.t)
        return self.trace

    def state_dict(self) -> dict[str, Any]:
        return {
            "config": self.config.to_dict(),
            "policy": self.policy.state_dict(),
            "env": self.env.state_dict(),
            "trace": self.trace.state_dict(),
        }

    def _round_mismatch(self) -> str | None:
        """Why the trace, the environment and the policy are not at the same round (a round interrupted
        between its ask and its record: Ctrl-C or an error inside :meth:`step`), or None."""
        counts = {"trace": self.trace.t, "environment": self.env.t, "policy": self.policy.t}
        if len(set(counts.values())) > 1:
            return ", ".join(f"the {k} at round {v}" for k, v in counts.items())
        return None

    def save_checkpoint(self, path: str | Path) -> None:
        """Save the trial's state at ``path`` (:meth:`resume` continues it bit for bit). A trial whose last
        round was interrupted (its trace, environment and policy at different rounds) is refused: resumed,
        it would not continue the run it came from."""
        why = self._round_mismatch()
        if why is not None:
            raise InvalidInputError(
                f"cannot checkpoint trial {self.config.trial} of {self.config.algorithm!r}: a round was "
                f"interrupted ({why}); nothing was saved. Save checkpoints between rounds (after run() or "
                "step() returns), or start the trial again."
            )
        try:
            save_state(path, self.state_dict())
        except TypeError as exc:  # an object the file cannot hold (a PrecomputedKernel in policy_params)
            raise InvalidInputError(
                f"cannot checkpoint trial {self.config.trial} of {self.config.algorithm!r}: {one_line(exc)} "
                "(give kernels as tables such as {type = 'se', lengthscale = 0.2}); nothing was saved."
            ) from None

    @classmethod
    def resume(cls, path: str | Path) -> Trial:
        """Rebuild a trial from a checkpoint; continuing it gives exactly the uninterrupted run.

        A missing, unreadable or inconsistent checkpoint gives a one-line error naming the file."""
        path = Path(path)
        state = read_checkpoint(path, ("config", "policy", "env", "trace"))

        def part(what: str, fn):
            return checkpoint_part(path, what, fn)

        config = part("'config'", lambda: TrialConfig(**state["config"]))
        trial = part("'config'", lambda: cls(config))
        trace = part("'trace'", lambda: Trace.from_state(state["trace"]))
        if trace.horizon != config.horizon or trace.t > config.horizon:
            raise InvalidInputError(
                f"checkpoint {str(path)!r}: the trace has {trace.t} round(s) of horizon {trace.horizon}, "
                f"but the config's horizon is {config.horizon}."
            )
        _check_trace(path, state["trace"], trace, trial.trace)
        part("'policy'", lambda: trial.policy.load_state_dict(state["policy"]))
        part("'env'", lambda: trial.env.load_state_dict(state["env"]))
        trial.trace = trace
        why = trial._round_mismatch()
        if why is not None:
            raise InvalidInputError(f"checkpoint {str(path)!r} is inconsistent: {why}.")
        return trial


def _check_trace(path: Path, saved: dict[str, Any], trace: Trace, fresh: Trace) -> None:
    """The checkpoint's trace (``saved``, read as ``trace``) must be the configuration's (its
    ``config_hash``, and the settings the rebuilt problem gives: ``d``, ``m``, sense, optimum) and a
    consistent record (:meth:`Trace.check_recorded`: shapes, finite values); else a one-line error."""
    where = f"checkpoint {str(path)!r}"
    if trace.meta.get("config_hash") != fresh.meta["config_hash"]:
        raise InvalidInputError(
            f"{where}: its trace records configuration {trace.meta.get('config_hash')!r}, not the checkpoint's "
            f"config ({fresh.meta['config_hash']}): the parts come from different runs."
        )
    for key in ("d", "m", "sign", "utility_star", "utility_star_plus"):
        mine, theirs = getattr(trace, key), getattr(fresh, key)
        if mine != theirs and not (
            mine is not None and theirs is not None and np.isnan(mine) and np.isnan(theirs)
        ):
            raise InvalidInputError(
                f"{where}: its trace has {key} = {mine!r}, but the config's problem gives {theirs!r}."
            )
    try:
        Trace.check_recorded(saved)
    except ValueError as exc:
        raise InvalidInputError(f"{where}: its trace's {exc}.") from None


def _as_table(kernel: Kernel) -> dict[str, Any] | None:
    """``kernel``'s table (``to_dict``) when :func:`ckb.kernels.make_kernel` rebuilds the same kernel from
    it (the stationary kernels), else None (a precomputed matrix is not in its table)."""
    from ckb.kernels import make_kernel

    table = kernel.to_dict()
    try:
        return table if make_kernel(table).to_dict() == table else None
    except CKBError:
        return None
