"""Small argument checks shared by constructors (scikit-learn style: validate early, name the value)."""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ckb.errors import InvalidInputError


def closest(name: str, choices: Iterable[str], n: int = 3) -> list[str]:
    """Return up to ``n`` entries of ``choices`` that look like ``name`` (for 'did you mean' hints)."""
    choices = list(choices)
    hits = difflib.get_close_matches(name, choices, n=n, cutoff=0.5)
    if not hits and len(name) >= 3:  # fall back to substring matches, e.g. 'ucb' -> 'igp-ucb'
        hits = [
            c for c in choices if len(c) >= 3 and (name.lower() in c.lower() or c.lower() in name.lower())
        ][:n]  # not one-letter constants: 'violation_budgt' does not mean 'B', 'G' or 'V'
    return hits


def suggestion(hits: Iterable[str]) -> str:
    """`` Did you mean 'a' or 'b'?`` for the names ``hits`` (empty for none)."""
    hits = list(hits)
    return f" Did you mean {' or '.join(repr(h) for h in hits)}?" if hits else ""


def listed(items: Iterable[Any], most: int = 10) -> str:
    """``'0, 3, 7'``: the first ``most`` items, then ``', ...'`` if there are more (trial numbers in a
    one-line message)."""
    items = list(items)
    return ", ".join(map(str, items[:most])) + (", ..." if len(items) > most else "")


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    choices = sorted(choices)
    hint = suggestion(closest(name, choices))
    return f"{hint} Known: {', '.join(choices)}." if choices else hint


