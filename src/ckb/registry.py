"""Name -> factory registries for problems, policies and experiments.

A new policy, problem or experiment is one file that calls ``register`` on import; a lookup of an unknown
name raises :class:`~ckb.errors.UnknownNameError` suggesting the closest registered names.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from ckb._validation import did_you_mean
from ckb.errors import UnknownNameError

T = TypeVar("T")


class Registry(Generic[T]):
    """A case-sensitive mapping from names (and aliases) to objects, with helpful errors."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._aliases: dict[str, str] = {}

    def register(self, name: str, *, aliases: tuple[str, ...] = ()) -> Callable[[T], T]:
        def deco(obj: T) -> T:
            self.add(name, obj, aliases=aliases)
            return obj

        return deco

    def add(self, name: str, obj: T, *, aliases: tuple[str, ...] = ()) -> None:
        if name in self._items or name in self._aliases:
            raise ValueError(f"{self.kind} {name!r} is already registered.")
        self._items[name] = obj
        if isinstance(obj, type) and hasattr(obj, "name") and vars(obj).get("name", "") == "":
            obj.name = name  # policies learn their registry name (a subclass too, not its base's)
        for alias in aliases:
            self._aliases[alias] = name

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


def import_submodules(package: str, skip: tuple[str, ...] = ()) -> None:
    """Import every module of ``package`` (by dotted name), so each registers itself on import.

    This is what makes "one small file plus its registration" true: a new policy, problem or
    environment module placed in its package is found without editing any list.
    """
    pkg = importlib.import_module(package)
    for info in pkgutil.iter_modules(pkg.__path__):
        if not info.name.startswith("_") and info.name not in skip:
            importlib.import_module(f"{package}.{info.name}")
