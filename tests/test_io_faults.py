"""``SavedState.load`` (``Trace.load``, ``MultiAgentTrace.load``) and ``load_state``. Before: a missing
file was a raw FileNotFoundError, a text file numpy's misleading "This file contains pickled (object)
data ... load it unsafely", a truncated one a BadZipFile, and a checkpoint given where a trace was
expected a TypeError about a constructor keyword. Each is now one line naming the file."""

import numpy as np
import pytest

from ckb.errors import CKBError
from ckb.io import load_state, save_state
from ckb.runner.trace import Trace
from ckb.runner.trial import Trial, TrialConfig


@pytest.fixture
def files(tmp_path):
    trial = Trial(
        TrialConfig(
            algorithm="a", policy="ckb-ucb", horizon=5, problem="gardner", problem_params={"grid": 10}
        )
    )
    trial.run()
    trial.trace.save(tmp_path / "trace.npz")
    trial.save_checkpoint(tmp_path / "checkpoint.npz")
    (tmp_path / "text.npz").write_text("hello")
    (tmp_path / "cut.npz").write_bytes((tmp_path / "trace.npz").read_bytes()[:200])
    np.savez(tmp_path / "foreign.npz", a=np.zeros(2))
    return tmp_path


@pytest.mark.parametrize(
    "name, match",
    [
        ("missing.npz", r"'.*missing\.npz' does not exist"),
        ("text.npz", r"text\.npz' is not a readable ckb file \(not a \.npz archive, as ckb writes\)"),
        ("cut.npz", r"cut\.npz' is not a readable ckb file"),
        ("foreign.npz", r"foreign\.npz' is not a readable ckb file"),
        ("checkpoint.npz", r"checkpoint\.npz' does not hold a saved Trace"),
    ],
)
def test_a_file_that_is_not_a_saved_trace_is_one_line(files, name, match):
    with pytest.raises(CKBError, match=match) as exc:
        Trace.load(files / name)
    assert "\n" not in str(exc.value)


def test_a_saved_trace_still_loads_and_a_state_round_trips(files):
    assert Trace.load(files / "trace.npz").t == 5
    save_state(files / "s.npz", {"a": np.arange(3), "b": [1, "x", None]})
    state = load_state(files / "s.npz")
    assert state["a"].tolist() == [0, 1, 2] and state["b"] == [1, "x", None]
