"""kill -9 of ``ckb experiment`` at random moments (fault-injection suite).

The sweep is killed (its whole process group, as a crash of the session would) at seeded random
moments and re-run with the same command until it completes: its ``summary.json`` must equal an
uninterrupted run's bit for bit (timings aside), and no trace under its final name may be partial. A
kill -9 of the parent alone must not leave its pool workers running on.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ARGS = ["gpucb-synthetic", "--trials", "4", "--horizon", "1000", "--workers", "2", "--no-plots"]


def _ckb_cmd(out: Path) -> list[str]:
    return [sys.executable, "-m", "ckb.cli", "experiment", *ARGS, "--out", str(out)]


def _run(out: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    proc = subprocess.run(_ckb_cmd(out), capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    return proc


def _start(out: Path) -> subprocess.Popen:
    return subprocess.Popen(
        _ckb_cmd(out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )


def _descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (from /proc's parent links)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None:
                parents[int(entry)] = stat[1]
    out, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, pp in parents.items() if pp in frontier and p not in out}
        out |= frontier
    return out


def _stat(pid: int) -> tuple[str, int] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            text = fh.read().decode(errors="replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()
    return fields[0], int(fields[1])


def _running(pids: set[int]) -> set[int]:
    return {p for p in pids if (s := _stat(p)) is not None and s[0] not in ("Z", "X")}


def _without_timings(obj):
    if isinstance(obj, dict):
        return {k: _without_timings(v) for k, v in obj.items() if "seconds" not in k}
    if isinstance(obj, list):
        return [_without_timings(v) for v in obj]
    return obj


def _check_traces(out: Path, trials: int) -> None:
    from ckb.runner.trace import Trace

    paths = sorted((out / "traces" / "igp-ucb").glob("trial-*.npz"))
    assert [p.name for p in paths] == [f"trial-{k:04d}.npz" for k in range(trials)]
    for p in paths:
        tr = Trace.load(p)  # a partial file under the final name would not load
        assert tr.t == tr.horizon == 1000 and tr.meta["config"]["trial"] == int(p.stem[-4:])


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("ref") / "run"
    start = time.monotonic()
    _run(out)
    return {"summary": json.loads((out / "summary.json").read_text()), "seconds": time.monotonic() - start}


def _killed_then_resumed(tmp_path: Path, seed: int, kills: int, seconds: float) -> tuple[Path, int]:
    """Start the sweep, kill -9 its process group at a random moment (within the time an uninterrupted
    run takes, ``seconds``), ``kills`` times; then complete it."""
    rng = np.random.default_rng(seed)
    out = tmp_path / "run"
    landed = 0
    for _ in range(4 * kills):  # a kill that comes after the run ended does not count: try again
        if landed == kills:
            break
        proc = _start(out)
        time.sleep(float(rng.uniform(0.1, 0.9)) * seconds)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            landed += 1
        proc.wait()
        if (out / "summary.json").exists():  # it finished: start over so that the next kill lands
            shutil.rmtree(out)
    _run(out)
    return out, landed


def test_sweep_killed_mid_run_resumes_to_the_uninterrupted_summary(tmp_path, reference):
    out, landed = _killed_then_resumed(tmp_path, 5, 1, reference["seconds"])
    assert landed >= 1
    _check_traces(out, 4)
    resumed = json.loads((out / "summary.json").read_text())
    assert _without_timings(resumed) == _without_timings(reference["summary"])


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_sweep_killed_many_times(tmp_path, reference, seed):
    out, landed = _killed_then_resumed(tmp_path, seed, 6, reference["seconds"])
    assert landed >= 3
    _check_traces(out, 4)
    assert _without_timings(json.loads((out / "summary.json").read_text())) == _without_timings(
        reference["summary"]
    )


def _wait_for_workers(proc: subprocess.Popen, n: int, timeout: float = 120) -> set[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        kids = _running(_descendants(proc.pid))
        if len(kids) >= n:
            return kids
        time.sleep(0.05)
    pytest.fail(f"the sweep did not start {n} worker processes (exit code {proc.poll()})")


def _reap(pids: set[int]) -> None:
    for p in _running(pids):
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_killing_the_process_group_leaves_no_worker(tmp_path):
    proc = _start(tmp_path / "run")
    kids = _wait_for_workers(proc, 2)
    try:
        time.sleep(0.5)
        kids |= _descendants(proc.pid)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 10
        while _running(kids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _running(kids)
    finally:
        _reap(kids)


def test_workers_do_not_outlive_a_killed_parent(tmp_path):
    """kill -9 of the ``ckb experiment`` process alone (an OOM kill, a `kill -9 PID`): its pool workers
    (and the resource tracker) must exit within seconds instead of running on, unsupervised, writing into
    the output directory that a re-run is about to use."""
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ckb.cli", "experiment", *ARGS[:3], "--horizon", "5000", *ARGS[5:], "--out", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    kids = _wait_for_workers(proc, 3)  # two workers and the resource tracker
    try:
        time.sleep(0.5)
        kids |= _descendants(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 10
        while _running(kids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _running(kids), f"{len(_running(kids))} process(es) outlived their killed parent by 10 s"
    finally:
        _reap(kids)
