"""The fuller configuration behind notebook 08: conditioning designs as in-context probes of trained models.

    python benchmarks/probes.py [--seeds 0 1 2 3 4] [--steps 500] [--n 1000] [--m 2] [--json out.json]

One-layer TinyTransformers (d_model 32, 2 heads of 16, MLP) with linear (Hebbian), delta (DeltaNet,
Rescorla–Wagner) and softmax attention are trained on associative recall (8 pairs, 16 keys, 16 values)
until 99 % held-out accuracy or ``--steps``; then each conditioning design of ``pavlovlab.phenomena.sequences`` is run
on ``--n`` paired design/control sequences per model. Prints the descriptive table (effect = centred logit
of the outcome, design vs control, mean over seeds with a 95 % t-interval across seeds, and as a fraction
of acquisition), the read-out norms before the per-head LayerNorm (design / control), the verdict on the
four predictions that separate DeltaNet from linear attention, the squared overlaps of the linear models' trained
keys against (n − 1)/d_k, and their recall against load. Several minutes on a 2-core CPU; one thread.
Notebook 08 runs the same experiment with 400 steps and 300 sequences per design.
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from pavlovlab.models import head_memory, training
from pavlovlab.phenomena import probes
from pavlovlab.teach.report import verdict_sentence


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--m", type=int, default=2)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    runs = training.train_models(seeds=args.seeds, steps=args.steps, target_accuracy=0.99, lr=args.lr)
    t_train = time.perf_counter() - t0
    for a, rs in runs.items():
        accs = [round(r["history"]["final_accuracy"], 3) for r in rs]
        steps = [r["history"]["steps_run"] for r in rs]
        print(f"{a:>7}: held-out accuracy {accs}, steps {steps}")
    results = probes.model_effects(runs, n=args.n, m=args.m)
    rows = probes.verdicts(results)
    print(f"\nbenchmark configuration: {len(args.seeds)} seeds, {args.n} sequences per design, m = {args.m}")
    for row in rows:
        print(verdict_sentence(row, 2), " seeds:", [round(v, 2) for v in row["effect"].seed_means])
    norms = probes.model_effects({a: runs[a] for a in ("linear", "delta")}, n=args.n, m=args.m, measure="norm")
    print("\nread-out norm before the per-head LayerNorm, design / control (mean over seeds, 95 % interval):")
    for a, per in norms.items():
        for d, x in per.items():
            e = probes.size_loss(x)
            print(f"  {a:>6} | {d:<22} | {1 - e.mean:.3f} [{1 - e.hi:.3f}, {1 - e.lo:.3f}]")
    separation = probes.separation_verdicts(results, norms)
    print("\nthe predictions that separate DeltaNet from linear attention (threshold 0.1):")
    for r in separation:
        dl, li = r["delta"], r["linear"]
        print(f"  {r['design']:<22} ({r['readout']}) DeltaNet {dl.mean:+.3f} [{dl.lo:+.3f}, {dl.hi:+.3f}]  linear "
              f"{li.mean:+.3f} [{li.lo:+.3f}, {li.hi:+.3f}]  holds: {r['holds']}")
    print("\ntrained-head key overlaps (linear attention, keys at the value positions, 8 pairs, d_head 16):")
    cross = []
    for s, r in zip(args.seeds, runs["linear"], strict=True):
        h = head_memory.trained_head_overlaps(r["model"])
        c, rnd = h["overlap"].mean(0), h["random"].mean(0)
        cross.append([s, c.tolist(), rnd.tolist(), float(h["theory"])])
        print(f"  seed {s}: per head {[round(x, 3) for x in c.tolist()]}, "
              f"random keys {[round(x, 3) for x in rnd.tolist()]}, "
              f"theory (n-1)/d_k = {float(h['theory']):.3f}")
    print("\nrecall against load (linear models; n pairs: accuracy, per-head |fidelity| vs 1/sqrt(1 + c)):")
    for s, r in zip(args.seeds, runs["linear"], strict=True):
        L = head_memory.recall_against_load(r["model"], (4, 8, 12, 16))
        for i, n in enumerate(L["n"].tolist()):
            heads = ", ".join(f"{abs(f):.2f}/{t:.2f}" for f, t in
                              zip(L["fidelity"][i].tolist(), L["fidelity_theory"][i].tolist(), strict=True))
            print(f"  seed {s}, n = {n:>2}: accuracy {float(L['accuracy'][i]):.3f}; heads {heads}")
    print(f"\ntraining {t_train:.0f} s, total {time.perf_counter() - t0:.0f} s")
    if args.json:
        keep = ("attention", "design", "predicted", "observed", "holds", "margin")
        out = {"config": vars(args),
               "rows": [dict({k: r[k] for k in keep}, mean=r["effect"].mean, lo=r["effect"].lo, hi=r["effect"].hi,
                             seed_means=r["effect"].seed_means) for r in rows],
               "separation": [dict(design=r["design"], readout=r["readout"], holds=r["holds"],
                                   delta=[r["delta"].mean, r["delta"].lo, r["delta"].hi],
                                   linear=[r["linear"].mean, r["linear"].lo, r["linear"].hi]) for r in separation],
               "overlap": cross}
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
