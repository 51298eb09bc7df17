"""Pickle-free persistence of nested state: numpy arrays in an ``.npz``, everything else as JSON.

``save_state(path, state)`` accepts nested dicts/lists of arrays, numbers, strings, bools and ``None``
(e.g. a policy's ``state_dict()``, which includes numpy ``Generator`` states). Files are written to a
temporary name and renamed, so a crash never leaves a half-written file under the final name.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Self

import numpy as np

from ckb._validation import one_line
from ckb.errors import CKBError, DataFileError, InvalidInputError

_ARRAY = "__array__"


def _split(obj: Any, arrays: dict[str, np.ndarray], prefix: str) -> Any:
    if isinstance(obj, np.ndarray):
        key = f"a{len(arrays)}"
        arrays[key] = obj
        return {_ARRAY: key}
    if isinstance(obj, dict):
        return {str(k): _split(v, arrays, f"{prefix}/{k}") for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_split(v, arrays, f"{prefix}/{i}") for i, v in enumerate(obj)]
    if isinstance(obj, np.generic):
        return obj.item()
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(
        f"cannot serialize {type(obj).__name__} at {prefix or '/'}; use arrays, numbers, strings."
    )


def _join(obj: Any, arrays) -> Any:
    if isinstance(obj, dict):
        if set(obj) == {_ARRAY}:
            return arrays[obj[_ARRAY]]
        return {k: _join(v, arrays) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_join(v, arrays) for v in obj]
    return obj


def _umask() -> int:
    """This process's umask (read from ``/proc`` where it can be, so no other thread sees it changed)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: Path, write) -> None:
    """Call ``write(file_object)`` on a temporary file next to ``path``, then rename it into place, and
    remove the temporaries that a write of ``path`` killed in an earlier run left
    (:func:`remove_stale_temporaries`).

    The file gets the mode of a file created with ``open`` (``0o666 & ~umask``), not ``mkstemp``'s 0600."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    remove_stale_temporaries(path)  # of a write killed in an earlier run (kill -9)


def remove_stale_temporaries(path: str | Path) -> list[Path]:
    """Remove the temporary files :func:`atomic_write` left next to ``path`` when its process was killed
    mid-write (``.NAME.*.tmp`` last modified before ``path`` was): called by :func:`atomic_write` once
    ``path`` is written again.
    One newer than ``path`` may be another process's write in progress and is kept. Returns the removed."""
    path = Path(path)
    try:
        written = path.stat().st_mtime
    except OSError:
        return []
    removed = []
    for tmp in path.parent.glob(f".{path.name}.*.tmp"):
        try:
            if tmp.is_file() and tmp.stat().st_mtime < written:
                tmp.unlink()
                removed.append(tmp)
        except OSError:  # gone already, or not ours to remove: left as it is
            pass
    return removed


def save_state(path: str | Path, state: dict[str, Any]) -> None:
    arrays: dict[str, np.ndarray] = {}
    tree = _split(state, arrays, "")
    meta = np.frombuffer(json.dumps(tree).encode(), dtype=np.uint8)
    atomic_write(Path(path), lambda fh: np.savez(fh, __json__=meta, **arrays))


def load_state(path: str | Path) -> dict[str, Any]:
    with open(Path(path), "rb") as fh:  # numpy reads any other file as a pickle it then refuses to load
        if fh.read(4) != b"PK\x03\x04":
            raise ValueError("not a .npz archive, as ckb writes")
    with np.load(Path(path), allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files if k != "__json__"}
        tree = json.loads(bytes(data["__json__"]).decode())
    return _join(tree, arrays)


def _read_state(path: str | Path, noun: str) -> dict[str, Any]:
    """:func:`load_state`, a missing or unreadable file as one line naming it (``noun``: "file" or
    "checkpoint", as the message names it)."""
    label = f"checkpoint {str(path)!r}" if noun == "checkpoint" else repr(str(path))
    try:
        return load_state(path)
    except FileNotFoundError:
        raise DataFileError(f"{label} does not exist.") from None
    except Exception as exc:
        raise InvalidInputError(f"{label} is not a readable ckb {noun} ({one_line(exc)}).") from None


def read_checkpoint(path: str | Path, keys: tuple[str, ...]) -> dict[str, Any]:
    """The state :func:`save_state` wrote at ``path``, holding ``keys``; a missing, unreadable or foreign
    file is one line naming it (a checkpoint's resume reads it so)."""
    state = _read_state(path, "checkpoint")
    missing = [k for k in keys if not isinstance(state, dict) or k not in state]
    if missing:
        raise InvalidInputError(f"checkpoint {str(path)!r} lacks the key(s) {missing}.")
    return state


def checkpoint_part(path: str | Path, what: str, fn) -> Any:
    """``fn()``, with any error it raises as one line naming the checkpoint ``path`` and its part ``what``."""
    try:
        return fn()
    except CKBError as exc:
        raise InvalidInputError(f"checkpoint {str(path)!r}, {what}: {one_line(exc)}") from None
    except Exception as exc:
        raise InvalidInputError(
            f"checkpoint {str(path)!r} has a bad {what} ({type(exc).__name__}: {one_line(exc)})."
        ) from None


class SavedState:
    """``save(path)`` and ``load(path)`` for a class with ``state_dict()`` and the classmethod
    ``from_state(state)``: the state in one pickle-free file (:func:`save_state`, :func:`load_state`)."""

    def save(self, path: str | Path) -> None:
        save_state(path, self.state_dict())

    @classmethod
    def load(cls, path: str | Path) -> Self:
        """The object saved at ``path``; a missing, unreadable or foreign file is one line naming it."""
        state = _read_state(path, "file")
        try:
            return cls.from_state(state)
        except CKBError:
            raise
        except Exception as exc:
            raise InvalidInputError(
                f"{str(path)!r} does not hold a saved {cls.__name__} ({type(exc).__name__}: {one_line(exc)})."
            ) from None


def write_json(path: str | Path, obj: Any) -> None:
    text = json.dumps(obj, indent=2, default=_json_default).encode()
    atomic_write(Path(path), lambda fh: fh.write(text))


def _json_default(o: Any) -> Any:
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, np.generic):
        return o.item()
    raise TypeError(f"not JSON serializable: {type(o).__name__}")
