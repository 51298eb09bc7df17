"""One CKBSampler used by two studies (in memory, or two studies in one SQLite file). Before: the
sampler kept one cache of the search space, as Optuna's samplers do, so in memory the second study was
modelled by the first's space and every one of its parameters was drawn at random (with a warning that
blamed a dynamic search space), and in one database the second study raised "IntersectionSearchSpace
cannot handle multiple studies". Now each study has its own cache: the second study's trials are those
of a fresh sampler."""

import optuna
import pytest

from ckb.integrations.optuna import CKBSampler

N = 8


def _x(trial):
    x = trial.suggest_float("x", 0.0, 1.0)
    trial.set_user_attr("c", x - 0.8)
    return (x - 0.3) ** 2


def _y(trial):
    y = trial.suggest_float("y", -1.0, 1.0)
    trial.set_user_attr("c", y - 0.5)
    return (y - 0.3) ** 2


def _sampler():
    return CKBSampler(seed=0, n_trials=N, constraints_func=lambda t: [t.user_attrs["c"]])


def _ys(study):
    return [t.params["y"] for t in study.trials]


@pytest.fixture(autouse=True)
def _quiet():
    level = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    yield
    optuna.logging.set_verbosity(level)


def test_a_second_study_gets_the_trials_of_a_fresh_sampler(tmp_path):
    fresh = optuna.create_study(sampler=_sampler())
    fresh.optimize(_y, n_trials=N)
    shared = _sampler()
    optuna.create_study(sampler=shared).optimize(_x, n_trials=N)
    second = optuna.create_study(sampler=shared)
    second.optimize(_y, n_trials=N)
    assert _ys(second) == _ys(fresh)
    url = f"sqlite:///{tmp_path / 'two.db'}"
    shared = _sampler()
    optuna.create_study(sampler=shared, storage=url, study_name="a").optimize(_x, n_trials=N)
    other = optuna.create_study(sampler=shared, storage=url, study_name="b")
    other.optimize(_y, n_trials=N)
    assert _ys(other) == _ys(fresh)
