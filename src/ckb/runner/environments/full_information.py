r"""Stochastic full constraint information (the CBO paper, Sec. 4, Assumptions 5-6): ``g_t`` is revealed
before acting.

Each round :meth:`FullInformationEnvironment.reveal` draws :math:`g_t` at every candidate from the
environment's own generator, ``problem.sample_constraints(rng) -> (n, m)``, and returns it (read-only) to
the policy's ``ask``; :meth:`~FullInformationEnvironment.step` then uses *that same draw* for the round:

- truth for the metrics: ``f(x_t)`` and the **mean** :math:`g(x_t) = \mathbb E[g_t(x_t)]` (``problem.g_values``),
  so the runner's soft violation is the paper's :math:`\mathcal V(\tau) = [\sum_{t \le \tau} g(x_t)]^+`
  (its Sec. 2);
- observation: the noisy reward ``y`` from the problem's noise model (only its reward part is used) and,
  as the constraint observation ``c``, the realized sample :math:`g_t(x_t)`.

The draw of :math:`g_t` comes before the round's reward noise on the same stream, and depends on nothing
the policy does (Assumption 5: independent of all other randomness). Calling ``reveal()`` twice before
``step()`` returns the same draw; ``step()`` without a reveal is an error. The sampler protocol is
defined in :mod:`ckb.problems.queueing` (:class:`~ckb.problems.queueing.StochasticConstraintProblem`);
any problem with a ``sample_constraints`` method works.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ckb.contract.revealed import check_revealed_constraints
from ckb.errors import InvalidInputError
from ckb.problems.problem import Problem
from ckb.runner.environment import ENVIRONMENTS, Environment, Outcome

_NO_CONSTRAINT_NOISE = np.zeros(0)


class FullInformationEnvironment(Environment):
    """Reveals a random constraint function each round; see the module docstring."""

    def __init__(self, problem: Problem, rng: np.random.Generator) -> None:
        sampler = getattr(problem, "sample_constraints", None)
        if not callable(sampler):
            raise InvalidInputError(
                f"environment 'full-information' needs a problem that samples its constraint functions "
                f"(a method sample_constraints(rng) -> (n, m) with mean g, e.g. problem 'gpu-queue'); "
                f"problem {problem.name!r} has none. Use environment 'basic' for bandit constraint feedback."
            )
        if not problem.domain.is_finite:
            raise InvalidInputError(
                f"environment 'full-information' reveals g_t at the candidates; problem {problem.name!r} "
                "is a continuous box without a grid."
            )
        if problem.m < 1:
            raise InvalidInputError(
                f"environment 'full-information' needs a constrained problem, but {problem.name!r} has m = 0."
            )
        super().__init__(problem, rng)
        self._sampler = sampler
        self._shape = (problem.domain.n, problem.m)
        self._pending: np.ndarray | None = None

    def reveal(self) -> np.ndarray:
        """This round's :math:`g_t` at all candidates, ``(n, m)``, drawn now from the environment's stream."""
        if self._pending is None:
            g = check_revealed_constraints(
                self._sampler(self.rng),
                self._shape,
                f"the sample_constraints of problem {self.problem.name!r}",
            )
            g.setflags(write=False)
            self._pending = g
        return self._pending

    def step(self, action: Any) -> Outcome:
        if self._pending is None:
            raise InvalidInputError(
                "environment 'full-information': call reveal() before step() (g_t is revealed before acting)."
            )
        index, x = self.problem.domain.check_action(action)
        f, g = self.problem.evaluate(index, x)  # g: the mean E[g_t(x_t)], for the metrics
        y, _ = self.problem.noise.sample(self.rng, index, f, _NO_CONSTRAINT_NOISE)
        c = self._pending[index].copy()  # the realized g_t(x_t)
        self._pending = None
        self.t += 1
        return Outcome(self.t, index, x, f, g, y, c)

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "pending": None if self._pending is None else self._pending.copy()}

    def apply_state(self, state: dict[str, Any]) -> None:
        super().apply_state(state)
        pending = state.get("pending")
        self._pending = None if pending is None else np.array(pending, dtype=float)
        if self._pending is not None:
            self._pending.setflags(write=False)


ENVIRONMENTS.add("full-information", FullInformationEnvironment)
