"""Per-round record of one trial, saved as a pickle-free ``.npz`` the moment the trial finishes."""

from __future__ import annotations

from typing import Any

import numpy as np

from ckb._system import available_memory
from ckb._validation import check_scalar
from ckb.errors import CKBError
from ckb.io import SavedState
from ckb.runner.environment import Outcome

#: bytes a trace holds per round beyond its ``x`` (8 d), ``g`` and ``c`` (8 m each): index, f, y, seconds,
#: the per-round optimum, and room for two policy internals
_BYTES_PER_ROUND = 8 * 6
#: what one task costs besides its rounds (config, metadata, Python objects), a generous estimate
TASK_OVERHEAD_BYTES = 16 * 1024


def trace_bytes(horizon: int, d: int = 1, m: int = 1) -> int:
    """Estimated memory of one trace of ``horizon`` rounds in dimension ``d`` with ``m`` constraints."""
    return int(horizon) * (_BYTES_PER_ROUND + 8 * int(d) + 16 * int(m))


def _gib(n: float) -> str:
    return f"{n / 2**30:.3g} GiB"


def check_memory(needed: int, what: str, hint: str = "") -> None:
    """Raise :class:`CKBError` before allocating when ``needed`` bytes exceed the available memory."""
    free = available_memory()
    if free is not None and needed > free:
        raise CKBError(
            f"{what} needs about {_gib(needed)} of memory, more than the {_gib(free)} available.{hint}"
        )


#: a trace's settings (its constructor's arguments), saved first
_SETTINGS = ("horizon", "d", "m", "utility_star", "utility_star_plus", "sign", "meta")
#: the per-round arrays a trace records (``trace.f`` and the others are their recorded prefixes)
_RECORDED = ("index", "x", "f", "g", "y", "c", "seconds")


