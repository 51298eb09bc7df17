"""SQLite study storage: every ask, tell and failure, and the policy state after each step.

A study file is a plain SQLite database (a path, no server). Each operation is one transaction, so a
process killed at any moment leaves the file at the last completed operation: every told result is
intact and every ask that was recorded is known as *pending*. Several processes can share one file:
the database runs in WAL mode with a busy timeout, and trial numbers are allocated inside an
``IMMEDIATE`` transaction, so concurrent asks never collide. Nothing is pickled: points, constraint
values and policy states are JSON, with numpy arrays encoded exactly (:func:`dumps` / :func:`loads`).

Schema (version 1)::

    meta(key, value)                      -- the ckb marker: key 'schema_version'
    studies(id, name UNIQUE, spec JSON, created)
    trials(id, study_id, number, state in {pending, complete, failed}, x JSON, objective, constraints JSON,
           note, asked_at, told_at, info JSON; UNIQUE(study_id, number))
    policy_states(study_id, step, state JSON, created; PRIMARY KEY(study_id, step))
    turns(ticket, study_id, pid, host, token, since)   -- the fair queue (:mod:`ckb.studies.turns`)

**Files ckb does not own are never changed.** Before anything is written, an existing file is opened
read-only and must be a ckb study file (its ``meta`` table holds ``schema_version``, and it has ckb's
``studies``, ``trials`` and ``policy_states`` tables) or hold no table at all (a new, empty file); a foreign SQLite database, a file that is not SQLite, and a damaged or
truncated one are refused with :class:`StudyFileError` naming the file, and stay byte-identical. So is a
file in WAL mode with no table and no ``-wal`` beside it (a study copied without the ``-wal`` that held
it), which would otherwise read as empty and start the study over (:meth:`StudyStorage._check_wal_kept`).
``read_only=True`` (what ``ckb study list|show|export`` use) opens the file with SQLite's ``mode=ro``
and never creates, converts or migrates it (in a directory it may not write to, where SQLite cannot
create the ``-shm`` file a study in WAL mode needs, a study without a ``-wal`` holding changes is read
as ``immutable``; one with such a ``-wal`` is a one-line error saying what to do); ``create=False``
(what :meth:`ckb.Optimizer.load` uses) refuses a missing file instead of creating an empty one. A new
file is created with mode ``0o666`` minus the umask (SQLite alone would cap it at ``0o644``); its
``-wal`` and ``-shm`` files follow it. A file the process may not read is a one-line error naming the
permission.
SQLite errors met later (a file damaged while open, a lock held past the timeout) surface as
:class:`StudyFileError` / :class:`~ckb.studies.turns.StudyBusyError` with the file's name.

The storage checks what it can know on its own: the point's dimension and box and the number of
constraint values against the study's ``spec`` (``{"lower": [...], "upper": [...], "m": m}``), finite
values unless a trial is told as failed, and that the study and trial exist. A rejected call changes
nothing. What it reads back is checked the same way: a spec whose bounds or m are not numbers, and a trial
row that does not fit it (a number that is not a whole number >= 0, a note that is not text, times that
are not numbers, an unknown state, a point of the wrong dimension or outside the box, a complete trial
without a finite objective or its m finite constraint values, values on a pending or failed trial, an
``info`` that is not a dict, JSON nested too deeply to read) is a :class:`StudyFileError` naming the
file, the study, the trial and the field, never a wrong value handed on. A study name must be UTF-8 text
(a name that is not, e.g. a byte from a Latin-1 command line, is a one-line error), and an unknown name's
error lists the file's studies once, at most ten of them.

Compound operations: :meth:`StudyStorage.atomic` holds the file's write lock for a block of operations
(``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on an exception), so the operations inside join one
transaction; :meth:`StudyStorage.reading` gives several reads one consistent snapshot;
:meth:`StudyStorage.turn` queues a process fairly behind the others working on the same study. The
``info`` column (a JSON dict per trial, e.g. where a point came from and the policy's internals at the
ask) and the ``turns`` table were added after version 1 was first released; older ckb files gain them
with their first write, in its transaction (read-only opens, and writers refused before they write, leave
them as they are).

**The file's folder.** A writer needs to write the file and its folder (SQLite keeps ``-wal`` and
``-shm`` files there): a read-only file, folder or file system is a one-line :class:`StudyFileError`
saying so (``ckb study show``/``export`` can still read it), and a new file in a read-only folder too. A
read-only open of a study in WAL mode makes SQLite create the ``-wal`` and ``-shm`` files, which only a
connection that may write removes: when neither existed before the open, a refused open and a read-only
store's close remove them again (SQLite's own removal, which happens only if no other connection has the
file open), so a refused or only read file's folder is left as it was.
"""

from __future__ import annotations

import base64
import functools
import json
import math
import numbers
import os
import sqlite3
import stat
import time
from pathlib import Path
from typing import Any

import numpy as np

from ckb._validation import closest, short_repr
from ckb.errors import CKBError, DataFileError, InvalidInputError
from ckb.studies.turns import TURNS_TABLE, StudyBusyError, turn

SCHEMA_VERSION = 1

