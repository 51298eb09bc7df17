import logging
import os

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

# One OpenMP thread per test process and per process a test starts, for the same reason as one BLAS
# thread below: torch (imported later, so out of reach of the limit below) otherwise runs 2 intra-op
# threads in each of the 2 workers; its OpenMP pool reads this when torch is first imported.
os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(autouse=True, scope="session")
def _one_blas_thread():
    """One BLAS thread per test process: `pytest -n auto` already runs one process per core, and
    multi-threaded BLAS on the suite's small matrices only oversubscribes the cores (10-40x slower
    small solves were measured with 2 workers x 2 threads on the 2-core CI machine)."""
    with threadpool_limits(1):
        yield


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def split_run(tmp_path):
    """``split_run(cfg, until) -> (full, resumed)``: the traces of an uninterrupted trial and of the same
    trial checkpointed after ``until`` rounds, resumed from the file and run to the horizon."""
    from ckb.runner import Trial

    def run(cfg, until):
        full = Trial(cfg).run()
        part = Trial(cfg)
        part.run(until=until)
        part.save_checkpoint(tmp_path / "split.npz")
        return full, Trial.resume(tmp_path / "split.npz").run()

    return run


@pytest.fixture(scope="session")
def _ray_session():
    """One local Ray instance (2 CPUs) per test process, shared by every Ray test of the suite: started
    by the first test that needs it, stopped at the end of the session (session scope, so that
    pytest-xdist starts at most one instance per worker). A session that finds Ray running uses it as is."""
    ray = pytest.importorskip("ray")
    owner = not ray.is_initialized()
    if owner:
        ray.init(
            address="local",
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.ERROR,
        )
    yield ray
    if owner:
        ray.shutdown()


@pytest.fixture
def ray_local(_ray_session, request):
    """The shared local Ray instance, with the requesting test module's functions and classes shipped to
    the workers by value (Ray workers do not have the tests on their import path)."""
    _ray_session.cloudpickle.register_pickle_by_value(request.module)
    yield _ray_session
    _ray_session.cloudpickle.unregister_pickle_by_value(request.module)
