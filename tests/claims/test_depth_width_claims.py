"""Every checked verdict of notebook 05, recomputed at one thread with seeds other than the notebook's: the verdict
must come out the same for each (a verdict whose sign follows a seed or a thread count is not evidence).

Each ``verdict_*`` repeats one measurement of the notebook with the same sizes and its own generator and returns
``(verdict, statistic)``; the statistic is what the verdict compares with its decision line. The trained contest is
read from the cached runs (training them again takes tens of minutes): their provenance is checked, and each
verdict is recomputed with every seed left out in turn. One hop of training at K = 1 is repeated with other seeds.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from pavlovlab.depth import chain as st
from pavlovlab.depth import contest as depth_width
from pavlovlab.depth import theory as th
from pavlovlab.models import tasks, training
from pavlovlab.models import transformer as models
from pavlovlab.statistics import fit_log_slope, fit_slope

SEEDS = (11, 12, 13, 14, 15, 16)


def _g(seed):
    return torch.Generator().manual_seed(seed)


def verdict_linear_in_depth(seed):
    """§3: with a clean-up, the log–log slope of error against depth is within ± 0.2 of 1."""
    r = st.chain_error(8, 1, 32, 32, trials=250, generator=_g(seed))
    slope = fit_slope(np.arange(1, 9), r.error_by_depth, drop_nonpositive=True)
    return abs(slope - 1) <= 0.2, 0.2 - abs(slope - 1)


def verdict_raw_compounds(seed):
    """§4: without a clean-up the raw error's slope over L = 2..5 exceeds 1.5."""
    raw = st.raw_chain(8, 16, 32, trials=250, generator=_g(seed))
    a = fit_slope(np.arange(2, 6), raw.error_by_depth[1:5], drop_nonpositive=True)
    return a > 1.5, a - 1.5


def verdict_exponential_in_heads(seed):
    """§2: over H = 1..4 an exponential fits the averaged heads' error better than a power law."""
    Hs = np.arange(1, 5)
    errs = [st.chain_error(1, int(H), 24, 16, trials=1000, generator=_g(seed)).error for H in Hs]
    r2_exp, r2_pow = fit_log_slope(Hs, errs)[1], fit_log_slope(np.log(Hs), errs)[1]
    return r2_exp > r2_pow, r2_exp - r2_pow


def verdict_redundancy_beyond_size(seed):
    """§2: at 1024 entries, 4 averaged heads of 16×16 make fewer errors than the best single head."""
    e = {name: st.chain_error(1, H, 24, dk, d_v=dv, trials=2000, generator=_g(seed)).error
         for name, (H, dk, dv) in {"4": (4, 16, 16), "64": (1, 64, 16), "32": (1, 32, 32)}.items()}
    best = min(e["64"], e["32"])
    return e["4"] < best, np.log(best / max(e["4"], 1e-9))


def verdict_paper_expression_above(seed):
    """§1: with d_k = d_v = 32 the paper's expression (C = 1) lies above every measured one-hop error."""
    gaps = [th.paper_bound(1, 1, n, 32) - st.chain_error(1, 1, n, 32, trials=150, generator=_g(seed)).error
            for n in (4, 8, 12, 16, 24, 32, 48, 64)]
    return min(gaps) > 0, min(gaps)


def verdict_close_values_break_c1(seed):
    """§1b: with close values (n = 3, d_k = 64, d_v = 2) the error exceeds (n − 1)/d_k by more than 3 SE."""
    r = st.chain_error(1, 1, 3, 64, d_v=2, trials=6000, generator=_g(seed))
    se = np.sqrt(r.error * (1 - r.error) / r.chains)
    return r.error - 3 * se > th.paper_bound(1, 1, 3, 64), (r.error - th.paper_bound(1, 1, 3, 64)) / se


def verdict_bounds_above_and_falling(seed):
    """§1b: both bounds of the paper's form lie above the measured errors and fall with H; M_H rises with H."""
    rows = st.bounds_against_heads(8, 32, [1, 2, 3, 4], trials=3000, generator=_g(seed))
    above = all(r["averaged"] >= r["err_avg"] and r["all_fail"] >= r["err_all"] for r in rows)
    falling = all(a["averaged"] > b["averaged"] and a["all_fail"] > b["all_fail"] for a, b in itertools.pairwise(rows))
    rising = all(a["M"] < b["M"] for a, b in itertools.pairwise(rows))
    return above and falling and rising, rows[-1]["M"] - rows[-2]["M"]


def verdict_weak_crosstalk_fails(seed):
    """§1: more than a quarter of the failures have ‖c‖ < 1 (the paper's threshold 1 misses them)."""
    hop = st.one_hop(8, 16, trials=25_000, generator=_g(seed))
    weak = (hop.crosstalk_norm[hop.failed] < 1).double()
    se = (weak.mean() * (1 - weak.mean()) / weak.numel()).sqrt().item()
    return weak.mean().item() > 0.25, (weak.mean().item() - 0.25) / se


def verdict_one_head_wins_the_budget(seed):
    """§5: at H·d_k = 64 on two hops, one undivided head makes the fewest errors (ties broken by the theory)."""
    rows = depth_width.same_task_budget(2, 64, 24, trials=150, generator=_g(seed))
    best = min(rows, key=lambda r: (r["measured"], r["theory"]))
    return best["H"] == 1, rows[-1]["measured"] - rows[0]["measured"]


