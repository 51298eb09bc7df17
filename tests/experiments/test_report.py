import numpy as np

from ckb.experiments import report


def test_box_plots_share_one_y_axis(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seen = []
    real = plt.subplots

    def spy(*a, **k):
        fig, axes = real(*a, **k)
        seen.append(axes)
        return fig, axes

    monkeypatch.setattr(plt, "subplots", spy)
    rng = np.random.default_rng(0)
    curves = {"a": {"regret": rng.random((4, 10))}, "b": {"regret": 100 + rng.random((4, 10))}}
    report._boxplot(tmp_path, "regret", curves, [5, 10])
    (axes,) = seen
    assert axes[0, 0].get_ylim() == axes[1, 0].get_ylim()
