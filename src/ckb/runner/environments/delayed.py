r"""Delayed feedback (Guo, Zhu & Liu (2023), Sec. 5): the reward and the cost of round s arrive after random
delays.

Round s's reward arrives at the end of round :math:`s + d^f_s` and its costs at the end of round
:math:`s + d^g_s`, with :math:`d^f_s, d^g_s` drawn independently (``joint=False``, the paper's setting)
from ``delay`` (``"poisson"`` with mean ``delay_mean``, the Poisson(15) of the paper's Sec. 7;
``"constant"``: exactly ``delay_mean`` rounds; ``"none"``: immediate) on the environment's own stream. A
delay of 0 means the feedback arrives in the round it was played. Parts of the same round that arrive
together form one observation; otherwise a policy receives an :class:`~ckb.contract.Observation` with
``has_y`` or ``has_c`` false (only policies that accept partial feedback may run here, see
:attr:`ckb.policies.Policy.accepts_partial_feedback`; others are refused when the trial is built);
``joint=True`` draws one delay for both, so any policy can run. Feedback that would arrive after the
horizon is never delivered. The truth for the metrics is recorded at the decision round, as the paper's
regret and violation are.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ckb._validation import check_bool, check_choice, check_scalar
from ckb.contract.observation import Observation
from ckb.errors import InvalidInputError
from ckb.problems.problem import Problem
from ckb.runner.environment import ENVIRONMENTS, Environment, Outcome

_DELAYS = ("poisson", "constant", "none")
#: the longest mean delay (rounds): far beyond any horizon, and within what numpy's Poisson sampler takes
MAX_DELAY_MEAN = 1e15


class DelayedEnvironment(Environment):
    """Holds observations back until their arrival rounds; see the module docstring."""

    def __init__(
        self,
        problem: Problem,
        rng: np.random.Generator,
        *,
        delay: str = "poisson",
        delay_mean: float = 15.0,
        joint: bool = False,
    ) -> None:
        super().__init__(problem, rng)
        self.delay = check_choice(delay, "delay", _DELAYS)
        self.delay_mean = check_scalar(delay_mean, "delay_mean", low=0.0, high=MAX_DELAY_MEAN)
        if delay == "constant" and float(self.delay_mean) != int(self.delay_mean):
            raise InvalidInputError(f"a constant delay must be a whole number of rounds, got {delay_mean!r}.")
        self.joint = check_bool(joint, "joint")
        d = problem.domain.d
        # pending rounds: round, arm, point, y (policy sense), c, reward arrival, cost arrival, parts sent
        self._t = np.zeros(0, dtype=np.int64)
        self._idx = np.zeros(0, dtype=np.int64)
        self._x = np.zeros((0, d))
        self._y = np.zeros(0)
        self._c = np.zeros((0, problem.m))
        self._af = np.zeros(0, dtype=np.int64)
        self._ag = np.zeros(0, dtype=np.int64)
        self._sent = np.zeros((0, 2), dtype=bool)

    def _draw(self) -> int:
        if self.delay == "none":
            return 0
        if self.delay == "constant":
            return int(self.delay_mean)
        return int(self.rng.poisson(self.delay_mean))

    def check_policy(self, policy: Any) -> None:
        """A policy that cannot take a round's reward and costs apart is refused before the run when they
        can arrive apart (independent Poisson delays of positive mean); before, it ran until the first
        split observation (round 13 under Poisson(15))."""
        split = not self.joint and self.delay == "poisson" and self.delay_mean > 0
        if split and not getattr(policy, "accepts_partial_feedback", False):
            who = getattr(policy, "name", "") or type(policy).__name__
            raise InvalidInputError(
                f"policy {who!r} cannot use feedback whose reward and costs arrive separately, as environment "
                "'delayed' with joint = false sends them; set the environment's joint = true (one delay for "
                "both) or use a policy that accepts partial feedback (e.g. rpol-ucb, rpol-censored-ucb, "
                "ckb-ucb, config)."
            )

    def deliver(self, outcome: Outcome) -> list[Observation]:
        s = outcome.t
        df = self._draw()
        dg = df if self.joint else self._draw()
        self._t = np.append(self._t, s)
        self._idx = np.append(self._idx, outcome.index)
        self._x = np.vstack([self._x, outcome.x[None, :]])
        self._y = np.append(self._y, self.problem.sign * outcome.y)
        self._c = np.vstack([self._c, np.asarray(outcome.c, dtype=float)[None, :]])
        self._af = np.append(self._af, s + df)
        self._ag = np.append(self._ag, s + dg)
        self._sent = np.vstack([self._sent, [[False, False]]])
        now = self.t
        out = []
        send_y = (self._af <= now) & ~self._sent[:, 0]
        send_c = (self._ag <= now) & ~self._sent[:, 1]
        for i in np.flatnonzero(send_y | send_c):
            hy, hc = bool(send_y[i]), bool(send_c[i])
            out.append(
                Observation(
                    int(self._t[i]),
                    int(self._idx[i]),
                    self._x[i].copy(),
                    float(self._y[i]) if hy else float("nan"),
                    self._c[i].copy() if hc else np.full(self.problem.m, np.nan),
                    has_y=hy,
                    has_c=hc,
                )
            )
        self._sent[:, 0] |= send_y
        self._sent[:, 1] |= send_c
        keep = ~(self._sent[:, 0] & self._sent[:, 1])
        for name in ("_t", "_idx", "_x", "_y", "_c", "_af", "_ag", "_sent"):
            setattr(self, name, getattr(self, name)[keep])
        return out

    def state_dict(self) -> dict[str, Any]:
        return {
            **super().state_dict(),
            **{k: getattr(self, k).copy() for k in ("_t", "_idx", "_x", "_y", "_c", "_af", "_ag", "_sent")},
        }

    def apply_state(self, state: dict[str, Any]) -> None:
        super().apply_state(state)
        d, m = self.problem.domain.d, self.problem.m
        self._t = np.asarray(state["_t"], dtype=np.int64).reshape(-1)
        self._idx = np.asarray(state["_idx"], dtype=np.int64).reshape(-1)
        self._x = np.asarray(state["_x"], dtype=float).reshape(-1, d)
        self._y = np.asarray(state["_y"], dtype=float).reshape(-1)
        self._c = np.asarray(state["_c"], dtype=float).reshape(-1, m)
        self._af = np.asarray(state["_af"], dtype=np.int64).reshape(-1)
        self._ag = np.asarray(state["_ag"], dtype=np.int64).reshape(-1)
        self._sent = np.asarray(state["_sent"], dtype=bool).reshape(-1, 2)
        names = ("_t", "_idx", "_x", "_y", "_c", "_af", "_ag", "_sent")
        lengths = {k: len(getattr(self, k)) for k in names}
        if (
            len(set(lengths.values())) > 1
            or not np.all(np.isfinite(self._y))
            or not np.all(np.isfinite(self._c))
        ):
            raise InvalidInputError(
                f"DelayedEnvironment state: the pending observations must be finite and one row each "
                f"(rows per key: {lengths})."
            )


ENVIRONMENTS.add("delayed", DelayedEnvironment)
