"""Tests of the confidence-width schedules β_t (ckb.exploration.beta)."""

import dataclasses
import math
from types import SimpleNamespace

import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.exploration import ConstantBeta, LogBeta, TheoryBeta, make_beta
from ckb.kernels import SquaredExponential
from ckb.surrogates import ExactGP


def stub(info_gain=0.0, noise=1.0):
    """The two attributes of a GP a schedule may read."""
    return SimpleNamespace(info_gain=info_gain, noise=noise)


# ------------------------------------------------------------------------------------ values


def test_theory_beta_by_hand():
    b = TheoryBeta(B=1.2, R=0.3, alpha=0.1)
    gp = stub(info_gain=2.5, noise=0.1)
    # B + R sqrt(2 (γ + 1 + ln(1/α)))
    want = 1.2 + 0.3 * math.sqrt(2 * (2.5 + 1 + math.log(10)))
    assert b(7, gp) == pytest.approx(want, rel=1e-14)
    assert b(1, gp) == b(1000, gp)  # depends on t only through the information gain
    assert b(7, stub(0.0)) == pytest.approx(1.2 + 0.3 * math.sqrt(2 * (1 + math.log(10))), rel=1e-14)


def test_theory_beta_grows_with_information_gain():
    b = TheoryBeta()
    values = [b(1, stub(g)) for g in (0.0, 0.5, 3.0, 40.0)]
    assert values == sorted(values) and len(set(values)) == 4


def test_theory_beta_defaults():
    b = TheoryBeta()
    assert (b.B, b.R, b.alpha, b.scale) == (1.0, 0.1, 0.05, 1.0)
    assert b(1, stub(1.0)) == pytest.approx(1.0 + 0.1 * math.sqrt(2 * (2.0 + math.log(20))), rel=1e-14)


def test_theory_beta_reads_the_information_gain_of_a_real_gp():
    C = np.linspace(0, 1, 6)[:, None]
    gp = ExactGP(SquaredExponential(0.3), 0.2, C)
    for a in (1, 4, 1, 2):
        gp.update_arm(a, 0.5)
    K = SquaredExponential(0.3)(C[[1, 4, 1, 2]])
    gamma = 0.5 * np.linalg.slogdet(np.eye(4) + K / 0.2)[1]
    b = TheoryBeta(B=0.5, R=0.2, alpha=0.05)
    want = 0.5 + 0.2 * math.sqrt(2 * (gamma + 1 + math.log(20)))
    assert b(5, gp) == pytest.approx(want, rel=1e-10)


def test_constant_beta():
    b = ConstantBeta(value=3.5)
    assert b(1, stub()) == 3.5 and b(10**6, stub(info_gain=99.0, noise=1e-4)) == 3.5
    assert ConstantBeta()(1, stub()) == 2.0


def test_log_beta_by_hand():
    b = LogBeta(B=0.8, R=0.2)
    gp = stub(noise=0.04)
    assert b(1, gp) == pytest.approx(0.8, rel=1e-15)  # ln 1 = 0
    with pytest.raises(InvalidInputError, match="must be >= 1"):  # t < 1 is no round (it was read as 1)
        b(0, gp)
    # B + R / sqrt(λ) sqrt(ln t)
    assert b(10, gp) == pytest.approx(0.8 + 0.2 / 0.2 * math.sqrt(math.log(10)), rel=1e-14)
    assert b(500, gp) == pytest.approx(0.8 + 1.0 * math.sqrt(math.log(500)), rel=1e-14)
    assert b(500, gp) > b(10, gp)


@pytest.mark.parametrize(
    "make",
    [
        lambda s: TheoryBeta(B=1.1, R=0.4, alpha=0.2, scale=s),
        lambda s: ConstantBeta(value=1.7, scale=s),
        lambda s: LogBeta(B=0.3, R=0.5, scale=s),
    ],
)
@pytest.mark.parametrize("scale", [0.0, 0.25, 1.0, 3.0])
def test_scale_multiplies_the_schedule(make, scale):
    gp = stub(info_gain=1.3, noise=0.5)
    for t in (1, 2, 50):
        assert make(scale)(t, gp) == pytest.approx(scale * make(1.0)(t, gp), rel=1e-14, abs=0)


# ------------------------------------------------------------------------------- make_beta


def test_make_beta_from_number():
    b = make_beta(2.5)
    assert isinstance(b, ConstantBeta) and b.value == 2.5 and b.scale == 1.0
    assert make_beta(3) == ConstantBeta(value=3.0)
    assert make_beta(np.float64(1.5)) == ConstantBeta(value=1.5)
    b = make_beta(2.0, scale=0.5, B=9.0)  # a number takes only the scale from the defaults
    assert b == ConstantBeta(value=2.0, scale=0.5)
    assert b(1, stub()) == 1.0