def check_scalar(
    value: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
    integer: bool = False,
) -> float | int:
    """Check that ``value`` is a finite real (or integer) scalar inside the given interval."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        kind = "an integer" if integer else "a real number"
        raise InvalidInputError(f"{name} must be {kind}, got {value!r} ({type(value).__name__}).")
    if integer:
        if isinstance(value, (float, np.floating)):
            if not float(value).is_integer():
                raise InvalidInputError(f"{name} must be an integer, got {value!r}.")
        value = int(value)
    else:
        try:
            value = float(value)
        except OverflowError:
            raise InvalidInputError(
                f"{name} must be finite, got an integer of {len(str(value))} digits."
            ) from None
        if not math.isfinite(value):
            raise InvalidInputError(f"{name} must be finite, got {value!r}.")
    if low is not None and (value < low or (value == low and not low_inclusive)):
        op = ">=" if low_inclusive else ">"
        raise InvalidInputError(f"{name} must be {op} {low}, got {value!r}.")
    if high is not None and (value > high or (value == high and not high_inclusive)):
        op = "<=" if high_inclusive else "<"
        raise InvalidInputError(f"{name} must be {op} {high}, got {value!r}.")
    return value


def check_choice(value: Any, name: str, choices: Iterable[Any]) -> Any:
    """``value`` if it is one of ``choices``, else an error naming the value and the choices."""
    choices = tuple(choices)
    if value not in choices:
        raise InvalidInputError(f"{name} must be one of {choices}, got {value!r}.")
    return value


def check_finite_array(value: Any, name: str, *, ndim: int | None = None, shape: tuple | None = None):
    """Convert to a float array and check it is finite and, optionally, of the given ndim / shape.

    ``shape`` may contain ``None`` for free dimensions. Strings, booleans and complex numbers are refused,
    not converted (``"1"`` or ``True`` given for a number is a mistake to name, not a value to guess).
    """
    arr = as_real_array(value, name, "be numeric (real numbers)")
    if ndim is not None and arr.ndim != ndim:
        raise InvalidInputError(f"{name} must have {ndim} dimension(s), got shape {arr.shape}.")
    if shape is not None:
        if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape)):
            want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
            raise InvalidInputError(f"{name} must have shape {want}, got {arr.shape}.")
    if not np.all(np.isfinite(arr)):
        if not arr.ndim:  # one number: no entry to point at
            raise InvalidInputError(f"{name} must be finite, got {float(arr)!r}.")
        bad = np.argwhere(~np.isfinite(arr))[0]
        where = ", ".join(str(int(i)) for i in bad)
        raise InvalidInputError(f"{name} must be finite, but entry [{where}] is {float(arr[tuple(bad)])!r}.")
    return arr


def as_real_array(value: Any, name: str, expected: str = "hold real numbers") -> np.ndarray:
    """``value`` as a float array if it holds real numbers only (no strings, booleans, complex numbers or
    None; an integer too large for a float is named), else an error naming it."""
    what = f"{name} must {expected}"
    if hasattr(value, "detach") and hasattr(value, "requires_grad"):  # a torch tensor, maybe with grad
        value = value.detach().cpu()
    try:
        raw = np.asarray(value)
        if raw.dtype.kind == "O":
            flat = raw.reshape(-1).tolist()
            # None became NaN, so the error named a NaN the user never wrote
            if any(v is None or isinstance(v, (str, bytes, bool, np.bool_, complex)) for v in flat):
                raise TypeError
        elif raw.dtype.kind not in "iuf":
            raise TypeError
        elif isinstance(value, (list, tuple)):  # numpy reads [0.1, True] as floats, [1, True] as integers
            if any(isinstance(v, (bool, np.bool_)) for v in np.asarray(value, dtype=object).reshape(-1)):
                raise TypeError
        return np.asarray(raw, dtype=float)
    except OverflowError:
        raise InvalidInputError(
            f"{what} within float range, got an integer too large: {short_repr(value)}."
        ) from None
    except (TypeError, ValueError):
        raise InvalidInputError(f"{what}, got {short_repr(value)}.") from None


def short_repr(value: Any, width: int = 80, tail: str = "...") -> str:
    """``repr(value)`` on one line, cut to ``width`` characters (ending in ``tail``) when longer: how
    every error message quotes a bad value."""
    text = repr(value).replace("\n", " ")
    return text if len(text) <= width else text[: width - len(tail)] + tail


def one_line(text: Any) -> str:
    """``str(text)`` with every run of whitespace (newlines too) as one space: a message kept on one line."""
    return " ".join(str(text).split())


def check_params(func, params: dict, what: str, skip: tuple[str, ...] = ()) -> None:
    """Reject keyword parameters that ``func`` does not accept, suggesting the closest valid names."""
    import inspect

    sig = inspect.signature(func)
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return
    valid = [n for n, p in sig.parameters.items() if n not in skip and p.kind is not p.VAR_POSITIONAL]
    for key in params:
        if key not in valid:
            raise InvalidInputError(f"{what} has no parameter {key!r}.{did_you_mean(key, valid)}")


def check_bool(value: Any, name: str) -> bool:
    """``value`` if it is a boolean (``True``/``False``, or numpy's), else an error naming it.

    Nothing is read by truthiness: ``"false"`` is a non-empty string, so ``bool("false")`` is ``True``, and
    ``1``, ``"no"`` or a typo such as ``"flase"`` are mistakes to name, not values to guess.
    """
    if not isinstance(value, (bool, np.bool_)):
        import reprlib

        raise InvalidInputError(
            f"{name} must be true or false, got {reprlib.repr(value)} ({type(value).__name__})."
        )
    return bool(value)


#: The largest noise level (a standard deviation or a half-width) :func:`check_noise_scale` accepts. Larger
#: levels make the observations ``f + level * z`` and their squares in a model fit overflow float64
#: (``1e308`` ended in NaN or ``inf`` scores deep inside a policy); this one leaves room for both.
MAX_NOISE_SCALE = 1e100


def check_noise_scale(value: Any, name: str, *, high: float = MAX_NOISE_SCALE) -> float:
    """A noise standard deviation (or half-width) ``value``: a real number in ``[0, high]``, else an error
    naming it and the range (``high`` defaults to :data:`MAX_NOISE_SCALE`)."""
    value = check_scalar(value, name, low=0.0)
    if value > high:
        raise InvalidInputError(
            f"{name} must be a noise level in [0, {high:g}] (larger ones overflow float arithmetic), "
            f"got {value!r}."
        )
    return value


def is_count(value: Any) -> bool:
    """Whether ``value`` is a whole number >= 0 given as an integer (a round, a count of observations, a
    seed): a saved state holds these as ints, so a bool, a float or text there is a damaged state."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 0


def load_or_restore(apply, state: Any, before: Any, what: str) -> None:
    """``apply(state)``, all or nothing: on any error ``apply(before)`` (the object's own state, taken
    before) puts the object back as it was, and the error is raised on one line (a ckb error as it is,
    another as ``"{what} (Type: message); nothing was loaded."``, a missing key named as such)."""
    try:
        apply(state)
    except Exception as exc:
        apply(before)
        if isinstance(exc, InvalidInputError):
            raise
        why = f"missing key {exc.args[0]!r}" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"
        raise InvalidInputError(f"{what} ({one_line(why)}); nothing was loaded.") from None
