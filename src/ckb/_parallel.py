"""Parallel-execution helpers shared by the sweep executors and the multi-agent backends.

A light module (no numpy/scipy import), because every Ray worker and actor process imports it first.

BLAS pinning: :func:`pin_blas_threads` limits a worker's BLAS/OpenMP pools to one thread, so ``W``
workers (or N agents sharing the cores) never oversubscribe the machine.

Ray start-up: Ray is an optional extra (``pip install -e '.[ray]'``); this module imports it only when a
session starts, so ``import ckb`` never needs it.

Where a session runs (:class:`RaySession`), in this order:

1. Ray already initialized in this process (a notebook, a test fixture, a caller's ``ray.init``): that
   session is used as it is (``address`` and ``num_cpus`` are then ignored) and left running on close.
2. ``address`` given, else the ``RAY_ADDRESS`` environment variable: connect this driver to that
   cluster (``"auto"`` finds one started on this machine with ``ray start``; ``ray://host:10001`` goes
   through Ray Client). Closing disconnects the driver and never stops the cluster.
3. Otherwise start a private local instance with ``num_cpus`` CPUs (``address="local"``: never attach to
   someone else's instance by accident) and stop it on close.

Workers import ckb: a local instance runs them in this Python environment; on a cluster ckb (the same
version) must be installed on every node, or shipped with ``runtime_env`` (e.g.
``{"py_modules": [ckb]}`` or ``{"pip": ["ckb[ray]==..."]}``).

Start-up is kept quiet and light: no dashboard, worker output not forwarded to the driver, the driver's
``ray`` logger at ERROR for a local instance (WARNING when connecting to a cluster, where Ray's
warnings matter). A cluster started with ``ray start`` uses token authentication by default in recent
Ray; a driver connecting to it by explicit address needs ``RAY_AUTH_MODE=token`` (and the token in
``RAY_AUTH_TOKEN`` or ``~/.ray/auth_token``): the connection error says so.

Measured on this project's 2-core VM: starting a local instance takes about 4 s idle (15-17 s with the
machine's load average at 8), stopping it 1.1-1.5 s; each Ray worker or actor process costs about a second
of CPU (Python, Ray, ckb's imports).
"""

from __future__ import annotations

import logging
import math
import numbers
import os
import signal
import socket
import threading
from contextlib import contextmanager
from typing import Any

from ckb.errors import CKBError, InvalidInputError

_BLAS_ENV = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)
_LIMITS = None
#: comma-separated user modules (``ckb.framework.plugins``) a worker process imports before its first task
PLUGINS_ENV = "CKB_PLUGINS"


def import_env_plugins() -> None:
    """Import the plugin modules named in ``CKB_PLUGINS`` (a worker's first step, so it knows the user's
    problems and policies)."""
    import importlib

    for name in os.environ.get(PLUGINS_ENV, "").split(","):
        if name.strip():
            importlib.import_module(name.strip())


def pin_blas_threads(n: int = 1) -> None:
    """Limit BLAS/OpenMP thread pools of this process to ``n`` threads (worker initializer)."""
    global _LIMITS
    for var in _BLAS_ENV:
        os.environ[var] = str(n)
    from threadpoolctl import threadpool_limits

    _LIMITS = threadpool_limits(limits=n)  # keep a reference: the limit holds while it lives


#: ckb is not on PyPI: its extras install from a checkout (``pip install 'ckb[ray]'`` finds no such package)
INSTALL_HINT = "pip install -e '.[ray]' in your ckb checkout"


class RayNotInstalledError(CKBError, ImportError):
    """Ray is needed (``--executor ray``, the ``ray`` multi-agent backend) but not installed."""


class RayWorkerImportError(CKBError, RuntimeError):
    """Ray workers could not import ckb (a cluster without ckb installed)."""


def require_ray(what: str = "this feature"):
    """Import and return the ``ray`` module, or raise :class:`RayNotInstalledError` with the install hint."""
    try:
        import ray
    except ImportError as exc:
        raise RayNotInstalledError(
            f"{what} needs Ray, which is not installed in this environment ({exc}). Install the extra: "
            f"{INSTALL_HINT}"
        ) from exc
    return ray


def explain_worker_error(exc: BaseException) -> BaseException:
    """Turn a worker's ``No module named 'ckb'`` into an error that says how to fix it; else ``exc``."""
    text = str(exc)
    if "No module named 'ckb" in text:
        return RayWorkerImportError(
            "Ray workers cannot import ckb. On a Ray cluster, install ckb (the same version as here) on "
            f"every node ({INSTALL_HINT}), or pass runtime_env={{'py_modules': [ckb]}} to ship it. "
            f"Ray said: {text.splitlines()[0] if text else type(exc).__name__}"
        )
    return exc


