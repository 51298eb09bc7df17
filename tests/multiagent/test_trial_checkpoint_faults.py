"""Multi-agent checkpoints that could not be trusted. Before:
- ``MultiAgentTrial.resume`` took a checkpoint with an agent's GP states missing, the agents' states in
  another order, or an edited seed, and ran on to other numbers (regret 14.8 -> 21.2 for the first);
  a missing, foreign, truncated or inconsistent file was a raw FileNotFoundError, BadZipFile, KeyError
  or broadcasting ValueError;
- ``save_checkpoint`` after the trial was closed (the end of its ``with`` block) wrote a checkpoint with
  no agents over a good one, and after a round interrupted part-way (Ctrl-C in one agent's step) one
  that could never be resumed;
- a stored trace with a NaN ``f_star`` was reused (``NaN`` regret in summary.json), and one with text
  there ended in a traceback;
- ``horizon=6.0`` passed the config's check and then failed inside numpy.
Each is now refused with one line, and nothing already saved is replaced."""

import numpy as np
import pytest

from ckb.errors import CKBError
from ckb.io import load_state, save_state
from ckb.multiagent import MultiAgentTrace, MultiAgentTrial, MultiAgentTrialConfig
from ckb.runner.trial import TrialConfig

CFG = MultiAgentTrialConfig(
    algorithm="a",
    method="dmabo",
    problem="gp-samples",
    horizon=12,
    problem_params={"n_agents": 2, "m": 1, "grid_size": 20},
)


def _one_line(exc_info):
    assert "\n" not in str(exc_info.value)


@pytest.fixture
def saved(tmp_path):
    with MultiAgentTrial(CFG) as trial:
        trial.run(until=5)
        trial.save_checkpoint(tmp_path / "ck.npz")
    return tmp_path / "ck.npz"


def _edited(saved, tmp_path, edit):
    state = load_state(saved)
    edit(state)
    path = tmp_path / "edited.npz"
    save_state(path, state)
    return path


def _drop_gps(s):
    s["agents"][0]["model"]["gps"] = []


def _swap(s):
    s["agents"].reverse()


def _seed(s):
    s["config"]["seed"] = 7


def _short(s):
    s["coordinator"]["t"] = 3


def _seconds(s):
    s["seconds"] = s["seconds"][:2]


@pytest.mark.parametrize(
    "edit, match",
    [
        (_drop_gps, r"agent 0 state: the model holds 0 GP state\(s\), expected 2"),
        (_swap, r"agent 0 state: it is the state of agent 1 \(agents in another order\?\)"),
        (_seed, r"its config was changed after it was saved"),
        (_short, r"the agents at rounds \[5, 5\], the coordinator at 2"),
        (_seconds, r"seconds has shape \(2,\), expected \(5,\)"),
    ],
)
def test_an_inconsistent_checkpoint_is_refused_in_one_line(saved, tmp_path, edit, match):
    with pytest.raises(CKBError, match=match) as exc:
        MultiAgentTrial.resume(_edited(saved, tmp_path, edit))
    _one_line(exc)


def test_a_missing_or_unreadable_file_is_one_line(saved, tmp_path):
    (tmp_path / "garbage.npz").write_text("not a checkpoint")
    (tmp_path / "trunc.npz").write_bytes(saved.read_bytes()[:100])
    np.savez(tmp_path / "foreign.npz", a=np.zeros(3))
    for name, match in [
        ("nope.npz", r"checkpoint '.*nope\.npz' does not exist"),
        ("garbage.npz", r"garbage\.npz' is not a readable ckb checkpoint"),
        ("trunc.npz", r"trunc\.npz' is not a readable ckb checkpoint"),
        ("foreign.npz", r"foreign\.npz' is not a readable ckb checkpoint"),
    ]:
        with pytest.raises(CKBError, match=match) as exc:
            MultiAgentTrial.resume(tmp_path / name)
        _one_line(exc)


def test_a_closed_trial_saves_nothing_and_the_good_checkpoint_is_kept(saved):
    before = saved.read_bytes()
    trial = MultiAgentTrial(CFG)
    trial.run(until=3)
    trial.close()
    for what, call in [
        ("cannot save its state", lambda: trial.save_checkpoint(saved)),
        ("cannot run", lambda: trial.run()),
        ("cannot assemble the trace", lambda: trial.trace()),
    ]:
        with pytest.raises(CKBError, match=rf"{what}: trial 0 of 'a' is closed") as exc:
            call()
        _one_line(exc)
    assert saved.read_bytes() == before
    with MultiAgentTrial.resume(saved) as resumed:
        assert resumed.t == 5


def test_a_round_interrupted_part_way_is_not_checkpointed(saved):
    before = saved.read_bytes()
    trial = MultiAgentTrial(CFG)
    trial.run(until=5)
    agent = trial.backend.agents[1]
    step = agent.step

    def interrupted(msg):
        if msg.round == 8:
            raise KeyboardInterrupt
        return step(msg)

    agent.step = interrupted
    with pytest.raises(KeyboardInterrupt):
        trial.run()
    agent.step = step
    for call in (lambda: trial.save_checkpoint(saved), lambda: trial.run()):
        with pytest.raises(CKBError, match=r"interrupted part-way \(the agents at rounds \[8, 7\]") as exc:
            call()
        _one_line(exc)
    trial.close()
    assert saved.read_bytes() == before
    with MultiAgentTrial.resume(saved) as resumed, MultiAgentTrial(CFG) as fresh:
        np.testing.assert_array_equal(resumed.run().index, fresh.run().index)


def test_a_checkpoint_cannot_be_written_over_a_folder(tmp_path):
    with MultiAgentTrial(CFG) as trial:
        trial.run(until=2)
        with pytest.raises(CKBError, match=r"cannot write checkpoint .*nothing was saved") as exc:
            trial.save_checkpoint(tmp_path)
    _one_line(exc)


def test_a_callback_that_is_not_a_function_is_refused_before_any_round():
    with MultiAgentTrial(CFG) as trial:
        with pytest.raises(CKBError, match=r"callback must be a function of the round t, got 3"):
            trial.run(callback=3)
        assert trial.t == 0
        with pytest.raises(CKBError, match=r"this trace has no rounds yet"):
            trial.trace().curves()


@pytest.mark.parametrize(
    "f_star, match", [(float("nan"), "f_star = nan is not a finite number"), ("x", "f_star = 'x'")]
)
def test_a_trace_whose_optimum_is_not_a_number_is_not_finished(f_star, match):
    with MultiAgentTrial(CFG) as trial:
        state = trial.run(until=CFG.horizon).state_dict()
    MultiAgentTrace.check_finished(state)
    with pytest.raises(ValueError, match=match):
        MultiAgentTrace.check_finished({**state, "f_star": f_star})


def test_a_whole_float_horizon_trial_and_seed_are_taken_as_integers():
    base = {k: v for k, v in CFG.to_dict().items() if k not in ("horizon", "trial", "seed")}
    cfg = MultiAgentTrialConfig(**base, horizon=6.0, trial=1.0, seed=3.0)
    ref = MultiAgentTrialConfig(**base, horizon=6, trial=1, seed=3)
    assert cfg.config_hash() == ref.config_hash()
    with MultiAgentTrial(cfg) as a, MultiAgentTrial(ref) as b:
        np.testing.assert_array_equal(a.run().index, b.run().index)
    single = TrialConfig(algorithm="a", policy="ckb-ucb", horizon=4.0, problem="gardner", seed=2.0)
    assert single.horizon == 4 and isinstance(single.horizon, int) and single.seed == 2