def verdict_deep_big_heads_beat_wide_small(seed):
    """Exercise 2: B (3 hops through heads of 32) makes fewer errors than A (1 hop through 2 heads of 16)."""
    a = st.chain_error(1, 2, 24, 16, trials=200, generator=_g(seed)).error
    b = st.chain_error(3, 1, 24, 32, trials=200, generator=_g(seed)).error
    return b < a, a - b


VERDICTS = [verdict_linear_in_depth, verdict_raw_compounds, verdict_exponential_in_heads,
            verdict_redundancy_beyond_size, verdict_paper_expression_above, verdict_close_values_break_c1,
            verdict_bounds_above_and_falling, verdict_weak_crosstalk_fails, verdict_one_head_wins_the_budget,
            verdict_deep_big_heads_beat_wide_small]


@pytest.mark.slow
@pytest.mark.parametrize("verdict", VERDICTS, ids=lambda f: f.__name__.removeprefix("verdict_"))
def test_verdict_holds_for_other_seeds_at_one_thread(verdict, one_thread):
    outcomes = {seed: verdict(seed) for seed in SEEDS}
    assert all(bool(v) for v, _ in outcomes.values()), outcomes


def _contest_verdicts(record):
    return {(c["wide"], c["deep"]): c["verdict"] for c in depth_width.shape_contests(record)}


@pytest.mark.parametrize("hops", [1, 2, 3])
def test_cached_contest_has_its_provenance(hops):
    record = depth_width.cached_shape_runs(hops)
    s = record["setup"]
    assert s["separator"] is True and s["seeds"] >= 5 and s["threads"] == 1
    assert f"--hops {hops}" in s["command"] and "--separator" in s["command"] and len(s["commit"]) >= 40
    for run in record["runs"]:
        assert run["hops"] == hops and len(run["final_accuracy"]) == s["seeds"]
        assert run["final_accuracy"] == [acc[-1] for acc in run["accuracy"]]
        assert len(run["accuracy_by_backward_steps"]) == s["seeds"]
        assert sorted(run["accuracy_by_backward_steps"][0]) == [str(b) for b in range(hops)]
    shapes = {run["shape"] for run in record["runs"]}
    params = [run["parameters"] for run in record["runs"]]
    assert {"wide-shallow", "2×2", "4×1"} <= shapes and max(params) / min(params) < 1.03   # an equal budget


@pytest.mark.parametrize("hops", [1, 2, 3])
def test_cached_contest_verdicts_survive_leaving_out_any_seed(hops):
    """With 5 seeds there are 5 other sets of 4 seeds. A decisive verdict ("holds" or "reversed") must come out
    the same from each of them, or the notebook would have to call it inconclusive; an inconclusive one claims
    nothing, so a subset may go either way."""
    record = depth_width.cached_shape_runs(hops)
    full = _contest_verdicts(record)
    for leave in range(record["setup"]["seeds"]):
        runs = [{**run, "final_accuracy": [a for i, a in enumerate(run["final_accuracy"]) if i != leave]}
                for run in record["runs"]]
        subset = _contest_verdicts({**record, "runs": runs})
        assert {pair: v for pair, v in subset.items() if full[pair] != "inconclusive"} == \
            {pair: v for pair, v in full.items() if v != "inconclusive"}, leave


@pytest.mark.slow
def test_one_hop_is_solved_by_the_wide_shape_with_other_seeds(one_thread):
    """§6: with the separator, the one-layer shape learns one hop within 100 steps, with seeds the notebook
    did not use."""
    cfg = models.depth_width_configs(4, d_model=32, d_head=8)["wide-shallow"]
    task = dict(n_pairs=6, n_queries=6, n_items=8, separator=True, hops=1)
    hist = training.train_configs({"w": cfg}, vocab_size=tasks.pointer_vocab_size(8, separator=True),
                                  seeds=(3, 4, 5, 6, 7),
                                  task=tasks.pointer_chasing, task_kwargs=task, steps=100, batch_size=64, lr=5e-3,
                                  eval_every=50, eval_size=256, progress=False)["w"]
    assert all(h["final_accuracy"] >= 0.99 for h in hist), [h["final_accuracy"] for h in hist]


def test_longer_three_hop_run_has_its_provenance_and_a_stable_verdict():
    """The one-layer shape trained twice as long on three hops, against the 4×1 shape of the main run."""
    longer = depth_width.cached_shape_runs(3, steps=1600)
    s = longer["setup"]
    assert s["steps"] == 1600 and s["separator"] is True and s["seeds"] >= 5 and s["threads"] == 1
    assert "--steps 1600" in s["command"] and "--hops 3" in s["command"] and len(s["commit"]) >= 40
    assert [run["shape"] for run in longer["runs"]] == ["wide-shallow"]
    wide = longer["runs"][0]["final_accuracy"]
    deep = next(r for r in depth_width.cached_shape_runs(3)["runs"] if r["shape"] == "4×1")["final_accuracy"]
    answers = s["eval_size"] * s["n_pairs"]
    full = depth_width.shape_difference(wide, deep, answers=answers).verdict
    for leave in range(len(wide)):
        subset = depth_width.shape_difference([a for i, a in enumerate(wide) if i != leave],
                                              [a for i, a in enumerate(deep) if i != leave], answers=answers).verdict
        assert full == "inconclusive" or subset == full, leave