_SCHEMA = (
    """
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
    + TURNS_TABLE
)

#: what a study file is expected to be, for error messages
_EXPECTED = "expected a SQLite study file written by ckb.Optimizer"


class StudyNotFoundError(CKBError, KeyError):
    """No study of that name in the file."""

    def __str__(self) -> str:  # a KeyError's str() is the repr of its argument: the message in quotes
        return str(self.args[0]) if len(self.args) == 1 else super().__str__()


class StudyFileError(DataFileError):
    """The study file is missing, not a SQLite database, not a ckb study file, or damaged."""


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


# ------------------------------------------------------------------------------------------- checks
def _real(v: Any) -> bool:
    """``v`` is a finite real number (an int or a float, numpy's too; not a bool or a string)."""
    if type(v) is not float and (isinstance(v, bool) or not isinstance(v, numbers.Real)):  # float: fast
        return False
    try:
        return math.isfinite(v)
    except OverflowError:  # an int too large for a float
        return False


def _short(value: Any) -> str:
    """A stored value as error messages quote it (an array as the list it was stored as)."""
    try:
        return short_repr(value.tolist() if isinstance(value, np.ndarray) else value, 60, " ...")
    except RecursionError:  # a damaged value nested deeper than Python's repr goes
        return f"<a {type(value).__name__} nested too deeply to show>"


def _box(spec: dict[str, Any]) -> tuple[list[float], list[float], int]:
    """``(lower, upper, m)`` of a study spec, checked: lists of as many finite numbers with upper > lower,
    m a whole number >= 0, and a ``violation_budget``, if any, m numbers >= 0; a ValueError says what is
    wrong."""
    lo, hi, m = (
        v.tolist() if isinstance(v, np.ndarray) else v for v in (spec["lower"], spec["upper"], spec["m"])
    )
    for key, v in (("lower", lo), ("upper", hi)):
        if not isinstance(v, (list, tuple)) or not v or not all(map(_real, v)):
            raise ValueError(f"{key} must be a non-empty list of finite numbers, got {_short(v)}")
    if len(lo) != len(hi) or not all(a < b for a, b in zip(lo, hi)):
        raise ValueError(f"bounds must have upper > lower, got lower {_short(lo)} and upper {_short(hi)}")
    if not _count(m):
        raise ValueError(f"m (the number of constraints) must be a whole number >= 0, got {_short(m)}")
    if "minimize" in spec and not isinstance(spec["minimize"], bool):  # "false" would read as True
        raise ValueError(f"minimize must be true or false, got {_short(spec['minimize'])}")
    budget = spec.get("violation_budget")
    if budget is not None:  # a ckb.Optimizer study's: m numbers >= 0 (ckb.optimizer.core)
        budget = budget.tolist() if isinstance(budget, np.ndarray) else budget
        if not (isinstance(budget, list) and len(budget) == m and all(_real(v) and v >= 0 for v in budget)):
            raise ValueError(
                f"violation_budget {_short(budget)} must be None or {int(m)} finite numbers >= 0"
            )
    return [float(a) for a in lo], [float(b) for b in hi], int(m)


def _not_utf8(name: Any) -> str | None:
    """Why ``name`` (a study name) cannot be stored as the UTF-8 text SQLite keeps, or None: a name
    read from a command line in another encoding holds surrogates (``'\\udcff'`` for the byte 0xff)."""
    if not isinstance(name, str):
        return None
    try:
        name.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = name[exc.start : exc.end]
        if all("\udc80" <= c <= "\udcff" for c in bad):  # bytes the command line could not decode
            bad = "the byte(s) " + " ".join(f"0x{ord(c) - 0xDC00:02x}" for c in bad)
        else:
            bad = f"{bad!r}, a lone surrogate,"
        return f"it is not valid UTF-8 text ({bad} at position {exc.start})"
    return None


#: how many study names an unknown-name error lists
_LISTED = 10


def _known(name: str, names: list[str]) -> str:
    """The end of an unknown-study error: the closest names, then the file's names (each once, the first
    :data:`_LISTED` of them, each cut short)."""
    if not names:
        return " (the file holds no study)."
    hits = closest(name, names) if isinstance(name, str) else []
    hint = f" Did you mean {' or '.join(map(_short, hits))}?" if hits else ""
    shown = ", ".join(map(_short, names[:_LISTED]))
    more = f" ... and {len(names) - _LISTED} more" if len(names) > _LISTED else ""
    return f".{hint} Its {len(names)} stud{'y' if len(names) == 1 else 'ies'}: {shown}{more}."


#: the files SQLite keeps beside a database FILE: FILE-wal, FILE-shm, FILE-journal (deleted or
#: rewritten whenever FILE is opened), so no study may live under such a name
_COMPANIONS = ("-wal", "-shm", "-journal")


def _count(v: Any) -> bool:
    """``v`` is a whole number >= 0 (a count)."""
    return _real(v) and v >= 0 and float(v).is_integer()


def _numerics_problem(num: Any) -> str | None:
    """What is wrong with a trial's ``info["numerics"]`` (written by ckb.Optimizer: the counts
    ``fit_warnings``, ``acq_warnings`` and ``fit_failed`` and a list of ``messages``), or None."""
    counts = ("fit_warnings", "acq_warnings", "fit_failed")
    if (
        isinstance(num, dict)
        and all(_count(num.get(k, 0)) for k in counts)
        and isinstance(num.get("messages", []), list)
        and all(isinstance(s, str) for s in num.get("messages", []))
    ):
        return None
    return (
        f"info['numerics'] {_short(num)} (expected whole numbers >= 0 for {', '.join(counts)} and a list of "
        "messages)"
    )


def _fields_problem(number: Any, note: Any, asked_at: Any, told_at: Any) -> str | None:
    """What is wrong with the plain columns of a trial row, or None: its number (a whole number >= 0, as
    ckb numbers trials), its note (text or nothing), its ``asked_at`` time (a finite number) and its
    ``told_at`` time (a finite number or nothing)."""
    if type(number) is not int or number < 0:  # 'zz' or 1.5 (stored by hand): not a trial number
        return f"number {_short(number)} (expected a whole number >= 0)"
    if note is not None and not isinstance(note, str):
        return f"note {_short(note)} (expected text or nothing)"
    if not _real(asked_at):
        return f"asked_at {_short(asked_at)} (expected a time: a finite number of seconds)"
    if told_at is not None and not _real(told_at):
        return f"told_at {_short(told_at)} (expected a time: a finite number of seconds, or nothing)"
    return None


def _row_problem(state, x, objective, constraints, info, lower, upper, m) -> str | None:
    """What is wrong with a decoded trial row of a study with bounds ``lower``, ``upper`` and ``m``
    constraints, or None: the state, the point (its length, numbers inside the box), the objective and the
    constraints (m finite numbers for a complete trial, None for a pending or failed one), the info dict."""
    complete = state == "complete"
    if state not in ("pending", "complete", "failed"):
        return f"state {_short(state)} (expected pending, complete or failed)"
    if not (
        isinstance(x, list)
        and len(x) == len(lower)
        and all(_real(v) and a <= v <= b for v, a, b in zip(x, lower, upper))
    ):
        return (
            f"x {_short(x)} (expected {len(lower)} coordinates in the box {_short(lower)} .. {_short(upper)})"
        )
    if (not _real(objective)) if complete else (objective is not None):
        return (
            f"objective {_short(objective)} (expected a finite number for a complete trial, None otherwise)"
        )
    if complete:
        fits = isinstance(constraints, list) and len(constraints) == m and all(map(_real, constraints))
    else:
        fits = constraints is None
    if not fits:
        return (
            f"constraints {_short(constraints)} (expected {m} finite numbers for a complete trial, None "
            "otherwise)"
        )
    if info is not None and not isinstance(info, dict):
        return f"info {_short(info)} (expected a dict)"
    if info is not None and "numerics" in info:
        return _numerics_problem(info["numerics"])
    return None


# ------------------------------------------------------------------------------------------- storage
def _guarded(method):
    """Let ``method`` raise SQLite's errors as :class:`StudyFileError` / :class:`StudyBusyError` naming the file."""

    @functools.wraps(method)
    def call(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.IntegrityError):  # a bug, not a property of the file
                raise
            raise self._error(exc) from exc

    return call


#: the tables every ckb study file of this schema version holds (``turns`` was added later)
_TABLES = ("meta", "policy_states", "studies", "trials")


def _when_free(statement, timeout: float):
    """Run ``statement()``, retrying while SQLite says the file is locked, for up to ``timeout`` seconds.
    SQLite answers ``PRAGMA journal_mode=WAL`` with "database is locked" at once, without its busy
    timeout, while another connection holds a write lock: two processes creating one study file at the
    same moment then failed within a second with a message claiming a 60 s wait."""
    deadline = time.monotonic() + timeout
    pause = 0.005
    while True:
        try:
            return statement()
        except sqlite3.OperationalError as exc:
            if ("locked" not in str(exc) and "busy" not in str(exc)) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(2 * pause, 0.1)


def _classify(conn: sqlite3.Connection) -> tuple[str, list[str], str | None]:
    """``("ckb" | "empty" | "foreign", tables, schema_version)`` of an open database: "ckb" needs the
    ``meta`` table's ``schema_version`` and, for this version, every table of :data:`_TABLES`."""
    tables = sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
    if not tables:
        return "empty", tables, None
    if "meta" in tables:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is not None:
            version = str(row[0])
            complete = set(_TABLES) <= set(tables)
            return ("ckb" if complete or version != str(SCHEMA_VERSION) else "foreign"), tables, version
    return "foreign", tables, None


def _url_message(url: str) -> str:
    """A storage given as a URL (Optuna's form): a ckb study is a file path; SQLAlchemy's
    ``sqlite:///REL`` and ``sqlite:////ABS`` name the files REL and /ABS."""
    scheme, _, rest = url.partition("://")
    if scheme.lower() == "sqlite" and rest.startswith("/") and len(rest) > 1:
        return f"storage {url!r} is a database URL; ckb.Optimizer takes the study file's path: pass {rest[1:]!r}."
    return f"storage {url!r} is a URL; ckb.Optimizer takes the path of a SQLite study file (no server)."


class StudyStorage:
    """One SQLite study file (see the module docstring). Safe to use from several processes.

    Parameters
    ----------
    path : the file, or ``":memory:"``.
    timeout : seconds to wait for the file's write lock, or for a turn (:meth:`turn`) that does not move.
    read_only : open with SQLite's ``mode=ro``: reads only; nothing is created, converted or migrated.
    create : create the file if it does not exist (a writer's default); False: a missing file is an error.
    """

    def __init__(
        self, path: str | Path, timeout: float = 60.0, *, read_only: bool = False, create: bool = True
    ) -> None:
        if isinstance(path, str) and "://" in path:  # Path() would fold it: 'sqlite:/s.db', a bad folder
            raise InvalidInputError(_url_message(path))
        self.path = Path(path)
        self.timeout = float(timeout)
        self.read_only = bool(read_only)
        self._memory = str(path) == ":memory:"
        self._depth = 0
        self._turn_depth = 0
        self._conn: sqlite3.Connection | None = None
        self._boxes: dict[int, tuple] = {}  # study id -> (spec text, lower, upper, m)
        self._migrations: list[str] = []  # what an old file lacks, added by the first write (_migrate)
        self._migrating = False  # the open transaction adds them
        #: neither FILE-wal nor FILE-shm existed before this open: those this open makes go at close
        self._fresh = not self._memory and not any(Path(f"{self.path}{s}").exists() for s in ("-wal", "-shm"))
        if self._memory and self.read_only:
            raise InvalidInputError("an in-memory study (':memory:') cannot be opened read-only.")
        companion = next((s for s in _COMPANIONS if self.path.name.endswith(s)), None)
        if not self._memory and companion and len(self.path.name) > len(companion):
            main = self.path.with_name(self.path.name[: -len(companion)])
            raise InvalidInputError(
                f"{str(self.path)!r} is a name SQLite keeps for the {companion} file of a study file "
                f"{str(main)!r} (opening that study would delete or overwrite it): choose another name."
            )
        try:
            if self._memory:
                self._conn = self._connect(str(path), uri=False)
                self._prepare_writer()
            elif self.read_only:
                self._open_existing()
                self._conn = self._open_read_only()
                self._conn.execute("PRAGMA query_only = ON")
                self._check_integrity(self._conn)
            else:
                if self._open_existing(create=create):
                    self._check_writable()
                    kind = self._probe()  # read-only: a foreign file is refused before anything is written
                    # an empty file holds no study: only a caller that may create one may write the schema
                    self._check_kind(kind, allow_empty=create)
                self._conn = self._connect(str(self.path), uri=False)
                self._prepare_writer()
        except sqlite3.DatabaseError as exc:
            self.close()
            self._tidy()
            raise self._error(exc) from exc
        except BaseException:
            self.close()
            self._tidy()
            raise
        cols = {r["name"] for r in self._conn.execute("PRAGMA table_info(trials)")}
        self._has_info = "info" in cols

    # ------------------------------------------------------------------------------- opening
    def _uri(self, immutable: bool = False) -> str:
        return self.path.resolve().as_uri() + "?mode=ro" + ("&immutable=1" if immutable else "")

    def _open_read_only(self) -> sqlite3.Connection:
        """A ``mode=ro`` connection to the existing file, classified (a ckb study file, else an error).

        A study in WAL mode can only be read once SQLite has made its ``-shm`` file beside it, which a
        directory we may not write to forbids. Then, if there is no ``-wal`` file with changes in it (no
        writer has the study open, and every change is in the file itself), the file is read as
        ``immutable`` (without locks and without the ``-shm`` file); a ``-wal`` holding changes is a
        one-line error saying what to do."""
        try:
            return self._classified(self._uri())
        except sqlite3.OperationalError as exc:
            cannot_init = ("SQLITE_READONLY_DIRECTORY", "SQLITE_READONLY_CANTINIT", "SQLITE_CANTOPEN")
            if getattr(exc, "sqlite_errorname", "") not in cannot_init or os.access(
                self.path.parent, os.W_OK
            ):
                raise
        wal = Path(f"{self.path}-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise StudyFileError(
                f"cannot read {self.path}: its directory is not writable, and SQLite must create "
                f"{self.path.name}-shm there to read the changes held in {wal.name} (a writer has the study "
                "open, or did not close it); copy both files to a writable directory, or ask for write access "
                "to this one; nothing was changed."
            )
        return self._classified(self._uri(immutable=True))

    def _classified(self, uri: str) -> sqlite3.Connection:
        """A connection to ``uri``, open only if the file is a ckb study file (:meth:`_check_kind`)."""
        conn = self._connect(uri, uri=True)
        try:
            self._check_kind(_classify(conn), allow_empty=False)
        except BaseException:
            conn.close()
            raise
        return conn

    def _connect(self, target: str, uri: bool) -> sqlite3.Connection:
        conn = sqlite3.connect(target, timeout=self.timeout, isolation_level=None, uri=uri)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout={int(self.timeout * 1000)}")
        return conn

    def _open_existing(self, create: bool = False) -> bool:
        """Check the path (an existing file: readable, and not a study left without its ``-wal``,
        :meth:`_check_wal_kept`); create a new empty file if allowed. True: the file existed before."""
        if self.path.is_dir():
            raise StudyFileError(f"{str(self.path)!r} is a directory; {_EXPECTED}.")
        if self.path.exists():
            if self.path.is_file() and not os.access(self.path, os.R_OK):  # SQLite: "unable to open"
                mode = stat.filemode(self.path.stat().st_mode)
                raise StudyFileError(
                    f"cannot read {self.path}: permission denied (its mode is {mode}); ask its owner for "
                    "read access, or run as a user who has it; nothing was changed."
                )
            self._check_wal_kept()
            return True
        if not create:
            raise StudyFileError(f"no study file at {str(self.path)!r} ({_EXPECTED}); nothing was created.")
        if not self.path.parent.is_dir():
            raise InvalidInputError(f"the directory of the study file {str(self.path)!r} does not exist.")
        try:  # mode 0o666 minus the umask (SQLite would create it 0o644 minus the umask)
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:  # another process created it first
            pass
        except OSError as exc:  # a read-only file system, a folder we may not write to
            raise StudyFileError(
                f"cannot create the study file {self.path}: its folder {str(self.path.parent)!r} is not "
                f"writable ({exc.strerror or exc}); choose a writable folder; nothing was created."
            ) from None
        return False

    def _check_wal_kept(self) -> None:
        """Refuse an existing file in SQLite's WAL mode that holds no table and has no ``-wal`` beside it.

        Such a file is a study's first 4 KB copied or kept without the ``-wal`` that held its tables and
        results (a backup or copy made while a writer had it open, by a ckb before every commit was
        checkpointed into the file, or a ``-wal`` deleted after a crash): SQLite opens it as an empty
        database, which a reader would call "empty" and a writer would silently start over. A new file
        ckb creates is 0 bytes until its writer sets WAL mode, and that writer keeps the ``-wal`` open
        until its schema is committed and checkpointed, so this never refuses a file being made."""
        with open(self.path, "rb") as fh:
            header = fh.read(100)
        # bytes 18 and 19 of SQLite's header are the write and read versions: 2 means WAL mode
        if header[:16] != b"SQLite format 3\x00" or header[18:20] != b"\x02\x02":
            return
        if Path(f"{self.path}-wal").exists() or int.from_bytes(header[28:32], "big") > 1:
            return  # a -wal to read, or pages beyond the schema page: SQLite and _classify decide
        raise StudyFileError(
            f"{self.path} is in SQLite's WAL mode but holds no table, and {self.path.name}-wal is not beside "
            "it: if it is a study, its tables and results were in that -wal file (a copy or backup made "
            f"during a run, or a -wal deleted after a crash); put {self.path.name}-wal back beside it, or "
            f"delete {self.path} to start a new study; nothing was changed."
        )

    def _check_writable(self) -> None:
        """A writer needs to write the file and, for SQLite's ``-wal`` and ``-shm`` files, its folder: if
        either is read-only (a read-only file system, the permissions), say so now, in one line, instead
        of SQLite's "unable to open database file" later."""
        folder = self.path.parent
        what = None
        try:
            read_only_fs = bool(os.statvfs(self.path).f_flag & os.ST_RDONLY)
        except (OSError, AttributeError):  # no statvfs (Windows)
            read_only_fs = False
        if read_only_fs:
            what = "it is on a read-only file system"
        elif not os.access(self.path, os.W_OK):
            what = f"the file is read-only (its mode is {stat.filemode(self.path.stat().st_mode)})"
        elif not os.access(folder, os.W_OK):
            what = f"its folder {str(folder)!r} is not writable (SQLite keeps {self.path.name}-wal and -shm there)"
        if what is not None:
            raise StudyFileError(
                f"cannot write the study file {self.path}: {what}, and ckb.Optimizer writes every ask and tell "
                "to it; `ckb study show` and `ckb study export` can read it where it is; nothing was changed."
            )

    def _tidy(self) -> None:
        """Remove the empty ``-wal`` and the ``-shm`` file a read-only open of a study in WAL mode left
        beside it (SQLite makes them to read it, and only a connection that may write removes them), when
        neither existed before this open: a refused or only read file's folder is left as it was. The
        removal is SQLite's own, on closing a read-write connection that opened no transaction: it happens
        only if no other connection has the file open (it takes the file's exclusive lock), and with an
        empty ``-wal`` it writes nothing to the file."""
        if not self._fresh or not os.access(self.path.parent, os.W_OK):
            return
        wal = Path(f"{self.path}-wal")
        if not (wal.exists() or Path(f"{self.path}-shm").exists()) or (wal.exists() and wal.stat().st_size):
            return
        try:
            conn = sqlite3.connect(self.path.resolve().as_uri() + "?mode=rw", uri=True, timeout=0)
        except sqlite3.Error:
            return
        try:
            conn.execute("PRAGMA schema_version")  # opens the -wal, so that closing removes it
        except sqlite3.Error:
            pass
        finally:
            conn.close()

    def _probe(self) -> tuple[str, list[str], str | None]:
        """Classify the existing file through a read-only connection (which cannot change it)."""
        conn = sqlite3.connect(self._uri(), timeout=self.timeout, uri=True)
        try:
            kind = _classify(conn)
            if kind[0] == "ckb":
                self._check_integrity(conn)
            return kind
        finally:
            conn.close()

    def _check_integrity(self, conn: sqlite3.Connection) -> None:
        """SQLite's ``quick_check`` of the file (milliseconds for a study): a file cut short can still
        open, and even answer some queries, with pages read as zeros; refuse it instead."""
        problem = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
        if problem != "ok":
            first = str(problem).replace("*** in database main ***", "").strip().splitlines()[0]
            raise StudyFileError(
                f"{self.path} is damaged (SQLite's quick_check: {first}); {_EXPECTED} (is it truncated "
                "or damaged? nothing was changed)."
            )

    def _check_kind(self, kind: tuple[str, list[str], str | None], *, allow_empty: bool) -> None:
        what, tables, version = kind
        if what == "empty" and not allow_empty:
            raise StudyFileError(f"{self.path} is empty (no tables): not a ckb study file; {_EXPECTED}.")
        if what == "foreign" and version is not None:
            missing = ", ".join(repr(t) for t in _TABLES if t not in tables)
            raise StudyFileError(
                f"{self.path} is not a ckb study file: its 'meta' table has a schema_version but not the "
                f"table(s) {missing} of ckb's schema (it holds {', '.join(map(repr, tables))}); {_EXPECTED}. "
                "The file was not changed."
            )
        if what == "foreign":
            raise StudyFileError(
                f"{self.path} is not a ckb study file: it holds the table(s) {', '.join(map(repr, tables))} but no ckb schema "
                f"(a 'meta' table with its schema_version); {_EXPECTED}. The file was not changed."
            )
        if what == "ckb" and version != str(SCHEMA_VERSION):
            raise StudyFileError(
                f"{self.path} has study schema version {version}, this ckb reads version {SCHEMA_VERSION}."
            )

    def _prepare_writer(self) -> None:
        """WAL mode, then (under the write lock) the schema for a new file or the migrations of an old one."""
        _when_free(lambda: self._conn.execute("PRAGMA journal_mode=WAL"), self.timeout)
        self._conn.execute("PRAGMA synchronous=NORMAL")
        # every commit is copied into FILE itself (a passive checkpoint: it never waits for readers), so
        # FILE alone holds the study: a copy or backup of it without FILE-wal, or a FILE-wal deleted after a
        # crash, lost every result since the file was made (SQLite checkpoints only every 1000 pages; the
        # file stayed a 4 KB header while the run went on) and the copy started the study over
        self._conn.execute("PRAGMA wal_autocheckpoint=1")
        with self._tx(immediate=True) as c:
            what, tables, _ = kind = _classify(c)
            self._check_kind(kind, allow_empty=True)  # again, now that no one else can write
            if what == "empty":
                for stmt in _SCHEMA.strip().split(";"):
                    if stmt.strip():
                        c.execute(stmt)
                c.execute("INSERT INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                return
            # an older file gains what it lacks with the first write, in that write's transaction
            # (:meth:`_migrate`): one refused before it writes (a study of a newer ckb, one whose trials
            # have no info) stays as it was
            if "info" not in {r["name"] for r in c.execute("PRAGMA table_info(trials)")}:
                self._migrations.append("ALTER TABLE trials ADD COLUMN info TEXT")  # before the info column
            if "turns" not in tables:
                self._migrations.append(TURNS_TABLE)

    def _migrate(self, conn: sqlite3.Connection) -> None:
        """Inside a write transaction: add what an older file lacks (:meth:`_prepare_writer`); the
        transaction's rollback takes it back."""
        have = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        cols = {r[1] for r in conn.execute("PRAGMA table_info(trials)")}
        for stmt in self._migrations:
            if stmt.startswith("ALTER") and "info" not in cols:
                conn.execute(stmt)
            elif not stmt.startswith("ALTER") and "turns" not in have:
                conn.execute(stmt)

    def _error(self, exc: sqlite3.DatabaseError) -> CKBError:
        """SQLite's error as a one-line ckb error naming the file."""
        msg = str(exc)
        if isinstance(exc, sqlite3.OperationalError) and ("locked" in msg or "busy" in msg):
            return StudyBusyError(
                f"{self.path} stayed locked by another process for more than {self.timeout:g} s ({msg}); "
                "nothing was changed."
            )
        if "not a database" in msg:
            return StudyFileError(f"{self.path} is not a SQLite database ({msg}); {_EXPECTED}.")
        if "unable to open" in msg:
            return StudyFileError(f"cannot open {self.path} ({msg}); {_EXPECTED}.")
        if getattr(exc, "sqlite_errorname", "") == "SQLITE_READONLY_DIRECTORY":
            return StudyFileError(
                f"cannot write {self.path} ({msg}): its directory {str(self.path.parent)!r} is not writable, "
                f"and SQLite keeps {self.path.name}-wal and -shm files beside it; nothing was changed."
            )
        if "readonly" in msg or "read-only" in msg:
            return StudyFileError(
                f"cannot write {self.path} ({msg}); it was opened read-only or is not writable."
            )
        return StudyFileError(
            f"cannot read {self.path} as a study file: {msg}; {_EXPECTED} (is it truncated or damaged?)."
        )

    def _decoded(self, text: Any, what: str) -> Any:
        try:
            return loads(text)
        except RecursionError:  # "[[[[...]]]]" thousands deep: ckb never writes that
            raise StudyFileError(
                f"{self.path} holds a damaged {what} (its JSON is nested too deeply to read); {_EXPECTED}."
            ) from None
        except (ValueError, TypeError, KeyError) as exc:
            raise StudyFileError(
                f"{self.path} holds a damaged {what} ({type(exc).__name__}: {exc}); {_EXPECTED}."
            ) from exc

    @property
    def has_trial_info(self) -> bool:
        """Whether the file's trials table has the ``info`` column (files from before it do not, until a
        write adds it)."""
        return self._has_info

    def _writable(self) -> None:
        if self.read_only:
            raise InvalidInputError(f"{self.path} was opened read-only; nothing was changed.")

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
            if self.read_only:
                self._tidy()

    def __enter__(self) -> StudyStorage:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -------------------------------------------------------------------------- transactions
    def _tx(self, immediate: bool = False):
        store = self
        conn = self._conn

        class _T:
            def __enter__(self_inner):
                if store._depth == 0:
                    try:
                        conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
                        store._migrating = bool(immediate and store._migrations)
                        if store._migrating:
                            store._migrate(conn)
                    except sqlite3.DatabaseError as exc:
                        if conn.in_transaction:
                            conn.execute("ROLLBACK")
                        raise store._error(exc) from exc
                store._depth += 1
                return conn

            def __exit__(self_inner, exc_type, exc, tb):
                store._depth -= 1
                if store._depth == 0:
                    try:
                        conn.execute("COMMIT" if exc_type is None else "ROLLBACK")
                        if store._migrating and exc_type is None:
                            store._migrations, store._has_info = [], True  # migrated
                    except sqlite3.DatabaseError as err:
                        if conn.in_transaction:
                            conn.execute("ROLLBACK")
                        if exc_type is None:
                            raise store._error(err) from err
                return False

        return _T()

    def atomic(self):
        """A block of operations as one transaction holding the write lock (``with store.atomic(): ...``).

        Operations inside join it; it commits at the end of the block and rolls everything back if the
        block raises. Nested blocks join the outermost one.
        """
        self._writable()
        return self._tx(immediate=True)

    def reading(self):
        """A block of reads that all see one snapshot of the file (``with store.reading(): ...``)."""
        return self._tx(immediate=False)

    @_guarded
    def turn(self, name: str):
        """Wait for this process's turn at study ``name`` (first come, first served among the processes
        working on it; :mod:`ckb.studies.turns`) and hold it for the block: ``with store.turn(name): ...``."""
        self._writable()
        return turn(self, int(self._study(name)["id"]))

    @_guarded
    def revision(self, name: str) -> tuple[int, int, int]:
        """``(latest state step or -1, trials, pending trials)`` of a study: changes with every write of
        :class:`ckb.Optimizer` (each saves a new state step) and with every ask or tell."""
        study_id = self._study(name)["id"]
        row = self._conn.execute(
            "SELECT (SELECT COALESCE(MAX(step), -1) FROM policy_states WHERE study_id = ?) AS step, "
            "COUNT(*) AS n, COALESCE(SUM(state = 'pending'), 0) AS pending FROM trials WHERE study_id = ?",
            (study_id, study_id),
        ).fetchone()
        return int(row["step"]), int(row["n"]), int(row["pending"])

    # ---------------------------------------------------------------------------------- studies
    @_guarded
    def create_study(self, name: str, spec: dict[str, Any], *, load_if_exists: bool = False) -> int:
        """Create a study (``spec``: JSON-able, with ``lower``, ``upper`` and ``m``); return its id."""
        if not isinstance(name, str) or not name:
            raise InvalidInputError(f"a study name must be a non-empty string, got {name!r}.")
        bad = _not_utf8(name)
        if bad is not None:
            raise InvalidInputError(
                f"study name {_short(name)} cannot be stored: {bad}; no study was created."
            )
        for key in ("lower", "upper", "m"):
            if key not in spec:
                raise InvalidInputError(f"a study spec needs {key!r}; got keys {sorted(spec)}.")
        try:
            _box(spec)
        except ValueError as exc:
            raise InvalidInputError(f"study spec: {exc}.") from None
        self._writable()
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

    @_guarded
    def study_names(self) -> list[str]:
        return [r["name"] for r in self._conn.execute("SELECT name FROM studies ORDER BY id")]

    def _study(self, name: str) -> sqlite3.Row:
        bad = _not_utf8(name)
        if bad is not None:  # sqlite3 would raise a bare UnicodeEncodeError
            raise StudyNotFoundError(
                f"no study named {_short(name)} in {self.path}: {bad}, and study names are UTF-8 (was the "
                "name typed in another encoding?)."
            )
        row = self._conn.execute("SELECT * FROM studies WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise StudyNotFoundError(
                f"no study named {_short(name)} in {self.path}{_known(name, self.study_names())}"
            )
        return row

    @_guarded
    def spec(self, name: str) -> dict[str, Any]:
        return self._spec(self._study(name))

    def _spec(self, study: sqlite3.Row) -> dict[str, Any]:
        spec = self._decoded(study["spec"], f"spec of study {study['name']!r}")
        if not isinstance(spec, dict) or any(k not in spec for k in ("lower", "upper", "m")):
            raise StudyFileError(
                f"{self.path} holds a damaged spec of study {study['name']!r} (no lower, upper and m); {_EXPECTED}."
            )
        try:
            _box(spec)
        except ValueError as exc:
            raise StudyFileError(
                f"{self.path} holds a damaged spec of study {study['name']!r} ({exc}); {_EXPECTED}."
            ) from None
        return spec

    def _box(self, study: sqlite3.Row) -> tuple[list[float], list[float], int]:
        """The study's checked bounds and m (:func:`_box`), decoded once per spec text: trials are read
        on every transaction, and a spec may hold a large candidate set."""
        cached = self._boxes.get(study["id"])
        if cached is None or cached[0] != study["spec"]:
            cached = self._boxes[study["id"]] = (study["spec"], *_box(self._spec(study)))
        return cached[1:]

    # ----------------------------------------------------------------------------------- trials
    @_guarded
    def ask(self, name: str, x: Any, info: dict[str, Any] | None = None) -> int:
        """Record an asked point as a pending trial; returns its number (0, 1, ... per study).

        ``info``: an optional JSON-able dict kept with the trial (e.g. its source, the policy's internals).
        """
        self._writable()
        study = self._study(name)
        spec = self._spec(study)
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

    @_guarded
    def tell(
        self, name: str, number: int, objective: float, constraints: Any, note: str | None = None
    ) -> None:
        """Record a completed evaluation of pending trial ``number`` (finite values, m constraints; ``note``:
        an optional remark kept with it)."""
        self._writable()
        study = self._study(name)
        spec = self._spec(study)
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
        self._finish(study, number, "complete", y, dumps(cons.tolist()), None if note is None else str(note))

    @_guarded
    def fail(self, name: str, number: int, note: str = "") -> None:
        """Record that the evaluation of pending trial ``number`` failed (kept in the history)."""
        self._writable()
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

    @_guarded
    def trials(self, name: str, state: str | None = None) -> list[dict[str, Any]]:
        """All trials of a study in number order (``state`` filters), with decoded values."""
        study = self._study(name)
        q = (
            "SELECT * FROM trials WHERE study_id = ?"
            + (" AND state = ?" if state else "")
            + " ORDER BY number"
        )
        args = (study["id"], state) if state else (study["id"],)
        box = self._box(study)
        return [self._trial(r, study["name"], box) for r in self._conn.execute(q, args)]

    def _trial(self, r: sqlite3.Row, name: str, box: tuple[list[float], list[float], int]) -> dict[str, Any]:
        """One trial row, decoded and checked against the study's box and m (:func:`_row_problem`)."""
        number = r["number"]
        what = f"trial {number if type(number) is int else _short(number)} of study {name!r}"
        problem = _fields_problem(number, r["note"], r["asked_at"], r["told_at"])
        if problem is not None:
            raise StudyFileError(f"{self.path} holds a damaged {what}: its {problem}; {_EXPECTED}.")
        x = self._decoded(r["x"], what)
        cons = None if r["constraints"] is None else self._decoded(r["constraints"], what)
        info = r["info"] if self._has_info else None  # read-only opens of files from before the column
        info = None if info is None else self._decoded(info, what)
        problem = _row_problem(r["state"], x, r["objective"], cons, info, *box)
        if problem is not None:
            raise StudyFileError(f"{self.path} holds a damaged {what}: its {problem}; {_EXPECTED}.")
        return {
            "number": r["number"],
            "state": r["state"],
            "x": np.asarray(x, dtype=float),
            "objective": r["objective"],
            "constraints": None if cons is None else np.asarray(cons, dtype=float),
            "note": r["note"],
            "asked_at": r["asked_at"],
            "told_at": r["told_at"],
            "info": info,
        }

    # ------------------------------------------------------------------------------ policy state
    @_guarded
    def save_policy_state(self, name: str, step: int, state: dict[str, Any]) -> None:
        self._writable()
        study = self._study(name)
        with self._tx(immediate=True) as c:
            c.execute(
                "INSERT OR REPLACE INTO policy_states(study_id, step, state, created) VALUES (?, ?, ?, ?)",
                (study["id"], int(step), dumps(state), time.time()),
            )

    @_guarded
    def latest_policy_state(self, name: str) -> tuple[int, dict[str, Any]] | None:
        study = self._study(name)
        row = self._conn.execute(
            "SELECT step, state FROM policy_states WHERE study_id = ? ORDER BY step DESC LIMIT 1",
            (study["id"],),
        ).fetchone()
        if row is None:
            return None
        return int(row["step"]), self._decoded(row["state"], f"state (step {row['step']}) of study {name!r}")

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
