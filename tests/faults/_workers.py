"""Worker processes for the fault-injection tests (importable by forkserver/spawn children).

A worker runs the README's ask/tell loop on a study file and logs every ask ``ask()`` returned and every
tell ``tell()`` returned to its own append-only files (one line each, fsync'd), so the test can check the
study against what the workers were told, whatever moment a ``kill -9`` hit.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

LOWER, UPPER = [0.0, 0.0], [6.0, 6.0]
RUNTIME = {"num_restarts": 2, "raw_samples": 32, "maxiter": 30}


def evaluate(x) -> tuple[float, list[float]]:
    """The README's problem (cheap, deterministic in x, so a told value can be recomputed)."""
    f = np.cos(2 * x[0]) * np.cos(x[1]) + np.sin(x[0])
    g = np.cos(x[0]) * np.cos(x[1]) - np.sin(x[0]) * np.sin(x[1]) - 0.5
    return float(f), [float(g)]


def _hex(values) -> str:
    return " ".join(float(v).hex() for v in values)


def _unhex(words) -> list[float]:
    return [float.fromhex(w) for w in words]


def _append(path: str, line: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def read_log(path: str) -> list[list[str]]:
    """Complete lines of a log (a line cut by a kill has no newline and is dropped)."""
    if not os.path.exists(path):
        return []
    with open(path) as fh:
        text = fh.read()
    return [line.split() for line in text.split("\n")[:-1] if line]


def logs(logdir: str, wid: int) -> tuple[str, str]:
    return os.path.join(logdir, f"asks-{wid}.log"), os.path.join(logdir, f"tells-{wid}.log")


def optimizer_worker(path: str, name: str, logdir: str, wid: int, incarnation: int) -> None:
    """Resume the study, tell the asks this worker logged but did not tell, then loop until the budget
    is used. Tell log lines: ``tell NUMBER x0 x1 y g`` (tell returned) or ``recovered NUMBER ...`` (a tell
    that committed before a kill hit the log write: found complete in the study on restart)."""
    sys.stderr = open(os.path.join(logdir, f"err-{wid}-{incarnation}.log"), "w", buffering=1)
    import ckb

    rng = np.random.default_rng([wid, incarnation])
    asks_log, tells_log = logs(logdir, wid)
    opt = ckb.Optimizer.load(path, name, **RUNTIME)
    told = {tuple(_unhex(w[2:4])) for w in read_log(tells_log)}
    for words in read_log(asks_log):
        x = tuple(_unhex(words[1:3]))
        if x in told:
            continue
        trial = next(t for t in opt.history() if tuple(t["x"].tolist()) == x)
        y, g = evaluate(np.array(x))
        if trial["state"] == "pending":
            number = opt.tell(np.array(x), y, g)
            _append(tells_log, f"tell {number} {_hex(x)} {_hex([y, *g])}")
        else:  # the tell committed, the kill came before its log line
            _append(tells_log, f"recovered {trial['number']} {_hex(x)} {_hex([y, *g])}")
        told.add(x)
    while opt.metrics()["remaining"] > 0:
        try:
            x = opt.ask()
        except ckb.BudgetExhaustedError:
            break
        _append(asks_log, f"ask {_hex(x)}")
        y, g = evaluate(x)
        time.sleep(float(rng.uniform(0, 0.03)))  # an evaluation takes a while: kills land here too
        number = opt.tell(x, y, g)
        _append(tells_log, f"tell {number} {_hex(x)} {_hex([y, *g])}")
    opt.close()
