"""Fair turns at a study: first come, first served across the processes sharing a study file.

**Why.** SQLite's write lock is not fair. A connection that finds it taken retries after growing sleeps
(1, 2, 5, ... up to 100 ms), while the process that just committed takes it again within microseconds
(its tell and its next ask follow its previous ask at once), and an ask used to hold the lock through
its whole model fit. With six workers on one study and instant evaluations, one worker got 37 of 54
asks and five got one each (the reported case); measured before this module, 41 asks for a budget of 36: 30, 7,
1, 1, 1 and 1. With turns: 6 each (budget 54: 9 each).

**How.** A process that is about to change a study takes a *ticket*: a row of the ``turns`` table (an
increasing integer, the study, its pid, host and process start time), written in a short transaction.
It then polls (reads never block in WAL mode) until no older ticket of that study remains, does its
work, and deletes its ticket. Tickets are served in the order they were taken, so a worker that has
just asked queues behind every worker that was already waiting.

**Crashes.** A process killed while waiting or during its turn leaves its ticket behind. A waiter removes
a ticket ahead of it when the ticket's process is gone: its pid no longer exists, is a zombie (killed
but not yet reaped by its parent), or now names another process (the start time differs; Linux
``/proc``). Tickets of another host cannot be checked (WAL needs every process on one host anyway). A
waiter whose queue has not moved for ``timeout`` seconds gives up with :class:`StudyBusyError` naming the
process it waited for; nothing is changed.

The turn gives fairness, not correctness: the writes of a turn still check, in their own transaction,
that nothing changed since they read (:mod:`ckb.optimizer.study`).
"""

from __future__ import annotations

import os
import socket
import sqlite3
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ckb.errors import CKBError

if TYPE_CHECKING:
    from ckb.studies.storage import StudyStorage

#: the table of tickets (created with the schema; files written before it gain it when opened to write)
TURNS_TABLE = """CREATE TABLE IF NOT EXISTS turns(
    ticket INTEGER PRIMARY KEY, study_id INTEGER NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL,
    token TEXT NOT NULL, since REAL NOT NULL)"""

#: polling interval while waiting: starts short, grows to this bound
_MAX_POLL = 0.05


class StudyBusyError(CKBError, TimeoutError):
    """Another process kept its turn at a study (or the file's write lock) longer than the timeout."""


def _proc_stat(pid: int) -> tuple[str, str] | None:
    """``(state, start time)`` of a process from Linux ``/proc/<pid>/stat`` (fields 3 and 22), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode(errors="replace")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    return (fields[0], fields[19]) if len(fields) > 19 else None


def _start_token(pid: int) -> str:
    """The process's start time (clock ticks since boot), or "" where ``/proc`` is not available."""
    stat = _proc_stat(pid)
    return "" if stat is None else stat[1]


def _alive(pid: int, token: str) -> bool:
    """Whether process ``pid`` still runs and is the one that took the ticket: it exists, is not a
    zombie (killed, not yet reaped by its parent), and started when the ticket says (not a reused pid)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        pass
    except OSError:
        return True
    stat = _proc_stat(pid)
    if stat is None:  # no /proc: the pid exists, trust it
        return True
    state, started = stat
    return state not in ("Z", "X") and (not token or started == token)


_HOST = socket.gethostname()


def process_mark() -> dict[str, Any]:
    """Which process this is, to store with what it asks: ``{"pid", "host", "start"}`` (``start``: its
    start time, so that a reused pid is not taken for it; "" where ``/proc`` is not available)."""
    pid = os.getpid()
    return {"pid": pid, "host": _HOST, "start": _start_token(pid)}


def gone(mark: Any) -> bool | None:
    """Whether the process of a :func:`process_mark` has ended: True or False on this host, None when
    unknown (another host, or no mark: a trial asked before marks were stored)."""
    if not isinstance(mark, dict) or mark.get("host") != _HOST or not isinstance(mark.get("pid"), int):
        return None
    return not _alive(mark["pid"], str(mark.get("start") or ""))


@contextmanager
def turn(store: StudyStorage, study_id: int):
    """Wait for this process's turn at study ``study_id`` of ``store``, hold it for the block, release it.

    Nested turns on the same storage join the outer one.
    """
    if store._turn_depth:
        store._turn_depth += 1
        try:
            yield
        finally:
            store._turn_depth -= 1
        return
    pid = os.getpid()
    with _translated(store), store._tx(immediate=True) as c:
        ticket = c.execute(
            "INSERT INTO turns(study_id, pid, host, token, since) VALUES (?, ?, ?, ?, ?)",
            (study_id, pid, _HOST, _start_token(pid), time.time()),
        ).lastrowid
    try:
        with _translated(store):
            _wait(store, study_id, ticket)
        store._turn_depth = 1
        yield
    finally:
        store._turn_depth = 0
        with _translated(store), store._tx(immediate=True) as c:
            c.execute("DELETE FROM turns WHERE ticket = ?", (ticket,))


@contextmanager
def _translated(store: StudyStorage):
    """SQLite's errors in the block as the storage's one-line errors naming the file."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        raise store._error(exc) from exc


def _wait(store: StudyStorage, study_id: int, ticket: int) -> None:
    """Poll until no older ticket of the study remains, removing those of dead processes."""

    def first_ahead():
        while True:
            ahead = store._conn.execute(
                "SELECT ticket, pid, host, token FROM turns WHERE study_id = ? AND ticket < ? ORDER BY ticket",
                (study_id, ticket),
            ).fetchall()
            if not ahead:
                return None
            dead = [r["ticket"] for r in ahead if r["host"] == _HOST and not _alive(r["pid"], r["token"])]
            if not dead:
                return ahead[0]["ticket"], ahead
            with store._tx(immediate=True) as c:
                c.executemany("DELETE FROM turns WHERE ticket = ?", [(t,) for t in dead])

    def timed_out(front: int, ahead) -> StudyBusyError:
        r = ahead[0]
        return StudyBusyError(
            f"waited {store.timeout:g} s for process {r['pid']} on {r['host']!r} to finish its turn at a "
            f"study in {store.path} ({len(ahead)} process(es) ahead); nothing was changed. If that "
            "process is stuck, stop it (its turn is then skipped), or pass a longer timeout."
        )

    _wait_in_line(first_ahead, store.timeout, timed_out, delay=0.001)


def _wait_in_line(first_ahead, timeout: float, timed_out, *, delay: float) -> None:
    """Poll until nothing is ahead: ``first_ahead()`` returns None, or ``(key, what)`` for the first one
    ahead. Sleeps between polls start at ``delay`` seconds and double up to ``_MAX_POLL``; when the same
    key has stayed first for more than ``timeout`` seconds, raises ``timed_out(key, what)``. Shared by
    the study turns here and the decision turns of :class:`ckb.integrations.optuna.CKBSampler`."""
    front, since = None, time.monotonic()
    while True:
        ahead = first_ahead()
        if ahead is None:
            return
        key, what = ahead
        if key != front:  # the line moved
            front, since = key, time.monotonic()
        elif time.monotonic() - since > timeout:
            raise timed_out(key, what)
        time.sleep(delay)
        delay = min(2 * delay, _MAX_POLL)
