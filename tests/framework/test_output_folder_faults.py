"""An output folder holds one experiment's results: another spec is refused before anything runs (the same
spec resumes), and every argument is checked before a folder is created (tester's report, CLI items 5, 10)."""

import json

import pytest
from typer.testing import CliRunner

from ckb.cli import app
from ckb.errors import CKBError
from ckb.framework import kinds, run_pipeline
from ckb.registry import Registry
from tests.framework.test_pipeline import ToyKind

runner = CliRunner()
SMALL = ["-n", "1", "-T", "5", "--no-plots", "--executor", "serial"]


def _spec(tmp_path, name="base.toml", label="igp-ucb"):
    path = tmp_path / name
    text = runner.invoke(app, ["spec", "gpucb-synthetic"]).output
    path.write_text(text.replace("[algorithms.igp-ucb]", f"[algorithms.{label}]"))
    return path


def _one_line_error(res, *fragments):
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.output
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def _snapshot(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ----------------------------------------------------------------------------- item 5: another spec
def test_a_folder_of_another_spec_is_refused_and_left_untouched(tmp_path):
    out = tmp_path / "runs" / "base"
    assert runner.invoke(app, ["experiment", str(_spec(tmp_path)), *SMALL, "-o", str(out)]).exit_code == 0
    before = _snapshot(out)
    renamed = _spec(tmp_path, "t_lbl.toml", label="other")
    res = runner.invoke(app, ["experiment", str(renamed), *SMALL, "-o", str(out)], env={"COLUMNS": "300"})
    _one_line_error(res, str(out), "algorithms.igp-ucb", "algorithms.other", "another --out")
    res = runner.invoke(
        app, ["experiment", "penalty-gardner-noisy", *SMALL, "-o", str(out)], env={"COLUMNS": "300"}
    )
    _one_line_error(res, str(out), "problem", "another --out")
    assert _snapshot(out) == before  # nothing written, mixed or overwritten
    assert sorted(p.name for p in (out / "traces").iterdir()) == ["igp-ucb"]


def test_the_same_spec_resumes_and_more_trials_extend_it(tmp_path):
    out = tmp_path / "base"
    spec = _spec(tmp_path)
    assert runner.invoke(app, ["experiment", str(spec), *SMALL, "-o", str(out)]).exit_code == 0
    again = runner.invoke(app, ["experiment", str(spec), *SMALL, "-o", str(out)])
    assert again.exit_code == 0 and "0 trial(s) run, 1 reused" in again.output
    # prose and the number of trials do not change what a trial computes: resumed, not refused
    spec.write_text(spec.read_text().replace('title = "', 'title = "edited: ', 1))
    more = runner.invoke(app, ["experiment", str(spec), *SMALL, "-n", "2", "-o", str(out)])
    assert more.exit_code == 0 and "1 trial(s) run, 1 reused" in more.output, more.output


def test_a_folder_from_before_the_spec_record_is_checked_by_its_summary(tmp_path):
    out = tmp_path / "old"
    assert runner.invoke(app, ["experiment", str(_spec(tmp_path)), *SMALL, "-o", str(out)]).exit_code == 0
    (out / "spec.json").unlink(missing_ok=True)  # a folder written before ckb recorded the spec
    summary = (out / "summary.json").read_bytes()
    renamed = _spec(tmp_path, "t_lbl.toml", label="other")
    res = runner.invoke(app, ["experiment", str(renamed), *SMALL, "-o", str(out)], env={"COLUMNS": "300"})
    _one_line_error(res, str(out), "algorithms.other")
    assert (out / "summary.json").read_bytes() == summary


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setattr(kinds, "KINDS", Registry("experiment kind"))
    return kinds.register_kind(ToyKind())


def test_the_pipeline_refuses_another_spec_for_every_kind(toy, tmp_path):
    raw = {"kind": "toy", "name": "t", "horizon": 1, "trials": 2, "algorithms": {"a": {"factor": 2.0}}}
    run_pipeline(kinds.spec_from_dict(raw), tmp_path, executor="serial", plots=False)
    before = _snapshot(tmp_path)
    other = kinds.spec_from_dict({**raw, "algorithms": {"b": {"factor": 2.0}}})
    with pytest.raises(
        CKBError, match=r"holds the results of a different configuration of .t.*algorithms\.a"
    ):
        run_pipeline(other, tmp_path, executor="serial", plots=False)
    assert _snapshot(tmp_path) == before and toy.calls.count("sweep") == 1
    # the same spec with another title and more trials resumes
    run_pipeline(kinds.spec_from_dict({**raw, "title": "x", "trials": 3}), tmp_path, executor="serial")
    assert json.loads((tmp_path / "summary.json").read_text())["total"] == 2.0 * (0 + 1 + 4)


# --------------------------------------------------------------------- item 10: arguments first
@pytest.mark.parametrize(
    "scales", ["0.5,nan", "0.5,inf", "nan", "0.5,-1", "0.5,0.5", "0.1,,0.2", "1_0", "0.5,"]
)
def test_a_bad_beta_scale_fails_before_anything_runs(tmp_path, scales):
    out = tmp_path / "x"
    res = runner.invoke(
        app, ["experiment", "gpucb-synthetic", *SMALL, "--beta-scale", scales, "-o", str(out)]
    )
    _one_line_error(res, "--beta-scale", scales.split(",")[-1])
    assert not out.exists()


def test_an_unknown_executor_fails_before_a_folder_is_created(tmp_path):
    out = tmp_path / "x"
    args = ["experiment", "gpucb-synthetic", "-n", "1", "-T", "5", "--executor", "foo", "-o", str(out)]
    _one_line_error(runner.invoke(app, args), "executor 'foo'", "serial")
    assert not out.exists()
    args += ["--beta-scale", "0.5,2"]
    _one_line_error(runner.invoke(app, args), "executor 'foo'")
    assert not out.exists()


def test_the_library_checks_the_executor_and_scales_before_any_folder(tmp_path):
    from ckb.experiments import load_spec
    from ckb.experiments.run import run_beta_scale_sweep

    spec = load_spec("gpucb-synthetic").with_overrides(trials=1, horizon=5)
    with pytest.raises(CKBError, match="executor 'foo'"):
        run_pipeline(spec, tmp_path / "a", executor="foo")
    assert not (tmp_path / "a").exists()
    with pytest.raises(CKBError, match="nan"):
        run_beta_scale_sweep(spec, [0.5, float("nan")], tmp_path / "b", executor="serial")
    assert not (tmp_path / "b").exists()


def test_a_sweep_and_a_single_run_never_share_a_folder(tmp_path):
    sweep, single = tmp_path / "sweep", tmp_path / "single"
    base = ["experiment", "gpucb-synthetic", *SMALL]
    assert runner.invoke(app, [*base, "--beta-scale", "0.5,2", "-o", str(sweep)]).exit_code == 0
    assert runner.invoke(app, [*base, "-o", str(single)]).exit_code == 0
    before = _snapshot(tmp_path)
    res = runner.invoke(app, [*base, "-o", str(sweep)], env={"COLUMNS": "300"})
    _one_line_error(res, str(sweep), "beta-scale sweep", "single run")
    res = runner.invoke(app, [*base, "--beta-scale", "0.5,2", "-o", str(single)], env={"COLUMNS": "300"})
    _one_line_error(res, str(single), "single run", "beta-scale sweep")
    res = runner.invoke(app, [*base, "-s", "3", "--beta-scale", "0.5,2", "-o", str(sweep)])
    _one_line_error(res, str(sweep), "seed (0 there, 3 here)")
    assert _snapshot(tmp_path) == before
    again = runner.invoke(app, [*base, "--beta-scale", "0.5,2", "-o", str(sweep)])  # the same sweep resumes
    assert again.exit_code == 0, again.output


def test_an_unreadable_spec_record_is_refused_not_replaced(tmp_path):
    out = tmp_path / "run"
    args = ["experiment", "gpucb-synthetic", *SMALL, "-o", str(out)]
    assert runner.invoke(app, args).exit_code == 0
    (out / "spec.json").write_text("hello")
    res = runner.invoke(app, args, env={"COLUMNS": "300"})
    _one_line_error(res, str(out / "spec.json"), "another --out")
    assert (out / "spec.json").read_text() == "hello"


def test_a_second_sweep_with_other_scales_keeps_the_earlier_rows(tmp_path):
    """A sweep at 0.5 and 2 then one at 1 into the same folder replaced the table by the scale 1 alone,
    though the earlier scales' results stayed on disk."""
    from ckb.experiments import load_spec
    from ckb.experiments.run import run_beta_scale_sweep

    spec = load_spec("gpucb-synthetic").with_overrides(trials=1, horizon=5)
    first = run_beta_scale_sweep(spec, [0.5, 2.0], tmp_path, executor="serial")
    second = run_beta_scale_sweep(spec, [1.0], tmp_path, executor="serial")
    assert second["scales"] == [0.5, 1.0, 2.0]
    row, before = second["algorithms"]["igp-ucb"]["regret"], first["algorithms"]["igp-ucb"]["regret"]
    assert [row[0], row[2]] == before
    assert json.loads((tmp_path / "beta_scale_sweep.json").read_text())["scales"] == [0.5, 1.0, 2.0]
    other = run_beta_scale_sweep(spec.with_overrides(trials=2), [1.0], tmp_path, executor="serial")
    assert other["scales"] == [1.0]  # the earlier rows are of another number of trials: not mixed in


def test_a_beta_scale_equal_to_the_specs_own_resumes_and_another_names_both_values(tmp_path):
    """A probe: ``--beta-scale S -o F`` into a folder this spec wrote with its own top-level ``beta_scale``
    = S was refused (the trials are the same ones), and another S was described as
    "algorithms.X.beta_scale (only in this spec)", without the values. Folders compare each algorithm's
    effective scale now."""
    out = tmp_path / "run"
    spec = _spec(tmp_path)  # gpucb-synthetic states beta_scale = 1.0 once, at the top
    assert "\nbeta_scale = 1.0\n" in spec.read_text()
    assert runner.invoke(app, ["experiment", str(spec), *SMALL, "-o", str(out)]).exit_code == 0
    before = _snapshot(out / "traces")
    same = runner.invoke(app, ["experiment", str(spec), *SMALL, "--beta-scale", "1", "-o", str(out)])
    assert same.exit_code == 0 and "0 trial(s) run, 1 reused" in same.output, same.output
    res = runner.invoke(
        app, ["experiment", str(spec), *SMALL, "--beta-scale", "0.3", "-o", str(out)], env={"COLUMNS": "300"}
    )
    _one_line_error(res, "algorithms.igp-ucb.beta_scale (1.0 there, 0.3 here)")
    again = runner.invoke(app, ["experiment", str(spec), *SMALL, "-o", str(out)])  # as first written
    assert again.exit_code == 0 and "0 trial(s) run, 1 reused" in again.output, again.output
    assert _snapshot(out / "traces") == before
