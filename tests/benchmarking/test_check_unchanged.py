"""benchmarks/check_unchanged.py (the refactor check run by hand): its reduced benchmark spec really has
two problems, and an experiment that errored or gave no numbers in both recordings is not passed."""

import importlib.util
import json
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _module():
    spec = importlib.util.spec_from_file_location(
        "check_unchanged", ROOT / "benchmarks" / "check_unchanged.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_reduced_benchmark_spec_has_two_problems_and_three_methods(tmp_path):
    from ckb.experiments import shipped

    dst = tmp_path / "b.toml"
    _module()._reduced_benchmark(shipped()["constrained-bo"], dst)
    raw = tomllib.loads(dst.read_text())
    assert raw["problems"] == ["gardner-1", "gramacy"]
    assert sorted(raw["algorithms"]) == ["cei", "ckb-ucb", "config"]


def test_errors_and_empty_recordings_count_as_unchecked(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    rec = {"x": {"error": "exit 2"}, "y": {}, "z": {"s:v": 1.0}}
    a.write_text(json.dumps(rec))
    b.write_text(json.dumps(rec))
    assert _module().compare(str(a), str(b)) == 1
    out = capsys.readouterr().out
    assert "UNCHECKED x" in out and "UNCHECKED y" in out and "same      z" in out and "2 experiment(s)" in out
