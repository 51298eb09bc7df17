"""Bad multi-agent parameters get one clear InvalidInputError before any work (tester's report, item 12)."""

import numpy as np
import pytest

from ckb.errors import CKBError, InvalidInputError
from ckb.multiagent import problems as problems_mod
from ckb.multiagent.dmabo import dmabo_parameters
from ckb.multiagent.methods import build_setup
from ckb.multiagent.problems import MultiAgentProblem, make_multiagent_problem
from tests.checks import one_line as _one_line
from tests.multiagent.ma_helpers import small_problem

MAX_GP_SAMPLES_GRID = getattr(problems_mod, "MAX_GP_SAMPLES_GRID", 5000)


def _gp(**params):
    return make_multiagent_problem("gp-samples", np.random.default_rng(0), **params)


# ------------------------------------------------------------------------------ gp-samples
@pytest.mark.parametrize(
    "value, expected",
    [
        (-1.0, r"^jitter must be >= 0\.0, got -1\.0\.$"),
        (float("nan"), r"^jitter must be finite, got nan\.$"),
        ("x", r"^jitter must be a real number, got 'x' \(str\)\.$"),
    ],
)
def test_gp_samples_refuses_bad_jitter(value, expected):
    with pytest.raises(InvalidInputError, match=expected) as exc:
        _gp(jitter=value, grid_size=10)
    _one_line(exc)


def test_gp_samples_names_jitter_when_the_kernel_matrix_is_not_positive_definite():
    for jitter in (0.0, 1e-300):
        with pytest.raises(InvalidInputError, match=rf"jitter = {jitter!r}; raise jitter") as exc:
            _gp(jitter=jitter, grid_size=400, lengthscale=2.0)
        _one_line(exc)


@pytest.mark.parametrize(
    "value, expected",
    [
        (float("nan"), r"^max_tries must be an integer, got nan\.$"),
        ("x", r"^max_tries must be an integer, got 'x' \(str\)\.$"),
        (2.5, r"^max_tries must be an integer, got 2\.5\.$"),
        (0, r"^max_tries must be >= 1, got 0\.$"),
        (-5, r"^max_tries must be >= 1, got -5\.$"),
    ],
)
def test_gp_samples_refuses_bad_max_tries(value, expected):
    with pytest.raises(InvalidInputError, match=expected) as exc:
        _gp(max_tries=value, grid_size=10)
    _one_line(exc)


@pytest.mark.parametrize(
    "value, expected",
    [
        (float("nan"), r"^min_slater must be finite, got nan\.$"),
        (float("inf"), r"^min_slater must be finite, got inf\.$"),
        ("x", r"^min_slater must be a real number, got 'x' \(str\)\.$"),
        (-0.1, r"^min_slater must be >= 0\.0, got -0\.1\.$"),
    ],
)
def test_gp_samples_refuses_bad_min_slater(value, expected):
    with pytest.raises(InvalidInputError, match=expected) as exc:
        _gp(min_slater=value, grid_size=10)
    _one_line(exc)


@pytest.mark.parametrize("G", [10**6, MAX_GP_SAMPLES_GRID + 1])
def test_gp_samples_bounds_grid_size_before_building_the_kernel_matrix(G):
    with pytest.raises(
        InvalidInputError, match=rf"^grid_size must be <= {MAX_GP_SAMPLES_GRID}.*got {G}\.$"
    ) as e:
        _gp(grid_size=G)
    _one_line(e)


def test_gp_samples_bounds_the_number_of_tabulated_values():
    with pytest.raises(InvalidInputError, match=r"^gp-samples would tabulate .*n_agents = 1000000000") as exc:
        _gp(n_agents=10**9, grid_size=10)
    _one_line(exc)


@pytest.mark.parametrize(
    "params, expected",
    [
        ({"noise_std": float("nan")}, r"^noise_std must be finite, got nan\.$"),
        ({"gp_noise": 0.0}, r"^gp_noise \(lambda\) must be > 0\.0, got 0\.0\.$"),
        ({"min_slater": "x"}, r"^min_slater must be a real number"),
    ],
)
def test_gp_samples_checks_parameters_before_any_work(monkeypatch, params, expected):
    def boom(*args, **kwargs):
        raise AssertionError("the kernel matrix was factorized before the parameters were checked")

    monkeypatch.setattr(np.linalg, "cholesky", boom)
    with pytest.raises(InvalidInputError, match=expected):
        _gp(grid_size=10, **params)


