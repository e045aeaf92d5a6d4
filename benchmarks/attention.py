"""Speed of every attention form against this machine's matmul peak, as medians and ratios measured in one run.

    python benchmarks/attention.py [--T 1024 4096 16384] [--repeats 9] [--slow-repeats 3] [--threads N]
                                   [--memory-T 16384 65536] [--device cpu|cuda] [--dtype float32]

B=1, H=4, d_k=d_v=64, chunk 64. Shared machines are noisy: every timing is the median of calls made
round-robin with all the others (one call of each form, then the next round), so that the load's drift
falls on all of them alike; read the ratios, not the absolute times. The reference is the speed of one
2048³ matmul (sgemm in float32) measured in the same rounds; "% of sgemm" is the chunk form's FLOP count
(below) per second over that reference. Peak memory is measured in a fresh subprocess per form and T: after
a warm-up call, the rise of the resident-set high-water mark (Linux ``VmHWM``, reset through
``/proc/self/clear_refs``; CUDA: ``max_memory_allocated``) over the memory held with the inputs, for one
forward call (its output included).

On a loaded machine (load average above the core count) several threads per product spend most of their
time waiting at barriers for a descheduled partner (measured: 100× slower than one thread at load 5 on 2
cores); compare runs made with ``--threads 1`` there.

Goals (issue 14; printed as MET/MISS lines): linear chunk ≥ 50% and delta chunk ≥ 40% of the sgemm peak at
every T ≥ 4096; recurrent/chunk ≥ 30× (linear) and ≥ 15× (delta) at T = 4096; per-token time at T = 1024 at
most 1.5× that at T = 4096 (both chunk forms); forward + backward per token at T = 16384 at most 1.5× that at
T = 4096 (the backward pass linear in T as well); peak memory from T = 16384 to 65536 growing like T (≤ 6×
for 4× longer: a T² term would give 16×).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable

import torch
import torch.nn.functional as F
from timing import interleaved_medians

from pavlovlab import delta_rule_attention, linear_attention, softmax_attention

B, H, D = 1, 4, 64
CHUNK = 64
N_REF = 2048
QUADRATIC_MAX_T = 4096
"""The parallel and softmax forms build (T, T) score matrices: timed only up to this T."""


def linear_chunk_flops(T: int) -> int:
    """2 × multiply-adds of the chunkwise linear form: QKᵀ and (·)V inside chunks, VᵀK (state writes), Q S."""
    return 2 * B * H * T * (CHUNK * D + CHUNK * D + D * D + D * D)


def delta_chunk_flops(T: int) -> int:
    """2 × multiply-adds of the chunkwise delta rule per chunk of C tokens: KKᵀ and QKᵀ (C²d each), the
    unit-triangular solve for [U, W] (C²/2 · 2d), A [U, W] (C² · 2d), [U, W]ᵀK (2d · C · d), (Q − AW) S₀ᵀ
    (C d²) and the state step S P (d³)."""
    C = CHUNK
    per_chunk = 2 * C * C * D + C * C * D + C * C * 2 * D + 2 * D * C * D + C * D * D + D ** 3
    return 2 * B * H * (T // C) * per_chunk


def inputs(T: int, dtype: torch.dtype, device: torch.device, seed: int = 0) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(B, H, T, D, generator=gen, dtype=dtype).to(device) for _ in range(3))
    return q, F.normalize(k, dim=-1), v


def chunk_form(name: str) -> Callable[..., torch.Tensor]:
    if name == "linear":
        return lambda q, k, v: linear_attention(q, k, v, mode="chunk", chunk_size=CHUNK)
    return lambda q, k, v: delta_rule_attention(q, k, v, 0.5, mode="chunk", chunk_size=CHUNK)


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))


def peak_memory_child(form: str, T: int, dtype: torch.dtype, device: torch.device) -> None:
    """Print the peak memory (MiB) one forward call adds on top of its inputs (run in a fresh process)."""
    q, k, v = inputs(T, dtype, device)
    fn = chunk_form(form)
    if device.type == "cuda":
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        fn(q, k, v)
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - base
    else:  # Linux: warm up (libraries, thread pools), reset the high-water mark VmHWM, then read it back
        fn(*inputs(2 * CHUNK, dtype, device))
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        base = _status_kib("VmRSS")
        fn(q, k, v)
        peak = (_status_kib("VmHWM") - base) * 1024
    print(json.dumps({"MiB": peak / 2**20}))


def peak_memory(form: str, T: int, args: argparse.Namespace) -> float:
    cmd = [sys.executable, __file__, "--memory-child", form, str(T), "--device", args.device, "--dtype", args.dtype]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["MiB"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--T", type=int, nargs="+", default=[1024, 4096, 16384])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--slow-repeats", type=int, default=3, help="calls of the recurrent forms")
    parser.add_argument("--recurrent-T", type=int, nargs="*", default=[4096],
                        help="lengths at which the (slow) recurrent forms are timed")
    parser.add_argument("--memory-T", type=int, nargs="*", default=[16384, 65536])
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--memory-child", nargs=2, metavar=("FORM", "T"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device, dtype = torch.device(args.device), getattr(torch, args.dtype)
    if args.memory_child:
        peak_memory_child(args.memory_child[0], int(args.memory_child[1]), dtype, device)
        return

    Ts = sorted(args.T)
    gen = torch.Generator().manual_seed(1)
    a, b = (torch.randn(N_REF, N_REF, generator=gen, dtype=dtype).to(device) for _ in range(2))
    fns: dict[str, Callable[[], object]] = {"matmul 2048^3": lambda: a @ b}
    counts: dict[str, int] = {}
    for T in Ts:
        q, k, v = inputs(T, dtype, device)
        qg, kg, vg = (x.clone().requires_grad_() for x in (q, k, v))
        grad_out = torch.randn(B, H, T, D, generator=gen, dtype=dtype).to(device)

        def fwd_bwd(form: str, q=qg, k=kg, v=vg, g=grad_out) -> None:
            torch.autograd.grad(chunk_form(form)(q, k, v), (q, k, v), g)

        fns |= {
            f"linear chunk|{T}": lambda q=q, k=k, v=v: chunk_form("linear")(q, k, v),
            f"delta chunk|{T}": lambda q=q, k=k, v=v: chunk_form("delta")(q, k, v),
            f"linear chunk fwd+bwd|{T}": lambda f=fwd_bwd: f("linear"),
            f"delta chunk fwd+bwd|{T}": lambda f=fwd_bwd: f("delta"),
        }
        if T <= QUADRATIC_MAX_T:
            fns |= {
                f"linear parallel|{T}": lambda q=q, k=k, v=v: linear_attention(q, k, v, mode="parallel"),
                f"softmax|{T}": lambda q=q, k=k, v=v: softmax_attention(q, k, v),
            }
        if T in args.recurrent_T:
            fns |= {
                f"linear recurrent|{T}": lambda q=q, k=k, v=v: linear_attention(q, k, v, mode="recurrent"),
                f"delta recurrent|{T}": lambda q=q, k=k, v=v: delta_rule_attention(q, k, v, 0.5, mode="recurrent"),
            }
            counts |= {f"linear recurrent|{T}": args.slow_repeats, f"delta recurrent|{T}": args.slow_repeats}
    print(f"attention forms, B={B} H={H} d_k=d_v={D}, chunk={CHUNK}, {args.dtype} on {device}, "
          f"{torch.get_num_threads()} threads; medians of {args.repeats} interleaved rounds "
          f"({args.slow_repeats} for the recurrent forms), ms")
    if device.type == "cpu":
        load, cores = os.getloadavg()[0], os.cpu_count() or 1
        print(f"load average {load:.2f} on {cores} cores" + ("" if load < cores or torch.get_num_threads() == 1 else
              "; above the core count: threads of one product wait for each other (try --threads 1)"))
    faults: dict[str, float] = {}
    med = interleaved_medians(fns, args.repeats, device, counts, faults)
    peak = 2 * N_REF ** 3 / med["matmul 2048^3"]
    print(f"sgemm reference: 2048^3 matmul {med['matmul 2048^3'] * 1e3:.2f} ms = {peak / 1e9:.1f} GFLOP/s\n")

    names = ["linear parallel", "linear recurrent", "linear chunk", "delta recurrent", "delta chunk", "softmax",
             "linear chunk fwd+bwd", "delta chunk fwd+bwd"]
    print(f"{'form':22s}" + "".join(f"{'T=' + str(T):>11s}" for T in Ts))
    for name in names:
        print(f"{name:22s}" + "".join(f"{med[f'{name}|{T}'] * 1e3:11.2f}" if f"{name}|{T}" in med else f"{'-':>11s}"
                                      for T in Ts))

    def row(label: str, f: Callable[[int], float | None], fmt: str = "11.1f") -> None:
        vals = [f(T) for T in Ts]
        print(f"{label:22s}" + "".join(f"{x:{fmt}}" if x is not None else f"{'-':>11s}" for x in vals))

    def ratio(num: str, den: str) -> Callable[[int], float | None]:
        return lambda T: med[f"{num}|{T}"] / med[f"{den}|{T}"] if f"{num}|{T}" in med and f"{den}|{T}" in med else None

    pct = {"linear": lambda T: 100 * linear_chunk_flops(T) / med[f"linear chunk|{T}"] / peak,
           "delta": lambda T: 100 * delta_chunk_flops(T) / med[f"delta chunk|{T}"] / peak}
    per_token = {form: (lambda T, form=form: med[f"{form} chunk|{T}"] / T * 1e6) for form in ("linear", "delta")}
    print("\nratios" + " " * 16 + "".join(f"{'T=' + str(T):>11s}" for T in Ts))
    row("linear chunk % sgemm", pct["linear"])
    row("delta chunk % sgemm", pct["delta"])
    row("linear rec/chunk", ratio("linear recurrent", "linear chunk"))
    row("delta rec/chunk", ratio("delta recurrent", "delta chunk"))
    row("softmax/linear chunk", ratio("softmax", "linear chunk"))
    row("linear fwd+bwd/fwd", ratio("linear chunk fwd+bwd", "linear chunk"))
    row("delta fwd+bwd/fwd", ratio("delta chunk fwd+bwd", "delta chunk"))
    row("linear us/token", per_token["linear"], "11.3f")
    row("delta us/token", per_token["delta"], "11.3f")
    for form in ("linear", "delta"):  # the allocator's share: a fault per 4 KiB page handed back and taken again
        row(f"{form} page faults", lambda T, form=form: faults.get(f"{form} chunk|{T}"), "11.0f")

    memory: dict[tuple[str, int], float] = {}
    if args.memory_T:
        print("\npeak memory of one forward call over its inputs (MiB, fresh process each)")
        print(f"{'form':22s}" + "".join(f"{'T=' + str(T):>11s}" for T in args.memory_T))
        for form in ("linear", "delta"):
            memory |= {(form, T): peak_memory(form, T, args) for T in args.memory_T}
            print(f"{form + ' chunk':22s}" + "".join(f"{memory[form, T]:11.1f}" for T in args.memory_T))

    goals: list[tuple[str, bool]] = []
    big = [T for T in Ts if T >= 4096]
    for form, target in (("linear", 50), ("delta", 40)):
        if big:
            worst = min(pct[form](T) for T in big)
            goals.append((f"{form} chunk >= {target}% of sgemm peak at T >= 4096 (worst {worst:.1f}% over T={big})",
                          worst >= target))
    for form, target in (("linear", 30), ("delta", 15)):
        r = ratio(f"{form} recurrent", f"{form} chunk")(4096)
        if r is not None:
            goals.append((f"{form} recurrent/chunk >= {target}x at T=4096 ({r:.1f}x)", r >= target))
    if 1024 in Ts and 4096 in Ts:
        for form in ("linear", "delta"):
            r = per_token[form](1024) / per_token[form](4096)
            goals.append((f"{form} chunk per-token time T=1024 <= 1.5x T=4096 ({r:.2f}x)", r <= 1.5))
    if 4096 in Ts and 16384 in Ts:  # the backward pass is linear in T too
        for form in ("linear", "delta"):
            r = (med[f"{form} chunk fwd+bwd|16384"] / 16384) / (med[f"{form} chunk fwd+bwd|4096"] / 4096)
            goals.append((f"{form} chunk fwd+bwd per-token time T=16384 <= 1.5x T=4096 ({r:.2f}x)", r <= 1.5))
    if len(args.memory_T) >= 2:
        lo, hi = min(args.memory_T), max(args.memory_T)
        for form in ("linear", "delta"):
            r = memory[form, hi] / memory[form, lo]
            limit = 1.5 * hi / lo
            goals.append((f"{form} chunk peak memory O(T): T={hi} / T={lo} = {r:.1f}x <= {limit:.0f}x "
                          f"(T^2 would be {(hi / lo) ** 2:.0f}x)", r <= limit))
    print()
    for text, ok in goals:
        print(f"{'MET ' if ok else 'MISS'}  {text}")


if __name__ == "__main__":
    main()
