"""The course's colours stay apart for colour-blind readers, and every series has its own marker.

Colour-vision deficiency is simulated with Machado, Oliveira and Fernandes (2009)'s matrices at full severity,
applied to linear RGB; distances are CIELAB ΔE*76 (D65). The old palette's known confusions are reproduced
first, so the threshold is shown to catch what it must."""

from __future__ import annotations

import itertools

import matplotlib
import numpy as np
import pytest
import torch

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from pavlovlab.conditioning.trials import Labels
from pavlovlab.teach import plotting

MACHADO = {
    "protanopia": np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
    "normal vision": np.eye(3),
}
MIN_DELTA_E = 15.0
"""Two series must differ by at least this ΔE*76 under each simulation (about 2.3 is a just-noticeable step; the
old palette had pairs at 0.3 and 5.8)."""


def _lab(hex_colour: str, vision: np.ndarray) -> np.ndarray:
    srgb = np.array([int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    linear = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    linear = np.clip(vision @ linear, 0, 1)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ linear
    t = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(t > (6 / 29) ** 3, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def delta_e(a: str, b: str, vision: str) -> float:
    return float(np.linalg.norm(_lab(a, MACHADO[vision]) - _lab(b, MACHADO[vision])))


def test_the_simulation_reproduces_the_old_palettes_confusions():
    # the palette before: delta #1b9e77 vs softmax #e7298a, Oja #7570b3 vs measured #1f78b4
    assert delta_e("#1b9e77", "#e7298a", "deuteranopia") == pytest.approx(5.8, abs=0.1)
    assert delta_e("#7570b3", "#1f78b4", "protanopia") == pytest.approx(0.3, abs=0.1)
    assert delta_e("#1b9e77", "#e7298a", "normal vision") > 50  # obvious with full colour vision


@pytest.mark.parametrize("vision", sorted(MACHADO))
def test_every_pair_of_course_colours_stays_apart(vision):
    groups = {
        "kinds": sorted(set(plotting.COLORS.values())),   # kinds that share a colour share a meaning (linear = Hebbian)
        "cycle": plotting.CYCLE["color"],
        "conditioning": [*plotting.CS_COLORS, plotting.US_COLOR],
    }
    for group, colours in groups.items():
        assert len(set(colours)) == len(colours), f"{group}: a colour is used twice"
        close = [(a, b, round(delta_e(a, b, vision), 1)) for a, b in itertools.combinations(colours, 2)
                 if delta_e(a, b, vision) < MIN_DELTA_E]
        assert not close, f"{group} under {vision}: pairs closer than ΔE {MIN_DELTA_E}: {close}"
    assert set(plotting.COLORS.values()) <= set(plotting.OKABE_ITO.values())


def test_kinds_that_differ_in_colour_differ_in_marker():
    kinds = [k for k in plotting.COLORS if k != "theory"]
    for a, b in itertools.combinations(kinds, 2):
        if plotting.COLORS[a] != plotting.COLORS[b]:
            assert plotting.MARKERS[a] != plotting.MARKERS[b], (a, b)


def test_style_gives_each_series_its_own_colour_and_marker():
    with matplotlib.rc_context():
        plotting.use_style()
        fig, ax = plt.subplots()
        x = np.arange(10.0)
        for i in range(len(plotting.CYCLE["color"])):
            ax.plot(x, x * i)
        plotting.band(ax, x, np.random.default_rng(0).random((5, 10)), color=plotting.COLORS["delta"])
        plotting.band(ax, x, np.random.default_rng(1).random((5, 10)), color=plotting.COLORS["oja"])
        styles = [(ln.get_color(), ln.get_marker()) for ln in ax.get_lines()]
        plt.close(fig)
    plain = styles[:len(plotting.CYCLE["color"])]
    assert len({c for c, _ in plain}) == len(plain) and len({m for _, m in plain}) == len(plain)
    assert styles[-2:] == [(plotting.COLORS["delta"], plotting.MARKERS["delta"]),
                           (plotting.COLORS["oja"], plotting.MARKERS["oja"])]


def test_conditioning_strengths_have_a_marker_per_cs():
    fig, ax = plt.subplots()
    V = torch.rand(21, 3)
    plotting.plot_strengths(ax, V, Labels(cs=("bell", "light", "buzzer"), phases=(), salience=(1.0, 1.0, 1.0),
                                         description="three CS"), title="t")
    markers = [ln.get_marker() for ln in ax.get_lines() if ln.get_label().startswith("V ")]
    plt.close(fig)
    assert markers == list(plotting.CS_MARKERS)
