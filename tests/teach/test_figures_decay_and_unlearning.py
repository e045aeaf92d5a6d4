"""The figures of notebook 07: the retention explorer draws γ_h^ℓ for each head, and the course picture quotes
one live number per notebook."""

import matplotlib
import pytest
import torch

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from pavlovlab.teach.figures import decay_and_unlearning as figures


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_the_retention_explorer_draws_each_heads_retention():
    fig = figures.retention_explorer(n_heads=3, first_exponent=5, lag=100)
    curves, bars = fig.axes
    lines = [ln for ln in curves.get_lines() if len(ln.get_xdata()) > 2]
    assert len(lines) == 3
    for h, line in enumerate(lines):                          # an independent computation: γ_h = 1 − 2^(−5−h)
        gamma = 1 - 2.0 ** (-5 - h)
        lag = torch.as_tensor(line.get_xdata(), dtype=torch.float64)
        assert torch.allclose(torch.as_tensor(line.get_ydata(), dtype=torch.float64), gamma ** lag, rtol=1e-9)
    heights = [p.get_height() for p in bars.patches]
    assert heights == pytest.approx([(1 - 2.0 ** (-5 - h)) ** 100 for h in range(3)])


def test_the_course_picture_quotes_every_live_number():
    live = figures.course_live_numbers()
    assert sorted(live) == ["01", "02", "03", "04", "05", "06"]
    claims = {nb: (f"title {nb}", f"claim {nb}") for nb in [*live, "07"]}
    fig = figures.draw_course_picture(claims, live)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert all(any(sentence in t for t in texts) for sentence in live.values())
    assert any("not available" in t for t in texts)           # 07 has no live number here
