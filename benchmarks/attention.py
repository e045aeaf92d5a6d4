"""Speed of every attention form against this machine's matmul peak and against flash-linear-attention's
pure-torch forms, as medians and ratios measured in one run.

    python benchmarks/attention.py [--T 1024 4096 16384] [--repeats 9] [--slow-repeats 3] [--threads N ...]
                                   [--memory-T 16384 65536] [--device cpu|cuda] [--dtype float32]
                                   [--reference-T 256 ... 16384] [--only forms|reference|profile] [--clock wall|cpu]

B=1, H=4, d_k=d_v=64, chunk 64. Shared machines are noisy: every timing is the median of calls made
round-robin with all the others (one call of each form, then the next round), so that the load's drift
falls on all of them alike; read the ratios, not the absolute times. With one thread the clock is the
process's CPU time (``--clock cpu``), which does not count the time the process waits descheduled. The
sgemm peak is the speed of one 2048³ matmul (in float32) measured in the same rounds; "% of sgemm" is the
chunk form's FLOP count (below) per second over that peak. Peak memory is measured in a fresh subprocess per
form and T: after a warm-up call, the rise of the resident-set high-water mark (Linux ``VmHWM``, reset through
``/proc/self/clear_refs``; CUDA: ``max_memory_allocated``) over the memory held with the inputs, for one
forward call (its output included).

The reference comparison (``pip install -r benchmarks/requirements.txt``; skipped with a message without it)
loads fla's ``naive.py`` files by path, matches their conventions and checks agreement before timing (see
:func:`reference_comparison`); the same rounds time the sgemm peak, so that the chunk forms' share of it is
printed next to the ratios. ``--only profile`` prints torch.profiler's operator table of the linear chunk
form at small T. ``--threads 1 2`` runs everything once per thread count (one thread: CPU time; more: wall
time), as a hub's single core and this machine's two.

On a loaded machine (load average above the core count) several threads per product spend most of their
time waiting at barriers for a descheduled partner (measured: 100× slower than one thread at load 5 on 2
cores); compare runs made with ``--threads 1`` there.

Goals (printed as MET/MISS lines): linear chunk ≥ 50% and delta chunk ≥ 40% of the sgemm peak at every
T ≥ 4096; recurrent/chunk ≥ 30× (linear) and ≥ 15× (delta) at T = 4096; per-token time at T = 1024 at most
1.5× that at T = 4096 (both chunk forms); forward + backward per token at T = 16384 at most 1.5× that at
T = 4096 (the backward pass linear in T as well); peak memory from T = 16384 to 65536 growing like T (≤ 6×
for 4× longer: a T² term would give 16×); against the reference, linear chunk ≥ 1.0× at every T and ≥ 1.3×
at T ≥ 4096, delta chunk ≥ 1.3× (forward) against the reference's faster chunk size.

Choices inside the kernels, as measured on the 2-core development machine (torch 2.13, MKL, float32, B=1, H=4,
d=64, interleaved medians; one thread: CPU time):

- The delta rule's triangular systems: ``torch.linalg.solve_triangular`` on the unmasked ``diag(β) K Kᵀ`` (it reads
  only the strictly lower part) against a hand-written blocked forward substitution of some 50 small operations
  per segment: the kernel took 2.61 against 3.40 ms at T = 256, 10.5 against 12.1 ms at T = 1024 and 40.7 against
  46.1 ms at T = 4096 at one thread; at two threads on a loaded machine 5.6 against 6.9, 20.0 against 20.9 and
  78 against 86 ms.
- The linear form's state before each chunk, ``S_0 + Σ_{j<c} Δ_j``: a running sum of n adds and a ``stack``
  (36 µs for n = 4 chunks, 243 µs for n = 16) against in-place adds into a preallocated tensor (44 and 261 µs)
  and ``cumsum`` over the chunk axis (96 and 1265 µs); one product of the strictly lower (n, n) matrix of ones
  with the flattened writes was no faster (the kernel 0.92 against 0.90 ms at T = 256, 4.5 against 3.8 ms at
  T = 1024, 18.1 against 18.5 ms at T = 4096) and would add ``2 n d_k d_v`` operations per chunk to the count.
  The masked block is added to the read-out by the product itself (``baddbmm``), not by a separate add.
- The public functions' finiteness check, one sum per input and one for the output: the inputs' sums taken
  before the form (which reads the same data next) instead of after it (when the form's own work has pushed them
  out of the cache): 60 against 130 µs of a 0.7 ms linear call at T = 256, 230 against 490 µs at T = 1024.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import time
from collections.abc import Callable
from types import ModuleType

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


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
REFERENCE_T = [256, 512, 1024, 2048, 4096, 8192, 16384]
REFERENCE_BACKWARD_T = (1024, 4096)
"""Lengths at which forward + backward is compared with the reference as well."""
REFERENCE_DELTA_CHUNKS = (32, 64)
"""Chunk sizes of the reference's delta rule: ours is compared with the faster of them at each T."""
AGREEMENT = {torch.float32: 1e-4, torch.float64: 1e-10}
"""Largest relative error ‖ours − reference‖ / ‖reference‖ accepted before anything is timed."""