# ------------------------------------------------------------------------ MultiAgentProblem
GRID = np.linspace(-1.0, 1.0, 5)[:, None]


@pytest.mark.parametrize(
    "kernel, expected",
    [
        ("se", r"^kernel must be a dict such as \{'type': 'se', 'lengthscale': 0\.2\}, got 'se' \(str\)\.$"),
        ({"type": "bogus"}, r"^kernel \{'type': 'bogus'\} is not a valid kernel spec: kernel\.type must be"),
        ({"type": "se", "lengthscale": -1.0}, r"^kernel .* is not a valid kernel spec: lengthscale must be"),
        ({"type": "se", "variance": "x"}, r"^kernel .* is not a valid kernel spec: variance must be a real"),
        ({"type": "se", "foo": 1}, r"^kernel .* is not a valid kernel spec: bad kernel parameters"),
    ],
)
def test_problem_refuses_a_bad_kernel(kernel, expected):
    with pytest.raises(InvalidInputError, match=expected) as exc:
        MultiAgentProblem("x", [GRID], [np.zeros(5)], kernel=kernel)
    _one_line(exc)


@pytest.mark.parametrize(
    "C, expected",
    [
        ([[1.0, 2.0, 3.0]], r"^hints\['C'\] must have shape \(N, m \+ 1\) = \(1, 1\), got \(1, 3\)\.$"),
        ([1.0], r"^hints\['C'\] must have 2 dimension\(s\), got shape \(1,\)\.$"),
        ([[float("nan")]], r"^hints\['C'\] must be finite"),
        ([["x"]], r"^hints\['C'\] must be numeric"),
        ([[-1.0]], r"^hints\['C'\] \(clipping bounds\) must be >= 0, got \[\[-1\.0\]\]\.$"),
    ],
)
def test_problem_refuses_bad_clipping_bounds(C, expected):
    with pytest.raises(InvalidInputError, match=expected) as exc:
        MultiAgentProblem("x", [GRID], [np.zeros(5)], hints={"C": C})
    _one_line(exc)


def test_problem_refuses_hints_that_are_not_a_dict():
    with pytest.raises(InvalidInputError, match=r"^hints must be a dict .*got 'C' \(str\)\.$"):
        MultiAgentProblem("x", [GRID], [np.zeros(5)], hints="C")


def test_problem_keeps_valid_kernel_and_clipping_bounds():
    p = MultiAgentProblem(
        "x", [GRID], [np.zeros(5)], [np.ones((5, 1)) * -1], kernel={"type": "se"}, hints={"C": [[1, 2]]}
    )
    assert p.kernel == {"type": "se"} and p.hints["C"] == [[1.0, 2.0]]


# ------------------------------------------------------------------------------------ dmabo
@pytest.mark.parametrize(
    "key, value, expected",
    [
        (
            "lam1",
            [1.0, 2.0, 3.0],
            r"^lam1 must be a number or a vector of m = 1 entries, got shape \(3,\)\.$",
        ),
        ("lam1", [[1.0]], r"^lam1 must be a number or a vector of m = 1 entries, got shape \(1, 1\)\.$"),
        ("lam1", "x", r"^lam1 must be numeric \(real numbers\), got 'x'\.$"),
        ("lam1", float("nan"), r"^lam1 must be finite"),
        ("lam1", -5.0, r"^lam1 must be >= 0 elementwise, got \[-5\.0\]\.$"),
        ("mu1", [[1.0], [2.0]], r"^mu1 must be a number or a vector of l = 1 entries, got shape \(2, 1\)\.$"),
        ("mu1", [1.0, 2.0], r"^mu1 must be a number or a vector of l = 1 entries, got shape \(2,\)\.$"),
        ("mu1", "x", r"^mu1 must be numeric \(real numbers\), got 'x'\.$"),
    ],
)
def test_dmabo_refuses_bad_initial_duals(key, value, expected):
    problem = small_problem(m=1, affine=True)
    with pytest.raises(InvalidInputError, match=expected) as exc:
        build_setup("dmabo", problem, {key: value}, 5, 0, 0)
    _one_line(exc)


