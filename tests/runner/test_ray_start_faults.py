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
