r"""The messages that cross an agent's boundary: explicit, frozen, small.

DMABO (Xu et al. (2023), Alg. 4.1 and Remark 2) needs exactly two kinds:

- :class:`PriceBroadcast` (coordinator -> every agent): the scaled duals :math:`(\lambda_t, \mu_t)` of round
  ``t`` (:math:`\lambda \in \mathbb R^m_{\ge 0}` for the coupled black-box constraints, :math:`\mu \in \mathbb
  R^l` for the affine ones);
- :class:`Proposal` (agent ``i`` -> coordinator): :math:`(A_i x_i^t,\ \underline g_i^t(x_i^t)) \in \mathbb R^l
  \times \mathbb R^m`, the affine image of its decision and the *lower confidence bounds* of its
  constraints there. Neither the decision :math:`x_i^t` itself (only its image under the known
  :math:`A_i`), nor an observation, nor any GP data is ever sent.

The baselines (labelled reconstructions: the paper only sketches them in prose) declare their own,
larger messages:

- DCEI: :class:`PosteriorSummary` (agent -> coordinator: its posterior mean/variance of :math:`f_i` and
  :math:`g_i` at its last decision *and the observations there*, which the incumbent of constrained EI
  needs) and :class:`CEIBroadcast` (coordinator -> agents: the sums over agents and the incumbent);
- ADMM penalty heuristic: :class:`ADMMTarget` (coordinator -> agent ``i``: the target :math:`z_i - u_i`
  of its penalty) and :class:`Allocation` (agent -> coordinator: :math:`A_i x_i^t`).

Every message is a frozen dataclass of plain Python numbers and tuples (picklable, hashable, cheap to
send to a Ray actor and to inspect in tests); vectors are tuples of floats. What an experiment records
for its metrics (the true :math:`f_i, g_i` at the chosen points) is *not* a message: it is the
environment side, :class:`ckb.multiagent.environment.EnvironmentLog`, collected by the run harness and
never seen by a coordinator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from ckb._validation import as_real_array, short_repr
from ckb.errors import InvalidInputError


def _vector(value: Any, name: str, *, nonnegative: bool = False) -> tuple[float, ...]:
    """A 1-D vector of finite real numbers (a list, tuple or array) as a tuple of floats."""
    if value is None or isinstance(value, (str, bytes, dict)):
        raise InvalidInputError(
            f"message field {name} must be a vector (list, tuple or 1-D array) of real numbers, got "
            f"{short_repr(value, 60)}{'' if value is None else f' ({type(value).__name__})'}."
        )
    arr = as_real_array(value, f"message field {name}", "hold real numbers")
    if arr.ndim != 1:
        raise InvalidInputError(
            f"message field {name} must be a vector (1-D), got shape {arr.shape}: {short_repr(value, 60)}."
        )
    if not np.all(np.isfinite(arr)):
        raise InvalidInputError(f"message field {name} must be finite, got {short_repr(value, 60)}.")
    if nonnegative and np.any(arr < 0):
        raise InvalidInputError(f"message field {name} must be >= 0 elementwise, got {arr.tolist()}.")
    return tuple(float(v) for v in arr)


def _scalar(value: Any, name: str, *, optional: bool = False, nonnegative: bool = False) -> float | None:
    """One finite real number (``None`` too when ``optional``) as a float."""
    if value is None and optional:
        return None
    if value is None:
        raise InvalidInputError(f"message field {name} is missing (None); it must be a real number.")
    arr = as_real_array(value, f"message field {name}", "be a real number")
    if arr.ndim:
        raise InvalidInputError(f"message field {name} must be a real number, got {short_repr(value, 60)}.")
    v = float(arr)
    if not math.isfinite(v):
        raise InvalidInputError(f"message field {name} must be finite, got {value!r}.")
    if nonnegative and v < 0:
        raise InvalidInputError(f"message field {name} must be >= 0 (a variance), got {v!r}.")
    return v


def _same_lengths(msg: Any, names: tuple[str, ...]) -> None:
    """The vectors ``names`` of ``msg`` (those given) have one entry per constraint, the same count."""
    lengths = {n: len(getattr(msg, n)) for n in names if getattr(msg, n) is not None}
    if len(set(lengths.values())) > 1:
        raise InvalidInputError(
            f"{type(msg).__name__}: {', '.join(lengths)} must have one entry per constraint (the same "
            f"length), got lengths {', '.join(str(v) for v in lengths.values())}."
        )


def _round(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidInputError(f"message field round must be an integer >= 1, got {value!r}.")
    return int(value)


def _agent(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise InvalidInputError(f"message field agent must be an integer >= 0, got {value!r}.")
    return int(value)


class Message:
    """Base of every message type (for ``isinstance`` checks and :func:`numbers_in`)."""

    def numbers(self) -> list[float]:
        """Every number the message carries (for the no-raw-data tests)."""
        out: list[float] = []
        for f in fields(self):  # type: ignore[arg-type]
            if f.name in ("agent", "round"):
                continue
            v = getattr(self, f.name)
            if v is None:
                continue
            out.extend(v if isinstance(v, tuple) else [v])
        return [float(x) for x in out]


# ------------------------------------------------------------------------------------------- DMABO
@dataclass(frozen=True)
class PriceBroadcast(Message):
    """Coordinator -> agents: the scaled duals of round ``round`` (Xu et al. (2023), Alg. 4.1, line 3
    broadcast)."""

    round: int
    lam: tuple[float, ...]  # (m,) lambda_t >= 0, coupled black-box constraints
    mu: tuple[float, ...]  # (l,) mu_t, affine constraints

    def __post_init__(self) -> None:
        object.__setattr__(self, "round", _round(self.round))
        object.__setattr__(self, "lam", _vector(self.lam, "lam"))
        object.__setattr__(self, "mu", _vector(self.mu, "mu"))
        if any(v < 0 for v in self.lam):
            raise InvalidInputError(f"PriceBroadcast.lam must be >= 0 elementwise, got {self.lam}.")


@dataclass(frozen=True)
class Proposal(Message):
    """Agent -> coordinator: ``(A_i x_i^t, g_lcb_i^t(x_i^t))`` (Xu et al. (2023), Remark 2)."""

    agent: int
    round: int
    a_x: tuple[float, ...]  # (l,) A_i x_i^t
    g_lcb: tuple[float, ...]  # (m,) lower confidence bounds of g_{i,1..m} at x_i^t (pre-evaluation)

    def __post_init__(self) -> None:
        object.__setattr__(self, "agent", _agent(self.agent))
        object.__setattr__(self, "round", _round(self.round))
        object.__setattr__(self, "a_x", _vector(self.a_x, "a_x"))
        object.__setattr__(self, "g_lcb", _vector(self.g_lcb, "g_lcb"))


# -------------------------------------------------------------------------------------------- DCEI
@dataclass(frozen=True)
class CEIBroadcast(Message):
    """Coordinator -> agents (DCEI): sums over all agents of the posterior means/variances of ``f_k`` and
    ``g_k`` at their last decisions, and the incumbent (best observed feasible total objective).

    All fields ``None`` in round 1 (no decision yet); ``incumbent`` is ``None`` until a feasible total
    has been observed.
    """

    round: int
    f_mean: float | None = None
    f_var: float | None = None
    g_mean: tuple[float, ...] | None = None
    g_var: tuple[float, ...] | None = None
    incumbent: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "round", _round(self.round))
        for name in ("f_mean", "f_var", "incumbent"):
            v = _scalar(getattr(self, name), name, optional=True, nonnegative=name == "f_var")
            object.__setattr__(self, name, v)
        for name in ("g_mean", "g_var"):
            v = getattr(self, name)
            object.__setattr__(
                self, name, None if v is None else _vector(v, name, nonnegative=name == "g_var")
            )
        given = [n for n in ("f_mean", "f_var", "g_mean", "g_var") if getattr(self, n) is not None]
        if given and len(given) < 4:
            raise InvalidInputError(
                f"CEIBroadcast: f_mean, f_var, g_mean and g_var come together (all None in round 1), got "
                f"only {', '.join(given)}."
            )
        _same_lengths(self, ("g_mean", "g_var"))


@dataclass(frozen=True)
class PosteriorSummary(Message):
    """Agent -> coordinator (DCEI): posterior of ``f_i``, ``g_i`` at its decision of this round (after
    conditioning on the observations there) and those observations (for the CEI incumbent)."""

    agent: int
    round: int
    f_mean: float
    f_var: float
    g_mean: tuple[float, ...]
    g_var: tuple[float, ...]
    y_f: float
    y_g: tuple[float, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "agent", _agent(self.agent))
        object.__setattr__(self, "round", _round(self.round))
        for name in ("f_mean", "f_var", "y_f"):
            object.__setattr__(self, name, _scalar(getattr(self, name), name, nonnegative=name == "f_var"))
        for name in ("g_mean", "g_var", "y_g"):
            object.__setattr__(self, name, _vector(getattr(self, name), name, nonnegative=name == "g_var"))
        _same_lengths(self, ("g_mean", "g_var", "y_g"))


# ------------------------------------------------------------------------------ ADMM penalty (EI)
@dataclass(frozen=True)
class ADMMTarget(Message):
    """Coordinator -> agent ``i`` (penalty heuristic): the target ``z_i - u_i`` of its quadratic penalty."""

    round: int
    target: tuple[float, ...]  # (l,)

    def __post_init__(self) -> None:
        object.__setattr__(self, "round", _round(self.round))
        object.__setattr__(self, "target", _vector(self.target, "target"))


@dataclass(frozen=True)
class Allocation(Message):
    """Agent -> coordinator (penalty heuristic): ``A_i x_i^t``."""

    agent: int
    round: int
    a_x: tuple[float, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "agent", _agent(self.agent))
        object.__setattr__(self, "round", _round(self.round))
        object.__setattr__(self, "a_x", _vector(self.a_x, "a_x"))


#: every algorithm message type
MESSAGE_TYPES = (PriceBroadcast, Proposal, CEIBroadcast, PosteriorSummary, ADMMTarget, Allocation)
