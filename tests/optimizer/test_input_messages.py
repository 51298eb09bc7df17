"""Messages of ckb.Optimizer's inputs that named the wrong thing (tester's report): None read as NaN, a
design callable returning None, an empty list, a wrong article, an empty study's trial range, a resume
without the initial design, a repeated design point's warning, and a budget of -0.0."""

import warnings

import numpy as np
import pytest

import ckb
from ckb.errors import InvalidInputError


def test_a_none_budget_entry_is_named_as_none():
    with pytest.raises(InvalidInputError, match=r"violation_budget\[1\] is None"):
        ckb.Optimizer([0, 0], [1, 1], m=2, budget=8, violation_budget=[0.1, None])


def test_a_design_callable_returning_none_is_said():
    with pytest.raises(InvalidInputError, match=r"initial_design\(6, rng\) returned None"):
        ckb.Optimizer([0, 0], [1, 1], m=1, budget=8, initial_design=lambda n, rng: None)


def test_an_empty_design_list_is_an_empty_design():
    a = ckb.Optimizer([0, 0], [1, 1], m=1, budget=8, initial_design=[], seed=0)
    b = ckb.Optimizer([0, 0], [1, 1], m=1, budget=8, initial_design=np.zeros((0, 2)), seed=0)
    assert a.n_init == b.n_init == 0


def test_a_bad_design_point_reads_well():
    with pytest.raises(InvalidInputError, match=r"^initial_design point 0 must be finite"):
        ckb.Optimizer([0, 0], [1, 1], m=1, budget=8, initial_design=[[0.1, np.nan]])


def test_an_empty_study_says_it_has_no_trials():
    opt = ckb.Optimizer([0], [10], m=1, budget=8, n_init=2)
    with pytest.raises(InvalidInputError, match=r"no trial number 30 \(it has no trials yet\)"):
        opt.tell(trial=30, objective=1.0, constraints=[0.0])


def test_a_resume_without_the_design_names_the_design(tmp_path):
    db = tmp_path / "r.db"
    design = [[0.1, 0.1], [0.2, 0.2], [0.3, 0.3]]
    ckb.Optimizer([0, 0], [1, 1], m=1, budget=8, initial_design=design, storage=db, study_name="s").close()
    with pytest.raises(
        InvalidInputError, match=r"created with initial_design = .*given initial_design = None"
    ):
        ckb.Optimizer([0, 0], [1, 1], m=1, budget=8, storage=db, study_name="s")


def test_a_repeated_design_point_told_again_is_that_design_point_without_a_warning():
    opt = ckb.Optimizer([0, 0], [1, 1], m=1, budget=8, initial_design=[[0.1, 0.1], [0.1, 0.1], [0.3, 0.3]])
    opt.tell(opt.ask(), 1.0, [0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.tell([0.1, 0.1], 2.0, [0.0])
    assert [h["source"] for h in opt.history()] == ["init", "init"]


def test_a_budget_of_minus_zero_is_zero(tmp_path):
    opt = ckb.Optimizer([0, 0], [1, 1], m=1, budget=8, violation_budget=-0.0)
    assert str(opt.metrics()["violation_budget"]) == "[0.0]"


def test_torch_tensors_with_grad_nested_constraints_and_nan_bounds():
    """A probe of odd inputs: a tensor with requires_grad was torch's RuntimeError ("Can't call numpy()
    on Tensor that requires grad"); [[0.1]] for one constraint was flattened silently; a NaN bound read
    "entry (0,) is np.float64(nan)"."""
    torch = pytest.importorskip("torch")
    opt = ckb.Optimizer([0, 0], [1, 1], m=1, budget=8, n_init=3, seed=0)
    x = opt.ask()
    with pytest.raises(InvalidInputError) as err:
        opt.tell(x, 1.0, [[0.1]])
    assert str(err.value) == "expected m = 1 constraint value(s) as a flat list, got shape (1, 1): [[0.1]]."
    assert opt.tell(torch.tensor(x, requires_grad=True), torch.tensor(1.0, requires_grad=True), [0.1]) == 0
    np.testing.assert_array_equal(opt.history()[0]["x"], x)
    with pytest.raises(InvalidInputError) as err:
        ckb.Optimizer([0, float("nan")], [1, 1], m=1, budget=8)
    assert "entry [1] is nan." in str(err.value) and "np.float64" not in str(err.value)
