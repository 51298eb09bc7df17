import numpy as np
import pytest

from ckb.runner import SweepConflictError, Trace, TrialConfig, run_sweep
from ckb.runner.sweep import trace_path


def configs(trials, horizon=150, seed=0):
    return [
        TrialConfig(
            algorithm=a,
            policy="igp-ucb",
            problem="rkhs-synthetic",
            horizon=horizon,
            trial=k,
            seed=seed,
            policy_params=pp,
            problem_params={"n_grid": 30, "constraint": "neg-f-plus-h"},
        )
        for a, pp in (("ucb", {}), ("ucb-wide", {"beta": 3.0}))
        for k in range(trials)
    ]


def test_interrupted_sweep_resumes_without_redoing_work(tmp_path):
    done = []
    run_sweep(configs(2), tmp_path, workers=1, on_done=lambda c, s: done.append(s))
    assert done == [False] * 4
    first = {p: p.stat().st_mtime_ns for p in (tmp_path / "traces").rglob("*.npz")}
    done.clear()
    run_sweep(configs(3), tmp_path, workers=1, on_done=lambda c, s: done.append(s))
    assert sorted(done) == [False, False, True, True, True, True]
    for p, mtime in first.items():
        assert p.stat().st_mtime_ns == mtime  # existing traces untouched


def test_parallel_workers_give_the_same_numbers_as_serial(tmp_path):
    run_sweep(configs(2), tmp_path / "serial", workers=1)
    run_sweep(configs(2), tmp_path / "par", workers=2)
    for cfg in configs(2):
        a = Trace.load(trace_path(tmp_path / "serial", cfg))
        b = Trace.load(trace_path(tmp_path / "par", cfg))
        np.testing.assert_array_equal(a.index, b.index)
        np.testing.assert_array_equal(a.y, b.y)


def test_different_configuration_is_never_overwritten(tmp_path):
    run_sweep(configs(1), tmp_path, workers=1)
    path = trace_path(tmp_path, configs(1)[0])
    before = path.read_bytes()
    with pytest.raises(SweepConflictError, match="different configuration"):
        run_sweep(configs(1, horizon=99), tmp_path, workers=1)
    assert path.read_bytes() == before


def test_a_partial_file_is_redone(tmp_path):
    cfg = configs(1)[:1]
    path = trace_path(tmp_path, cfg[0])
    path.parent.mkdir(parents=True)
    path.write_bytes(b"garbage from a killed process")
    with pytest.warns(UserWarning, match="kept aside"):
        run_sweep(cfg, tmp_path, workers=1)
    assert Trace.load(path).t == 150


def test_a_conflict_stops_the_sweep_before_anything_runs(tmp_path):
    run_sweep(configs(1)[:1], tmp_path, workers=1)
    mixed = configs(2, horizon=99)  # trial 0 of "ucb" is on disk with horizon 150; the rest is new
    done = []
    with pytest.raises(SweepConflictError, match="trial-0000.npz holds a trial of a different configuration"):
        run_sweep(mixed, tmp_path, workers=1, on_done=lambda c, s: done.append(c))
    assert done == [] and sorted(p.name for p in (tmp_path / "traces").rglob("*.npz")) == ["trial-0000.npz"]


def test_plan_sweep_splits_finished_from_todo(tmp_path):
    from ckb.runner.sweep import plan_sweep

    cfgs = configs(2)
    run_sweep(cfgs[:1], tmp_path, workers=1)
    todo, reused = plan_sweep(cfgs, tmp_path)
    assert reused == cfgs[:1] and [c for c, _ in todo] == cfgs[1:]
    assert all(path == trace_path(tmp_path, c) for c, path in todo)


# ------------------------------------------------------------- identity: data files and trial numbers
def _finance_configs(data_dir, trials=1):
    from ckb.problems.data import problem_inputs

    params = {"data_dir": str(data_dir)}
    return [
        TrialConfig(
            algorithm="ucb",
            policy="igp-ucb",
            problem="finance",
            horizon=20,
            trial=k,
            problem_params=params,
            inputs=problem_inputs("finance", params),
        )
        for k in range(trials)
    ]


@pytest.mark.filterwarnings("ignore:.*not the published.*:UserWarning")
def test_a_changed_data_file_is_a_conflict_naming_the_file(tmp_path):
    from tests.problems.test_data import write_finance

    data = tmp_path / "data"
    path = write_finance(data)
    run_sweep(_finance_configs(data), tmp_path / "out", workers=1)
    # the same data: reused
    done = []
    run_sweep(_finance_configs(data), tmp_path / "out", workers=1, on_done=lambda c, s: done.append(s))
    assert done == [True]
    # every price x 1.5: the old trace is refused, naming the data file; nothing is overwritten
    lines = path.read_text().splitlines()
    scaled = [lines[0]] + [
        ",".join([row.split(",")[0]] + [repr(1.5 * float(v)) for v in row.split(",")[1:]])
        for row in lines[1:]
    ]
    path.write_text("\n".join(scaled) + "\n")
    trace = trace_path(tmp_path / "out", _finance_configs(data)[0])
    before = trace.read_bytes()
    with pytest.raises(SweepConflictError, match=r"data file fin\.csv changed"):
        run_sweep(_finance_configs(data), tmp_path / "out", workers=1)
    assert trace.read_bytes() == before


def test_a_trace_filed_under_another_trial_number_is_refused(tmp_path):
    import shutil

    cfgs = [c for c in configs(2) if c.algorithm == "ucb"]
    run_sweep(cfgs[:1], tmp_path, workers=1)
    shutil.copy(trace_path(tmp_path, cfgs[0]), trace_path(tmp_path, cfgs[1]))
    with pytest.raises(SweepConflictError, match="records trial 0, not trial 1"):
        run_sweep(cfgs, tmp_path, workers=1)


@pytest.mark.parametrize("label", ["../../x", "a/b", ".."])
def test_a_label_that_would_leave_the_output_folder_is_refused(tmp_path, label):
    from ckb.errors import CKBError

    cfg = TrialConfig(algorithm=label, policy="igp-ucb", problem="rkhs-synthetic", horizon=5)
    with pytest.raises(CKBError, match="cannot name a folder"):
        run_sweep([cfg], tmp_path / "out", workers=1)
    assert not (tmp_path / "x").exists()


def test_a_trial_without_data_files_keeps_its_hash():
    # no inputs: the configuration (and so every stored synthetic trace) is unchanged by the data digest
    cfg = configs(1)[0]
    assert "inputs" not in cfg.to_dict()
    assert TrialConfig(**cfg.to_dict()).config_hash() == cfg.config_hash()


def test_load_traces_keeps_the_specs_order_of_algorithms():
    """Summaries, tables and legends follow the spec's order of algorithms; before, the traces came out
    sorted by name (ckb-rand, ckb-ts, ckb-ucb for a spec listing ckb-ucb, ckb-ts, ckb-rand)."""
    from pathlib import Path

    from ckb.runner.sweep import load_traces

    class Loaded:
        @staticmethod
        def load(path):
            return path.name

    spec_order = ["ckb-ucb", "ckb-ts", "ckb-rand"]
    paths = {(alg, k): Path(f"{alg}-{k}") for alg in spec_order for k in (1, 0)}
    got = load_traces(paths, trace_cls=Loaded)
    assert list(got) == spec_order
    assert got["ckb-ts"] == ["ckb-ts-0", "ckb-ts-1"]  # each one's traces in trial order
