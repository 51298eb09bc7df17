"""``ckb study show`` on a study in a folder this user may not write (a shared or read-only study, which
the optimizer's own read-only error names ``ckb study show`` as the way to read): the default plot path is
beside the file, so show failed there with exit code 2 (multi-process probe, a read-only bind mount).
Now it prints the table and says where a plot can go; an explicit ``--plot`` that cannot be written still
fails. The suite runs as root, which may write any folder, so the refusal is simulated at the writer."""

import errno

import pytest
from typer.testing import CliRunner

import ckb
from ckb.cli_study import study_app

runner = CliRunner()


@pytest.fixture
def study(tmp_path):
    path = tmp_path / "s.db"
    opt = ckb.Optimizer([0, 0], [1, 1], m=1, budget=6, n_init=3, storage=path, study_name="pump")
    for x in opt.ask(3):
        opt.tell(x, float(x.sum()), [float(x[0] - 0.5)])
    opt.close()
    return path


def _refuse(code):
    def write(path, *args, **kwargs):
        raise OSError(code, "Read-only file system" if code == errno.EROFS else "Permission denied")

    return write


@pytest.mark.parametrize("code", [errno.EROFS, errno.EACCES])
def test_show_prints_the_table_when_the_default_plot_folder_is_not_writable(study, monkeypatch, code):
    monkeypatch.setattr("ckb.cli_study.atomic_write", _refuse(code))
    res = runner.invoke(study_app, ["show", str(study), "pump"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "3 evaluations" in res.output
    assert "plot: not written, the folder of" in res.output and "pass --plot PATH" in res.output
    assert not (study.parent / "s-pump.png").exists()


def test_an_explicit_plot_path_that_cannot_be_written_is_still_an_error(study, monkeypatch, tmp_path):
    monkeypatch.setattr("ckb.cli_study.atomic_write", _refuse(errno.EROFS))
    res = runner.invoke(study_app, ["show", str(study), "pump", "--plot", str(tmp_path / "p.png")])
    assert res.exit_code == 2 and "could not write the plot" in res.output
