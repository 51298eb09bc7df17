"""``CKBSampler(exact=True)`` promises that no evaluated point is proposed again; on int (or stepped)
parameters the maximizer's pick was rounded back onto an evaluated grid point (9 distinct points in 16
trials of a 5 x 5 grid, (3, 3) seven times)."""

import collections

import optuna
import pytest

from ckb.integrations.optuna import CKBSampler

optuna.logging.set_verbosity(optuna.logging.WARNING)


def _objective(trial):
    a, b = trial.suggest_int("a", 0, 4), trial.suggest_int("b", 0, 4)
    x = trial.suggest_float("x", 0.0, 1.0, step=0.25)
    trial.set_user_attr("g", [a + b - 6.5])
    return (a - 3) ** 2 + (b - 3) ** 2 + 0.1 * a + x


def _counts(exact, n):
    sampler = CKBSampler(constraints_func=lambda t: t.user_attrs["g"], seed=1, exact=exact, n_trials=n)
    study = optuna.create_study(sampler=sampler)
    study.optimize(_objective, n_trials=n)
    return collections.Counter(tuple(sorted(t.params.items())) for t in study.trials)


@pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")
def test_exact_never_proposes_an_evaluated_grid_point_again():
    counts = _counts(True, 14)
    assert max(counts.values()) == 1 and len(counts) == 14


@pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")
def test_a_grid_evaluated_through_allows_repeats():
    def tiny(trial):
        a = trial.suggest_int("a", 0, 1)
        b = trial.suggest_int("b", 0, 1)
        trial.set_user_attr("g", [a - 0.5])
        return a + b

    sampler = CKBSampler(constraints_func=lambda t: t.user_attrs["g"], seed=0, exact=True, n_trials=8)
    study = optuna.create_study(sampler=sampler)
    study.optimize(tiny, n_trials=8)
    values = [tuple(sorted(t.params.items())) for t in study.trials]
    assert len(set(values[:4])) == 4  # every one of the 4 grid points before any repeat
    assert all(t.state == optuna.trial.TrialState.COMPLETE for t in study.trials)
