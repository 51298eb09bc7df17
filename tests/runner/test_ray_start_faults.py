"""A local Ray instance that cannot start (its session folder, RAY_TMPDIR, on a read-only mount) was a
71-line traceback ending in OSError; only a cluster connection was reported in one line. Now both are."""

import pytest

from ckb._parallel import RaySession
from ckb.errors import CKBError

ray = pytest.importorskip("ray")


def test_a_local_instance_that_cannot_start_is_one_line(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError(30, "Read-only file system: '/ro/ray/session_2026'")

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", refuse)
    session = RaySession(what="--executor ray")
    with pytest.raises(
        CKBError, match=r"Cannot start a local Ray instance for --executor ray: OSError: .*RAY_TMPDIR"
    ) as exc:
        session.start()
    assert "\n" not in str(exc.value)
    assert session.ray is None and session.mode is None


def test_a_run_that_cannot_reach_ray_leaves_no_empty_folders_and_keeps_earlier_results(tmp_path, monkeypatch):
    """Before, the error was one line but left OUT/traces/ALG/ behind, empty."""
    from ckb.experiments import load_spec, run_experiment

    monkeypatch.setattr(ray, "is_initialized", lambda: False)  # another test's Ray in this process

    spec = load_spec("gpucb-synthetic").with_overrides(trials=1, horizon=5)
    unreachable = {"address": "127.0.0.1:1"}
    with pytest.raises(CKBError, match="Cannot reach the Ray cluster at '127.0.0.1:1'"):
        run_experiment(spec, tmp_path / "new", executor="ray", executor_options=unreachable, plots=False)
    assert not (tmp_path / "new").exists()
    done = tmp_path / "done"
    run_experiment(spec, done, executor="serial", plots=False)
    before = sorted(str(p.relative_to(done)) for p in done.rglob("*"))
    more = spec.with_overrides(trials=2)
    with pytest.raises(CKBError, match="Cannot reach the Ray cluster"):
        run_experiment(more, done, executor="ray", executor_options=unreachable, plots=False)
    assert sorted(str(p.relative_to(done)) for p in done.rglob("*")) == before


def test_ray_init_does_not_take_the_callers_sigterm_handler(monkeypatch):
    """ray.init puts Ray's SIGTERM handler (drain, stop, exit 1) in place of the caller's: SIGTERM to
    `ckb experiment --executor ray` ended with exit 1, Ray's stack dump and a traceback, and no note. The
    caller's Python handler is put back; a default action is left to Ray."""
    import signal

    def ours(signum, frame):
        raise KeyboardInterrupt

    def rays_init(*args, **kwargs):
        signal.signal(signal.SIGTERM, lambda s, f: None)

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", rays_init)
    before = signal.signal(signal.SIGTERM, ours)
    try:
        RaySession(what="--executor ray").start()
        assert signal.getsignal(signal.SIGTERM) is ours
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        RaySession(what="--executor ray").start()
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL  # Ray's, as before
    finally:
        signal.signal(signal.SIGTERM, before)