def probe_address(address: str, *, from_env: bool = False, timeout: float = 5.0) -> None:
    """Fail fast if nothing listens at a ``host:port`` / ``ray://host:port`` cluster address.

    ``ray.init`` retries an unreachable address for minutes; a TCP connection attempt answers in at most
    ``timeout`` seconds. ``"auto"`` (resolved by Ray from this machine's running cluster) is not probed.
    """
    source = " (from RAY_ADDRESS)" if from_env else ""
    host, port = _address_parts(address, source)
    if host is None:
        return
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except OSError as exc:
        raise CKBError(
            f"Cannot reach the Ray cluster at {address!r}{source}: {exc}. Is a Ray head running there "
            "(`ray start --head` prints the address to use)?"
        ) from exc


def _address_parts(address: str, source: str = "") -> tuple[str | None, str]:
    """``(host, port)`` of a ``host:port`` / ``ray://host:port`` address, ``(None, "")`` for one Ray
    resolves itself (``"auto"``, another scheme); else a :class:`CKBError` naming the form expected."""
    target = address[len("ray://") :] if address.startswith("ray://") else address
    if address == "auto" or "://" in target:
        return None, ""
    host, sep, port = target.rpartition(":")
    host = host.strip("[]")  # [::1]:6379
    if not sep or not host or not port.isdigit():
        raise CKBError(
            f"Ray address {address!r}{source} is not of the form host:port, ray://host:port or 'auto'."
        )
    return host, port


#: the scheduling strategies Ray takes by name (others are objects of ``ray.util.scheduling_strategies``)
SCHEDULING_STRATEGIES = ("DEFAULT", "SPREAD")


def _real(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, numbers.Real)


def check_ray_options(options: dict[str, Any]) -> None:
    """Check the values of Ray options without starting Ray: one line naming the option and what it takes.

    The options of :class:`RaySession` (``address``, ``num_cpus``, ``runtime_env``) and of the multi-agent
    ``RayBackend`` (``num_cpus_per_agent``, ``scheduling_strategy``); a key not listed here is not checked
    (the callers check the names). ``None`` is each option's default, except for ``scheduling_strategy``.
    """
    address = options.get("address")
    if address is not None:
        if not isinstance(address, str) or not address.strip():
            raise InvalidInputError(
                f"address must be a Ray address such as 'host:6379', 'auto' or 'ray://host:10001', "
                f"got {address!r:.60} ({type(address).__name__})."
            )
        if address.strip() != "local":
            _address_parts(address.strip())
    num_cpus = options.get("num_cpus")
    if num_cpus is not None and (
        not _real(num_cpus) or not math.isfinite(num_cpus) or num_cpus != int(num_cpus) or num_cpus < 1
    ):
        raise InvalidInputError(
            f"num_cpus must be an integer >= 1 (the CPUs of a local Ray instance), got {num_cpus!r:.60} "
            f"({type(num_cpus).__name__})."
        )
    per_agent = options.get("num_cpus_per_agent")
    if per_agent is not None and (not _real(per_agent) or not math.isfinite(per_agent) or per_agent <= 0):
        raise InvalidInputError(
            f"num_cpus_per_agent must be a number > 0 or None, got {per_agent!r:.60} "
            f"({type(per_agent).__name__})."
        )
    runtime_env = options.get("runtime_env")
    if runtime_env is not None and not isinstance(runtime_env, dict):
        raise InvalidInputError(
            "runtime_env must be a table of Ray runtime-environment settings (such as py_modules, pip, "
            "env_vars), "
            f"got {runtime_env!r:.60} ({type(runtime_env).__name__})."
        )
    if "scheduling_strategy" in options:
        strategy = options["scheduling_strategy"]
        by_name = isinstance(strategy, str) and strategy in SCHEDULING_STRATEGIES
        if not by_name and not type(strategy).__module__.startswith("ray.util.scheduling_strategies"):
            raise InvalidInputError(
                f"scheduling_strategy must be one of {', '.join(repr(s) for s in SCHEDULING_STRATEGIES)} "
                f"(or a Ray scheduling-strategy object), got {strategy!r:.60} ({type(strategy).__name__})."
            )


def _start_advice(exc: BaseException) -> str:
    """What to check when a local Ray instance does not start. Ray refuses a bad option value (such as a
    malformed ``runtime_env``) with a TypeError, ValueError, AttributeError or KeyError before it touches
    its temporary folder, so RAY_TMPDIR is named only for other errors (an OS error, a failed start-up)."""
    text = str(exc)
    tmp = os.environ.get("RAY_TMPDIR") or "/tmp/ray"
    bad_value = isinstance(exc, (TypeError, ValueError, AttributeError, KeyError)) or "runtime_env" in text
    if bad_value and not isinstance(exc, OSError) and tmp not in text and "RAY_TMPDIR" not in text:
        return "Ray refused an option given to it: check runtime_env, or run without Ray."
    return "Check RAY_TMPDIR (Ray writes its session files there, default /tmp/ray), or run without Ray."


