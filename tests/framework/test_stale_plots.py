"""A --no-plots run into a folder with plots of an earlier run (say, with fewer trials) left them beside
the new summary without a word: they showed what the earlier run summarized. It now warns, in one line."""

import warnings

import pytest

from ckb.experiments import load_spec, run_experiment
from ckb.runner.sweep import SweepWarning


def _spec(trials):
    return load_spec("gpucb-synthetic").with_overrides(trials=trials, horizon=20)


def test_plots_left_by_an_earlier_run_are_named(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", SweepWarning)  # a fresh folder without plots: nothing to say
        run_experiment(_spec(1), tmp_path / "fresh", workers=1, executor="serial", plots=False)
    run_experiment(_spec(1), tmp_path / "o", workers=1, executor="serial")
    before = (tmp_path / "o" / "regret.png").read_bytes()
    with pytest.warns(
        SweepWarning, match=r"still holds \d+ plot\(s\) of an earlier run .*--no-plots"
    ) as caught:
        run_experiment(_spec(2), tmp_path / "o", workers=1, executor="serial", plots=False)
    assert all("\n" not in str(w.message) for w in caught)
    assert (tmp_path / "o" / "regret.png").read_bytes() == before  # left as they were
