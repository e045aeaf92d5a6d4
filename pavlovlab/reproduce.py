"""Re-run the course's figure experiments from the package (not from the notebooks).

``run_all(out_dir, quick=True)`` calls one small function per experiment; each draws its figure(s)
into PNG files in ``out_dir`` and returns a few headline numbers, collected in ``summary.json``.
An experiment whose module is not available is reported as ``missing``; one that raises is reported
as ``failed`` with the error, and the others still run.
"""

from __future__ import annotations

import importlib
import json
import platform
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SUMMARY_NAME = "summary.json"


@dataclass(frozen=True)
class Experiment:
    """One figure experiment: its name, the notebook it belongs to, the modules it needs, the function."""

    name: str
    notebook: str
    title: str
    needs: tuple[str, ...]
    run: Callable[..., dict[str, Any]]


EXPERIMENTS: list[Experiment] = []


def experiment(name: str, notebook: str, title: str, needs: Sequence[str] = ()):
    """Register ``fn(out: Path, *, quick: bool, progress: bool) -> dict`` as an experiment."""
    def register(fn):
        EXPERIMENTS.append(Experiment(name, notebook, title, tuple(needs), fn))
        return fn
    return register


def _figure(ncols: int = 1, width: float = 6.4):
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from .plotting import use_style

    use_style()
    fig, axes = plt.subplots(1, ncols, figsize=(width * ncols if ncols > 1 else width, 3.6), squeeze=False)
    return fig, list(axes[0])


def _save(fig, out: Path, name: str) -> str:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    path = out / f"{name}.png"
    fig.savefig(path)
    plt.close(fig)
    return path.name


def _r(x: float, nd: int = 4) -> float:
    return round(float(x), nd)


def missing_modules(exp: Experiment) -> list[str]:
    """The modules ``exp`` needs that cannot be imported."""
    missing = []
    for mod in exp.needs:
        try:
            importlib.import_module(f"pavlovlab.{mod}")
        except ImportError:
            missing.append(mod)
    return missing


def run_all(out: str | Path, *, quick: bool = False, only: Sequence[str] | None = None,
            progress: bool = True) -> dict[str, Any]:
    """Run the experiments (all, or those named in ``only``), save PNGs and ``summary.json`` in ``out``.

    Returns the summary: ``{"quick": bool, "experiments": {name: {"status", "notebook", "figures",
    "numbers", "seconds"} or {"status": "missing"/"failed", "reason"}}}``.
    """
    from tqdm.auto import tqdm

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    chosen = [e for e in EXPERIMENTS if not only or e.name in only]
    summary: dict[str, Any] = {"quick": quick, "python": platform.python_version(), "experiments": {}}
    bar = tqdm(chosen, desc="experiments", unit="exp", disable=not progress)
    for exp in bar:
        bar.set_postfix_str(exp.name)
        res: dict[str, Any] = {"notebook": exp.notebook, "title": exp.title}
        miss = missing_modules(exp)
        if miss:
            res.update(status="missing", reason=f"module(s) not available yet: {', '.join(miss)}")
        else:
            t0 = time.perf_counter()
            try:
                got = exp.run(out, quick=quick, progress=progress)
                res.update(status="ok", figures=got.pop("figures", []), numbers=got)
            except Exception as e:  # noqa: BLE001 - one broken experiment must not stop the others
                res.update(status="failed", reason=f"{type(e).__name__}: {e}",
                           traceback=traceback.format_exc(limit=4))
            res["seconds"] = round(time.perf_counter() - t0, 2)
        summary["experiments"][exp.name] = res
    (out / SUMMARY_NAME).write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return summary


# ------------------------------------------------------------------------------ the experiments
# One function per figure experiment, in course order; each returns {"figures": [...], <numbers>}.


@experiment("linear_equivalence", "03_linear_attention", "parallel, recurrent and chunked forms agree",
            needs=("attention",))
def linear_equivalence(out: Path, *, quick: bool, progress: bool) -> dict[str, Any]:
    import torch

    from .attention import linear_attention
    from .device import seed_everything

    g = seed_everything(0)
    lengths = [16, 64, 256] if quick else [16, 64, 256, 1024]
    errs = {m: [] for m in ("recurrent", "chunk")}
    for T in lengths:
        q, k, v = (torch.randn(2, 4, T, 16, generator=g, dtype=torch.float64) for _ in range(3))
        ref = linear_attention(q, k, v, mode="parallel")
        for m in errs:
            o = linear_attention(q, k, v, mode=m, chunk_size=32)
            errs[m].append(((o - ref).norm() / ref.norm()).item())
    fig, (ax,) = _figure()
    for m, e in errs.items():
        ax.semilogy(lengths, [max(x, 1e-18) for x in e], "o-", label=f"{m} vs parallel")
    ax.set_xscale("log", base=2)
    ax.set_title("Linear attention: three forms, one answer")
    ax.set_xlabel("sequence length T")
    ax.set_ylabel("relative error (float64)")
    ax.legend()
    return {"figures": [_save(fig, out, "03_linear_equivalence")],
            "max_rel_error": float(f"{max(max(e) for e in errs.values()):.1e}")}


__all__ = ["EXPERIMENTS", "Experiment", "SUMMARY_NAME", "experiment", "run_all"]
