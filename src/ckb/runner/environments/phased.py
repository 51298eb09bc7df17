"""Piecewise non-stationary functions (Guo, Zhu & Liu (2023), Sec. 6): round t is played on the functions
of t's phase.

Needs a :class:`~ckb.problems.phased.PhasedProblem`. Each outcome carries the phase's best feasible
utility, so the runner's regret is the dynamic regret and the violations use the current g_t; the
observations come from the problem's noise model around the current phase's values.
"""

from __future__ import annotations

from typing import Any

from ckb.errors import InvalidInputError
from ckb.runner.environment import ENVIRONMENTS, Environment, Outcome


class PhasedEnvironment(Environment):
    def __init__(self, problem, rng) -> None:
        if not callable(getattr(problem, "evaluate_round", None)):
            raise InvalidInputError(
                f"environment 'phased' needs a phased problem (e.g. 'gardner-phases'), got {problem.name!r}."
            )
        super().__init__(problem, rng)

    def step(self, action: Any) -> Outcome:
        index, x = self.problem.domain.check_action(action)
        t = self.t + 1
        f, g, u_star = self.problem.evaluate_round(t, index)
        y, c = self.problem.noise.sample(self.rng, index, f, g)
        self.t = t
        return Outcome(t, index, x, f, g, y, c, u_star)


ENVIRONMENTS.add("phased", PhasedEnvironment)
