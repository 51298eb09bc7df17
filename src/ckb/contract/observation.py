"""The record of one evaluation, as a policy is told it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class Observation:
    """One noisy evaluation.

    ``y`` is in the *maximization* sense (the runner multiplies by the problem's sign before telling a
    policy), ``c`` holds the ``m`` constraint observations (feasible where ``<= 0``), ``t`` is the
    1-based round in which the point was played (with delayed feedback it arrives later), ``index`` is
    the arm (``-1`` for a point of a continuous box). With delayed feedback the reward and the costs of a
    round may arrive in different rounds: ``has_y`` / ``has_c`` say which parts this observation carries
    (the missing part is NaN); only policies that declare ``accepts_partial_feedback`` receive such.
    """

    t: int
    index: int
    x: np.ndarray
    y: float
    c: np.ndarray
    has_y: bool = True
    has_c: bool = True
