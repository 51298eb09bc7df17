"""The environment: plays actions on a problem with its own random stream, and delivers observations.

Per round the runner calls :meth:`Environment.reveal` (information shown before acting; ``None`` here),
the policy's ``ask``, :meth:`Environment.step` (truth and noisy observation of the played point), and
:meth:`Environment.deliver` (the observations that reach the policy this round, in the maximization
sense). The three methods are the seams later capabilities override in subclasses of their own:

- full-information constraint samples (SCGP-UCB of the CBO paper): ``reveal`` returns the random ``g_t``;
- delayed feedback (Guo, Zhu & Liu (2023), Sec. 5): ``deliver`` holds observations back until their
  arrival round;
- piecewise non-stationary functions (Guo, Zhu & Liu (2023), Sec. 6): ``step`` evaluates the current
  phase's functions;
- several agents (Xu et al. (2023)): an environment per agent behind a coordinator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ckb._validation import is_count, load_or_restore, short_repr
from ckb.contract.observation import Observation
from ckb.errors import InvalidInputError
from ckb.problems.problem import Problem
from ckb.registry import Registry


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happened in one round: the truth (for metrics) and the noisy observation (problem sense)."""

    t: int
    index: int
    x: np.ndarray
    f: float
    g: np.ndarray
    y: float
    c: np.ndarray
    #: the best feasible utility of *this round's* functions (non-stationary problems; NaN: the problem's)
    u_star: float = float("nan")


class Environment:
    def __init__(self, problem: Problem, rng: np.random.Generator) -> None:
        need = getattr(problem, "needs_environment", None)
        if need is not None and not isinstance(self, ENVIRONMENTS.get(need)):
            raise InvalidInputError(
                f"problem {problem.name!r} needs environment {need!r}, got {_registered_name(type(self))!r}: "
                f"{problem.needs_environment_because}."
            )
        self.problem = problem
        self.rng = rng
        self.t = 0

    def reveal(self) -> Any:
        """Information revealed before the next round (none in the basic setting)."""
        return None

    def step(self, action: Any) -> Outcome:
        """Play ``action`` (validated against the domain) in round ``t + 1``."""
        index, x = self.problem.domain.check_action(action)
        f, g = self.problem.evaluate(index, x)
        y, c = self.problem.noise.sample(self.rng, index, f, g)
        self.t += 1
        return Outcome(self.t, index, x, f, g, y, c)

    def deliver(self, outcome: Outcome) -> list[Observation]:
        """Observations that reach the policy after this round (immediate feedback here)."""
        return [Observation(outcome.t, outcome.index, outcome.x, self.problem.sign * outcome.y, outcome.c)]

    def check_policy(self, policy: Any) -> None:
        """Refuse, before anything runs, a policy this environment would fail part-way (none here); the
        runner calls it once the trial's policy is built."""

    def state_dict(self) -> dict[str, Any]:
        return {"t": self.t, "rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict`; a state that does not fit is refused with one line and the
        environment is left as it was (before, a failure part-way had already moved its round)."""
        name = type(self).__name__
        if not isinstance(state, dict):
            raise InvalidInputError(f"{name} loads a dict from state_dict(), got {short_repr(state, 60)}.")
        load_or_restore(self.apply_state, state, self.state_dict(), f"cannot load this state into the {name}")

    def apply_state(self, state: dict[str, Any]) -> None:
        """Set the round and the generator from ``state``; subclasses with more state extend it."""
        t = state["t"]
        if not is_count(t):
            raise InvalidInputError(
                f"{type(self).__name__} state: t = {short_repr(t, 40)} must be a round >= 0."
            )
        try:
            self.rng.bit_generator.state = state["rng"]
        except (TypeError, ValueError):
            raise InvalidInputError(
                f"{type(self).__name__} state: rng = {short_repr(state['rng'], 60)} is not a state of its "
                f"{type(self.rng.bit_generator).__name__} generator."
            ) from None
        self.t = int(t)


def _registered_name(cls: type) -> str:
    """The name ``cls`` is registered under (its class name if none)."""
    return next((n for n in ENVIRONMENTS.names() if ENVIRONMENTS.get(n) is cls), cls.__name__)


#: environment classes by name; modules in ``ckb/runner/environments/`` register theirs on import
ENVIRONMENTS: Registry = Registry("environment")
ENVIRONMENTS.add("basic", Environment)
