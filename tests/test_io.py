import os
import stat

from ckb.io import atomic_write, write_json


def test_atomic_write_gives_files_the_umask_mode_not_0600(tmp_path):
    old = os.umask(0o022)
    try:
        write_json(tmp_path / "a.json", {"x": 1})
        os.umask(0o002)
        atomic_write(tmp_path / "b.bin", lambda fh: fh.write(b"x"))
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.json").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "b.bin").stat().st_mode) == 0o664


def test_a_killed_writes_temporary_file_is_removed_once_the_file_is_written_again(tmp_path):
    """kill -9 during atomic_write left '.trial-0000.npz.XXXX.tmp' behind, and no later run removed it;
    the next write of that file removes the older ones and keeps one newer than the file (a write still
    in progress in another process)."""
    import os

    from ckb.io import remove_stale_temporaries

    final = tmp_path / "trial-0000.npz"
    stale, live, other = (
        tmp_path / n for n in (".trial-0000.npz.ab12.tmp", ".trial-0000.npz.cd34.tmp", ".x.tmp")
    )
    for p in (stale, other):
        p.write_bytes(b"half")
        os.utime(p, (1_000_000, 1_000_000))
    atomic_write(final, lambda fh: fh.write(b"whole"))  # the write itself removes the older one
    assert not stale.exists() and other.exists()
    live.write_bytes(b"in progress")
    os.utime(live, (final.stat().st_mtime + 5, final.stat().st_mtime + 5))
    assert remove_stale_temporaries(final) == []  # the newer one is kept
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([final.name, live.name, other.name])
