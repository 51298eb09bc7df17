"""What an output folder's record compares, from a probe of the multi-agent harness: 3 and 3.0 passed the
folder check and then stopped the sweep at its first stored trace ("a trial of a different
configuration"), since the configuration hash tells them apart; and a label's Ray ``backend_options``,
which the hash leaves out, refused a resume with other CPUs or another cluster."""

import pytest
from typer.testing import CliRunner

from ckb.cli import app
from ckb.errors import CKBError
from ckb.experiments import load_spec
from ckb.framework.pipeline import check_results_folder, record_spec


def test_an_integer_for_a_float_is_refused_before_anything_runs(tmp_path):
    out = tmp_path / "o"
    base = ["experiment", "dmabo-power", "-n", "1", "-T", "4", "-w", "1", "--no-plots", "-o", str(out)]
    assert CliRunner().invoke(app, base).exit_code == 0
    before = sorted(p.name for p in (out / "traces").rglob("*.npz"))
    res = CliRunner().invoke(app, [*base, "--set", "problem.p_max=2"])  # shipped as 2.0
    assert res.exit_code == 2, res.output
    text = " ".join(res.output.split())
    assert "problem.p_max (2.0 there, 2 here; the number's type counts: write it as there)" in text
    assert "Nothing was run or written" in text
    assert sorted(p.name for p in (out / "traces").rglob("*.npz")) == before
    assert CliRunner().invoke(app, [*base, "--set", "problem.p_max=2.0"]).exit_code == 0  # the same: resumes


def _with_backend(spec, backend, options):
    raw = spec.to_dict()
    label = next(iter(raw["algorithms"]))
    raw["algorithms"][label].update(backend=backend, backend_options=options)
    return type(spec).from_dict(raw, "test")


def test_ray_placement_options_do_not_claim_the_folder_but_the_backend_does(tmp_path):
    spec = load_spec("dmabo-power")
    ray = _with_backend(spec, "ray", {"num_cpus_per_agent": 1})
    out = tmp_path / "o"
    (out / "traces").mkdir(parents=True)
    (out / "traces" / "x.npz").write_bytes(b"results")  # the folder holds results
    record_spec(ray, out)
    check_results_folder(_with_backend(spec, "ray", {"num_cpus_per_agent": 0.5}), out)  # resumes
    check_results_folder(_with_backend(spec, "ray", {}), out)
    with pytest.raises(CKBError, match=r"backend \('ray' there, 'inprocess' here\)"):
        check_results_folder(_with_backend(spec, "inprocess", {}), out)
