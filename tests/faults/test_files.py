"""Corrupted and foreign files (fault-injection suite): every command and API refuses them with a
one-line error (no traceback) and leaves them byte-identical.

Study files: truncated at several offsets, random bytes overwritten (seeded), a foreign SQLite
database, an empty file, a directory in place of the file. Sweep outputs: a trace truncated, a trace of
another trial under a trial's name, a summary.json that is not JSON.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ckb
from ckb.errors import CKBError
from tests.faults import _workers as W

NAME = "pump"


def _digest(path: Path) -> str:
    if path.is_dir():
        return "dir:" + ",".join(sorted(p.name for p in path.iterdir()))
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def study_bytes(tmp_path_factory) -> tuple[bytes, list]:
    """A study file with 5 told trials and one pending ask (the design phase: no GP fit needed)."""
    path = tmp_path_factory.mktemp("study") / "s.db"
    opt = ckb.Optimizer(W.LOWER, W.UPPER, m=1, policy="cei", budget=10, n_init=8, storage=str(path),
                        study_name=NAME, **W.RUNTIME)  # fmt: skip
    for _ in range(5):
        x = opt.ask()
        opt.tell(x, *W.evaluate(x))
    opt.ask()
    history = opt.history()
    opt.close()
    assert not Path(str(path) + "-wal").exists() or Path(str(path) + "-wal").stat().st_size == 0
    return path.read_bytes(), history


def _cases(raw: bytes) -> dict[str, object]:
    rng = np.random.default_rng(2024)
    cases: dict[str, object] = {"empty": b""}
    for label, cut in (("50", 50), ("100", 100), ("1024", 1024), ("4096", 4096), ("half", len(raw) // 2),
                       ("last-byte", len(raw) - 1)):  # fmt: skip
        cases[f"truncated-{label}"] = raw[:cut]
    for k in range(4):
        damaged = bytearray(raw)
        for off in rng.choice(np.arange(100, len(raw)), size=32, replace=False):
            damaged[int(off)] = int(rng.integers(256))
        cases[f"random-bytes-{k}"] = bytes(damaged)
    cases["foreign-sqlite"] = "foreign"
    cases["directory"] = "directory"
    return cases


CASES = _cases(b"\0" * 12288)  # names only (the offsets depend on the file: recomputed per test)


def _materialize(tmp_path: Path, case: str, raw: bytes) -> Path:
    path = tmp_path / "s.db"
    spec = _cases(raw)[case]
    if spec == "foreign":
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT)")
            conn.execute("INSERT INTO users(name) VALUES ('alice')")
        conn.close()
    elif spec == "directory":
        path.mkdir()
        (path / "inside.txt").write_text("not a study")
    else:
        path.write_bytes(spec)
    return path


def _one_line(msg: str) -> None:
    assert "Traceback" not in msg, msg
    assert msg.strip() and "\n" not in msg.strip(), f"not one line: {msg!r}"


def _same_history(a: list, b: list) -> bool:
    if len(a) != len(b):
        return False
    for s, t in zip(a, b, strict=True):
        if s["state"] != t["state"] or not np.array_equal(s["x"], t["x"]) or s["objective"] != t["objective"]:
            return False
        if (s["constraints"] is None) != (t["constraints"] is None):
            return False
        if s["constraints"] is not None and not np.array_equal(s["constraints"], t["constraints"]):
            return False
    return True


def _api_calls(path: Path):
    def load():
        return ckb.Optimizer.load(path, NAME, **W.RUNTIME)

    def construct():
        return ckb.Optimizer(W.LOWER, W.UPPER, m=1, policy="cei", budget=10, n_init=8, storage=str(path),
                             study_name=NAME, **W.RUNTIME)  # fmt: skip

    def read_only():
        from ckb.studies import StudyStorage

        with StudyStorage(path, read_only=True) as s:
            return s.trials(NAME)

    return {"Optimizer.load": load, "Optimizer(...)": construct, "StudyStorage(read_only)": read_only}


@pytest.mark.parametrize("case", list(CASES))
def test_damaged_study_file_is_refused_in_one_line_and_left_unchanged(tmp_path, study_bytes, case):
    raw, history = study_bytes
    path = _materialize(tmp_path, case, raw)
    before = _digest(path)
    silently_different = []
    for what, call in _api_calls(path).items():
        if case == "empty" and what != "StudyStorage(read_only)":
            continue  # an empty file is a new study file to a writer (by design); load: see below
        try:
            result = call()
        except CKBError as exc:
            _one_line(str(exc.args[0] if exc.args else exc))
            assert "s.db" in str(exc), f"{what}: the error does not name the file: {exc}"
        else:  # damage the checks cannot see (bytes in free space): then the data must be the stored data
            if isinstance(result, ckb.Optimizer):
                got = result.history()
                result.metrics()
                result.close()
            else:
                got = result
            if not _same_history(got, history):
                silently_different.append(what)
        assert _digest(path) == before, f"{what} changed the file"
        for extra in ("-wal", "-shm", "-journal"):
            assert not Path(str(path) + extra).exists() or case != "directory"
    procs = {
        args[0]: subprocess.Popen(
            [sys.executable, "-m", "ckb.cli", "study", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for args in (["list", str(path)], ["show", str(path), NAME, "--plot", str(tmp_path / "p.png")])
    }
    for what, p in procs.items():
        out, err = p.communicate(timeout=120)
        assert "Traceback" not in err, f"ckb study {what}:\n{err}"
        if p.returncode != 0:
            assert p.returncode == 2 and err.startswith("error:"), (what, p.returncode, err)
            _one_line(err)
    assert _digest(path) == before, "a ckb study command changed the file"
    assert not silently_different, (
        f"{silently_different} returned other values than were stored, with no error"
    )


def test_load_of_an_empty_file_is_refused_and_leaves_it_empty(tmp_path):
    path = tmp_path / "s.db"
    path.write_bytes(b"")
    with pytest.raises(CKBError) as info:
        ckb.Optimizer.load(path, NAME)
    _one_line(str(info.value.args[0]))
    assert path.read_bytes() == b"", "Optimizer.load changed the empty file"


# ----------------------------------------------------------------------------------- sweep outputs
ARGS = ["gpucb-synthetic", "--trials", "3", "--horizon", "60", "--workers", "1", "--no-plots"]


def _experiment(out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ckb.cli", "experiment", *ARGS, "--out", str(out)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sweep") / "run"
    proc = _experiment(out)
    assert proc.returncode == 0, proc.stderr
    return out


def _copy(sweep: Path, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    shutil.copytree(sweep, out)
    return out


def _numbers(out: Path) -> dict:
    s = json.loads((out / "summary.json").read_text())
    return {k: v["values"] for k, v in s["algorithms"]["igp-ucb"].items() if k != "seconds_per_round"}


def test_a_truncated_trace_is_redone_and_the_results_are_unchanged(sweep, tmp_path):
    out = _copy(sweep, tmp_path)
    trace = out / "traces" / "igp-ucb" / "trial-0001.npz"
    trace.write_bytes(trace.read_bytes()[: trace.stat().st_size // 2])
    proc = _experiment(out)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    from ckb.runner.trace import Trace

    assert Trace.load(trace).t == 60
    assert _numbers(out) == _numbers(sweep)


def test_a_trace_of_another_trial_under_a_trials_name_stops_the_sweep_in_one_line(sweep, tmp_path):
    out = _copy(sweep, tmp_path)
    d = out / "traces" / "igp-ucb"
    shutil.copyfile(d / "trial-0000.npz", d / "trial-0002.npz")  # a wrong trial number
    before = {p.name: _digest(p) for p in out.rglob("*") if p.is_file()}
    proc = _experiment(out)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr, proc.stderr
    err = proc.stderr.strip()
    assert "trial-0002.npz" in err and "different configuration" in err, err
    assert {p.name: _digest(p) for p in out.rglob("*") if p.is_file()} == before


def test_a_summary_json_that_is_not_json_is_rewritten_by_the_rerun(sweep, tmp_path):
    """Nothing reads summary.json back (it is an output): a re-run reuses the traces and writes a valid
    summary with the same numbers, without a traceback."""
    out = _copy(sweep, tmp_path)
    (out / "summary.json").write_text('{"experiment": "gpucb-synth')
    proc = _experiment(out)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "3 reused" in proc.stdout.replace("\n", " ") or "reused" in proc.stdout
    assert _numbers(out) == _numbers(sweep)
