"""The one pipeline: a kind plugged in from outside runs validate -> sweep -> summarize -> write -> plot ->
finish, with the sweep's skip and conflict rules."""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

from ckb.framework import Kind, SpecBase, kinds, run_pipeline
from ckb.framework.spec import algorithm_tables
from ckb.registry import Registry
from ckb.runner.sweep import ResultsFolderConflictError, SweepConflictError, run_sweep


@dataclass(frozen=True)
class SquareTask:
    algorithm: str
    trial: int
    factor: float

    def to_dict(self):
        return {"algorithm": self.algorithm, "trial": self.trial, "factor": self.factor}

    def config_hash(self):
        return f"factor={self.factor}"


class JsonStore:
    """Results as JSON files written by the driver, identified by the factor."""

    noun = "result"

    def path(self, out, cfg):
        return Path(out) / cfg.algorithm / f"{cfg.trial}.json"

    def identity(self, cfg):
        return cfg.config_hash()

    def stored(self, path):
        return json.loads(path.read_text())["hash"]

    def task(self, cfg, path):
        return cfg.to_dict(), str(path)

    def finish(self, path, result):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result))


def square(task):
    cfg, _ = task
    return {"hash": f"factor={cfg['factor']}", "value": cfg["factor"] * cfg["trial"] ** 2}


@dataclass(kw_only=True)
class ToySpec(SpecBase):
    kind: ClassVar[str] = "toy"

    @classmethod
    def _parse(cls, raw, where, report):
        return {
            "algorithms": {k: float(v.get("factor", 1.0)) for k, v in algorithm_tables(raw, where).items()}
        }

    def _body(self):
        return {"algorithms": {k: {"factor": f} for k, f in self.algorithms.items()}}

    def configs(self):
        return [SquareTask(a, k, f) for a, f in self.algorithms.items() for k in range(self.trials)]

    def validate(self):
        self.validated = True
        return self


class ToyKind(Kind):
    name = "toy"
    spec = ToySpec

    def __init__(self):
        self.calls = []

    def sweep(self, spec, out, **options):
        self.calls.append("sweep")
        paths = run_sweep(spec.configs(), out, worker=square, store=JsonStore(), **options)
        return {key: json.loads(p.read_text())["value"] for key, p in paths.items()}

    def summarize(self, spec, results):
        self.calls.append("summarize")
        return {"experiment": spec.name, "total": sum(results.values())}, results

    def plot(self, out, spec, summary, curves):
        self.calls.append("plot")
        return [Path(out) / "toy.png"]

    def finish(self, out, spec, summary):
        self.calls.append("finish")
        summary["finished"] = True


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setattr(kinds, "KINDS", Registry("experiment kind"))
    return kinds.register_kind(ToyKind())


def test_a_kind_plugs_into_the_pipeline_from_outside(toy, tmp_path):
    raw = {"kind": "toy", "name": "t", "horizon": 1, "trials": 3, "algorithms": {"a": {"factor": 2.0}}}
    spec = kinds.spec_from_dict(raw)
    assert isinstance(spec, ToySpec) and spec.to_dict()["algorithms"] == {"a": {"factor": 2.0}}
    done = []
    summary = run_pipeline(
        spec, tmp_path, executor="serial", on_done=lambda c, skipped: done.append((c.trial, skipped))
    )
    assert spec.validated and toy.calls == ["sweep", "summarize", "plot", "finish"]
    assert summary == {
        "experiment": "t",
        "total": 2.0 * (0 + 1 + 4),
        "plots": [str(tmp_path / "toy.png")],
        "finished": True,
    }
    assert json.loads((tmp_path / "summary.json").read_text()) == {"experiment": "t", "total": 10.0}
    assert sorted(done) == [(0, False), (1, False), (2, False)]
    done.clear()
    run_pipeline(spec, tmp_path, executor="serial", plots=False, on_done=lambda c, s: done.append(s))
    assert done == [True, True, True]  # resumed: nothing redone
    other = spec.with_overrides(sets=["algorithms.a.factor=3.0"])
    with pytest.raises(
        ResultsFolderConflictError,
        match=r"different configuration of 't' \(recorded in spec.json\): algorithms\.a\.factor \(2\.0 there",
    ):
        run_pipeline(
            other, tmp_path, executor="serial"
        )  # the folder's recorded spec: refused before the sweep
    (tmp_path / "spec.json").unlink()  # a summary without the spec in it no longer says whose folder it is
    with pytest.raises(ResultsFolderConflictError, match=r"summary.json is not a ckb summary"):
        run_pipeline(other, tmp_path, executor="serial")
    (tmp_path / "summary.json").unlink()  # without any record, the sweep still refuses the task file itself
    with pytest.raises(SweepConflictError, match=r"0.json holds a result of a different configuration"):
        run_pipeline(other, tmp_path, executor="serial")
    assert json.loads((tmp_path / "a" / "0.json").read_text())["hash"] == "factor=2.0"  # not overwritten
