"""User code for the harness: modules that register problems, policies, environments or kinds.

A plugin is an importable module whose import registers things (``@PROBLEMS.register("my-problem")``,
``@POLICIES.register(...)``, ...). ckb imports plugins from three places:

- the ``ckb.plugins`` entry-point group of installed packages (``[project.entry-points."ckb.plugins"]
  my_problems = "my_problems"`` in the package's ``pyproject.toml``), loaded by :func:`load_entry_points`
  when a spec is loaded or ``ckb list`` runs;
- ``--plugin MODULE`` on the command line (repeatable);
- ``plugins = ["MODULE", ...]`` at the top of a spec.

Every module imported here is also named in the ``CKB_PLUGINS`` environment variable, which the sweep's
worker processes inherit and import first (:func:`ckb._parallel.import_env_plugins`), so a trial in a
worker finds the user's problem. (On a Ray cluster, the module must be importable on every node.)
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable

from ckb._parallel import PLUGINS_ENV
from ckb.errors import CKBError
from ckb.registry import RegistrationError, restore_registries, snapshot_registries

ENTRY_POINT_GROUP = "ckb.plugins"
_LOADED_ENTRY_POINTS = False


def _remember(module: str) -> None:
    names = [n for n in os.environ.get(PLUGINS_ENV, "").split(",") if n]
    if module not in names:
        os.environ[PLUGINS_ENV] = ",".join([*names, module])


def load_plugins(modules: Iterable[str], where: str = "") -> list[str]:
    """Import each module of ``modules`` (dotted names); a module that is not found or fails to import is a
    :class:`CKBError` naming it (``where``: e.g. `` in my.toml``, or ``--plugin``). A module that fails keeps
    none of the registrations it made before failing."""
    if isinstance(modules, str | bytes) or not isinstance(modules, Iterable):
        raise CKBError(
            f"plugins{where} must be a list of importable module names such as ['my_problems'], got "
            f"{modules!r}."
        )
    loaded = []
    for module in modules:
        if not isinstance(module, str) or not module.strip() or "/" in module or module.endswith(".py"):
            raise CKBError(
                f"plugin{where} must be an importable module name such as 'my_problems' (on PYTHONPATH or "
                f"installed), got {module!r}."
            )
        module = module.strip()
        before = snapshot_registries()
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            restore_registries(before)
            missing = exc.name or ""
            if missing and not (module == missing or module.startswith(missing + ".")):
                raise CKBError(
                    f"plugin {module!r}{where} failed to import: it needs the module {missing!r}, which is "
                    f"not installed ({exc})."
                ) from None
            raise CKBError(
                f"plugin {module!r}{where} cannot be imported: {exc}. Is it installed, or its folder on "
                "PYTHONPATH?"
            ) from None
        except RegistrationError as exc:
            restore_registries(before)
            raise RegistrationError(f"plugin {module!r}{where} failed to import: {exc}") from None
        except CKBError:
            restore_registries(before)
            raise
        except SystemExit as exc:
            restore_registries(before)
            raise CKBError(
                f"plugin {module!r}{where} called sys.exit({exc.code!r}) while being imported; a plugin "
                "should only register things."
            ) from None
        except Exception as exc:
            restore_registries(before)
            raise CKBError(
                f"plugin {module!r}{where} failed to import: {type(exc).__name__}: {exc}"
            ) from None
        except BaseException:
            restore_registries(before)
            raise
        _remember(module)
        loaded.append(module)
    return loaded


def load_entry_points() -> list[str]:
    """Import the modules of the ``ckb.plugins`` entry-point group (once per process)."""
    global _LOADED_ENTRY_POINTS
    if _LOADED_ENTRY_POINTS:
        return []
    _LOADED_ENTRY_POINTS = True
    from importlib.metadata import entry_points

    return load_plugins(
        (ep.module for ep in entry_points(group=ENTRY_POINT_GROUP)),
        f" (entry point group {ENTRY_POINT_GROUP})",
    )
