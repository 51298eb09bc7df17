"""SQLite study storage: every ask, tell and failure, and the policy state after each step (issue 7).

A study file is a plain SQLite database (a path, no server). Each operation is one transaction, so a
process killed at any moment leaves the file at the last completed operation: every told result is
intact and every ask that was recorded is known as *pending*. Several processes can share one file:
the database runs in WAL mode with a busy timeout, and trial numbers are allocated inside an
``IMMEDIATE`` transaction, so concurrent asks never collide. Nothing is pickled: points, constraint
values and policy states are JSON, with numpy arrays encoded exactly (:func:`dumps` / :func:`loads`).

Schema (version 1)::

    studies(id, name UNIQUE, spec JSON, created)
    trials(id, study_id, number, state in {pending, complete, failed}, x JSON, objective, constraints JSON,
           note, asked_at, told_at, info JSON; UNIQUE(study_id, number))
    policy_states(study_id, step, state JSON, created; PRIMARY KEY(study_id, step))

The storage checks what it can know on its own: the point's dimension and box and the number of
constraint values against the study's ``spec`` (``{"lower": [...], "upper": [...], "m": m}``), finite
values unless a trial is told as failed, and that the study and trial exist. A rejected call changes
nothing.

Compound operations: :meth:`StudyStorage.atomic` holds the file's write lock for a block of operations
(``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on an exception), so a process can read the latest policy
state, decide, record its ask and save the new state without another process interleaving; the
operations inside join that one transaction. The ``info`` column (a JSON dict per trial, e.g. where a
point came from and the policy's internals at the ask) was added after version 1 was first released;
older files gain it when opened.
"""

from __future__ import annotations

import base64
import json
import math
import sqlite3
import time
from pathlib import Path
from typing import Any

import numpy as np

