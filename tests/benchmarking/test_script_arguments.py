"""The hand-run scripts of benchmarks/ refuse bad arguments the project's way: exit code 2, one line
``error: ...`` on stderr naming the bad value, no traceback, before any work and without touching a file
already there.

Every case runs the script as a subprocess from the repository root with arguments that fail during
parsing or validation; the cases run concurrently (a few at a time) once per module: about 20 s of an
idle 2-core machine for the whole file, most of it the scripts' imports.
"""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120  # seconds per case; a correct case exits in about one (its imports), more on a busy machine

#: (case id, script, arguments, words the error line must contain); ``{tmp}`` is a scratch folder with
#: ``file.json`` (a regular file), ``dir/`` (a directory), ``rec.json`` (a recording of check_unchanged.py),
#: ``bad.json`` (not JSON) and ``list.json`` (JSON, not a recording)
CASES = [
    # bench_engine.py: --output is checked before the benchmark runs; nothing is overwritten
    ("engine-output-dir", "bench_engine", ["--quick", "--output", "{tmp}/dir"], ["--output", "/dir"]),
    (
        "engine-output-under-file",
        "bench_engine",
        ["--quick", "--output", "{tmp}/file.json/x.json"],
        ["--output", "file.json"],
    ),
    ("engine-output-exists", "bench_engine", ["--quick", "--output", "{tmp}/file.json"], ["file.json"]),
    # bench_optimizer_ask.py: names, dimensions and the budget checked before any study runs
    ("ask-policy-unknown", "bench_optimizer_ask", ["--policies", "pcei,nope"], ["'nope'", "Known"]),
    ("ask-dims-word", "bench_optimizer_ask", ["--dims", "2,x"], ["--dims", "'x'"]),
    ("ask-dims-0", "bench_optimizer_ask", ["--dims", "0"], ["--dims", "0"]),
    ("ask-budget-small", "bench_optimizer_ask", ["--budget", "5"], ["--budget 5", "2d + 2"]),
    # bench_multiagent_backends.py: checked before Ray starts
    ("multiagent-agents-0", "bench_multiagent_backends", ["--agents", "0"], ["--agents", "0"]),
    ("multiagent-agents-word", "bench_multiagent_backends", ["--agents", "1,x"], ["--agents", "'x'"]),
    (
        "multiagent-agents-empty-item",
        "bench_multiagent_backends",
        ["--agents", "1,,2", "--rounds", "1"],
        ["'1,,2'"],
    ),
    (
        "multiagent-agents-repeat",
        "bench_multiagent_backends",
        ["--agents", "2,2", "--rounds", "1"],
        ["--agents", "2"],
    ),
    ("multiagent-rounds-0", "bench_multiagent_backends", ["--agents", "1", "--rounds", "0"], ["--rounds"]),
    (
        "multiagent-grid-size-0",
        "bench_multiagent_backends",
        ["--agents", "1", "--rounds", "1", "--grid-size", "0"],
        ["--grid-size", "0"],
    ),
    (
        "multiagent-grid-size-huge",
        "bench_multiagent_backends",
        ["--agents", "1", "--rounds", "1", "--problem", "gp-samples", "--grid-size", "6000"],
        ["6000"],
    ),
    ("multiagent-num-cpus-0", "bench_multiagent_backends", ["--num-cpus", "0"], ["--num-cpus", "0"]),
    ("multiagent-address-blank", "bench_multiagent_backends", ["--address", " "], ["--address"]),
    ("multiagent-problem-unknown", "bench_multiagent_backends", ["--problem", "nope"], ["'nope'"]),
    # bench_policies.py: checked before any policy runs
    ("policies-window-0", "bench_policies", ["--window", "0"], ["--window", "0"]),
    ("policies-window-word", "bench_policies", ["--window", "abc"], ["--window", "'abc'"]),
    ("policies-unknown", "bench_policies", ["--policies", "ckb-ucb,nope"], ["'nope'"]),
    ("policies-blank", "bench_policies", ["--policies", ""], ["--policies", "''"]),
    # tune_oco.py
    ("oco-trials-0", "tune_oco", ["--trials", "0", "--workers", "1"], ["--trials", "0"]),
    ("oco-seed-negative", "tune_oco", ["--trials", "1", "--seed", "-1", "--workers", "1"], ["--seed", "-1"]),
    ("oco-workers-0", "tune_oco", ["--trials", "1", "--workers", "0"], ["--workers", "0"]),
    ("oco-workers-huge", "tune_oco", ["--trials", "1", "--workers", "100000"], ["--workers", "100000"]),
    # box_violation.py
    ("box-points-0", "box_violation", ["--points", "0"], ["--points", "0"]),
    ("box-points-huge", "box_violation", ["--points", "100000000000"], ["--points", "100000000000"]),
    ("box-points-word", "box_violation", ["--points", "abc"], ["--points", "'abc'"]),
    ("box-seed-negative", "box_violation", ["--points", "4", "--seed", "-1"], ["--seed", "-1"]),
    # check_unchanged.py
    (
        "unchanged-compare-missing",
        "check_unchanged",
        ["compare", "{tmp}/rec.json", "{tmp}/gone.json"],
        ["gone.json"],
    ),
    ("unchanged-compare-dir", "check_unchanged", ["compare", "{tmp}/dir", "{tmp}/rec.json"], ["/dir"]),
    (
        "unchanged-compare-not-json",
        "check_unchanged",
        ["compare", "{tmp}/rec.json", "{tmp}/bad.json"],
        ["bad.json"],
    ),
    (
        "unchanged-compare-not-a-recording",
        "check_unchanged",
        ["compare", "{tmp}/list.json", "{tmp}/rec.json"],
        ["list.json"],
    ),
    ("unchanged-record-exists", "check_unchanged", ["record", "{tmp}/file.json"], ["file.json"]),
    ("unchanged-record-no-folder", "check_unchanged", ["record", "{tmp}/gone/r.json"], ["gone"]),
    ("unchanged-unknown-command", "check_unchanged", ["frobnicate", "x"], ["'frobnicate'"]),
    # bench_constrained.py (--report-only and a scratch --out: a case that is not refused runs nothing)
    ("constrained-out-file", "bench_constrained", ["--quick", "--out", "{tmp}/file.json"], ["file.json"]),
    (
        "constrained-out-under-file",
        "bench_constrained",
        ["--quick", "--out", "{tmp}/file.json/sub"],
        ["file.json"],
    ),
    (
        "constrained-problems-blank",
        "bench_constrained",
        ["--problems", "", "--report-only", "--out", "{tmp}/o"],
        ["--problems", "''"],
    ),
    (
        "constrained-problems-empty-item",
        "bench_constrained",
        ["--problems", "gramacy,,branin-disk", "--report-only", "--out", "{tmp}/o"],
        ["'gramacy,,branin-disk'"],
    ),
    (
        "constrained-methods-trailing-comma",
        "bench_constrained",
        ["--methods", "sobol,", "--report-only", "--out", "{tmp}/o"],
        ["--methods", "'sobol,'"],
    ),
    (
        "constrained-seeds-0",
        "bench_constrained",
        ["--seeds", "0", "--report-only", "--out", "{tmp}/o"],
        ["--seeds", "0"],
    ),
    (
        "constrained-seeds-huge",
        "bench_constrained",
        ["--seeds", "100000000000", "--report-only", "--out", "{tmp}/o"],
        ["--seeds", "100000000000"],
    ),
    (
        "constrained-budget-1",
        "bench_constrained",
        ["--budget", "1", "--report-only", "--out", "{tmp}/o"],
        ["--budget", "1"],
    ),
    (
        "constrained-workers-0",
        "bench_constrained",
        ["--workers", "0", "--out", "{tmp}/o"],
        ["--workers", "0"],
    ),
    (
        "constrained-workers-huge",
        "bench_constrained",
        ["--workers", "100000", "--report-only", "--out", "{tmp}/dir"],
        ["--workers", "100000"],
    ),
    (
        "constrained-report-only-no-out",
        "bench_constrained",
        ["--report-only", "--out", "{tmp}/gone"],
        ["gone"],
    ),
    # bench_optuna.py
    (
        "optuna-out-file",
        "bench_optuna",
        [
            "--out",
            "{tmp}/file.json",
            "--seeds",
            "1",
            "--methods",
            "tpe",
            "--problems",
            "gramacy",
            "--workers",
            "1",
        ],
        ["file.json"],
    ),
    (
        "optuna-problems-repeat",
        "bench_optuna",
        ["--problems", "gramacy,gramacy", "--report-only", "--out", "{tmp}/o"],
        ["'gramacy'"],
    ),
    (
        "optuna-methods-repeat",
        "bench_optuna",
        ["--methods", "tpe,tpe", "--report-only", "--out", "{tmp}/o"],
        ["'tpe'"],
    ),
    (
        "optuna-problems-blank",
        "bench_optuna",
        ["--problems", "", "--report-only", "--out", "{tmp}/o"],
        ["--problems", "''"],
    ),
    (
        "optuna-methods-unknown",
        "bench_optuna",
        ["--methods", "ckb.nope", "--report-only", "--out", "{tmp}/o"],
        ["nope"],
    ),
    (
        "optuna-budget-below-design",
        "bench_optuna",
        ["--budget", "3", "--problems", "gramacy", "--report-only", "--out", "{tmp}/o"],
        ["3", "gramacy"],
    ),
    (
        "optuna-seeds-0",
        "bench_optuna",
        ["--seeds", "0", "--report-only", "--out", "{tmp}/o"],
        ["--seeds", "0"],
    ),
    (
        "optuna-seeds-huge",
        "bench_optuna",
        ["--seeds", "100000000000", "--report-only", "--out", "{tmp}/o"],
        ["--seeds", "100000000000"],
    ),
    (
        "optuna-workers-huge",
        "bench_optuna",
        ["--workers", "100000", "--report-only", "--out", "{tmp}/dir"],
        ["--workers", "100000"],
    ),
    ("optuna-report-only-no-out", "bench_optuna", ["--report-only", "--out", "{tmp}/gone"], ["gone"]),
    # bench_ckb.py
    ("ckb-unknown-option", "bench_ckb", ["--bogus"], ["--bogus"]),
    # verify_engineering_optima.py
    ("engineering-starts-0", "verify_engineering_optima", ["--starts", "0"], ["--starts", "0"]),
    ("engineering-scan-negative", "verify_engineering_optima", ["--scan", "-1"], ["--scan", "-1"]),
    (
        "engineering-starts-huge",
        "verify_engineering_optima",
        ["--starts", "10000000000"],
        ["--starts", "10000000000"],
    ),
    ("engineering-problems-unknown", "verify_engineering_optima", ["--problems", "nope"], ["'nope'"]),
    (
        "engineering-problems-repeat",
        "verify_engineering_optima",
        ["--problems", "welded-beam", "welded-beam"],
        ["'welded-beam'"],
    ),
    ("engineering-problems-none", "verify_engineering_optima", ["--problems"], ["--problems"]),
]