def test_dmabo_refuses_lam1_vector_when_m_is_zero():
    problem = small_problem(m=0, affine=True)
    with pytest.raises(InvalidInputError, match=r"^lam1 must be a number or a vector of m = 0 entries"):
        dmabo_parameters({"lam1": [1.0, 2.0]}, 5, problem, [])


def test_dmabo_accepts_scalar_and_vector_initial_duals():
    problem = small_problem(m=2, affine=True)
    s = build_setup("dmabo", problem, {"lam1": [0.5, 1.0], "mu1": 2.0}, 5, 0, 0)
    assert s.record["lam1"] == [0.5, 1.0] and s.record["mu1"] == [2.0]
    s = build_setup("dmabo", problem, {"lam1": 0.5, "mu1": [2.0]}, 5, 0, 0)
    assert s.record["lam1"] == [0.5, 0.5] and s.record["mu1"] == [2.0]


@pytest.mark.parametrize("key, value", [("eps_cap", 0.1), ("eps_cap", "xi/2")])
def test_dmabo_refuses_eps_cap_in_practical_mode(key, value):
    problem = small_problem(m=1, affine=False)
    with pytest.raises(
        InvalidInputError, match=r"^eps_cap applies only in mode = 'theory'.*got mode = 'practical'"
    ) as exc:
        build_setup("dmabo", problem, {key: value}, 5, 0, 0)
    _one_line(exc)


@pytest.mark.parametrize("key", ["eta", "eps_scale", "lam1", "mu1"])
def test_dmabo_refuses_practical_parameters_in_theory_mode(key):
    problem = small_problem(m=1, affine=False)
    with pytest.raises(
        InvalidInputError, match=rf"^{key} applies only in mode = 'practical'.*got mode = 'theory'"
    ) as exc:
        build_setup("dmabo", problem, {"mode": "theory", key: 0.1}, 5, 0, 0)
    _one_line(exc)


@pytest.mark.parametrize("value", ["xi/3", float("nan"), -1.0])
def test_dmabo_checks_eps_cap_in_theory_mode_even_without_constraints(value):
    problem = small_problem(m=0, affine=True)
    with pytest.raises(InvalidInputError, match=r"^eps_cap must be"):
        dmabo_parameters({"mode": "theory", "eps_cap": value}, 5, problem, [])


# ------------------------------------------------------------------------- yes/no method parameters
@pytest.mark.parametrize("method, key, m", [("dmabo", "clip", 1), ("admm-penalty", "dual", 0)])
def test_yes_no_method_params_share_one_check(method, key, m):
    """One check for every yes/no parameter (``ckb._validation.check_bool``): a string is named with its
    type, and numpy's booleans (e.g. read from an array) are booleans."""
    problem = small_problem(m=m, affine=True)
    with pytest.raises(
        InvalidInputError, match=rf"^{key} must be true or false, got 'yes' \(str\)\.$"
    ) as exc:
        build_setup(method, problem, {key: "yes"}, 5, 0, 0)
    _one_line(exc)
    build_setup(method, problem, {key: np.bool_(False)}, 5, 0, 0)


# ------------------------------------------------------------------------------ feasibility, coupling
def test_gp_samples_redraws_an_instance_without_a_feasible_joint_grid_point():
    """The Slater margin is over mixtures of grid points: it was positive for instances where no single
    joint point is feasible (trial 41 of these settings), which then failed only after the whole run."""
    params = {"n_agents": 2, "m": 2, "grid_size": 6, "lengthscale": 0.1}
    for trial in range(45):
        rng = np.random.default_rng(np.random.SeedSequence(0, spawn_key=(trial, 0)))
        p = make_multiagent_problem("gp-samples", rng, **params)
        assert np.isfinite(p.optimum["f_star"])


