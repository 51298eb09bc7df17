"""Name -> factory registries for problems, policies and experiments.

A new policy, problem or experiment is one file that calls ``register`` on import; a lookup of an unknown
name raises :class:`~ckb.errors.UnknownNameError` suggesting the closest registered names.

A registration is checked before it changes anything: the name and every alias must be a non-empty string
not yet taken (a plugin cannot re-point a shipped name or alias), and the registries of problems, policies
and environments check what they are given (:data:`EXPECTED`). A refused registration is a
:class:`RegistrationError`.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import weakref
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from ckb._validation import did_you_mean, short_repr
from ckb.errors import CKBError, UnknownNameError

T = TypeVar("T")


class RegistrationError(CKBError, ValueError):
    """A registration was refused: a bad or taken name or alias, or an object of the wrong sort."""


def _problem_factory(obj: Any) -> str | None:
    if not callable(obj):
        return f"a callable factory f(rng, **params) -> Problem, got {short_repr(obj, 60)} ({type(obj).__name__})"
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):  # no signature to inspect (some builtins): accepted
        return None
    try:
        signature.bind(None)
    except TypeError:
        shown = f"{getattr(obj, '__qualname__', type(obj).__name__)}{signature}"
        return f"a factory f(rng, **params) -> Problem taking the trial's rng first, got {shown}"
    return None


def _policy_class(obj: Any) -> str | None:
    if isinstance(obj, type) and all(callable(getattr(obj, a, None)) for a in ("ask", "tell")):
        return None
    return f"a ckb.policies.Policy subclass (a class with ask and tell), got {short_repr(obj, 60)} ({type(obj).__name__})"


def _environment_class(obj: Any) -> str | None:
    if isinstance(obj, type) and callable(getattr(obj, "step", None)):
        return None
    return f"an Environment class (with step), got {short_repr(obj, 60)} ({type(obj).__name__})"


#: registry kind -> check of a registered object (a message saying what was expected, or None)
EXPECTED: dict[str, Callable[[Any], str | None]] = {
    "problem": _problem_factory,
    "policy": _policy_class,
    "environment": _environment_class,
}

#: every registry made, so a plugin that fails to import can take back what it registered
_REGISTRIES: weakref.WeakSet[Registry] = weakref.WeakSet()


class Registry(Generic[T]):
    """A case-sensitive mapping from names (and aliases) to objects, with helpful errors."""

    def __init__(self, kind: str, check: Callable[[Any], str | None] | None = None) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._aliases: dict[str, str] = {}
        self._check = check if check is not None else EXPECTED.get(kind)
        _REGISTRIES.add(self)

    def register(self, name: str, *, aliases: tuple[str, ...] = ()) -> Callable[[T], T]:
        def deco(obj: T) -> T:
            self.add(name, obj, aliases=aliases)
            return obj

        return deco

    def add(self, name: str, obj: T, *, aliases: tuple[str, ...] = ()) -> None:
        """Register ``obj`` under ``name`` and ``aliases``; checked first, so a refusal changes nothing."""
        self._check_name(name, "name")
        if name in self._items or name in self._aliases:
            taken = "" if name in self._items else f" (as an alias of {self._aliases[name]!r})"
            raise RegistrationError(f"{self.kind} {name!r} is already registered{taken}.")
        if isinstance(aliases, str) or not isinstance(aliases, tuple | list):
            raise RegistrationError(
                f"the aliases of {self.kind} {name!r} must be a tuple of names, got {short_repr(aliases, 60)}."
            )
        for i, alias in enumerate(aliases):
            self._check_name(alias, f"alias of {name!r}")
            if alias == name or alias in aliases[:i]:
                raise RegistrationError(
                    f"alias {alias!r} of {self.kind} {name!r} repeats its own name or another alias."
                )
            if alias in self._items or alias in self._aliases:
                owner = alias if alias in self._items else self._aliases[alias]
                raise RegistrationError(
                    f"alias {alias!r} of {self.kind} {name!r} is already taken by {self.kind} {owner!r}; "
                    "choose another alias."
                )
        problem = None if self._check is None else self._check(obj)
        if problem is not None:
            raise RegistrationError(f"{self.kind} {name!r} must be registered as {problem}.")
        self._items[name] = obj
        if isinstance(obj, type) and hasattr(obj, "name") and vars(obj).get("name", "") == "":
            obj.name = name  # policies learn their registry name (a subclass too, not its base's)
        for alias in aliases:
            self._aliases[alias] = name

    def _check_name(self, name: Any, what: str) -> None:
        if not isinstance(name, str) or not name.strip() or name != name.strip():
            raise RegistrationError(
                f"a {self.kind} {what} must be a non-empty string without surrounding spaces, got "
                f"{short_repr(name, 60)} ({type(name).__name__})."
            )

    def _snapshot(self) -> tuple[set[str], set[str]]:
        return set(self._items), set(self._aliases)

    def _restore(self, snapshot: tuple[set[str], set[str]]) -> None:
        items, aliases = snapshot
        for key in [k for k in self._items if k not in items]:
            del self._items[key]
        for key in [k for k in self._aliases if k not in aliases]:
            del self._aliases[key]

    def canonical(self, name: str) -> str:
        if not isinstance(name, str):
            raise UnknownNameError(
                f"a {self.kind} is named by a string, got {name!r} ({type(name).__name__}). "
                f"Known: {', '.join(self.names())}."
            )
        if name in self._items:
            return name
        if name in self._aliases:
            return self._aliases[name]
        raise UnknownNameError(f"Unknown {self.kind} {name!r}.{did_you_mean(name, self.names(True))}")

    def get(self, name: str) -> T:
        return self._items[self.canonical(name)]

    def names(self, with_aliases: bool = False) -> list[str]:
        names = list(self._items)
        return sorted(names + list(self._aliases)) if with_aliases else sorted(names)

    def aliases_of(self, name: str) -> list[str]:
        return sorted(a for a, n in self._aliases.items() if n == name)

    def __contains__(self, name: str) -> bool:
        return name in self._items or name in self._aliases

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())


def snapshot_registries() -> list[tuple[Registry, tuple[set[str], set[str]]]]:
    """The names every registry holds now (for :func:`restore_registries`)."""
    return [(reg, reg._snapshot()) for reg in list(_REGISTRIES)]


def restore_registries(snapshot: list[tuple[Registry, tuple[set[str], set[str]]]]) -> None:
    """Remove every registration made since ``snapshot`` (a plugin that failed to import keeps none)."""
    for reg, names in snapshot:
        reg._restore(names)


def import_submodules(package: str, skip: tuple[str, ...] = ()) -> None:
    """Import every module of ``package`` (by dotted name), so each registers itself on import.

    This is what makes "one small file plus its registration" true: a new policy, problem or
    environment module placed in its package is found without editing any list.
    """
    pkg = importlib.import_module(package)
    for info in pkgutil.iter_modules(pkg.__path__):
        if not info.name.startswith("_") and info.name not in skip:
            importlib.import_module(f"{package}.{info.name}")
