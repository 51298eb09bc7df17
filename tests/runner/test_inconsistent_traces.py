"""A stored trace whose metadata says "this configuration, this trial" but whose arrays are not a finished
trial's (rounds cut, a key missing, non-finite values) is redone as an unreadable one, kept aside with a
warning, never summarized (it gave a traceback or a NaN in ``summary.json``)."""

import json
import warnings

import numpy as np
import pytest

from ckb.experiments import load_spec, run_experiment
from ckb.io import load_state, save_state
from ckb.multiagent.trial import MultiAgentTrace
from ckb.runner.sweep import SweepWarning
from ckb.runner.trace import Trace


def _cut(s):
    s["t"] = 10
    for k in ("index", "x", "f", "g", "y", "c", "seconds", "u_star"):
        s[k] = s[k][:10]
    s["internals"] = {k: v[:10] for k, v in s["internals"].items()}


def _nan(s):
    s["f"][3] = np.nan


def _huge(s):
    s["g"][5] = np.inf


def _drop(s):
    del s["f"]


@pytest.mark.parametrize("damage", [_cut, _nan, _huge, _drop])
def test_a_damaged_trace_is_redone_and_the_summary_matches_a_clean_run(tmp_path, damage):
    spec = load_spec("gpucb-synthetic").with_overrides(trials=2, horizon=20)
    clean = run_experiment(spec, tmp_path / "clean", executor="serial", plots=False)
    out = tmp_path / "damaged"
    run_experiment(spec, out, executor="serial", plots=False)
    path = out / "traces" / "igp-ucb" / "trial-0001.npz"
    state = load_state(path)
    damage(state)
    save_state(path, state)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = run_experiment(spec, out, executor="serial", plots=False)
    assert any(issubclass(w.category, SweepWarning) and "trial-0001.npz" in str(w.message) for w in caught)
    assert (path.parent / "trial-0001.npz.corrupt").exists()  # kept aside, not deleted
    assert _results(again) == _results(clean)  # every metric but the wall time
    assert "NaN" not in (out / "summary.json").read_text()
    assert _results(json.loads((out / "summary.json").read_text())) == _results(clean)


def _results(summary):
    return {
        a: {k: v for k, v in m.items() if k != "seconds_per_round"} for a, m in summary["algorithms"].items()
    }


def test_a_finished_trace_passes_and_each_defect_is_named():
    tr = Trace(3, 1, 1, 1.0, 1.0, {"config_hash": "h"})
    state = tr.state_dict()
    with pytest.raises(ValueError, match="records 0 of its 3 rounds"):
        Trace.check_finished(state)
    state.update(t=3, x=np.zeros((3, 1)), index=np.zeros(3), f=np.zeros(3), g=np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"g has shape \(3, 2\), expected \(3, 1\)"):
        Trace.check_finished(state)


def test_a_multiagent_trace_is_checked_by_its_own_shapes():
    T, N, m = 4, 2, 1
    good = dict(
        index=np.zeros((T, N)), x=np.zeros((T, N)), f=np.zeros((T, N)), g=np.zeros((T, N, m)),
        d=np.zeros((T, 1)), seconds=np.zeros(T), internals={"lam": np.zeros(T)}, f_star=0.0, horizon=T,
        meta={},
    )  # fmt: skip
    MultiAgentTrace.check_finished(good)
    for key, bad in (("f", np.zeros((T - 1, N))), ("g", np.zeros((T, N))), ("d", np.full((T, 1), np.nan))):
        with pytest.raises(ValueError, match=key):
            MultiAgentTrace.check_finished({**good, key: bad})


def test_a_dangling_link_at_a_trace_path_is_kept_aside_not_replaced(tmp_path):
    spec = load_spec("gpucb-synthetic").with_overrides(trials=1, horizon=5)
    link = tmp_path / "traces" / "igp-ucb" / "trial-0000.npz"
    link.parent.mkdir(parents=True)
    link.symlink_to(tmp_path / "elsewhere" / "mine.npz")
    with pytest.warns(SweepWarning, match="trial-0000.npz"):
        run_experiment(spec, tmp_path, executor="serial", plots=False)
    aside = link.with_name("trial-0000.npz.corrupt")
    assert aside.is_symlink() and str(aside.readlink()).endswith("elsewhere/mine.npz")
    assert link.is_file() and not link.is_symlink()