def load_reference() -> tuple[ModuleType, ModuleType] | str:
    """flash-linear-attention's pure-torch forms (``fla/ops/{linear_attn,delta_rule}/naive.py``), loaded by file
    path: importing the ``fla`` package itself pulls in Triton. Returns the two modules, or why they are absent."""
    spec = importlib.util.find_spec("fla")  # locates the package without running its __init__
    if spec is None or not spec.submodule_search_locations:
        return "fla-core is not installed (pip install -r benchmarks/requirements.txt)"
    root = pathlib.Path(spec.submodule_search_locations[0]) / "ops"
    modules = []
    for name in ("linear_attn", "delta_rule"):
        path = root / name / "naive.py"
        file_spec = importlib.util.spec_from_file_location(f"fla_naive_{name}", path)
        if not path.exists() or file_spec is None or file_spec.loader is None:
            return f"fla-core has no {path}"
        module = importlib.util.module_from_spec(file_spec)
        try:
            file_spec.loader.exec_module(module)
        except ImportError as err:  # einops missing
            return f"{path} does not import: {err}"
        modules.append(module)
    return modules[0], modules[1]


def rel_error(got: torch.Tensor, want: torch.Tensor) -> float:
    return ((got - want).norm() / want.norm()).item()


def reference_comparison(args: argparse.Namespace, dtype: torch.dtype, device: torch.device) -> None:
    """Ours against flash-linear-attention's pure-torch chunk forms, conventions matched exactly.

    The reference scales q by d_k^-½ inside: ours is called on ``q · d_k^-½`` (the scaling timed with it). Its
    linear form takes (B, T, H, D); its delta rule (B, H, T, D) like ours, and returns its state as (d_k, d_v),
    the transpose of ours. Each form gets its inputs in its own layout, made contiguous before timing. The
    outputs (and the delta rule's final state) must agree within ``AGREEMENT`` before anything is timed."""
    ref = load_reference()
    if isinstance(ref, str):
        print(f"\nreference comparison skipped: {ref}")
        return
    ref_linear, ref_delta = ref
    scale = D ** -0.5
    Ts = [T for T in args.reference_T if T % max(REFERENCE_DELTA_CHUNKS) == 0]
    gen = torch.Generator().manual_seed(1)
    a, b = (torch.randn(N_REF, N_REF, generator=gen, dtype=dtype).to(device) for _ in range(2))
    fns: dict[str, Callable[[], object]] = {"matmul 2048^3": lambda: a @ b}
    errors: dict[str, float] = {}
    for T in Ts:
        q, k, v = inputs(T, dtype, device)
        beta = torch.rand(B, H, T, generator=torch.Generator().manual_seed(2), dtype=dtype).to(device)
        q_bthd, k_bthd, v_bthd = (x.transpose(1, 2).contiguous() for x in (q, k, v))

        def ours_linear(q=q, k=k, v=v) -> torch.Tensor:
            return linear_attention(q * scale, k, v, mode="chunk", chunk_size=CHUNK)

        def theirs_linear(q=q_bthd, k=k_bthd, v=v_bthd) -> torch.Tensor:
            return ref_linear.naive_chunk_linear_attn(q, k, v)

        def ours_delta(q=q, k=k, v=v, beta=beta) -> tuple[torch.Tensor, torch.Tensor]:
            return delta_rule_attention(q * scale, k, v, beta, mode="chunk", chunk_size=CHUNK, return_state=True)

        errors[f"linear|{T}"] = rel_error(ours_linear(), theirs_linear().transpose(1, 2))
        o, S = ours_delta()
        fns |= {f"linear ours|{T}": ours_linear, f"linear reference|{T}": theirs_linear, f"delta ours|{T}": ours_delta}
        for C in REFERENCE_DELTA_CHUNKS:
            o_ref, S_ref = ref_delta.delta_rule_chunkwise(q, k, v, beta, chunk_size=C)
            errors[f"delta C={C}|{T}"] = max(rel_error(o, o_ref), rel_error(S, S_ref.mT))
            fns[f"delta reference C={C}|{T}"] = lambda q=q, k=k, v=v, beta=beta, C=C: \
                ref_delta.delta_rule_chunkwise(q, k, v, beta, chunk_size=C)
        if T in REFERENCE_BACKWARD_T:
            leaves = [x.clone().requires_grad_() for x in (q, k, v, q_bthd, k_bthd, v_bthd, beta)]
            g = torch.randn(B, H, T, D, generator=torch.Generator().manual_seed(3), dtype=dtype).to(device)

            def backward(out: torch.Tensor, wrt: list[torch.Tensor], g: torch.Tensor) -> None:
                torch.autograd.grad(out, wrt, g)

            ql, kl, vl, qr, kr, vr, bl = leaves
            g_bthd = g.transpose(1, 2).contiguous()
            fns |= {
                f"linear ours fwd+bwd|{T}": lambda q=ql, k=kl, v=vl, g=g: backward(ours_linear(q, k, v), [q, k, v], g),
                f"linear reference fwd+bwd|{T}": lambda q=qr, k=kr, v=vr, g=g_bthd:
                    backward(theirs_linear(q, k, v), [q, k, v], g),
                f"delta ours fwd+bwd|{T}": lambda q=ql, k=kl, v=vl, b=bl, g=g:
                    backward(ours_delta(q, k, v, b)[0], [q, k, v, b], g),
            }
            for C in REFERENCE_DELTA_CHUNKS:
                fns[f"delta reference C={C} fwd+bwd|{T}"] = lambda q=ql, k=kl, v=vl, b=bl, g=g, C=C: \
                    backward(ref_delta.delta_rule_chunkwise(q, k, v, b, chunk_size=C)[0], [q, k, v, b], g)
    worst = max(errors.values())
    print(f"\nagainst flash-linear-attention's pure-torch chunk forms (naive.py), B={B} H={H} d={D}, "
          f"{args.dtype}, {torch.get_num_threads()} threads: largest relative error {worst:.1e}")
    if worst > AGREEMENT[dtype]:
        bad = {name: f"{e:.1e}" for name, e in errors.items() if e > AGREEMENT[dtype]}
        print(f"DISAGREE (> {AGREEMENT[dtype]:.0e}), not timed: {bad}")
        return
    # short calls are timed more often (up to 8x at T <= 512): one preempted call weighs less in their median
    counts = {name: args.repeats * min(8, max(1, 4096 // int(name.rsplit("|", 1)[1]))) for name in fns if "|" in name}
    med = interleaved_medians(fns, args.repeats, device, counts, clock=CLOCKS[args.clock])
    peak = 2 * N_REF ** 3 / med["matmul 2048^3"]

    def best_ref(T: int, suffix: str = "") -> tuple[float, int]:
        return min((med[f"delta reference C={C}{suffix}|{T}"], C) for C in REFERENCE_DELTA_CHUNKS)

    print(f"sgemm peak: 2048^3 matmul {med['matmul 2048^3'] * 1e3:.1f} ms = {peak / 1e9:.1f} GFLOP/s")
    print(f"{'ms (ratio = reference / ours)':32s}" + "".join(f"{'T=' + str(T):>10s}" for T in Ts))
    rows: dict[str, Callable[[int], str]] = {
        "linear ours": lambda T: f"{med[f'linear ours|{T}'] * 1e3:10.2f}",
        "linear reference": lambda T: f"{med[f'linear reference|{T}'] * 1e3:10.2f}",
        "linear ratio": lambda T: f"{med[f'linear reference|{T}'] / med[f'linear ours|{T}']:9.2f}x",
        "delta ours": lambda T: f"{med[f'delta ours|{T}'] * 1e3:10.2f}",
        "delta reference (best C)": lambda T: f"{best_ref(T)[0] * 1e3:7.2f}/{best_ref(T)[1]}",
        "delta ratio": lambda T: f"{best_ref(T)[0] / med[f'delta ours|{T}']:9.2f}x",
        "linear ours % of sgemm": lambda T: f"{100 * linear_chunk_flops(T) / med[f'linear ours|{T}'] / peak:9.1f}%",
        "delta ours % of sgemm": lambda T: f"{100 * delta_chunk_flops(T) / med[f'delta ours|{T}'] / peak:9.1f}%",
    }
    for label, cell in rows.items():
        print(f"{label:32s}" + "".join(cell(T) for T in Ts))
    back = [T for T in Ts if T in REFERENCE_BACKWARD_T]
    for T in back:
        lin = med[f"linear reference fwd+bwd|{T}"] / med[f"linear ours fwd+bwd|{T}"]
        dl = best_ref(T, " fwd+bwd")[0] / med[f"delta ours fwd+bwd|{T}"]
        print(f"fwd+bwd ratio at T={T}: linear {lin:.2f}x, delta {dl:.2f}x (reference C={best_ref(T, ' fwd+bwd')[1]})")
    linear = {T: med[f"linear reference|{T}"] / med[f"linear ours|{T}"] for T in Ts}
    delta = {T: best_ref(T)[0] / med[f"delta ours|{T}"] for T in Ts}
    goals = [(f"linear chunk >= 1.0x the reference at every T (worst {min(linear.values()):.2f}x)",
              min(linear.values()) >= 1.0)]
    big = [T for T in Ts if T >= 4096]
    if big:
        goals.append((f"linear chunk >= 1.3x the reference at T >= 4096 (worst {min(linear[T] for T in big):.2f}x)",
                      min(linear[T] for T in big) >= 1.3))
    goals.append((f"delta chunk >= 1.3x the reference's faster chunk size, forward (worst {min(delta.values()):.2f}x)",
                  min(delta.values()) >= 1.3))
    for text, ok in goals:
        print(f"{'MET ' if ok else 'MISS'}  {text}")


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
    cmd += ["--threads", str(torch.get_num_threads())]
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
    parser.add_argument("--threads", type=int, nargs="+", default=None,
                        help="thread counts to run everything at, one after the other (default: torch's)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--reference-T", type=int, nargs="*", default=REFERENCE_T,
                        help="lengths compared with flash-linear-attention's pure-torch forms (multiples of 64)")
    parser.add_argument("--only", choices=["forms", "reference", "profile"],
                        help="run one part: the forms' table (with memory), the reference comparison or the profile")
    parser.add_argument("--profile-T", type=int, nargs="*", default=[256, 1024],
                        help="lengths at which --only profile profiles the linear chunk form")
    parser.add_argument("--clock", choices=["wall", "cpu"],
                        help="wall time, or this process's CPU time (default with --threads 1: robust to other jobs)")
    parser.add_argument("--memory-child", nargs=2, metavar=("FORM", "T"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    device, dtype = torch.device(args.device), getattr(torch, args.dtype)
    if args.memory_child:
        if args.threads:
            torch.set_num_threads(args.threads[0])
        peak_memory_child(args.memory_child[0], int(args.memory_child[1]), dtype, device)
        return
    clock = args.clock
    for threads in args.threads or [torch.get_num_threads()]:
        torch.set_num_threads(threads)
        print(f"\n=== {threads} thread{'s' if threads > 1 else ''}")
        if device.type == "cpu":
            load, cores = os.getloadavg()[0], os.cpu_count() or 1
            print(f"load average {load:.2f} on {cores} cores, {threads} threads" + (
                "" if load < cores or threads == 1 else
                "; above the core count: threads of one product wait for each other (compare --threads 1)"))
        args.clock = clock or ("cpu" if threads == 1 and device.type == "cpu" else "wall")
        print(f"times are {'CPU time of this process' if args.clock == 'cpu' else 'wall time'} per call")
        if args.only == "profile":
            profile(args.profile_T, dtype, device)
            continue
        if args.only != "reference":
            forms_table(args, dtype, device)
        if args.only != "forms":
            reference_comparison(args, dtype, device)
    if device.type == "cpu":
        print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


def profile(Ts: list[int], dtype: torch.dtype, device: torch.device, calls: int = 20) -> None:
    """Where the linear chunk form's time goes: torch.profiler's table of operators over ``calls`` calls."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    for T in Ts:
        q, k, v = inputs(T, dtype, device)
        fn = chunk_form("linear")
        for _ in range(3):
            fn(q, k, v)
        with torch_profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(calls):
                fn(q, k, v)
        print(f"\nlinear chunk, T={T}: {calls} calls, operators by total CPU time")
        print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=18, max_name_column_width=40))


def forms_table(args: argparse.Namespace, dtype: torch.dtype, device: torch.device) -> None:

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
    faults: dict[str, float] = {}
    med = interleaved_medians(fns, args.repeats, device, counts, faults, clock=CLOCKS[args.clock])
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
