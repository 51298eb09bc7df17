"""kill -9 at random moments of 4-8 optimizer workers sharing one study file (fault-injection suite).

Each worker (``tests.faults._workers.optimizer_worker``) runs the README loop and logs, fsync'd, every
ask that returned and every tell that returned. Once a tell has returned, a seeded killer SIGKILLs
random workers at random moments and restarts them (a restarted worker resumes with
``ckb.Optimizer.load``, tells the asks it had logged but not told, and goes on). At the end: every
tell a worker saw return is in the study exactly once with its values; no point was handed out twice
while pending; the trials never exceed the budget; the study opens and ``metrics()`` works.
"""

from __future__ import annotations

import itertools
import os
import signal
import time

import numpy as np
import pytest

from tests.faults import _workers as W
from tests.processes import preloaded_context


def _create(path: str, name: str, budget: int) -> None:
    import ckb

    ckb.Optimizer(
        W.LOWER, W.UPPER, m=1, policy="cei", budget=budget, minimize=True, n_init=4, seed=3,
        storage=path, study_name=name, refit_every=3, **W.RUNTIME,
    ).close()  # fmt: skip


def _run_with_kills(tmp_path, *, workers: int, budget: int, kills: int, seed: int, delay=(0.05, 0.6)):
    path, name, logdir = str(tmp_path / "study.db"), "pump", str(tmp_path / "logs")
    os.makedirs(logdir)
    _create(path, name, budget)
    ctx = preloaded_context("tests.faults._workers")
    rng = np.random.default_rng(seed)
    incarnation = {w: 0 for w in range(workers)}

    def start(w):
        p = ctx.Process(target=W.optimizer_worker, args=(path, name, logdir, w, incarnation[w]), daemon=True)
        p.start()
        incarnation[w] += 1
        return p

    procs = {w: start(w) for w in range(workers)}
    done, deadline = 0, time.monotonic() + 900
    try:
        # the kills start once a tell has returned: before that every worker is still starting (a few
        # seconds), and kills from the start all landed there, two trials into a run
        while not any(W.read_log(W.logs(logdir, w)[1]) for w in range(workers)):
            assert time.monotonic() < deadline and any(p.is_alive() for p in procs.values()), "no tell"
            time.sleep(0.05)
        while done < kills and time.monotonic() < deadline:
            time.sleep(float(rng.uniform(*delay)))
            alive = [w for w, p in procs.items() if p.is_alive()]
            if not alive:
                break
            w = int(rng.choice(alive))
            os.kill(procs[w].pid, signal.SIGKILL)
            procs[w].join()
            if procs[w].exitcode == -signal.SIGKILL:
                done += 1
            procs[w] = start(w)  # resumes, tells its logged pending asks, goes on
        for w, p in procs.items():
            p.join(timeout=max(1.0, deadline - time.monotonic()))
            err = "".join(
                open(os.path.join(logdir, f)).read() for f in os.listdir(logdir) if f.startswith("err-")
            )
            assert p.exitcode == 0, f"worker {w} ended with {p.exitcode}:\n{err[-3000:]}"
    finally:
        for p in procs.values():
            if p.is_alive():
                p.kill()
                p.join()
    return path, name, logdir, done


def _check(path: str, name: str, logdir: str, workers: int, budget: int) -> None:
    import ckb

    opt = ckb.Optimizer.load(path, name)
    try:
        h = opt.history()
        met = opt.metrics()
    finally:
        opt.close()
    by_number = {t["number"]: t for t in h}
    assert sorted(by_number) == list(range(len(h)))  # dense numbers, each trial once
    # the budget: complete + pending + failed never exceed it (the loop runs until it is used)
    assert len(h) == budget
    assert met["evaluations"] + met["pending"] + met["failed"] == budget and met["remaining"] == 0

    asks, tells, recovered = [], {}, {}
    for w in range(workers):
        asks_log, tells_log = W.logs(logdir, w)
        asks += [tuple(W._unhex(words[1:3])) for words in W.read_log(asks_log)]
        for words in W.read_log(tells_log):
            number = int(words[1])
            x, (y, g) = tuple(W._unhex(words[2:4])), W._unhex(words[4:6])
            assert number not in tells and number not in recovered, f"trial {number} told twice"
            (tells if words[0] == "tell" else recovered)[number] = (x, y, g)
    # every tell a worker saw return is in the study, with its point and values bit for bit
    for number, (x, y, g) in {**tells, **recovered}.items():
        t = by_number[number]
        assert t["state"] == "complete", (number, t["state"])
        assert tuple(t["x"].tolist()) == x and t["objective"] == y and t["constraints"].tolist() == [g]
    # every complete trial was told by exactly one worker (a kill between commit and log is recovered)
    complete = {n for n, t in by_number.items() if t["state"] == "complete"}
    assert complete == set(tells) | set(recovered)
    # no ask handed out twice: each logged ask is exactly one trial, told at the end
    assert len(asks) == len(set(asks)), "the same point was returned by two asks"
    trial_of = {}
    for n, t in by_number.items():
        trial_of.setdefault(tuple(t["x"].tolist()), []).append(n)
    for x in asks:
        assert len(trial_of.get(x, [])) == 1, (x, trial_of.get(x))
        assert by_number[trial_of[x][0]]["state"] == "complete"
    # no point pending twice at once (equal points must not overlap in [asked_at, told_at])
    for numbers in trial_of.values():
        spans = sorted((by_number[n]["asked_at"], by_number[n]["told_at"] or np.inf) for n in numbers)
        for (_, end), (start, _) in itertools.pairwise(spans):
            assert start >= end, f"point of trials {numbers} handed out twice while pending"
    # what stays pending was asked by a worker killed before it could log the ask (never handed out)
    pending = {n for n, t in by_number.items() if t["state"] == "pending"}
    assert all(tuple(by_number[n]["x"].tolist()) not in set(asks) for n in pending)
    assert met["failed"] == 0


def test_four_workers_killed_a_few_times(tmp_path):
    workers, budget = 4, 22
    path, name, logdir, kills = _run_with_kills(tmp_path, workers=workers, budget=budget, kills=3, seed=11)
    assert kills >= 1
    _check(path, name, logdir, workers, budget)


@pytest.mark.slow
@pytest.mark.parametrize("workers,seed", [(6, 1), (8, 2)])
def test_many_workers_killed_twelve_times(tmp_path, workers, seed):
    # the twelve kills land between about the 5th and the 13th tell here, in asks, tells and restarts;
    # the rest of the run (new asks beside restarted workers, then the budget used to the last trial) is
    # what a larger budget would only lengthen
    budget = 60
    path, name, logdir, kills = _run_with_kills(
        tmp_path, workers=workers, budget=budget, kills=12, seed=seed, delay=(0.1, 1.0)
    )
    assert kills >= 12, f"only {kills} kills landed before the budget was used"
    _check(path, name, logdir, workers, budget)
