"""A process's first ask (and CKBSampler's first decision) imports torch, BoTorch and GPyTorch (about
1 s) before it takes its turn on the study: inside the turn, every other process sharing the study
waited that long at each process's first ask (multi-process probe: three workers' first asks came 1.2 s
apart)."""

import subprocess
import sys
import textwrap


def test_the_first_ask_takes_its_turn_with_the_models_already_imported(tmp_path):
    code = textwrap.dedent(
        f"""
        import sys
        import ckb
        from ckb.optimizer.study import Study

        assert "torch" not in sys.modules, "the test needs a process that has not imported torch yet"
        seen = []
        transact = Study.transact

        def spy(self, decide):
            seen.append(all(m in sys.modules for m in ("torch", "botorch", "gpytorch")))
            return transact(self, decide)

        Study.transact = spy
        opt = ckb.Optimizer([0, 0], [1, 1], m=1, budget=8, storage={str(tmp_path / "s.db")!r}, study_name="s")
        opt.ask()
        print(seen)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[True]"


def test_the_samplers_first_decision_takes_its_turn_with_the_models_already_imported():
    """The same for CKBSampler: its decisions wait in line behind each other's (the bakery turn)."""
    code = textwrap.dedent(
        """
        import sys
        import optuna
        from ckb.integrations.optuna import CKBSampler

        assert "torch" not in sys.modules, "the test needs a process that has not imported torch yet"
        seen = []
        turn = CKBSampler._turn

        def spy(self, study, trial):
            seen.append(all(m in sys.modules for m in ("torch", "botorch", "gpytorch")))
            return turn(self, study, trial)

        CKBSampler._turn = spy
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        sampler = CKBSampler(constraints_func=lambda t: t.user_attrs["g"], n_trials=8, raw_samples=16)

        def objective(trial):
            x = trial.suggest_float("x", 0, 1)
            trial.set_user_attr("g", [x - 0.5])
            return x

        optuna.create_study(sampler=sampler).optimize(objective, n_trials=5)
        print(seen[:1])
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[True]"
