"""A run into an output folder that another run is writing is refused at once. Before, two runs with
different seeds into one folder could both finish (2 of 14 tries), and the summary on disk mixed their
trials; the same command started twice ran every trial twice. The lock is on the folder itself: no file
is added, and the system releases it when the holder ends."""

import subprocess
import sys

import pytest

from ckb.errors import CKBError
from ckb.experiments import load_spec, run_experiment
from ckb.framework.pipeline import folder_lock

HOLD = """
import sys, time
from pathlib import Path
from ckb.framework.pipeline import folder_lock
with folder_lock(Path(sys.argv[1])):
    print("locked", flush=True)
    time.sleep(60)
"""


def _spec():
    return load_spec("gpucb-synthetic").with_overrides(trials=1, horizon=5)


def test_a_second_run_into_a_folder_in_use_is_refused_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(
            CKBError, match=r"output folder '.*out' is in use by another ckb run; nothing"
        ) as exc:
            run_experiment(_spec(), out, workers=1, executor="serial", plots=False)
        assert "\n" not in str(exc.value)
        assert list(out.iterdir()) == []
    finally:
        holder.kill()
        holder.wait()
    run_experiment(_spec(), out, workers=1, executor="serial", plots=False)  # released with its holder
    assert (out / "summary.json").exists()
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []


def test_the_lock_is_released_after_a_run_and_on_an_error(tmp_path):
    with pytest.raises(RuntimeError), folder_lock(tmp_path):
        raise RuntimeError("boom")
    with folder_lock(tmp_path):
        pass