@pytest.mark.parametrize("name, cls", [("theory", TheoryBeta), ("constant", ConstantBeta), ("log", LogBeta)])
def test_make_beta_from_name(name, cls):
    assert make_beta(name) == cls()


def test_make_beta_defaults_fill_only_accepted_missing_parameters():
    b = make_beta("theory", B=2.0, R=0.5, alpha=0.01, scale=0.3)
    assert b == TheoryBeta(B=2.0, R=0.5, alpha=0.01, scale=0.3)
    b = make_beta("log", B=2.0, R=0.5, alpha=0.01)  # LogBeta has no alpha: ignored
    assert b == LogBeta(B=2.0, R=0.5)
    b = make_beta({"type": "theory", "R": 0.9}, B=2.0, R=0.5)  # the spec wins over the defaults
    assert b == TheoryBeta(B=2.0, R=0.9)


def test_make_beta_from_dict():
    assert make_beta({"type": "constant", "value": 4.0, "scale": 2.0}) == ConstantBeta(4.0, 2.0)
    assert make_beta({"type": "log", "B": 0.1}) == LogBeta(B=0.1)
    assert make_beta({"alpha": 0.2}) == TheoryBeta(alpha=0.2)  # no type: theory
    spec = {"type": "constant", "value": 4.0}
    make_beta(spec)
    assert spec == {"type": "constant", "value": 4.0}  # the caller's dict is not consumed


def test_make_beta_passes_a_schedule_through():
    b = LogBeta(B=0.3)
    assert make_beta(b, B=7.0) is b


@pytest.mark.parametrize(
    "b", [TheoryBeta(B=1.1, R=0.4, alpha=0.2, scale=2.0), ConstantBeta(3.0, 0.5), LogBeta(0.2, 0.7, 1.5)]
)
def test_to_dict_round_trips_through_make_beta(b):
    d = b.to_dict()
    assert d["type"] in ("theory", "constant", "log")
    assert make_beta(d) == b


def test_schedules_are_immutable():
    with pytest.raises(dataclasses.FrozenInstanceError):
        TheoryBeta().scale = 2.0


# -------------------------------------------------------------------------------- errors


@pytest.mark.parametrize("name, suggestion", [("theroy", "theory"), ("const", "constant"), ("Log", "log")])
def test_unknown_schedule_suggests_closest_name(name, suggestion):
    with pytest.raises(InvalidInputError, match=f"Did you mean '{suggestion}'") as info:
        make_beta(name)
    assert info.match(repr(name))
    with pytest.raises(InvalidInputError, match=f"Did you mean '{suggestion}'"):
        make_beta({"type": name})


@pytest.mark.parametrize(
    "spec, bad, suggestion",
    [
        ({"type": "constant", "valu": 1.0}, "valu", "value"),
        ({"type": "theory", "alpah": 0.1}, "alpah", "alpha"),
        ({"type": "log", "scal": 2.0}, "scal", "scale"),
    ],
)
def test_unknown_parameter_suggests_closest_name(spec, bad, suggestion):
    with pytest.raises(InvalidInputError, match=f"no parameter '{bad}'") as info:
        make_beta(spec)
    assert info.match(f"Did you mean '{suggestion}'")


@pytest.mark.parametrize("spec", [True, None, [1.0], (2.0,)])
def test_make_beta_rejects_other_types(spec):
    with pytest.raises(InvalidInputError, match="beta must be"):
        make_beta(spec)


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 1.5, math.nan])
def test_alpha_outside_open_unit_interval_is_rejected(alpha):
    with pytest.raises(InvalidInputError, match="alpha") as info:
        TheoryBeta(alpha=alpha)
    assert info.match(repr(float(alpha)))
    with pytest.raises(InvalidInputError, match="alpha"):
        make_beta({"type": "theory", "alpha": alpha})


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: TheoryBeta(B=-1.0), "B"),
        (lambda: TheoryBeta(R=-0.1), "R"),
        (lambda: TheoryBeta(scale=-1.0), "scale"),
        (lambda: ConstantBeta(value=-2.0), "value"),
        (lambda: ConstantBeta(scale=math.inf), "scale"),
        (lambda: LogBeta(B="1"), "B"),
        (lambda: LogBeta(R=-1.0), "R"),
        (lambda: make_beta(-1.0), "value"),
    ],
)
def test_negative_or_non_numeric_parameters_are_rejected(make, name):
    with pytest.raises(InvalidInputError, match=name):
        make()
