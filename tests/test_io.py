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
