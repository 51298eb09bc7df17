from ckb.framework.report import table_rows


def _m(regret, violation):
    s = lambda mean, se: {"mean": mean, "stderr": se, "median": mean}
    return {
        "regret": s(*regret),
        "violation": s(*violation),
        "positive_violation": s(0.0, 0.0),
        "violating_rounds": s(3.0, 1.0),
        "seconds_per_round": s(0.001, 0.0),
    }


def test_float_noise_prints_as_zero_relative_to_the_table_scale():
    summary = {"horizon": 100, "algorithms": {"a": _m((120.0, 3.0), (1.15e-14, 3.55e-15))}}
    _, rows = table_rows(summary)
    assert rows[0][3] == "0 ± 0"
    assert rows[0][1] == "120 ± 3"
    # a small value that is not noise relative to the scale is kept
    summary = {"horizon": 100, "algorithms": {"a": _m((2e-6, 1e-7), (1.5e-7, 1e-8))}}
    assert table_rows(summary)[1][0][3] == "1.5e-07 ± 1e-08"
