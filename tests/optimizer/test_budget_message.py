"""The budget-used error names the pending asks that hold it: a worker killed between ask and tell left
its ask charged to the budget, and the README's loop (and a bare ask) then ended with fewer results than
the budget without saying which trial was missing (multi-process probe)."""

import pytest

pytest.importorskip("botorch")

import ckb


def test_the_budget_error_names_the_pending_trials_then_none_once_told(tmp_path):
    opt = ckb.Optimizer([0, 0], [1, 1], m=1, budget=3, n_init=3, storage=tmp_path / "s.db", study_name="s")
    xs = [opt.ask() for _ in range(3)]
    opt.tell(xs[1], 1.0, [0.0])
    with pytest.raises(ckb.BudgetExhaustedError) as info:
        opt.ask()
    msg = str(info.value)
    assert "2 of them pending (trial(s) 0, 2)" in msg and "opt.pending()" in msg and "\n" not in msg
    for x in (xs[0], xs[2]):
        opt.tell(x, 1.0, [0.0])
    with pytest.raises(ckb.BudgetExhaustedError) as info:
        opt.ask()
    assert "pending" not in str(info.value)
    opt.close()
