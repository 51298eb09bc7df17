"""A run killed (kill -9) while writing a plot, summary.json or spec.json left hidden ``.NAME.*.tmp`` files
that a successful re-run kept for good (resume probe); traces' were already removed. They now go once the
file is written again; a temporary newer than the file (another write in progress) is kept."""

import os
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from ckb.framework.pipeline import SPEC_RECORD, record_spec
from ckb.framework.report import save_figure
from ckb.io import write_json


def _stale(path, age=60.0):
    tmp = path.parent / f".{path.name}.k1ll3d.tmp"
    tmp.write_bytes(b"cut")
    old = time.time() - age
    os.utime(tmp, (old, old))
    return tmp


def test_a_rewritten_output_takes_its_stale_temporaries_with_it(tmp_path):
    png, summary, spec = tmp_path / "regret.png", tmp_path / "summary.json", tmp_path / SPEC_RECORD
    stale = [_stale(png), _stale(summary), _stale(spec)]
    save_figure(plt.figure(), png)
    write_json(summary, {"a": 1})
    record_spec(None, tmp_path)
    assert not any(t.exists() for t in stale)
    assert png.stat().st_size > 0 and summary.read_text() == '{\n  "a": 1\n}'


def test_a_temporary_newer_than_the_file_is_kept(tmp_path):
    summary = tmp_path / "summary.json"
    write_json(summary, {"a": 1})
    newer = _stale(summary, age=-60.0)  # modified after the file: another write may be going on
    write_json(summary, {"a": 2})
    assert newer.exists()