class Trace(SavedState):
    """Arrays over rounds ``1..t``: played arm/point, true ``f`` and ``g``, observed ``y`` and ``c`` (problem
    sense), the policy's internals (one array per name), and the policy's seconds per round (ask + tell)."""

    def __init__(
        self,
        horizon: int,
        d: int,
        m: int,
        utility_star: float,
        sign: float,
        meta: dict | None = None,
        utility_star_plus: float | None = None,
    ):
        self.horizon, self.d, self.m = (_size(v, k) for v, k in ((horizon, "horizon"), (d, "d"), (m, "m")))
        check_memory(
            trace_bytes(self.horizon, self.d, self.m),
            f"a trace of T = {self.horizon} rounds (d = {self.d}, m = {self.m})",
            " Choose a smaller horizon.",
        )
        self.utility_star, self.sign = float(utility_star), float(sign)
        #: utility of the best feasible distribution (for R_+), when the problem has candidates
        self.utility_star_plus = None if utility_star_plus is None else float(utility_star_plus)
        self.meta = dict(meta or {})
        self.t = 0
        horizon, d, m = self.horizon, self.d, self.m
        self._index = np.full(horizon, -1, dtype=np.int64)
        self._x = np.zeros((horizon, d))
        self._f = np.zeros(horizon)
        self._g = np.zeros((horizon, m))
        self._y = np.zeros(horizon)
        self._c = np.zeros((horizon, m))
        self._seconds = np.zeros(horizon)
        self._u_star = np.full(horizon, np.nan)  # per-round optimum utility (non-stationary problems)
        self._internals: dict[str, np.ndarray] = {}

    def record(self, out: Outcome, seconds: float, internals: dict[str, float]) -> None:
        s = self.t
        self._index[s] = out.index
        self._x[s] = out.x
        self._f[s] = out.f
        self._g[s] = out.g
        self._y[s] = out.y
        self._c[s] = out.c
        self._seconds[s] = seconds
        self._u_star[s] = out.u_star
        for k, v in internals.items():
            arr = self._internals.get(k)
            if arr is None:
                arr = self._internals[k] = np.full(self.horizon, np.nan)
            arr[s] = v
        self.t = s + 1

    def __getattr__(self, name: str) -> np.ndarray:
        # trace.f, trace.g, ... are the recorded prefix of the preallocated arrays
        if name in _RECORDED:
            return self.__dict__[f"_{name}"][: self.t]
        raise AttributeError(name)

    @property
    def regret_reference(self) -> float | np.ndarray:
        """What regret is measured against: the per-round optima of a non-stationary problem (dynamic
        regret), else the problem's single best feasible utility."""
        u = self._u_star[: self.t]
        return u.copy() if u.size and np.all(np.isfinite(u)) else self.utility_star

    @property
    def internals(self) -> dict[str, np.ndarray]:
        return {k: v[: self.t] for k, v in self._internals.items()}

    def state_dict(self) -> dict[str, Any]:
        """The settings, the round ``t``, copies of the recorded arrays, the per-round optima and the
        internals (:meth:`from_state` rebuilds the trace from them)."""
        state = {k: getattr(self, k) for k in _SETTINGS}
        state["t"] = self.t
        state.update({k: getattr(self, k).copy() for k in _RECORDED})
        state["u_star"] = self._u_star[: self.t].copy()
        state["internals"] = {k: v.copy() for k, v in self.internals.items()}
        return state

    @classmethod
    def check_finished(cls, s: dict[str, Any]) -> None:
        """Raise ``ValueError`` (saying what is wrong) unless ``s`` is the state of a finished trace: a
        consistent record (:meth:`check_recorded`) of all its rounds, ``t`` equal to the horizon. A sweep
        reuses only such a trace (:class:`ckb.runner.sweep.TraceStore`)."""
        cls.check_recorded(s)
        t, horizon = int(np.asarray(s["t"])), int(np.asarray(s["horizon"]))
        if t != horizon:
            raise ValueError(f"it records {t} of its {horizon} rounds")

    @classmethod
    def check_recorded(cls, s: dict[str, Any]) -> None:
        """Raise ``ValueError`` (saying what is wrong) unless ``s`` is a consistent trace state: every
        setting and recorded array there, each array ``t`` rounds long (``x`` ``(t, d)``, ``g`` and ``c``
        ``(t, m)``) and the true and observed values finite (a checkpoint's trace, mid-run, too)."""
        required = ("horizon", "d", "m", "utility_star", "sign", "meta", "t", *_RECORDED, "internals")
        missing = [k for k in required if k not in s]
        if missing:
            raise ValueError(f"no {', '.join(missing)}")
        t, d, m = (int(np.asarray(s[k])) for k in ("t", "d", "m"))
        shapes = {"index": (t,), "x": (t, d), "f": (t,), "g": (t, m), "y": (t,), "c": (t, m), "seconds": (t,)}
        if "u_star" in s:
            shapes["u_star"] = (t,)
        arrays = {k: np.asarray(s[k]) for k in shapes}
        arrays.update({f"internals.{k}": np.asarray(v) for k, v in dict(s["internals"]).items()})
        shapes.update({k: (t,) for k in arrays if k.startswith("internals.")})
        for k, want in shapes.items():
            if arrays[k].shape != want:
                raise ValueError(f"{k} has shape {arrays[k].shape}, expected {want}")
        for k in ("x", "f", "g", "y", "c"):
            if not np.all(np.isfinite(arrays[k])):
                raise ValueError(f"{k} holds non-finite values")

    @classmethod
    def from_state(cls, s: dict[str, Any]) -> Trace:
        tr = cls(
            s["horizon"], s["d"], s["m"], s["utility_star"], s["sign"], s["meta"], s.get("utility_star_plus")
        )
        t = tr.t = int(s["t"])
        for k in _RECORDED:
            tr.__dict__[f"_{k}"][:t] = s[k]
        if "u_star" in s:
            tr._u_star[:t] = s["u_star"]
        for k, v in s["internals"].items():
            tr._internals[k] = np.full(tr.horizon, np.nan)
            tr._internals[k][:t] = v
        return tr


def _size(value: Any, name: str) -> int:
    """A trace's ``horizon``, ``d`` or ``m``: a whole number >= 0 (a saved trace gives it as a 0-d array),
    else a one-line :class:`~ckb.errors.InvalidInputError` (-1 was numpy's "negative dimensions")."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    return int(check_scalar(value, f"trace {name}", low=0, integer=True))
