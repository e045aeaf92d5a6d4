"""The figure of notebook 00: the match printed in the title is the dot product of the two arrows drawn."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from pavlovlab.teach.figures import start_here as figures


@pytest.mark.parametrize("angle, match", [(0, 1.25), (90, 0.0), (180, -1.25), (45, 1.25 / math.sqrt(2))])
def test_the_title_gives_the_match_of_the_arrows(angle, match):
    fig = figures.draw_match(angle)
    (ax,) = fig.axes
    tips = [np.array(a.xy) for a in ax.texts if hasattr(a, "xy") and a.get_text() == ""]
    assert len(tips) == 2
    assert float(tips[0] @ tips[1]) == pytest.approx(match, abs=1e-9)       # |bell|² cos(angle), by hand
    assert ax.get_title().startswith("match k·q = ")
    assert float(ax.get_title().split("=")[1]) == pytest.approx(match, abs=0.005)
    plt.close(fig)


def test_rotation_keeps_the_length_and_turns_counter_clockwise():
    v = np.array(figures.BELL)
    w = figures.rotated(v, 90)
    assert np.linalg.norm(w) == pytest.approx(np.linalg.norm(v))
    assert w == pytest.approx([-0.5, 1.0])


def test_a_bad_angle_is_refused():
    with pytest.raises(ValueError, match="angle"):
        figures.draw_match(math.nan)
