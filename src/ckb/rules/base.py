r"""What every decision rule shares: declared constants, explicit state, and array helpers that work on
numpy arrays and torch tensors alike.

A *rule* is one paper's decision rule with nothing about estimation in it: its constants (declared once
in ``constants``, checked declaratively in the spirit of scikit-learn's parameter constraints), its state
(duals, penalty weights, multipliers, epochs: plain numbers and numpy arrays), its score composed from
estimates of the objective and the constraints, and its updates at ask time and at tell time. The bandit
harness (:mod:`ckb.policies`: GP posteriors on arms, exact argmax) and :class:`ckb.Optimizer`
(:mod:`ckb.optimizer.policies`: fitted BoTorch GPs, ``optimize_acqf``) are adapters around the same rule
object, so a rule exists once.

Conventions: ``f`` is maximized; constraint estimates have the constraints on the last axis, shape
``(..., m)``, feasible where :math:`\le 0`; a score takes arrays of either backend and returns one of the
same backend (numpy for the harness's enumeration, torch for gradients in the optimizer).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ckb._validation import (
    check_bool,
    check_finite_array,
    check_scalar,
    did_you_mean,
    load_or_restore,
    short_repr,
)
from ckb.errors import InvalidInputError
from ckb.exploration.beta import make_beta


# ------------------------------------------------------------------------------- declared constants
@dataclass(frozen=True)
class Real:
    """A real constant in an interval; ``None`` allowed when ``optional``; ``per_constraint``: a number
    or a list of m numbers (stored as an (m,) array); ``choices``: strings also accepted."""

    low: float | None = None
    high: float | None = None
    low_inclusive: bool = True
    high_inclusive: bool = True
    optional: bool = False
    per_constraint: bool = False
    choices: tuple[str, ...] = ()
    label: str = ""

    def check(self, name: str, value: Any, m: int) -> Any:
        label = self.label or name
        if value is None and self.optional:
            return None
        if isinstance(value, str) and self.choices:
            if value not in self.choices:
                raise InvalidInputError(
                    f"{label} must be a number or one of {list(self.choices)}, got {value!r}."
                )
            return value
        if self.per_constraint:
            arr = np.atleast_1d(check_finite_array(value, label))
            if arr.shape not in ((1,), (m,)):
                raise InvalidInputError(
                    f"{label} must be a number or a list of m = {m} numbers, got {arr.tolist()}."
                )
            for v in arr:
                self._scalar(label, float(v))
            return np.broadcast_to(arr, (m,)).astype(float).copy()
        return self._scalar(label, value)

    def _scalar(self, label: str, value: Any) -> float:
        return check_scalar(
            value,
            label,
            low=self.low,
            high=self.high,
            low_inclusive=self.low_inclusive,
            high_inclusive=self.high_inclusive,
        )


@dataclass(frozen=True)
class Int(Real):
    """An integer constant in an interval."""

    def _scalar(self, label: str, value: Any) -> int:
        return check_scalar(value, label, low=self.low, high=self.high, integer=True)


@dataclass(frozen=True)
class Choice:
    """One of a fixed set of strings."""

    options: tuple[str, ...] = ()
    label: str = ""

    def check(self, name: str, value: Any, m: int) -> str:
        if value not in self.options:
            raise InvalidInputError(
                f"{self.label or name} must be one of {list(self.options)}, got {value!r}."
            )
        return value


@dataclass(frozen=True)
class Width:
    """A width schedule spec, checked when the schedule is built (:func:`ckb.exploration.make_beta`):
    a number (constant), ``"theory"``, ``"log"``, a dict, a schedule, or None (the world's default)."""

    def check(self, name: str, value: Any, m: int) -> Any:
        return value


@dataclass(frozen=True)
class Flag:
    """A boolean."""

    def check(self, name: str, value: Any, m: int) -> bool:
        return check_bool(value, name)


POSITIVE = Real(low=0.0, low_inclusive=False)
NONNEGATIVE = Real(low=0.0)
PROBABILITY = Real(low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)


# ------------------------------------------------------------------------------------------ a rule
class Rule:
    """Base class of a decision rule: ``m`` constraints, ``horizon`` T (the rule's rounds), round ``t``.

    Subclasses declare ``constants`` (name -> checker) and ``defaults`` (name -> value, for those every
    world shares); an adapter passes the world-specific ones (e.g. the harness's problem hints). Every
    checked constant becomes an attribute. State lives in the attributes listed in ``state_keys``,
    captured by :meth:`state_dict` and restored by :meth:`load_state_dict`.
    """

    constants: ClassVar[dict[str, Any]] = {}
    defaults: ClassVar[dict[str, Any]] = {}
    state_keys: ClassVar[tuple[str, ...]] = ()
    #: state keys whose values are never negative (duals, virtual queues): a loaded state with a negative
    #: one is refused
    nonnegative_state: ClassVar[tuple[str, ...]] = ()
    #: whether the rule needs the horizon T (e.g. for V = G sqrt(T) / rho or the epochs L = T / S)
    needs_horizon: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A rule's declarations are checked when its class is defined: every ``constants`` entry is a
        checker (``NONNEGATIVE``, ``Real(...)``; a raw value belongs in ``defaults``, and gave an
        AttributeError at the first construction), and ``state_keys`` names attributes."""
        super().__init_subclass__(**kwargs)
        for name, checker in cls.constants.items():
            if not callable(getattr(checker, "check", None)):
                raise TypeError(
                    f"rule {cls.__name__}: constants[{name!r}] must be a checker such as NONNEGATIVE or "
                    f"Real(low=0.0) (its value goes in defaults), got {short_repr(checker, 40)}."
                )
        keys = cls.state_keys
        if not isinstance(keys, tuple) or not all(isinstance(k, str) for k in keys):
            raise TypeError(
                f"rule {cls.__name__}: state_keys must be a tuple of attribute names, got {keys!r}."
            )

    def __init__(self, m: int, horizon: int | None = None, **params: Any) -> None:
        self.m = check_scalar(m, "m (number of constraints)", low=1, integer=True)
        self.horizon = None if horizon is None else check_scalar(horizon, "horizon (T)", low=1, integer=True)
        unknown = sorted(set(params) - set(self.constants))
        if unknown:
            exc = InvalidInputError(
                f"{type(self).__name__} has no constant {unknown[0]!r}."
                f"{did_you_mean(unknown[0], self.constants)}"
            )
            # for a caller whose keywords reach the rule among its own (ckb.Optimizer's **policy_params)
            exc.unknown_constant, exc.known_constants = unknown[0], tuple(self.constants)
            raise exc
        values = {**self.defaults, **params}
        for name, checker in self.constants.items():
            if name not in values:
                raise InvalidInputError(f"{type(self).__name__} needs the constant {name!r}.")
            setattr(self, name, checker.check(name, values[name], self.m))
        self.t = 0
        self.setup()
        self.check_rule()
        # what a state saved before one of its keys existed gets for that key (not the current value)
        self._initial_state = copy.deepcopy(self.state_dict())

    def check_rule(self) -> None:
        """After :meth:`setup`: every ``state_keys`` entry is set (a name setup() does not set was an
        AttributeError at the first checkpoint, after the rounds had run); a subclass adds its checks."""
        missing = [k for k in self.state_keys if not hasattr(self, k)]
        if missing:
            raise InvalidInputError(
                f"rule {type(self).__name__}: state_keys lists {missing[0]!r}, which setup() does not set; set "
                "the initial state of each state key in setup()."
            )

    def setup(self) -> None:
        """Derived constants and the initial state (after the constants are checked)."""

    # ------------------------------------------------------------------------------ persistence
    def state_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"t": self.t}
        for key in self.state_keys:
            v = getattr(self, key)
            out[key] = v.copy() if isinstance(v, np.ndarray) else v
        return out

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict`: a key the state lacks (saved before the key existed) takes its
        value at construction. A state that does not fit (a value of another shape or type, a negative
        round, dual or queue, a NaN or infinite number) is refused with one line, and the rule is left as
        it was."""
        if not isinstance(state, dict):
            raise InvalidInputError(
                f"{type(self).__name__} state must be a dict of its state keys {list(self.state_keys)}, "
                f"got {short_repr(state, 60)}."
            )

        def apply(values: dict[str, Any]) -> None:
            self.apply_state(values)
            self.after_load()

        load_or_restore(apply, state, self.state_dict(), f"cannot load this state into {type(self).__name__}")

    def apply_state(self, state: dict[str, Any]) -> None:
        """Set the round and the state keys from ``state`` (checked); a subclass with more state extends
        it. Used by :meth:`load_state_dict`, which undoes it when it raises."""
        name = type(self).__name__
        t = state.get("t", self._initial_state["t"])
        try:
            t = check_scalar(t, "t", low=0, integer=True)
        except (InvalidInputError, TypeError, ValueError):
            raise InvalidInputError(f"{name} state: t = {short_repr(t, 40)} must be a round >= 0.") from None
        values = {}
        for key in self.state_keys:
            v = state[key] if key in state else copy.deepcopy(self._initial_state[key])
            try:
                values[key] = _as_like(getattr(self, key), v)
            except (TypeError, ValueError, OverflowError):
                raise InvalidInputError(
                    f"{name} state: {key} = {short_repr(v, 60)} does not fit; expected "
                    f"{_kind_of(getattr(self, key))}."
                ) from None
            finite = not isinstance(values[key], (np.ndarray, float)) or np.all(np.isfinite(values[key]))
            if not finite and key not in self.nonnegative_state:  # those say "finite and >= 0" below
                raise InvalidInputError(f"{name} state: {key} = {short_repr(v, 60)} must be finite.")
        for key in self.nonnegative_state:
            value = np.asarray(values[key], dtype=float)
            if np.any(value < 0) or not np.all(np.isfinite(value)):
                raise InvalidInputError(f"{name} state: {key} = {value.tolist()} must be finite and >= 0.")
        self.t = t
        for key, v in values.items():
            setattr(self, key, v)

    def after_load(self) -> None:
        """Recompute what derives from the state (e.g. an epoch's width schedule)."""

    def internals(self) -> dict[str, float]:
        return {}

    # ---------------------------------------------------------------------------------- helpers
    def schedule(self, spec: Any, B: float, R: float, alpha: float, scale: float = 1.0):
        """A width schedule (:func:`ckb.exploration.make_beta`) with this rule's constants as defaults."""
        try:
            return make_beta(spec, B=B, R=R, alpha=alpha, scale=scale)
        except TypeError as exc:
            raise InvalidInputError(f"bad beta: {exc}") from None


def named(name: str, values) -> dict[str, float]:
    """Per-constraint scalars: ``{name: v}`` for one value, ``{name_0: v0, name_1: v1, ...}`` for more."""
    values = list(np.atleast_1d(np.asarray(values, dtype=float)))
    if len(values) == 1:
        return {name: float(values[0])}
    return {f"{name}_{j}": float(v) for j, v in enumerate(values)}


def _as_like(current: Any, value: Any) -> Any:
    """``value`` as the type (and, for arrays, the shape) of a state key's ``current`` value."""
    if isinstance(current, np.ndarray):
        out = np.asarray(value, dtype=float)
        if out.shape != current.shape and out.size == current.size and out.ndim <= 1:
            out = out.reshape(current.shape)  # a scalar or flat list for an (m,) or (1,) array
        if out.shape != current.shape:
            raise ValueError("shape")
        return out.copy()
    if isinstance(current, (bool, np.bool_)):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError("bool")
        return bool(value)
    if current is None and value is None:
        return None
    if current is None or isinstance(current, int):
        if isinstance(value, (bool, np.bool_)) or float(value) != int(value):
            raise TypeError("int")
        return int(value)
    if isinstance(current, float):
        if isinstance(value, (bool, np.bool_, str)):
            raise TypeError("float")
        return float(value)
    if isinstance(current, (list, dict)) and not isinstance(value, type(current)):
        raise TypeError(type(current).__name__)
    return value


def _kind_of(current: Any) -> str:
    """What :func:`_as_like` accepts for a state key, for its error message."""
    if isinstance(current, np.ndarray):
        return f"an array of shape {current.shape}"
    if isinstance(current, (list, dict)):
        return f"a {type(current).__name__}"
    if isinstance(current, (bool, np.bool_)):
        return "a bool"
    if current is None or isinstance(current, int):
        return "an integer" if current is not None else "None or an integer"
    if isinstance(current, float):
        return "a number"
    return f"a {type(current).__name__}"


class RuleAdapter:
    """Mixin of a policy that adapts a :mod:`ckb.rules` rule (``self.rule``): the rule's constants and
    state read as the policy's attributes (``policy.phi``, ``policy.Q``, ``policy.kappa``, ...)."""

    rule: Any
    #: the rule class the adapter builds, if one (its constants are the adapter's remaining keywords)
    rule_class: Any = None

    def __getattr__(self, name: str) -> Any:
        rule = self.__dict__.get("rule")
        if rule is None or name.startswith("__"):
            raise AttributeError(name)
        try:
            return getattr(rule, name)
        except AttributeError:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        """Setting a rule's attribute on the policy sets it on the rule; the round ``t`` is kept on both."""
        rule = self.__dict__.get("rule")
        if rule is not None and (name == "t" or (name not in self.__dict__ and hasattr(rule, name))):
            setattr(rule, name, value)
            if name != "t":
                return
        object.__setattr__(self, name, value)


# ------------------------------------------------------------------------------ numpy/torch helpers
def like(value: Any, ref: Any) -> Any:
    """``value`` as an array of ``ref``'s backend, dtype and device (numpy, or torch when ``ref`` is a
    tensor). Before, a tensor on a GPU met the rule's state on the CPU (a device error)."""
    if isinstance(ref, np.ndarray) or np.isscalar(ref):
        return np.asarray(value, dtype=float)
    import torch

    return torch.as_tensor(np.asarray(value, dtype=float), dtype=ref.dtype, device=ref.device)


def clip(x: Any, low: Any, high: Any) -> Any:
    """:math:`\\min(\\max(x, low), high)` elementwise, for either backend."""
    if isinstance(x, np.ndarray):
        return np.clip(x, low, high)
    return x.clamp(like(low, x), like(high, x)) if not np.isscalar(low) else x.clamp(low, high)


def positive_part(x: Any) -> Any:
    """:math:`[x]^+` elementwise, for either backend."""
    if isinstance(x, np.ndarray):
        return np.maximum(x, 0.0)
    return x.clamp_min(0.0)


def where(cond: Any, a: Any, b: Any) -> Any:
    if isinstance(cond, np.ndarray):
        return np.where(cond, a, b)
    import torch

    return torch.where(cond, a, b)
