"""A pending ask of a process that has ended holds part of the budget until it is told; re-running the
README's loop then ended with fewer evaluations than the budget, without a word (multi-process probe).
Each ask now stores which process asked it: ``opt.pending()`` says whether that process is gone, and
opening the study warns of such asks."""

import subprocess
import sys
import textwrap
import warnings

import pytest

pytest.importorskip("botorch")

import ckb


def _ask_in_a_process_that_ends(path, n):
    code = textwrap.dedent(
        f"""
        import ckb
        opt = ckb.Optimizer([0, 0], [1, 1], m=1, budget=8, storage={str(path)!r}, study_name="s")
        for _ in range({n}):
            opt.ask()
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, timeout=120)


def test_pending_asks_of_an_ended_process_are_marked_and_warned_of(tmp_path):
    path = tmp_path / "s.db"
    _ask_in_a_process_that_ends(path, 2)
    with pytest.warns(UserWarning, match=r"2 pending ask\(s\) of a process on this host that has ended") as w:
        opt = ckb.Optimizer([0, 0], [1, 1], m=1, budget=8, storage=path, study_name="s")
    assert "trial(s) 0, 1" in str(w[0].message) and "2 of the budget's 8" in str(w[0].message)
    assert [(p["trial"], p["gone"]) for p in opt.pending()] == [(0, True), (1, True)]
    x = opt.ask()  # this process's own ask: pending, not gone
    assert [p["gone"] for p in opt.pending()] == [True, True, False]
    for p in opt.pending()[:2]:
        opt.tell(p["x"], 1.0, [-1.0])
    opt.tell(x, 1.0, [-1.0])
    opt.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing pending: no warning
        ckb.Optimizer([0, 0], [1, 1], m=1, budget=8, storage=path, study_name="s").close()


def test_a_pending_ask_without_a_mark_or_of_another_host_is_unknown(tmp_path):
    from ckb.studies.turns import gone

    assert gone(None) is None
    assert gone({"pid": 1, "host": "not-this-host", "start": ""}) is None
    assert gone({"pid": 2**22 + 12345, "host": __import__("socket").gethostname(), "start": ""}) is True


def test_study_show_notes_a_pending_ask_of_an_ended_process(tmp_path):
    from typer.testing import CliRunner

    from ckb.cli_study import study_app

    path = tmp_path / "s.db"
    _ask_in_a_process_that_ends(path, 1)
    res = CliRunner().invoke(study_app, ["show", str(path), "s"], env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    assert "which has ended" in res.output and "pending" in res.output
