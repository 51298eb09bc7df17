"""Executors run independent tasks (trials) and yield their results as they finish.

``serial`` runs in-process (debugging, ``--workers 1``). ``process`` runs a pool of worker processes
(``spawn`` start method, so workers never inherit a forked BLAS thread pool), each pinned to one BLAS
thread so ``W`` workers use ``W`` cores without oversubscription. ``ray`` runs each task as a Ray task
(``num_cpus=1``, one BLAS thread) on a private local Ray instance with ``W`` CPUs, or on an existing
cluster (``address=`` / ``RAY_ADDRESS``; see :mod:`ckb._parallel`), so a sweep that outgrows one machine
changes one flag. All share one interface, ``map_unordered(fn, tasks)``: ``(task, fn(task))`` pairs as
they finish; ``fn`` and the tasks must be picklable (module-level functions, plain data). Each trial is
seeded on its own, so the numbers do not depend on the executor or the number of workers.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

from ckb._parallel import pin_blas_threads
from ckb._validation import did_you_mean
from ckb.errors import CKBError, UnknownNameError


class SerialExecutor:
    name = "serial"
    workers = 1

    def map_unordered(self, fn: Callable, tasks: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
        for task in tasks:
            yield task, fn(task)


class ProcessExecutor:
    name = "process"

    def __init__(self, workers: int | None = None) -> None:
        self.workers = max(1, int(workers or os.cpu_count() or 1))

    def map_unordered(self, fn: Callable, tasks: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
        tasks = list(tasks)
        if not tasks:
            return
        ctx = mp.get_context("spawn")
        with ProcessPoolExecutor(self.workers, mp_context=ctx, initializer=pin_blas_threads) as pool:
            pending = {pool.submit(fn, task): task for task in tasks}
            try:
                while pending:
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in done:
                        task = pending.pop(fut)
                        yield task, fut.result()
            except BaseException:
                for fut in pending:
                    fut.cancel()
                raise


_PINNED = False


def _ray_task(fn: Callable, task: Any) -> Any:
    """Body of a Ray task: pin this worker process to one BLAS thread (once), then run ``fn(task)``."""
    global _PINNED
    if not _PINNED:
        pin_blas_threads()
        _PINNED = True
    return fn(task)


class RayExecutor:
    """Tasks as Ray tasks on a local Ray instance (``workers`` CPUs) or an existing cluster (``address``).

    Parameters
    ----------
    workers:
        CPUs of the local instance (default: all cores). On a cluster: at most this many tasks in flight
        (default: no limit; Ray schedules one task per free CPU of the cluster).
    address:
        Ray cluster address (``"host:6379"``, ``"auto"``, ``"ray://host:10001"``); default ``RAY_ADDRESS``,
        else a private local instance, started for each ``map_unordered`` call and stopped after it.
        A cluster is never stopped; a Ray session already initialized in this process is used as is.
    runtime_env:
        Ray runtime environment, e.g. to ship ckb to a cluster whose nodes do not have it installed.

    Results are yielded as tasks finish (``ray.wait``). On an exception (a task's error is re-raised, with
    its original type) or ``KeyboardInterrupt``, or when the consumer stops iterating, every task not yet
    finished is cancelled; finished trials are already on disk, so re-running the sweep resumes it.
    """

    name = "ray"

    def __init__(
        self,
        workers: int | None = None,
        *,
        address: str | None = None,
        runtime_env: dict[str, Any] | None = None,
    ) -> None:
        if workers is not None and (isinstance(workers, bool) or int(workers) != workers or workers < 1):
            raise CKBError(f"workers must be an integer >= 1, got {workers!r}.")
        self.workers = None if workers is None else int(workers)
        self.address = address
        self.runtime_env = runtime_env

    def _session(self):
        from ckb._parallel import RaySession

        return RaySession(
            self.address, num_cpus=self.workers, runtime_env=self.runtime_env, what="--executor ray"
        )

    def map_unordered(self, fn: Callable, tasks: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
        from ckb._parallel import explain_worker_error

        tasks = list(tasks)
        if not tasks:
            return
        session = self._session()
        ray = session.start()
        pending: dict[Any, int] = {}
        try:
            remote = ray.remote(num_cpus=1)(_ray_task)
            fn_ref = ray.put(fn)
            limit = self.workers if session.mode == "cluster" and self.workers else len(tasks)
            todo = iter(enumerate(tasks))

            def submit(n: int) -> None:
                for i, task in todo:
                    pending[remote.remote(fn_ref, task)] = i
                    if len(pending) >= n:
                        return

            submit(limit)
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1)
                for ref in done:
                    i = pending.pop(ref)
                    try:
                        result = ray.get(ref)
                    except Exception as exc:
                        explained = explain_worker_error(exc)
                        if explained is exc:
                            raise
                        raise explained from exc
                    submit(limit)
                    yield tasks[i], result
        finally:  # an error, Ctrl-C, or the consumer closed the generator: cancel what is left
            for ref in pending:
                try:
                    ray.cancel(ref, force=True)
                except Exception:  # already finished or gone
                    pass
            session.close()


EXECUTORS = {"serial": SerialExecutor, "process": ProcessExecutor, "ray": RayExecutor}


def get_executor(name: str, workers: int | None = None, **options: Any):
    """The executor ``name`` with ``workers`` workers. ``options`` go to its constructor (``ray``:
    ``address``, ``runtime_env``; the others take none). ``process`` with one worker runs serially; ``ray``
    is always Ray (one task on a cluster is still run on the cluster)."""
    if name not in EXECUTORS:
        raise UnknownNameError(f"Unknown executor {name!r}.{did_you_mean(name, EXECUTORS)}")
    options = {k: v for k, v in options.items() if v is not None}
    if options and name != "ray":
        raise CKBError(
            f"Executor {name!r} takes no options, got {', '.join(sorted(options))} "
            "(address and runtime_env are for --executor ray)."
        )
    if name == "ray":
        unknown = set(options) - {"address", "runtime_env"}
        if unknown:
            raise CKBError(
                f"Unknown option(s) {', '.join(sorted(unknown))} for executor 'ray'; "
                "expected address, runtime_env."
            )
        return RayExecutor(workers, **options)
    if name == "serial" or (workers is not None and workers <= 1):
        return SerialExecutor()
    return EXECUTORS[name](workers)
