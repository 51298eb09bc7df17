"""Worker processes for the multi-process tests."""

from __future__ import annotations

import multiprocessing

#: what the fork server imports once: each worker then starts without its own seconds of imports
PRELOAD = ["ckb", "ckb.optimizer.core", "torch", "botorch", "gpytorch"]


def preloaded_context(*modules: str):
    """forkserver with ckb and torch (and ``modules``, the workers' own) preloaded: each (re)start is a
    fork of a clean process that has never run torch (fast, and no forked thread pools); spawn where
    forkserver is missing. The preload list takes effect when the process's fork server first starts."""
    try:
        ctx = multiprocessing.get_context("forkserver")
    except ValueError:
        return multiprocessing.get_context("spawn")
    ctx.set_forkserver_preload([*PRELOAD, *modules])
    return ctx