from ckb._validation import did_you_mean
from ckb.errors import CKBError, InvalidInputError

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS studies(
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, spec TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS trials(
    id INTEGER PRIMARY KEY, study_id INTEGER NOT NULL REFERENCES studies(id), number INTEGER NOT NULL,
    state TEXT NOT NULL CHECK(state IN ('pending', 'complete', 'failed')), x TEXT NOT NULL,
    objective REAL, constraints TEXT, note TEXT, asked_at REAL NOT NULL, told_at REAL, info TEXT,
    UNIQUE(study_id, number));
CREATE TABLE IF NOT EXISTS policy_states(
    study_id INTEGER NOT NULL REFERENCES studies(id), step INTEGER NOT NULL, state TEXT NOT NULL,
    created REAL NOT NULL, PRIMARY KEY(study_id, step));
"""


class StudyNotFoundError(CKBError, KeyError):
    """No study of that name in the file."""


# ----------------------------------------------------------------------------------------- JSON codec
def _encode(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        arr = np.ascontiguousarray(obj)
        return {
            "__ndarray__": base64.b64encode(arr.tobytes()).decode("ascii"),
            "dtype": arr.dtype.str,
            "shape": list(arr.shape),
        }
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, dict):
        return {str(k): _encode(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_encode(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return {"__float__": repr(obj)}
    return obj


def _decode(obj: Any) -> Any:
    if isinstance(obj, dict):
        if "__ndarray__" in obj:
            raw = base64.b64decode(obj["__ndarray__"])
            return np.frombuffer(raw, dtype=np.dtype(obj["dtype"])).reshape(obj["shape"]).copy()
        if "__float__" in obj:
            return float(obj["__float__"])
        return {k: _decode(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_decode(v) for v in obj]
    return obj


def dumps(obj: Any) -> str:
    """JSON text of nested dicts/lists/numbers/strings/numpy arrays, arrays bit-exact (no pickle)."""
    return json.dumps(_encode(obj), allow_nan=False, separators=(",", ":"))


def loads(text: str) -> Any:
    return _decode(json.loads(text))


# ------------------------------------------------------------------------------------------- storage
class StudyStorage:
    """One SQLite study file (see the module docstring). Safe to use from several processes."""

    def __init__(self, path: str | Path, timeout: float = 60.0) -> None:
        self.path = Path(path)
        if not self.path.parent.exists():
            raise InvalidInputError(f"the directory of the study file {str(self.path)!r} does not exist.")
        self._conn = sqlite3.connect(str(self.path), timeout=timeout, isolation_level=None)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
        for stmt in _SCHEMA.strip().split(";"):
            if stmt.strip():
                self._conn.execute(stmt)
        cols = {r["name"] for r in self._conn.execute("PRAGMA table_info(trials)")}
        if "info" not in cols:  # files written before the info column existed
            try:
                self._conn.execute("ALTER TABLE trials ADD COLUMN info TEXT")
            except sqlite3.OperationalError:  # another process added it first
                pass
        self._depth = 0
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None:
            self._conn.execute(
                "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
        elif int(row["value"]) != SCHEMA_VERSION:
            raise InvalidInputError(
                f"{self.path} has study schema version {row['value']}, this ckb reads version {SCHEMA_VERSION}."
            )

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> StudyStorage:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _tx(self, immediate: bool = False):
        store = self
        conn = self._conn

        class _T:
            def __enter__(self_inner):
                if store._depth == 0:
                    conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
                store._depth += 1
                return conn

            def __exit__(self_inner, exc_type, exc, tb):
                store._depth -= 1
                if store._depth == 0:
                    conn.execute("COMMIT" if exc_type is None else "ROLLBACK")
                return False

        return _T()

    def atomic(self):
        """A block of operations as one transaction holding the write lock (``with store.atomic(): ...``).

        Operations inside join it; it commits at the end of the block and rolls everything back if the
        block raises. Nested blocks join the outermost one.
        """
        return self._tx(immediate=True)

    # ---------------------------------------------------------------------------------- studies
    def create_study(self, name: str, spec: dict[str, Any], *, load_if_exists: bool = False) -> int:
        """Create a study (``spec``: JSON-able, with ``lower``, ``upper`` and ``m``); return its id."""
        if not isinstance(name, str) or not name:
            raise InvalidInputError(f"a study name must be a non-empty string, got {name!r}.")
        for key in ("lower", "upper", "m"):
            if key not in spec:
                raise InvalidInputError(f"a study spec needs {key!r}; got keys {sorted(spec)}.")
        lo, hi = np.asarray(spec["lower"], dtype=float), np.asarray(spec["upper"], dtype=float)
        if lo.ndim != 1 or lo.shape != hi.shape or not np.all(hi > lo):
            raise InvalidInputError(
                f"study bounds must be 1-D with upper > lower, got {spec['lower']} and {spec['upper']}."
            )
        with self._tx(immediate=True) as c:
            row = c.execute("SELECT id FROM studies WHERE name = ?", (name,)).fetchone()
            if row is not None:
                if load_if_exists:
                    return int(row["id"])
                raise InvalidInputError(
                    f"a study named {name!r} already exists in {self.path}; pass load_if_exists=True."
                )
            cur = c.execute(
                "INSERT INTO studies(name, spec, created) VALUES (?, ?, ?)", (name, dumps(spec), time.time())
            )
            return int(cur.lastrowid)

    def study_names(self) -> list[str]:
        return [r["name"] for r in self._conn.execute("SELECT name FROM studies ORDER BY id")]

    def _study(self, name: str) -> sqlite3.Row:
        row = self._conn.execute("SELECT * FROM studies WHERE name = ?", (name,)).fetchone()
        if row is None:
            names = self.study_names()
            raise StudyNotFoundError(
                f"no study named {name!r} in {self.path} (studies: {names or 'none'}).{did_you_mean(name, names)}"
            )
        return row

    def spec(self, name: str) -> dict[str, Any]:
        return loads(self._study(name)["spec"])

    # ----------------------------------------------------------------------------------- trials
    def ask(self, name: str, x: Any, info: dict[str, Any] | None = None) -> int:
        """Record an asked point as a pending trial; returns its number (0, 1, ... per study).

        ``info``: an optional JSON-able dict kept with the trial (e.g. its source, the policy's internals).
        """
        study = self._study(name)
        spec = loads(study["spec"])
        x = self._check_point(spec, x)
        info_text = None if info is None else dumps(dict(info))
        with self._tx(immediate=True) as c:
            row = c.execute(
                "SELECT COALESCE(MAX(number), -1) AS n FROM trials WHERE study_id = ?", (study["id"],)
            ).fetchone()
            number = int(row["n"]) + 1
            c.execute(
                "INSERT INTO trials(study_id, number, state, x, asked_at, info) VALUES (?, ?, 'pending', ?, ?, ?)",
                (study["id"], number, dumps(x.tolist()), time.time(), info_text),
            )
        return number

    def tell(self, name: str, number: int, objective: float, constraints: Any) -> None:
        """Record a completed evaluation of pending trial ``number`` (finite values, m constraints)."""
        study = self._study(name)
        spec = loads(study["spec"])
        try:
            y = float(objective)
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(f"objective must be a real number, got {objective!r}.") from exc
        cons = np.atleast_1d(np.asarray(constraints, dtype=float))
        if cons.shape != (int(spec["m"]),):
            raise InvalidInputError(
                f"expected {spec['m']} constraint value(s), got {cons.size} ({np.asarray(constraints).tolist()})."
            )
        if not math.isfinite(y) or not np.all(np.isfinite(cons)):
            raise InvalidInputError(
                f"objective {objective!r} and constraints {cons.tolist()} must be finite; tell a failed "
                "evaluation with fail() instead. Nothing was recorded."
            )
        self._finish(study, number, "complete", y, dumps(cons.tolist()), None)

    def fail(self, name: str, number: int, note: str = "") -> None:
        """Record that the evaluation of pending trial ``number`` failed (kept in the history)."""
        self._finish(self._study(name), number, "failed", None, None, str(note))

    def _finish(self, study, number, state, y, cons, note) -> None:
        with self._tx(immediate=True) as c:
            row = c.execute(
                "SELECT state FROM trials WHERE study_id = ? AND number = ?", (study["id"], int(number))
            ).fetchone()
            if row is None:
                raise InvalidInputError(f"study {study['name']!r} has no trial number {number!r}.")
            if row["state"] != "pending":
                raise InvalidInputError(
                    f"trial {number} of study {study['name']!r} is already {row['state']}; nothing was changed."
                )
            c.execute(
                "UPDATE trials SET state = ?, objective = ?, constraints = ?, note = ?, told_at = ? "
                "WHERE study_id = ? AND number = ?",
                (state, y, cons, note, time.time(), study["id"], int(number)),
            )

    def trials(self, name: str, state: str | None = None) -> list[dict[str, Any]]:
        """All trials of a study in number order (``state`` filters), with decoded values."""
        study = self._study(name)
        q = (
            "SELECT * FROM trials WHERE study_id = ?"
            + (" AND state = ?" if state else "")
            + " ORDER BY number"
        )
        args = (study["id"], state) if state else (study["id"],)
        out = []
        for r in self._conn.execute(q, args):
            out.append(
                {
                    "number": r["number"],
                    "state": r["state"],
                    "x": np.asarray(loads(r["x"]), dtype=float),
                    "objective": r["objective"],
                    "constraints": None if r["constraints"] is None else np.asarray(loads(r["constraints"])),
                    "note": r["note"],
                    "asked_at": r["asked_at"],
                    "told_at": r["told_at"],
                    "info": None if r["info"] is None else loads(r["info"]),
                }
            )
        return out

    # ------------------------------------------------------------------------------ policy state
    def save_policy_state(self, name: str, step: int, state: dict[str, Any]) -> None:
        study = self._study(name)
        with self._tx(immediate=True) as c:
            c.execute(
                "INSERT OR REPLACE INTO policy_states(study_id, step, state, created) VALUES (?, ?, ?, ?)",
                (study["id"], int(step), dumps(state), time.time()),
            )

    def latest_policy_state(self, name: str) -> tuple[int, dict[str, Any]] | None:
        study = self._study(name)
        row = self._conn.execute(
            "SELECT step, state FROM policy_states WHERE study_id = ? ORDER BY step DESC LIMIT 1",
            (study["id"],),
        ).fetchone()
        return None if row is None else (int(row["step"]), loads(row["state"]))

    # ------------------------------------------------------------------------------------ checks
    @staticmethod
    def _check_point(spec: dict[str, Any], x: Any) -> np.ndarray:
        lo, hi = np.asarray(spec["lower"], dtype=float), np.asarray(spec["upper"], dtype=float)
        try:
            x = np.asarray(x, dtype=float).reshape(-1)
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(f"a point must be numeric, got {x!r}.") from exc
        if x.shape != lo.shape:
            raise InvalidInputError(f"a point must have {lo.size} coordinate(s), got {x.size}: {x.tolist()}.")
        if not np.all(np.isfinite(x)):
            raise InvalidInputError(f"a point must be finite, got {x.tolist()}.")
        bad = (x < lo) | (x > hi)
        if np.any(bad):
            j = int(np.flatnonzero(bad)[0])
            raise InvalidInputError(
                f"point {x.tolist()} is outside the box: coordinate {j} = {x[j]} not in [{lo[j]}, {hi[j]}]."
            )
        return x
