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
