"""Speed of every attention form, as medians and ratios measured in one run (shared machines are noisy).

    python benchmarks/attention.py [--T 256 1024 4096] [--repeats 15] [--device cpu|cuda] [--dtype float32]

B=1, H=4, d_k=d_v=64. The reference is one batched matmul with the FLOP count of the chunkwise linear
form, so "chunk / matmul throughput" reads as the fraction of this machine's matmul speed it reaches.
Goals (2-core CPU, float32, T=4096): linear chunk ≥ 20× recurrent, delta chunk ≥ 10× recurrent,
linear chunk ≥ 30% of matmul throughput, chunk time T=4096 / T=1024 ≤ 5× (softmax: about 16×).
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F

from pavlovlab import delta_rule_attention, linear_attention, softmax_attention
from timing import median_time

B, H, D = 1, 4, 64
CHUNK = 64


def chunk_flops(T: int) -> int:
    """Multiply-adds ×2 of the chunkwise linear form: QKᵀ and (·)V inside chunks, Q S and the state writes."""
    return 2 * B * H * (T * CHUNK * D + T * CHUNK * D + T * D * D + T * D * D)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--T", type=int, nargs="+", default=[256, 1024, 4096])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    args = parser.parse_args()
    device, dtype = torch.device(args.device), getattr(torch, args.dtype)
    gen = torch.Generator().manual_seed(0)
    print(f"attention forms, B={B} H={H} d_k=d_v={D}, chunk={CHUNK}, {args.dtype} on {device}, "
          f"{torch.get_num_threads()} threads; median of {args.repeats} (ms)")
    rows = {}
    for T in args.T:
        q, k, v = (torch.randn(B, H, T, D, generator=gen, dtype=dtype).to(device) for _ in range(3))
        k = F.normalize(k, dim=-1)
        m = chunk_flops(T) // (2 * B * H * T * D)  # reference: (B·H, T, D) @ (B·H, D, m) has the same FLOPs
        a = torch.randn(B * H, T, D, generator=gen, dtype=dtype).to(device)
        b = torch.randn(B * H, D, m, generator=gen, dtype=dtype).to(device)
        slow = max(1, args.repeats // 3)
        rows[T] = {
            "linear parallel": median_time(lambda: linear_attention(q, k, v, mode="parallel"), args.repeats, device),
            "linear recurrent": median_time(lambda: linear_attention(q, k, v, mode="recurrent"), slow, device),
            "linear chunk": median_time(lambda: linear_attention(q, k, v, mode="chunk", chunk_size=CHUNK),
                                        args.repeats, device),
            "delta recurrent": median_time(lambda: delta_rule_attention(q, k, v, 0.5, mode="recurrent"), slow, device),
            "delta chunk": median_time(lambda: delta_rule_attention(q, k, v, 0.5, mode="chunk", chunk_size=CHUNK),
                                       args.repeats, device),
            "softmax": median_time(lambda: softmax_attention(q, k, v), args.repeats, device),
            "matmul reference": median_time(lambda: a @ b, args.repeats, device),
        }
    names = list(next(iter(rows.values())))
    print(f"{'form':18s}" + "".join(f"{'T=' + str(T):>11s}" for T in args.T))
    for name in names:
        print(f"{name:18s}" + "".join(f"{rows[T][name] * 1e3:11.2f}" for T in args.T))
    print("\nratios" + " " * 12 + "".join(f"{'T=' + str(T):>11s}" for T in args.T))
    ratios = {
        "linear rec/chunk": lambda r: r["linear recurrent"] / r["linear chunk"],
        "delta rec/chunk": lambda r: r["delta recurrent"] / r["delta chunk"],
        "chunk % matmul": lambda r: 100 * r["matmul reference"] / r["linear chunk"],
        "softmax/chunk": lambda r: r["softmax"] / r["linear chunk"],
    }
    for name, f in ratios.items():
        print(f"{name:18s}" + "".join(f"{f(rows[T]):11.1f}" for T in args.T))
    if len(args.T) > 1:
        lo, hi = args.T[-2], args.T[-1]
        print(f"\ngrowth T={hi} over T={lo} (x{hi // lo} longer): "
              + ", ".join(f"{n} {rows[hi][n] / rows[lo][n]:.1f}x" for n in ("linear chunk", "delta chunk", "softmax")))
    T = args.T[-1]
    r = rows[T]
    goals = [
        (f"linear chunk >= 20x faster than recurrent at T={T}", r["linear recurrent"] / r["linear chunk"] >= 20),
        (f"delta chunk >= 10x faster than recurrent at T={T}", r["delta recurrent"] / r["delta chunk"] >= 10),
        (f"linear chunk >= 30% of matmul throughput at T={T}", r["matmul reference"] / r["linear chunk"] >= 0.3),
    ]
    if len(args.T) > 1:
        goals.append((f"chunk time T={hi} / T={lo} <= {hi // lo * 5 // 4}x",
                      rows[hi]["linear chunk"] / rows[lo]["linear chunk"] <= hi // lo * 5 / 4))
    print()
    for text, ok in goals:
        print(f"{'MET ' if ok else 'MISS'}  {text}")


if __name__ == "__main__":
    main()
