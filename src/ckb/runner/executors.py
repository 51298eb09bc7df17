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
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

from ckb._parallel import import_env_plugins, pin_blas_threads
from ckb._validation import did_you_mean
from ckb.errors import CKBError, UnknownNameError


class ExecutorWarning(UserWarning):
    """An executor setting that works but costs time (e.g. more worker processes than CPUs)."""


class SerialExecutor:
    """Runs the tasks one after another in this process, each with BLAS/OpenMP limited to one thread, as
    a worker process pins it (:func:`~ckb._parallel.pin_blas_threads`): a task's numbers do not depend on
    the executor or the number of workers (a multi-threaded BLAS sums in another order, which changed
    traces in the last bits). The process's own limits come back after each task."""

    name = "serial"
    workers = 1

    def map_unordered(self, fn: Callable, tasks: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
        from threadpoolctl import threadpool_limits

        for task in tasks:
            with threadpool_limits(limits=1):
                result = fn(task)
            yield task, result


def _die_with_parent(parent: int) -> None:
    """End this worker when the process ``parent`` dies (even by ``kill -9``): ``PR_SET_PDEATHSIG`` on
    Linux, and everywhere a daemon thread that polls ``os.getppid()`` once a second (this also covers a
    parent that died before the signal was armed)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG = 1
        except (OSError, AttributeError):  # no prctl: the watchdog below still ends the worker
            pass

    def watch() -> None:
        while os.getppid() == parent:
            threading.Event().wait(1.0)
        os._exit(1)

    if os.getppid() != parent:
        os._exit(1)
    threading.Thread(target=watch, name="ckb-parent-watchdog", daemon=True).start()


#: the signals a process-pool worker leaves to its parent (which stops the workers itself)
_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _init_worker(parent: int) -> None:
    """Process-pool worker initializer: Ctrl-C and SIGTERM are the parent's to handle (it stops the workers
    with SIGKILL), the worker ends with its parent, one BLAS thread. A SIGTERM to the whole group
    (``timeout``, a batch scheduler) used to kill the workers under the parent, whose pool could then
    fail before it had handled its own SIGTERM."""
    for sig in _STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    # spawned with both blocked (_stop_signals_held): unblocked, a pending one is dropped
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
    _die_with_parent(parent)
    pin_blas_threads()
    import_env_plugins()


class ProcessExecutor:
    """A ``spawn`` process pool. Workers ignore Ctrl-C and SIGTERM (they are spawned with both blocked, so
    an interrupt while they start prints nothing), end when the parent dies, and are killed when the
    parent stops iterating early (an error, Ctrl-C, SIGTERM): finished trials are on disk, the others are
    redone by the next run."""

    name = "process"

    def __init__(self, workers: int | None = None) -> None:
        self.workers = max(1, int(workers or os.cpu_count() or 1))
        cpus = os.cpu_count()
        if cpus and self.workers > cpus:
            warnings.warn(
                f"{self.workers} workers on this machine's {cpus} CPUs: each worker is a process here, so "
                f"more than {cpus} only slows the run (each imports numpy and SciPy); the numbers are the same.",
                ExecutorWarning,
                stacklevel=2,
            )

    def map_unordered(self, fn: Callable, tasks: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
        tasks = list(tasks)
        if not tasks:
            return
        ctx = mp.get_context("spawn")
        pool = ProcessPoolExecutor(  # never more processes than tasks
            min(self.workers, len(tasks)), mp_context=ctx, initializer=_init_worker, initargs=(os.getpid(),)
        )
        pending: dict = {}
        finished = False
        try:
            # children start with SIGINT and SIGTERM blocked (a signal while they import is quiet), and no
            # handler raises inside the pool's code, where it would leave a lock taken (_signals_deferred)
            with _stop_signals_held(), _signals_deferred():
                for task in tasks:
                    pending[pool.submit(fn, task)] = task
            while pending:
                with _signals_deferred():  # a Ctrl-C is raised between two waits, within POLL seconds
                    done, _ = wait(pending, timeout=POLL, return_when=FIRST_COMPLETED)
                    results = [(pending.pop(fut), fut) for fut in done]
                for task, fut in results:
                    yield task, fut.result()
            finished = True
        finally:
            with _signals_deferred():
                _stop_pool(pool, finished)


#: seconds between two checks for a Ctrl-C or SIGTERM while a process pool's tasks run
POLL = 0.25


def _stop_pool(pool: ProcessPoolExecutor, finished: bool) -> None:
    """Shut ``pool`` down: wait for it when its tasks are done; else (an error, Ctrl-C, the consumer
    stopped) cancel what is queued and kill the workers now (they ignore SIGTERM), without waiting."""
    if finished:
        pool.shutdown(wait=True)
        return
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        if proc.is_alive():
            proc.kill()
    for proc in processes:
        proc.join(5)


class _signals_deferred:
    """Inside the block (main thread only; elsewhere a no-op), a Ctrl-C or SIGTERM whose handler is a
    Python function is recorded, not handled; on leaving it, the first one recorded is handed to its
    handler (Ctrl-C: ``KeyboardInterrupt``), at a point where no lock is held.

    A handler that raises where the signal lands can do so inside ``concurrent.futures``' code between
    taking a future's lock and the block that releases it (CPython runs handlers between any two
    bytecodes): the lock stays taken, and the pool's shutdown then waits on it for ever. Before, a
    SIGTERM or a Ctrl-C during ``wait`` could hang ``ckb experiment -w 2`` at exit. A signal whose action
    is the default (SIGTERM outside the ``ckb`` command: the process ends at once) is left alone."""

    def __enter__(self):
        self.got, self.old = None, {}
        if threading.current_thread() is threading.main_thread():
            try:
                for sig in (signal.SIGINT, signal.SIGTERM):
                    handler = signal.getsignal(sig)
                    if callable(handler):
                        self.old[sig] = handler
                        signal.signal(sig, self._record)
            except BaseException:
                self._restore()
                raise
        return self

    def _record(self, signum, frame) -> None:
        if self.got is None:
            self.got = signum

    def _restore(self) -> None:
        for sig, handler in self.old.items():
            signal.signal(sig, handler)

    def __exit__(self, exc_type, *exc):
        self._restore()
        if self.got is not None and exc_type is None:
            self.old[self.got](self.got, None)
        return False


class _stop_signals_held:
    """SIGINT and SIGTERM held back inside the block (main thread only; elsewhere a no-op), so processes
    spawned there start with them blocked and cannot print a KeyboardInterrupt while they import (their
    initializer then ignores them), and the pool is never cut short while it starts a process. A signal
    that arrives meanwhile is pending, not lost: its handler runs when the block ends. Where signals
    cannot be blocked (no ``pthread_sigmask``), SIGINT is ignored in the block instead."""

    def __enter__(self):
        self.old = self.blocked = None
        if threading.current_thread() is threading.main_thread():
            if hasattr(signal, "pthread_sigmask"):
                self.blocked = _STOP_SIGNALS - signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
            else:
                self.old = signal.signal(signal.SIGINT, signal.SIG_IGN)
        return self

    def __exit__(self, *exc):
        if self.blocked:  # a signal held back meanwhile is handled here (Ctrl-C: KeyboardInterrupt)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, self.blocked)
        if self.old is not None:
            signal.signal(signal.SIGINT, self.old)
        return False


_PINNED = False


def _ray_task(fn: Callable, task: Any) -> Any:
    """Body of a Ray task: pin this worker process to one BLAS thread (once), then run ``fn(task)``."""
    global _PINNED
    if not _PINNED:
        pin_blas_threads()
        import_env_plugins()
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
            try:
                _cancel(ray, list(pending))
            finally:  # a second Ctrl-C during the cancel's short wait still closes the session
                session.close()


#: seconds to wait for cancelled Ray tasks to end before cancelling the ones still running again
CANCEL_WAIT = 2.0


def _cancel(ray, refs: list) -> None:
    """Force-cancel Ray tasks (``ray.cancel(ref, force=True)`` kills a running task's worker). Ray can
    miss a cancel that arrives while a task is being handed to a worker (ray-project/ray#24359): such a
    task then runs to its end (a trial of minutes) after the sweep has stopped. So the tasks that have not
    ended :data:`CANCEL_WAIT` seconds later are cancelled once more; a cancelled task ends at once, so
    this waits only when one was missed."""
    _cancel_each(ray, refs)
    if not refs:
        return
    try:
        _, running = ray.wait(refs, num_returns=len(refs), timeout=CANCEL_WAIT, fetch_local=False)
    except Exception:  # Ray going down (Ctrl-C): nothing more to do
        return
    _cancel_each(ray, running)


def _cancel_each(ray, refs: list) -> None:
    """``ray.cancel(ref, force=True)`` for each of ``refs``, passing over those already finished or gone."""
    for ref in refs:
        try:
            ray.cancel(ref, force=True)
        except Exception:
            pass


EXECUTORS = {"serial": SerialExecutor, "process": ProcessExecutor, "ray": RayExecutor}


def check_executor(name: str, **options: Any) -> dict[str, Any]:
    """The options (``None`` values dropped) if ``name`` is an executor that takes them, else
    :class:`~ckb.errors.CKBError` naming the bad value: cheap, nothing is started, so callers check it
    before they run anything or create a folder."""
    if not isinstance(name, str) or name not in EXECUTORS:
        raise UnknownNameError(f"Unknown executor {name!r}.{did_you_mean(str(name), EXECUTORS)}")
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
    return options


def get_executor(name: str, workers: int | None = None, **options: Any):
    """The executor ``name`` with ``workers`` workers. ``options`` go to its constructor (``ray``:
    ``address``, ``runtime_env``; the others take none; see :func:`check_executor`). ``process`` with one
    worker runs serially; ``ray`` is always Ray (one task on a cluster is still run on the cluster)."""
    options = check_executor(name, **options)
    if name == "ray":
        return RayExecutor(workers, **options)
    if name == "serial" or (workers is not None and workers <= 1):
        return SerialExecutor()
    return EXECUTORS[name](workers)