@contextmanager
def _caller_sigterm_kept():
    """Around ``ray.init``, which puts Ray's own SIGTERM handler (drain, stop its processes, exit 1) in
    place of the caller's: a Python handler the caller had is put back (the ``ckb`` command's stops the
    run with its note and exit 143; its path closes the session, which stops Ray's processes). Before,
    SIGTERM to ``ckb experiment --executor ray`` ended with exit 1, Ray's stack dump and a thread's
    traceback, and no note."""
    main = threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGTERM) if main else None
    try:
        yield
    finally:
        if callable(before) and signal.getsignal(signal.SIGTERM) is not before:
            signal.signal(signal.SIGTERM, before)


class RaySession:
    """Connect to Ray or start a private local instance; :meth:`close` undoes only what :meth:`start` did.

    Parameters
    ----------
    address:
        A Ray cluster address (``"host:6379"``, ``"auto"``, ``"ray://host:10001"``); ``None`` uses
        ``RAY_ADDRESS`` if set, else starts a local instance. ``"local"`` forces a local instance.
    num_cpus:
        CPUs of a local instance (default: all cores). Ignored when connecting to a cluster.
    runtime_env:
        Passed to ``ray.init`` (e.g. to ship ckb to a cluster's workers).
    what:
        Named in the missing-Ray message ("--executor ray", "the ray multi-agent backend").
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        num_cpus: int | None = None,
        runtime_env: dict[str, Any] | None = None,
        what: str = "Ray execution",
    ) -> None:
        check_ray_options({"address": address, "num_cpus": num_cpus, "runtime_env": runtime_env})
        self.address = address.strip() if address is not None else None
        self.num_cpus = None if num_cpus is None else int(num_cpus)
        self.runtime_env = runtime_env
        self.what = what
        self.ray = None
        #: "reused" (Ray already up in this process), "cluster" (we connected) or "local" (we started it)
        self.mode: str | None = None

    def resolved_address(self) -> str | None:
        """The cluster address this session would connect to, or ``None`` for a local instance."""
        address = self.address or os.environ.get("RAY_ADDRESS") or None
        return None if address == "local" else address

    def start(self):
        """Start or connect (idempotent); return the ``ray`` module."""
        if self.ray is not None:
            return self.ray
        ray = require_ray(self.what)
        if ray.is_initialized():
            self.mode = "reused"
            self.ray = ray
            return ray
        with _caller_sigterm_kept():
            self._init(ray)
        self.ray = ray
        return ray

    def _init(self, ray) -> None:
        """``ray.init`` a local instance or connect to the cluster (``self.mode``: "local" or "cluster")."""
        address = self.resolved_address()
        common = dict(
            include_dashboard=False,
            log_to_driver=False,
            runtime_env=self.runtime_env,
        )
        if address is None:
            try:
                ray.init(
                    address="local",
                    num_cpus=self.num_cpus or os.cpu_count() or 1,
                    logging_level=logging.ERROR,
                    **common,
                )
            except Exception as exc:  # e.g. its temporary folder (RAY_TMPDIR) not writable
                raise CKBError(
                    f"Cannot start a local Ray instance for {self.what}: {type(exc).__name__}: "
                    f"{' '.join(str(exc).split())[:300]}. {_start_advice(exc)}"
                ) from None
            self.mode = "local"
        else:
            probe_address(address, from_env=not self.address)
            if address.startswith("ray://"):  # Ray Client: the server's ray.init takes no start options
                common = {"runtime_env": self.runtime_env}
            try:
                ray.init(address=address, logging_level=logging.WARNING, **common)
            except (ConnectionError, ValueError, RuntimeError) as exc:
                hint = ""
                if "RAY_AUTH_MODE" not in os.environ:  # Ray then sends no token to an explicit address
                    hint = (
                        " If the cluster uses token authentication (the default of `ray start` in recent "
                        "Ray), set RAY_AUTH_MODE=token here, with its token in RAY_AUTH_TOKEN or "
                        "~/.ray/auth_token."
                    )
                raise CKBError(
                    f"Cannot connect to the Ray cluster at {address!r}"
                    f"{' (from RAY_ADDRESS)' if not self.address else ''}: {exc}.{hint}"
                ) from exc
            self.mode = "cluster"

    def close(self) -> None:
        """Stop a local instance we started, disconnect from a cluster we connected to (the cluster keeps
        running), leave a reused session alone. Idempotent."""
        ray, mode = self.ray, self.mode
        self.ray, self.mode = None, None
        if ray is not None and mode in ("local", "cluster") and ray.is_initialized():
            ray.shutdown()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()
