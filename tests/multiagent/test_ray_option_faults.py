"""Ray backend options: bad values get one line naming the option, before Ray starts (probe report 2.2,
2.3, 3). Before, ``num_cpus = "two"`` reached ``int()`` (Python's text), an unknown keyword of the library
API was a raw TypeError, the spec check looked at option names only (a bad value failed in trial 0, after
the run started), and ``runtime_env = "x"`` was blamed on RAY_TMPDIR."""

import copy
import math

import pytest

from ckb._parallel import RaySession, check_ray_options
from ckb.errors import CKBError, InvalidInputError, SpecError
from ckb.multiagent.backends import make_backend
from ckb.multiagent.ray_backend import RayBackend
from ckb.multiagent.spec import MultiAgentSpec
from ckb.multiagent.trial import MultiAgentTrial, MultiAgentTrialConfig
from tests.checks import one_line
from tests.multiagent.ma_helpers import TINY_SPEC

RAW = copy.deepcopy(TINY_SPEC)
RAW["algorithms"]["dmabo"]["backend"] = "ray"


class Agent:
    def __init__(self, index):
        self.index = index


@pytest.fixture
def no_ray_start(monkeypatch):
    """Any attempt to start or reach Ray fails the test: every check here comes before."""

    def refuse(*args, **kwargs):
        raise AssertionError("Ray was started")

    monkeypatch.setattr(RaySession, "start", refuse)


@pytest.mark.parametrize("value", ["two", math.nan, math.inf, [1], True, 0, -1, 2.5])
def test_bad_num_cpus_is_one_line_naming_num_cpus(value):
    with pytest.raises(InvalidInputError) as exc:
        RaySession(num_cpus=value)
    msg = one_line(exc)
    assert msg.startswith("num_cpus must be an integer >= 1") and repr(value)[:10] in msg
    assert "int()" not in msg and "convert" not in msg


def test_good_num_cpus_still_pass():
    assert RaySession(num_cpus=2).num_cpus == 2
    assert RaySession(num_cpus=3.0).num_cpus == 3


def test_unknown_ray_option_in_the_library_api_is_one_line(no_ray_start):
    with pytest.raises(InvalidInputError, match=r"^the 'ray' backend has no parameter 'bogus'\.") as exc:
        make_backend("ray", Agent, [{"index": 0}], bogus=1)
    one_line(exc)
    with pytest.raises(InvalidInputError, match=r"'ray' backend has no parameter 'num_cpu'.*'num_cpus'"):
        make_backend("ray", Agent, [{"index": 0}], num_cpu=1)
    cfg = MultiAgentTrialConfig(
        "a", "dmabo", "power-allocation", 3, problem_params={"n_agents": 2, "grid_size": 11}
    )
    with pytest.raises(InvalidInputError, match=r"^the 'ray' backend has no parameter 'bogus'\."):
        MultiAgentTrial(cfg, backend="ray", bogus=1)


BAD_OPTIONS = [
    ({"num_cpus": -1}, r"num_cpus must be an integer >= 1.*got -1"),
    ({"num_cpus": "two"}, r"num_cpus must be an integer >= 1.*got 'two' \(str\)"),
    ({"num_cpus_per_agent": 0}, r"num_cpus_per_agent must be a number > 0 or None, got 0"),
    ({"num_cpus_per_agent": "1"}, r"num_cpus_per_agent must be a number > 0 or None, got '1' \(str\)"),
    ({"address": 5}, r"address must be a Ray address such as 'host:6379'.*got 5 \(int\)"),
    ({"address": "head-node"}, r"Ray address 'head-node' is not of the form host:port"),
    ({"scheduling_strategy": "BOGUS"}, r"scheduling_strategy must be one of 'DEFAULT', 'SPREAD'.*'BOGUS'"),
    ({"runtime_env": "x"}, r"runtime_env must be a table .*got 'x' \(str\)"),
]


@pytest.mark.parametrize("options, match", BAD_OPTIONS)
def test_bad_ray_option_values_fail_spec_validation(no_ray_start, options, match):
    raw = copy.deepcopy(RAW)
    raw["algorithms"]["dmabo"]["backend_options"] = options
    with pytest.raises(SpecError, match=r"^field 'algorithms\.dmabo\.backend_options'.*: " + match) as exc:
        MultiAgentSpec.from_dict(raw).validate()
    assert "RAY_TMPDIR" not in one_line(exc)


@pytest.mark.parametrize("options, match", BAD_OPTIONS)
def test_bad_ray_option_values_fail_in_the_library_before_ray_starts(no_ray_start, options, match):
    with pytest.raises(CKBError, match=match) as exc:
        make_backend("ray", Agent, [{"index": 0}], **options)
    one_line(exc)
    with pytest.raises(CKBError, match=match):
        RayBackend(Agent, [{"index": 0}], **options)


def test_good_ray_option_values_pass_the_check():
    check_ray_options(
        {
            "address": "local",
            "num_cpus": 2,
            "num_cpus_per_agent": 0.5,
            "scheduling_strategy": "DEFAULT",
            "runtime_env": {"env_vars": {"A": "1"}},
        }
    )
    check_ray_options({"address": "ray://head:10001"})
    check_ray_options({"address": "auto", "scheduling_strategy": "SPREAD"})


def test_ray_tmpdir_is_named_only_for_errors_that_can_come_from_it(monkeypatch):
    ray = pytest.importorskip("ray")
    error: list[BaseException] = []

    def refuse(*args, **kwargs):
        raise error[0]

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", refuse)
    error.append(TypeError("runtime_env['pip'] must be of type str or List[str], got <class 'int'>"))
    with pytest.raises(CKBError, match=r"TypeError: runtime_env\['pip'\].*check runtime_env") as exc:
        RaySession(runtime_env={"pip": 5}, what="test").start()
    assert "RAY_TMPDIR" not in one_line(exc)
    error[0] = OSError(30, "Read-only file system: '/tmp/ray/session_1'")
    with pytest.raises(CKBError, match=r"OSError: .*Check RAY_TMPDIR"):
        RaySession(what="test").start()