FILE_TEXT = '{"kept": "as it was"}'


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory, request):
    """The completed process (or the timeout) of every case selected in this session, a few at a time."""
    selected = {
        item.callspec.params["case"][0]
        for item in request.session.items
        if getattr(item, "function", None) is test_bad_argument_is_one_error_line_with_exit_code_2
    }
    cases = [c for c in CASES if c[0] in selected]
    tmp = tmp_path_factory.mktemp("script-arguments")
    (tmp / "file.json").write_text(FILE_TEXT)
    (tmp / "dir").mkdir()
    (tmp / "rec.json").write_text('{"x": {"a:b": 1.0}}')
    (tmp / "bad.json").write_text("{not json")
    (tmp / "list.json").write_text("[1, 2]")

    def run(case):
        _, script, args, _ = case
        cmd = [sys.executable, f"benchmarks/{script}.py", *(a.replace("{tmp}", str(tmp)) for a in args)]
        try:
            return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired as exc:
            return exc

    with ThreadPoolExecutor(max_workers=4) as pool:
        done = dict(zip((c[0] for c in cases), pool.map(run, cases)))
    return tmp, done


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_argument_is_one_error_line_with_exit_code_2(case, outcomes):
    tmp, done = outcomes
    name, script, args, words = case
    proc = done[name]
    assert not isinstance(proc, subprocess.TimeoutExpired), (
        f"{script} {args}: still running after {TIMEOUT} s"
    )
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2, f"exit {proc.returncode}; stderr:\n{proc.stderr}\nstdout:\n{proc.stdout}"
    assert "Traceback" not in proc.stderr
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: "), lines[0]
    for word in words:
        assert word.replace("{tmp}", str(tmp)) in lines[0], (word, lines[0])
    assert (tmp / "file.json").read_text() == FILE_TEXT  # nothing already there was overwritten
    assert not (tmp / "o").exists() and not (tmp / "gone").exists()  # nothing was started
