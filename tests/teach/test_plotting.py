"""Tests of ``pavlovlab.teach.plotting``."""

from __future__ import annotations

import numpy as np
from badinput import check, parametrize
from matplotlib.figure import Figure

from pavlovlab.conditioning import learning as C
from pavlovlab.conditioning import trials as Tt
from pavlovlab.teach import plotting as P


# ---------------------------------------------------------------------------------------------------- bad input
def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.teach.plotting``: one row ``(case, call, expect, fragment)`` a case."""
    ax = Figure().add_subplot()
    design_ax = Figure().add_subplot()
    cs, us, labels = Tt.blocking(5)
    V = C.rescorla_wagner(cs, us)
    return [
        ("band samples wrong width", lambda: P.band(ax, [1, 2, 3], np.ones((5, 4))), ValueError,
         "samples: expected shape"),
        ("band samples 1-D", lambda: P.band(ax, [1, 2, 3], np.ones(3)), ValueError, "samples: expected 2 dimension"),
        ("theory y wrong length", lambda: P.theory(ax, [1, 2, 3], [1, 2]), ValueError, "y: expected len(x) = 3"),
        ("heatmap 1-D", lambda: P.heatmap(ax, np.ones(4), title="t", xlabel="x", ylabel="y"), ValueError,
         "matrix: expected 2 dimension"),
        ("mark_times strings", lambda: P.mark_times(ax, ["a"]), TypeError, "times: expected numbers"),
        ("not an Axes", lambda: P.labels(None, "t", "x", "y"), TypeError, "ax: expected a matplotlib Axes"),
        ("plot_strengths batched V", lambda: P.plot_strengths(design_ax, V.expand(3, *V.shape), labels), ValueError,
         "V: expected 2 dimension"),
        ("plot_strengths too many labels", lambda: P.plot_strengths(design_ax, V[:, :1], labels), ValueError,
         "labels: expected one CS name per column of V (1), got 2"),
        ("plot_design 1-D cs", lambda: P.plot_design(design_ax, cs[:, 0], us, labels), ValueError,
         "cs: expected a design"),
        ("plot_design T = 0", lambda: P.plot_design(design_ax, cs[:0], us[:0], labels), ValueError,
         "cs: expected a design (..., trials >= 1"),
        ("plot_design us of the wrong length", lambda: P.plot_design(design_ax, cs, us[:3], labels), ValueError,
         "us: expected one US per trial"),
        ("plot_design draws a batched design (first sequence)",
         lambda: P.plot_design(design_ax, cs.expand(2, *cs.shape), us.expand(2, *us.shape), labels) is None, "ok", ""),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)