def test_a_trial_of_a_problem_without_a_feasible_point_fails_before_it_runs():
    from ckb.multiagent import MultiAgentTrial, MultiAgentTrialConfig
    from ckb.multiagent.problems import MULTIAGENT_PROBLEMS

    grid = np.linspace(0.0, 1.0, 3)[:, None]

    @MULTIAGENT_PROBLEMS.register("never-feasible-test")
    def never(rng):
        return MultiAgentProblem(
            "never",
            [grid],
            [grid[:, 0]],
            [np.ones((3, 1))],
            noise_std=0.05,
            kernel={"type": "se", "lengthscale": 0.4},
        )

    try:
        cfg = MultiAgentTrialConfig(algorithm="d", method="dmabo", problem="never-feasible-test", horizon=5)
        with pytest.raises(InvalidInputError, match="no feasible point"):
            MultiAgentTrial(cfg)
    finally:
        MULTIAGENT_PROBLEMS._items.pop("never-feasible-test", None)


def test_b_without_a_is_refused():
    """b given without A was dropped silently: the coupling constraint disappeared."""
    grid = np.linspace(0.0, 1.0, 3)[:, None]
    with pytest.raises(InvalidInputError, match="b was given without A"):
        MultiAgentProblem("x", [grid], [grid[:, 0]], None, b=np.array([1.0]), noise_std=0.05)


def test_a_horizon_below_one_is_refused_by_build_setup():
    with pytest.raises(InvalidInputError, match="horizon must be >= 1"):
        build_setup("dmabo", small_problem(m=1, affine=True), {}, 0, 0, 0)


# ---------------------------------------------------------------------------- the public API's checks
def _raises_one_line(call, *needles):
    with pytest.raises(InvalidInputError) as exc:
        call()
    _one_line(exc)
    for n in needles:
        assert n in str(exc.value), str(exc.value)


def test_the_multiagent_api_names_bad_arguments(tmp_path):
    """Each of these raised a raw AttributeError, TypeError, ValueError or KeyError."""
    from ckb.io import save_state
    from ckb.multiagent import MultiAgentTrial, MultiAgentTrialConfig

    _raises_one_line(lambda: make_multiagent_problem("gp-samples", 3), "rng", "numpy.random.Generator", "3")
    problem = small_problem(m=1, affine=True)
    _raises_one_line(lambda: build_setup("dmabo", problem, None, 5, 0, 0), "params", "None")
    _raises_one_line(lambda: build_setup("dmabo", problem, {}, 5, None, 0), "seed")
    _raises_one_line(lambda: build_setup("dmabo", None, {}, 5, 0, 0), "problem", "MultiAgentProblem")
    for key in ("method_params", "problem_params"):
        _raises_one_line(
            lambda key=key: MultiAgentTrialConfig(
                algorithm="d", method="dmabo", problem="gp-samples", horizon=5, **{key: None}
            ),
            key,
        )
    _raises_one_line(lambda: MultiAgentTrial({"method": "dmabo"}), "MultiAgentTrialConfig", "dict")
    cfg = MultiAgentTrialConfig(
        algorithm="d", method="dmabo", problem="gp-samples", horizon=3, problem_params={"grid_size": 20}
    )
    with MultiAgentTrial(cfg) as trial:
        _raises_one_line(lambda: trial.run(until="x"), "until", "'x'")
    save_state(tmp_path / "not.npz", {"x": np.zeros(2)})
    with pytest.raises(CKBError, match=r"not\.npz.*not a multi-agent checkpoint") as exc:
        MultiAgentTrial.resume(tmp_path / "not.npz")
    _one_line(exc)


def test_multiagent_problem_names_bad_grids_and_tables():
    """A constraint table of the wrong length, an empty grid and a 3-D grid raised numpy errors."""
    grid = np.linspace(0.0, 1.0, 3)[:, None]
    _raises_one_line(
        lambda: MultiAgentProblem("x", [grid], [grid[:, 0]], [np.zeros((4, 1))], noise_std=0.05),
        "g of agent 0",
        "3 rows",
    )
    _raises_one_line(
        lambda: MultiAgentProblem("x", [np.zeros((0, 1))], [np.zeros(0)], None, noise_std=0.05),
        "grid of agent 0",
        "at least one point",
    )
    _raises_one_line(
        lambda: MultiAgentProblem("x", [np.zeros((3, 2, 2))], [np.zeros(3)], None, noise_std=0.05),
        "grid of agent 0",
        "(G_i, n_i)",
    )
