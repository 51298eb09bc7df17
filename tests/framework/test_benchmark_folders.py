"""``ckb benchmark constrained`` checks its output folder as ``ckb experiment`` does: before anything runs,
a file of someone else's is never replaced, an experiment's folder is refused (and the benchmark's folder
by ``ckb experiment``), a folder in use is refused at once, and a file given as the folder is one line.
Before, the benchmark overwrote a user's ``summary.json`` and ``table.md``, an experiment's summary, ran
twice into one folder, and ended in a ``NotADirectoryError`` traceback. Also: a folder holding only the
record of a run killed before its first trial finished holds no results, and another spec may take it."""

import json

import pytest
from typer.testing import CliRunner

from ckb.cli import app
from ckb.experiments import load_spec
from ckb.framework.pipeline import folder_lock, record_spec

runner = CliRunner()
BENCH = ["benchmark", "constrained", "--problems", "gramacy", "--methods", "sobol", "--seeds", "1", "-T", "8"]
BENCH += ["-w", "1", "--no-plots"]
EXPERIMENT = ["experiment", "gpucb-synthetic", "-n", "1", "-T", "5", "--no-plots", "--executor", "serial"]
WIDE = {"COLUMNS": "400"}


def _error(res, *fragments):
    """The run was refused: exit code 2, its last line one ``error: ...`` holding ``fragments``."""
    assert res.exit_code == 2, res.output
    last = [line for line in res.output.splitlines() if line.strip()][-1]
    assert last.startswith("error: ") and "Traceback" not in res.output, res.output
    for fragment in fragments:
        assert fragment in last, last


def _snapshot(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _bench(out):
    return runner.invoke(app, [*BENCH, "-o", str(out)], env=WIDE)


def test_a_users_summary_and_table_are_never_replaced(tmp_path):
    out = tmp_path / "userdir"
    out.mkdir()
    (out / "summary.json").write_text('{"my": "notes"}')
    (out / "table.md").write_text("# my table\n")
    _error(_bench(out), str(out), "summary.json", "not a ckb summary", "another --out")
    (out / "summary.json").unlink()
    _error(_bench(out), str(out), "table.md", "would replace")
    assert _snapshot(out) == {"table.md": b"# my table\n"}  # no run, no record written beside it


def test_the_benchmark_refuses_an_experiments_folder(tmp_path):
    out = tmp_path / "exA"
    assert runner.invoke(app, [*EXPERIMENT, "-o", str(out)]).exit_code == 0
    before = _snapshot(out)
    _error(_bench(out), str(out), "single run", "not of a constrained benchmark")
    assert _snapshot(out) == before


@pytest.mark.parametrize("legacy", [False, True], ids=["recorded", "before-the-record"])
def test_an_experiment_refuses_the_benchmarks_folder_which_the_benchmark_resumes(tmp_path, legacy):
    out = tmp_path / "bmA"
    first = _bench(out)
    assert first.exit_code == 0 and "1 run(s), 0 reused" in first.output, first.output
    if legacy:  # a benchmark folder written before the benchmark recorded what its folder holds
        (out / "spec.json").unlink(missing_ok=True)
    else:
        assert json.loads((out / "spec.json").read_text())["layout"] == "constrained benchmark"
    before = _snapshot(out)
    _error(runner.invoke(app, [*EXPERIMENT, "-o", str(out)], env=WIDE), str(out), "constrained benchmark")
    constrained_bo = ["experiment", "constrained-bo", "-n", "1", "-T", "8", "--no-plots", "-o", str(out)]
    constrained_bo += ["--set", 'problems=["gramacy"]']
    _error(runner.invoke(app, constrained_bo, env=WIDE), str(out), "constrained benchmark")
    assert _snapshot(out) == before
    again = _bench(out)  # the benchmark's own folder resumes, reusing its finished run
    assert again.exit_code == 0 and "0 run(s), 1 reused" in again.output, again.output
    assert sorted(p.name for p in out.iterdir()) == ["runs", "spec.json", "summary.json", "table.md"]
    assert json.loads((out / "spec.json").read_text())["layout"] == "constrained benchmark"


def test_a_folder_in_use_is_refused_at_once(tmp_path):
    out = tmp_path / "bmc"
    out.mkdir()
    with folder_lock(out):
        _error(_bench(out), str(out), "in use by another ckb run")
    assert list(out.iterdir()) == []
    assert _bench(out).exit_code == 0  # released with its holder


def test_a_file_as_the_folder_is_one_line(tmp_path):
    out = tmp_path / "afile"
    out.write_text("x")
    res = _bench(out)
    _error(res, str(out), "is a file, expected a folder")
    assert len([line for line in res.output.splitlines() if line.strip()]) == 1
    assert out.read_text() == "x"


def test_a_folder_holding_only_a_record_is_taken_by_another_spec(tmp_path):
    out = tmp_path / "k9"
    out.mkdir()
    # what a run killed before its first trial finished leaves: its record (and an empty traces folder)
    record_spec(load_spec("gpucb-synthetic").with_overrides(trials=1, horizon=8000), out)
    (out / "traces" / "igp-ucb").mkdir(parents=True)
    res = runner.invoke(app, [*EXPERIMENT, "-o", str(out)], env=WIDE)
    assert res.exit_code == 0, res.output
    assert json.loads((out / "spec.json").read_text())["spec"]["horizon"] == 5
    before = _snapshot(out)
    other = [*EXPERIMENT[:4], "-T", "6", "--no-plots", "--executor", "serial", "-o", str(out)]
    # with traces, the same experiment at another horizon is refused, named as a different configuration
    msg = "holds the results of a different configuration of 'gpucb-synthetic' (recorded in spec.json)"
    _error(runner.invoke(app, other, env=WIDE), str(out), msg, "horizon (5 there, 6 here)")
    for trace in (out / "traces").rglob("*.npz"):
        trace.unlink()
    _error(runner.invoke(app, other, env=WIDE), str(out), msg)  # a summary alone is results too
    assert _snapshot(out) == {k: v for k, v in before.items() if not k.endswith(".npz")}


def test_the_library_call_checks_the_folder_too(tmp_path):
    from ckb.benchmarking.constrained import plan, run_benchmark
    from ckb.errors import CKBError

    (tmp_path / "summary.json").write_text('{"my": "notes"}')
    with pytest.raises(CKBError, match="not a ckb summary"):
        run_benchmark(plan(["gramacy"], ["sobol"], 1, 8), tmp_path, workers=1, plots=False)
    assert _snapshot(tmp_path) == {"summary.json": b'{"my": "notes"}'}


def test_a_folder_in_use_is_refused_before_the_header_and_the_bar(tmp_path):
    """The refusal came after the command's header and an empty progress bar ('trials 0/1')."""
    out = tmp_path / "busy"
    out.mkdir()
    with folder_lock(out):
        for res in (_bench(out), runner.invoke(app, [*EXPERIMENT, "-o", str(out)], env=WIDE)):
            _error(res, "in use by another ckb run")
            assert res.output.strip().count("\n") == 0, res.output  # the error line alone
