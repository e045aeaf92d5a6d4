"""The pedagogy held in place: every exercise is declared once (number, title, hints) next to its checker,
its reference solution is the notebook's `solution` cell (extracted into solutions.json), and every registered
learner answer, with the learner's exact code, is judged as it should be: the wrong ones rejected with a hint
that gives nothing away, the right ones (in-place updates, other dtypes, small samples) accepted.

Each case runs like a learner's notebook: a fresh session `ex`, the setup the check needs from earlier cells,
the answer, then the notebook's own check cell.
"""

from __future__ import annotations

import contextlib
import gettext
import importlib
import io
import json
import re
import tokenize
from pathlib import Path

import learnercopy
import pytest

from pavlovlab.teach import exercise_keys, student
from pavlovlab.teach.exercises import checking, name_errors, registry
from pavlovlab.teach.exercises import session as sessions

ROOT = Path(__file__).resolve().parents[2]
COURSE = ROOT / "course"
PRELUDE = "import math\nimport numpy as np\nimport torch\nimport pavlovlab as pl\n"
BOOKS = registry.books()
MODULES = {b.notebook: b.module for b in BOOKS}
EXERCISES = [(b, e) for b in BOOKS for e in b]
IDS = [f"{b.notebook[:2]}-{e.number}" for b, e in EXERCISES]
SOLUTIONS = student.solution_sources(COURSE)


def _short(module: str) -> str:
    return module.rsplit(".", 1)[1]


BOOK_OF = {_short(b.module): b for b in BOOKS}

SETUP = {  # what the check needs from earlier cells of the notebook
    ('pavlovian_conditioning', 2): "from pavlovlab.conditioning import rescorla_wagner",
    ('pavlovian_conditioning', 3): '''
from pavlovlab.conditioning.learning import rescorla_wagner

def blocked_strength(n_pretrain, n_compound, alpha):
    cs = torch.cat([torch.tensor([[1.0, 0.0]]).repeat(n_pretrain, 1), torch.tensor([[1.0, 1.0]]).repeat(n_compound, 1)])
    return rescorla_wagner(cs, torch.ones(n_pretrain + n_compound), alpha=alpha)[-1, 1].item()
''',
    ('hebbian_memory', 3): '''
from pavlovlab.sampling import random_keys
from pavlovlab.memory.hebbian import crosstalk
g = torch.Generator().manual_seed(0)
''',
    ('linear_attention', 1): "q, k, v = torch.randn(8, 4), torch.randn(8, 4), torch.randn(8, 3)",
    ('linear_attention', 2): "d_k, d_v = 4, 3\nq, k, v = torch.randn(8, d_k), torch.randn(8, d_k), torch.randn(8, d_v)",
    ('capacity_limits', 4): "from pavlovlab.capacity import average, criteria, readouts\n"
                     "from pavlovlab.sampling import random_keys, random_values\n"
                     "from pavlovlab.statistics import fit_slope",
    ('depth_and_width', 2): "from pavlovlab.depth import theory",
    ('depth_and_width', 3): "from pavlovlab.sampling import random_keys",
    ('delta_and_oja', 1): "from pavlovlab.forgetting import drift",
    ('decay_and_unlearning', 3): '''\
from pavlovlab.forgetting import unlearning
from pavlovlab.memory.hebbian import outer_product_memory
keys, values = unlearning.random_associations(16, 64, 64, generator=torch.Generator().manual_seed(0))
S = outer_product_memory(keys, values, torch.ones(16))''',
    ('conditioning_in_trained_models', 1): ("from pavlovlab import statistics\n"
                          "from pavlovlab.phenomena import probes, sequences"),
}

TYPICAL = [  # (module, exercise, what the mistake is, the learner's code): each must be rejected
    ('start_here', 1, "the typical mistake", '''
def match(bell, test):
    return (bell * test).mean()
'''),
    ('pavlovian_conditioning', 1, "the typical mistake", '''
def rw_update(V, x, lam, alpha=0.3, beta=1.0):
    return V + alpha * beta * lam * x       # Hebbian: learns from co-occurrence, not from surprise
'''),
    ('pavlovian_conditioning', 2, "the typical mistake", '''
def blocked_strength(n_pretrain, n_compound, alpha):
    cs = torch.tensor([[1.0, 1.0]]).repeat(n_compound, 1)     # forgot the pretraining phase
    return rescorla_wagner(cs, torch.ones(n_compound), alpha=alpha)[-1, 1].item()
'''),
    ('pavlovian_conditioning', 3, "the typical mistake", '''
def blocking_curve(n_pre, n_compound=30, alpha=0.2):
    return torch.tensor([blocked_strength(int(n), n_compound, alpha) for n in n_pre])

n_pre = torch.tensor([30])                                # one length: no curve, no trend
'''),
    ('hebbian_memory', 1, "the typical mistake", '''
def my_memory(keys, values):
    return keys.T @ values               # key × value: the wall is transposed
'''),
    ('hebbian_memory', 2, "the typical mistake", '''
def my_crosstalk(keys, values, j):
    return (values.T @ keys) @ keys[j]               # forgot to remove the signal of pair j itself
'''),
    ('hebbian_memory', 3, "the typical mistake", '''
d_k, trials = 32, 200
ns = torch.tensor([2, 4, 8, 16, 32, 64, 128])
columns = []
for n in ns.tolist():
    keys = random_keys(trials, n, d=d_k, kind="sphere", generator=g)
    values = torch.randn(trials, n, 16, generator=g)
    S = values.mT @ keys                                   # measured the whole read-out S k_j, signal included
    columns.append((keys @ S.mT).pow(2).mean((-2, -1)))
msq = torch.stack(columns, dim=1)
'''),
    ('linear_attention', 1, "the typical mistake", '''
def my_recurrent(q, k, v):
    S = torch.zeros(v.shape[-1], k.shape[-1], dtype=q.dtype)
    reads = []
    for t in range(q.shape[0]):
        reads.append(S @ q[t])               # read before write: misses the note of step t
        S = S + torch.outer(v[t], k[t])
    return torch.stack(reads)
'''),
    ('linear_attention', 2, "the typical mistake", '''
def my_chunk_carry(q_c, k_c, v_c, S):
    return q_c @ S.T, v_c.T @ k_c      # the new state forgets what was carried in
'''),
    ('linear_attention', 3, "the typical mistake", '''
Ts = [8, 16, 32, 64]                                     # every sequence fits in a single chunk
flops = {"parallel": [], "chunk": []}
for T_ in Ts:
    q_, k_, v_ = (torch.randn(1, T_, 32) for _ in range(3))
    for mode in flops:
        with ex.FlopCounter() as counter:
            pl.linear_attention(q_, k_, v_, mode=mode, chunk_size=64)
        flops[mode].append(counter.flops)
'''),
    ('capacity_limits', 1, "the typical mistake", '''
def fidelity(n, d_k):
    return 1 / torch.sqrt(1 + n / d_k)       # counts the item itself as crosstalk
'''),
    ('capacity_limits', 2, "the typical mistake", '''
def predicted_capacity(d_k, threshold):
    return math.floor(1 + d_k * (1 / threshold - 1))   # forgot to square the threshold
'''),
    ('capacity_limits', 3, "the typical mistake", '''
def capacity(ns, mean_cosine, threshold):
    above = ns[mean_cosine >= threshold]     # any later point above the threshold counts
    return int(above.max()) if len(above) else 0
'''),
    ('capacity_limits', 4, "the typical mistake", '''
def measure_capacity(d_k, trials=100, theta=0.8):
    gen = torch.Generator().manual_seed(d_k)
    keys = random_keys(trials, d_k, d=d_k, kind="sphere", generator=gen)
    values = random_values(trials, d_k, d=d_k, kind="sphere", generator=gen)
    alive, count = torch.ones(trials, dtype=torch.bool), torch.zeros(trials)
    for n in range(1, d_k + 1):
        S = values[:, :n].mT @ keys[:, :n]
        reads = keys[:, :n] @ S.mT
        typical = torch.cosine_similarity(reads, values[:, :n], dim=-1).mean(-1)   # the average item, not the worst
        alive &= typical >= theta
        count += alive
        if not alive.any():
            break
    return count.mean().item()


my_d_ks = [16, 32, 64, 128]
my_capacities = [measure_capacity(d_k) for d_k in my_d_ks]
'''),
    ('depth_and_width', 1, "the typical mistake", '''
def predicted_error(L, H, p):
    return L * p ** H
'''),
    ('depth_and_width', 2, "the typical mistake", '''
def predict_errors():
    return 0.1, 0.2   # a guess
'''),
    ('depth_and_width', 3, "the typical mistake", '''
def depth_curve(n=16, d=16, L=3, trials=200, seed=0):
    g = torch.Generator().manual_seed(seed)
    errors = []
    for _ in range(L):                                         # every layer asked with the TRUE item
        keys = random_keys(trials, n, d=d, kind="sphere", generator=g)
        vals = random_keys(trials, n, d=d, kind="sphere", generator=g)
        perm = torch.rand(trials, n, generator=g).argsort(-1)
        S = vals.gather(1, perm[..., None].expand(-1, -1, d)).mT @ keys
        item = ((keys @ S.mT) @ vals.mT).argmax(-1)
        errors.append((item != perm).float().mean().item())
    return errors
'''),
    ('delta_and_oja', 1, "the typical mistake", '''\
def recovery_time(beta, n_keys=8, seeds=3, period=100):
    stream = drift.redraw_stream(n_keys, 16, 16, steps=4 * period, period=period, batch_shape=(seeds,),
                                 generator=torch.Generator().manual_seed(0))
    memory = pl.AssociativeMemory(16, 16, rule="hebbian", lr=beta, batch_shape=(seeds,))
    cosine = []
    for t in range(stream.steps):
        memory.write(stream.keys[:, t], stream.values[:, t])
        cosine.append(torch.cosine_similarity(memory.read(stream.probes), stream.targets[:, t], dim=-1).mean(-1))
    cosine = torch.stack(cosine, dim=-1)
    waits = [(cosine[:, s:s + period] >= 0.95).float().argmax(-1) for s in stream.drift_times.tolist()]
    return torch.stack(waits).float().mean().item()'''),
    ('delta_and_oja', 2, "the typical mistake", '''\
def delta_write(S, k, v, beta):
    return S + beta * torch.outer(v, k)'''),
    ('delta_and_oja', 3, "the typical mistake", '''\
def unstable_beta():
    return 1.0'''),
    ('delta_and_oja', 4, "the typical mistake", '''\
def oja_fixed_point(C):
    return torch.linalg.eigh(C).eigenvectors[:, 0]'''),
    ('decay_and_unlearning', 1, "the typical mistake", '''\
def measure_half_life(gamma, trials=100, d=64, max_lag=120):
    gen = torch.Generator().manual_seed(0)
    k, v = (torch.nn.functional.normalize(torch.randn(trials, max_lag + 1, d, generator=gen), dim=-1)
            for _ in range(2))
    out = pl.linear_attention(k[:, :1].expand_as(k), k, v, decay=gamma)
    strength = (out * v[:, :1]).sum(-1).mean(0)
    return strength.sum().item()'''),
    ('decay_and_unlearning', 2, "the typical mistake", '''\
def my_half_life(gamma):
    return 1 / (1 - gamma)'''),
    ('decay_and_unlearning', 3, "the typical mistake", '''\
def my_unlearn(S, k):
    return S - torch.outer(S @ k, k)'''),
    ('conditioning_in_trained_models', 2, "the typical mistake", '''
def my_crosstalk(keys):
    """keys (..., n, d_k) unit rows -> (...): per key, the summed squared overlaps with the other keys, \
averaged over keys."""
    G = keys @ keys.mT
    n = keys.shape[-2]
    return G.pow(2).sum((-2, -1)) / n
'''),
    ('conditioning_in_trained_models', 1, "the typical mistake", '''
def blocking_sweep(rule="delta"):
    """Return [(learning rate, mean blocking effect, half-width of its 95 % interval), ...] for the delta memory."""
    results = []
    for lr in [0.1, 0.2, 0.4, 0.6, 0.8]:
        e = statistics.summarize(probes.circuit_effects("blocking", rule="hebbian", lr=lr, n=200)[None])
        results.append((lr, e.mean, e.hi - e.mean))
    return results
'''),
]

# The registered answers of two learner studies, with the learner's exact code: (module, exercise, what it
# is, code, "wrong" or "right", a phrase the verdict must hold). The check cell is the notebook's own.
REGISTERED = [
    # 00: inputs mutated to fool the checker, low precision, a correct in-place answer
    ("start_here", 1, "zeroes both inputs, returns 0", '''
def match(b, t):
    b.zero_(); t.zero_()
    return torch.tensor(0.0)
''', "wrong", "not yet"),
    ("start_here", 1, "50 % too large, in bfloat16", '''
def match(b, t):
    return ((b * t).sum() * 1.5).bfloat16()
''', "wrong", "less precise"),
    ("start_here", 1, "5 % too large, in float16", '''
def match(b, t):
    return ((b * t).sum() * 1.05).half()
''', "wrong", "less precise"),
    ("start_here", 1, "an average, diagnosed", '''
def match(bell, test):
    return (bell * test).mean()
''', "wrong", "an average divides by the number of features"),
    ("start_here", 1, "in place, right", '''
def match(bell, test):
    bell.mul_(test)
    return bell.sum()
''', "right", ""),
    ("start_here", 1, "a loop over the features in Python floats, right", '''
def match(bell, test):
    total = 0.0
    for b, t in zip(bell.tolist(), test.tolist()):
        total += b * t
    return total
''', "right", ""),
    ("start_here", 1, "the products, not added up, diagnosed", '''
def match(bell, test):
    return bell * test
''', "wrong", "one number per feature"),
    # 01
    ("pavlovian_conditioning", 1, "the missing x_i, diagnosed", '''
def rw_update(V, x, lam, alpha=0.3, beta=1.0):
    prediction = (x * V).sum()
    return V + alpha * beta * (lam - prediction)
''', "wrong", "carry its own x_i"),
    ("pavlovian_conditioning", 1, "in place, right", '''
def rw_update(V, x, lam, alpha=0.3, beta=1.0):
    V += alpha * beta * (lam - (x * V).sum()) * x
    return V
''', "right", ""),
    ("pavlovian_conditioning", 1, "a loop over the CSs in float64, right", '''
def rw_update(V, x, lam, alpha=0.3, beta=1.0):
    V, x = V.double(), x.double()
    prediction = sum(x[j] * V[j] for j in range(len(V)))
    return torch.stack([V[i] + alpha * beta * (lam - prediction) * x[i] for i in range(len(V))])
''', "right", ""),
    ("pavlovian_conditioning", 1, "the prediction counts the absent light, diagnosed", '''
def rw_update(V, x, lam, alpha=0.3, beta=1.0):
    return V + alpha * beta * (lam - V.sum()) * x
''', "wrong", "also one that is absent"),
    ("pavlovian_conditioning", 2, "the trials one by one with rw_update's rule, float64, right", '''
def blocked_strength(n_pretrain, n_compound, alpha):
    V = torch.zeros(2, dtype=torch.float64)
    for t in range(n_pretrain + n_compound):
        x = torch.tensor([1.0, 1.0 if t >= n_pretrain else 0.0], dtype=torch.float64)
        V = V + alpha * (1.0 - (x * V).sum()) * x
    return V[1]
''', "right", ""),
    ("pavlovian_conditioning", 2, "the bell's column, diagnosed", '''
def blocked_strength(n_pretrain, n_compound, alpha):
    cs = torch.cat([torch.tensor([[1.0, 0.0]]).repeat(n_pretrain, 1), torch.tensor([[1.0, 1.0]]).repeat(n_compound, 1)])
    return rescorla_wagner(cs, torch.ones(len(cs)), alpha=alpha)[-1, 0].item()
''', "wrong", "the bell's strength"),
    ("pavlovian_conditioning", 3, "a literal float64 loop over a list of lengths, right", '''
def blocking_curve(n_pre, n_compound=30, alpha=0.2):
    out = []
    for n in n_pre:
        V = torch.zeros(2, dtype=torch.float64)
        for t in range(n + n_compound):
            x = torch.tensor([1.0, float(t >= n)], dtype=torch.float64)
            V += alpha * (1.0 - (x * V).sum()) * x
        out.append(V[1].item())
    return out

n_pre = [0, 2, 5, 10, 20, 40]
''', "right", ""),
    ("pavlovian_conditioning", 3, "a curve of shape (1, 11)", '''
def blocking_curve(n_pre, n_compound=30, alpha=0.2):
    return torch.tensor([[blocked_strength(int(n), n_compound, alpha) for n in n_pre]])

n_pre = torch.arange(0, 31, 3)
''', "wrong", "the same shape as n_pre"),
    ("pavlovian_conditioning", 3, "the package's closed form returned as the measurement", '''
from pavlovlab.conditioning.learning import blocking_theory

def blocking_curve(n_pre, n_compound=30, alpha=0.2):
    return blocking_theory(torch.as_tensor(n_pre), n_compound=n_compound, alpha=alpha)

n_pre = torch.arange(0, 31, 3)
''', "wrong", "another setting"),
    ("pavlovian_conditioning", 3, "the closed form by hand, length by length", '''
def blocking_curve(n_pre, n_compound=30, alpha=0.2):
    return [0.8 ** int(n) * (1 - 0.6 ** 30) / 2 for n in n_pre]

n_pre = torch.arange(0, 31, 3)
''', "wrong", "where the closed form with one α is off"),
    # 02
    ("hebbian_memory", 1, "a list", '''
def my_memory(keys, values):
    return (values.T @ keys).tolist()
''', "wrong", "got a list"),
    ("hebbian_memory", 1, "doubles values in place", '''
def my_memory(keys, values):
    values.mul_(2)
    return values.T @ keys
''', "wrong", "values are off"),
    ("hebbian_memory", 2, "right for unit keys only, diagnosed", '''
def my_crosstalk(keys, values, j):
    S = values.T @ keys
    return S @ keys[j] - values[j]
''', "wrong", "k_j·k_j is not 1"),
    ("hebbian_memory", 3, "variance scaled by (n − 1)/n", '''
d_k, trials = 32, 200
ns = torch.tensor([2, 4, 8, 16, 32, 64, 128])
columns = []
for n in ns.tolist():
    keys = random_keys(trials, n, d=d_k, kind="sphere", generator=g)
    values = torch.randn(trials, n, 16, generator=g)
    columns.append(crosstalk(keys, values).pow(2).mean((-2, -1)) * (n - 1) / n)
msq = torch.stack(columns, dim=1)
''', "wrong", "at n = 2"),
    ("hebbian_memory", 3, "the closed form as msq", '''
d_k, trials = 32, 200
ns = torch.tensor([2, 4, 8, 16, 32, 64, 128])
msq = ((ns - 1) / d_k).double().repeat(trials, 1)
''', "wrong", "not a formula"),
    ("hebbian_memory", 1, "one matrix product by einsum, right", '''
def my_memory(keys, values):
    return torch.einsum("nv,nk->vk", values, keys)
''', "right", ""),
    ("hebbian_memory", 1, "the average of the notes, diagnosed", '''
def my_memory(keys, values):
    return values.T @ keys / len(keys)
''', "wrong", "average of the notes"),
    ("hebbian_memory", 2, "a loop over the other pairs, in place, right", '''
def my_crosstalk(keys, values, j):
    c = torch.zeros(values.shape[1], dtype=values.dtype)
    for i in range(len(keys)):
        if i != j:
            c += values[i] * (keys[i] @ keys[j])
    return c
''', "right", ""),
    ("hebbian_memory", 2, "the whole read-out, diagnosed", '''
def my_crosstalk(keys, values, j):
    return (values.T @ keys) @ keys[j]
''', "wrong", "part of its own crosstalk"),
    ("hebbian_memory", 3, "one memory at a time, its own crosstalk, float64, right", '''
d_k, trials = 32, 150
ns = torch.tensor([3, 6, 12, 24, 48, 96])
rows = []
for t in range(trials):
    row = []
    for n in ns.tolist():
        keys = torch.nn.functional.normalize(torch.randn(n, d_k, generator=g, dtype=torch.float64), dim=-1)
        values = torch.randn(n, 8, generator=g, dtype=torch.float64)
        row.append(((keys @ (values.T @ keys).T) - values).pow(2).mean())
    rows.append(torch.stack(row))
msq = torch.stack(rows)
''', "right", ""),
    ("hebbian_memory", 3, "keys not of length 1, diagnosed", '''
d_k, trials = 32, 200
ns = torch.tensor([2, 4, 8, 16, 32, 64, 128])
columns = []
for n in ns.tolist():
    keys = torch.randn(trials, n, d_k, generator=g)
    values = torch.randn(trials, n, 16, generator=g)
    columns.append(crosstalk(keys, values).pow(2).mean((-2, -1)))
msq = torch.stack(columns, dim=1)
''', "wrong", "longer than 1"),
    # 03
    ("linear_attention", 1, "a float32 memory for float64 inputs", '''
def my_recurrent(q, k, v):
    S = torch.zeros(v.shape[-1], k.shape[-1], dtype=torch.float32)
    reads = []
    for t in range(q.shape[0]):
        S += torch.outer(v[t], k[t])
        reads.append(S @ q[t].float())
    return torch.stack(reads)
''', "wrong", "less precise"),
    ("linear_attention", 1, "normalises k in place", '''
def my_recurrent(q, k, v):
    k.div_(k.norm(dim=-1, keepdim=True))
    S = torch.zeros(v.shape[-1], k.shape[-1], dtype=q.dtype)
    reads = []
    for t in range(q.shape[0]):
        S = S + torch.outer(v[t], k[t])
        reads.append(S @ q[t])
    return torch.stack(reads)
''', "wrong", "values are off"),
    ("linear_attention", 1, "a result on the meta device", '''
def my_recurrent(q, k, v):
    return torch.empty(q.shape[0], v.shape[-1], dtype=q.dtype, device="meta")
''', "wrong", "meta"),
    ("linear_attention", 3, "one counter for every call, diagnosed", '''
Ts = [128, 256, 512, 1024, 2048]
flops = {"parallel": [], "chunk": []}
with ex.FlopCounter() as counter:
    for T_ in Ts:
        q_, k_, v_ = (torch.randn(1, T_, 32) for _ in range(3))
        for mode in flops:
            pl.linear_attention(q_, k_, v_, mode=mode, chunk_size=64)
            flops[mode].append(counter.flops)
''', "wrong", "one counter keep adding up"),
    ("linear_attention", 3, "a length of 0", '''
Ts = [0, 128, 256, 1024]
flops = {"parallel": [1, 2, 3, 4], "chunk": [1, 2, 3, 4]}
''', "wrong", "1 or more"),
    ("linear_attention", 1, "the parallel form, right", '''
def my_recurrent(q, k, v):
    return (q @ k.T).tril() @ v
''', "right", ""),
    ("linear_attention", 1, "float64 throughout, written in place, right", '''
def my_recurrent(q, k, v):
    S = torch.zeros(v.shape[-1], k.shape[-1], dtype=torch.float64)
    out = torch.empty(q.shape[0], v.shape[-1], dtype=torch.float64)
    for t in range(q.shape[0]):
        S.add_(torch.outer(v[t], k[t]).double())
        out[t] = S @ q[t].double()
    return out
''', "right", ""),
    ("linear_attention", 1, "each note replaces the wall, diagnosed", '''
def my_recurrent(q, k, v):
    reads = []
    for t in range(q.shape[0]):
        S = torch.outer(v[t], k[t])
        reads.append(S @ q[t])
    return torch.stack(reads)
''', "wrong", "replace the wall"),
    ("linear_attention", 2, "loops, a list for the pair, right", '''
def my_chunk_carry(q_c, k_c, v_c, S):
    S_next = S.clone()
    for k_, v_ in zip(k_c, v_c):
        S_next += torch.outer(v_, k_)
    return [torch.stack([S @ q_ for q_ in q_c]), S_next]
''', "right", ""),
    ("linear_attention", 2, "reads the state after the chunk, diagnosed", '''
def my_chunk_carry(q_c, k_c, v_c, S):
    S_next = S + v_c.T @ k_c
    return q_c @ S_next.T, S_next
''', "wrong", "written before the chunk"),
    ("linear_attention", 2, "S not transposed, diagnosed", '''
def my_chunk_carry(q_c, k_c, v_c, S):
    return q_c @ S, S + v_c.T @ k_c
''', "wrong", "what must S become"),
    ("linear_attention", 3, "counted on the meta device with count_flops, right", '''
Ts = [256, 512, 1024, 4096]
flops = {"parallel": [], "chunk": []}
for T_ in Ts:
    x = torch.empty(1, T_, 32, device="meta")
    for mode in flops:
        flops[mode].append(ex.count_flops(pl.linear_attention, x, x, x, mode=mode, chunk_size=64))
''', "right", ""),
    ("linear_attention", 3, "the section's formulas returned as counts", '''
Ts = [128, 256, 512, 1024, 2048]
flops = {"parallel": [2 * T**2 * 64 for T in Ts], "chunk": [2 * T * (64 * 64 + 2 * 32 * 32) for T in Ts]}
''', "wrong", "counted on the calls themselves"),
    # 04
    ("capacity_limits", 4, "off by one: counts the failing write", '''
def measure_capacity(d_k, trials=100, theta=0.8):
    gen = torch.Generator().manual_seed(d_k)
    keys = random_keys(trials, d_k, d=d_k, kind="sphere", generator=gen)
    values = random_values(trials, d_k, d=d_k, kind="sphere", generator=gen)
    alive, count = torch.ones(trials, dtype=torch.bool), torch.zeros(trials)
    for n in range(1, d_k + 1):
        S = values[:, :n].mT @ keys[:, :n]
        reads = keys[:, :n] @ S.mT
        worst = torch.cosine_similarity(reads, values[:, :n], dim=-1).amin(-1)
        count += alive                                   # counted before the write is judged
        alive &= worst >= theta
        if not alive.any():
            break
    return count.mean().item()


my_d_ks = [16, 32, 64, 128]
my_capacities = [measure_capacity(d_k) for d_k in my_d_ks]
''', "wrong", "above what criterion (a) gives"),
    ("capacity_limits", 1, "a power instead of a square root, right", '''
def fidelity(n, d_k):
    return (1 + (n - 1) / d_k) ** -0.5
''', "right", ""),
    ("capacity_limits", 1, "no square root, diagnosed", '''
def fidelity(n, d_k):
    return 1 / (1 + (n - 1) / d_k)
''', "wrong", "falls too fast"),
    ("capacity_limits", 2, "a search along n, right", '''
def predicted_capacity(d_k, threshold):
    n = 1
    while 1 / math.sqrt(1 + n / d_k) >= threshold:
        n += 1
    return n
''', "right", ""),
    ("capacity_limits", 2, "rounded to the nearest, diagnosed", '''
def predicted_capacity(d_k, threshold):
    return round(1 + d_k * (1 / threshold**2 - 1))
''', "wrong", "nearest whole number"),
    ("capacity_limits", 3, "vectorised, right", '''
def capacity(ns, mean_cosine, threshold):
    fails = (mean_cosine < threshold).nonzero()
    if len(fails) == 0:
        return int(ns[-1])
    i = int(fails[0])
    return int(ns[i - 1]) if i > 0 else 0
''', "right", ""),
    ("capacity_limits", 3, "a position in the grid, diagnosed", '''
def capacity(ns, mean_cosine, threshold):
    for i, c in enumerate(mean_cosine.tolist()):
        if c < threshold:
            return i
    return len(ns)
''', "wrong", "ns[i], not i"),
    ("capacity_limits", 4, "one trial at a time, float64, right", '''
def measure_capacity(d_k, trials=100, theta=0.8):
    gen = torch.Generator().manual_seed(d_k + 7)
    counts = []
    for _ in range(trials):
        K = torch.nn.functional.normalize(torch.randn(d_k, d_k, generator=gen, dtype=torch.float64), dim=-1)
        V = torch.nn.functional.normalize(torch.randn(d_k, d_k, generator=gen, dtype=torch.float64), dim=-1)
        n = 0
        while n < d_k:
            S = V[:n + 1].T @ K[:n + 1]
            if torch.cosine_similarity(K[:n + 1] @ S.T, V[:n + 1], dim=-1).min() < theta:
                break
            n += 1
        counts.append(n)
    return sum(counts) / len(counts)


my_d_ks = [8, 16, 32, 64]
my_capacities = [measure_capacity(d) for d in my_d_ks]
''', "right", ""),
    ("capacity_limits", 4, "the average-case formula returned as the measurement", '''
def measure_capacity(d_k, trials=100, theta=0.8):
    return math.floor(1 + d_k * (1 / theta**2 - 1))


my_d_ks = [16, 32, 64, 128]
my_capacities = [measure_capacity(d) for d in my_d_ks]
''', "wrong", "average-case formula"),
    ("capacity_limits", 4, "the package's numbers behind a lookup", '''
my_d_ks = [16, 32, 64, 128]
my_capacities = [5.4, 9.8, 20.4, 42.0]
def measure_capacity(d_k, trials=100, theta=0.8):
    return dict(zip(my_d_ks, my_capacities))[d_k]
''', "wrong", "another setting"),
    # 05
    ("depth_and_width", 1, "a loop over heads and hops, right", '''
def predicted_error(L, H, p):
    hop_fails = 1.0
    for _ in range(H):
        hop_fails *= p
    survives = 1.0
    for _ in range(L):
        survives *= 1 - hop_fails
    return 1 - survives
''', "right", ""),
    ("depth_and_width", 1, "the small-error approximation, diagnosed", '''
def predicted_error(L, H, p):
    return min(1.0, L * p ** H)
''', "wrong", "small-error approximation"),
    ("depth_and_width", 1, "the chance of getting through, diagnosed", '''
def predicted_error(L, H, p):
    return (1 - p ** H) ** L
''', "wrong", "gets through every hop"),
    ("depth_and_width", 2, "the right letter, guessed", '''
def predict_errors():
    return "B"
''', "wrong", "not yet"),
    ("depth_and_width", 2, "a reasoned estimate with the right winner, right", '''
def predict_errors():
    return 0.05, 0.012      # one overloaded hop against three light ones
''', "right", ""),
    ("depth_and_width", 2, "a simulation instead of the theory, right", '''
from pavlovlab.depth.chain import chain_error
def predict_errors():
    g = torch.Generator().manual_seed(3)
    err_A = chain_error(1, 2, 24, 16, trials=200, generator=g).error
    return err_A, chain_error(3, 1, 24, 32, trials=200, generator=g).error
''', "right", ""),
    ("depth_and_width", 2, "one hop of B only, diagnosed", '''
def predict_errors():
    return theory.stack_error_theory(1, 2, 24, 16), theory.hop_error_theory(24, 32)
''', "wrong", "B's chain makes 3 hops"),
    ("depth_and_width", 2, "A and B swapped, diagnosed", '''
def predict_errors():
    err_A = theory.stack_error_theory(1, 2, 24, 16)
    err_B = theory.stack_error_theory(3, 1, 24, 32)
    return err_B, err_A
''', "wrong", "fits the other architecture"),
    ("depth_and_width", 3, "float64, einsum and a tensor result, right", '''
def depth_curve(n=16, d=16, L=3, trials=200, seed=0):
    g = torch.Generator().manual_seed(seed)
    rows = torch.arange(trials)[:, None]
    item = torch.arange(n).repeat(trials, 1)
    truth, errors = item.clone(), []
    for _ in range(L):
        keys = torch.nn.functional.normalize(torch.randn(trials, n, d, generator=g, dtype=torch.float64), dim=-1)
        vals = torch.nn.functional.normalize(torch.randn(trials, n, d, generator=g, dtype=torch.float64), dim=-1)
        perm = torch.stack([torch.randperm(n, generator=g) for _ in range(trials)])
        S = torch.einsum("tiv,tik->tvk", vals[rows, perm], keys)
        r = torch.einsum("tvk,tck->tcv", S, keys[rows, item])
        item = torch.einsum("tcv,tmv->tcm", r, vals).argmax(-1)
        truth = perm[rows, truth]
        errors.append((item != truth).double().mean())
    return torch.stack(errors)
''', "right", ""),
    ("depth_and_width", 3, "a running total of the errors, diagnosed", '''
def depth_curve(n=16, d=16, L=3, trials=200, seed=0):
    g = torch.Generator().manual_seed(seed)
    item = torch.arange(n).repeat(trials, 1)
    truth, errors, total = item.clone(), [], 0.0
    for _ in range(L):
        keys = random_keys(trials, n, d=d, kind="sphere", generator=g)
        vals = random_keys(trials, n, d=d, kind="sphere", generator=g)
        perm = torch.rand(trials, n, generator=g).argsort(-1)
        S = vals.gather(1, perm[..., None].expand(-1, -1, d)).mT @ keys
        item = ((keys.gather(1, item[..., None].expand(-1, -1, d)) @ S.mT) @ vals.mT).argmax(-1)
        truth = perm.gather(1, truth)
        total += (item != truth).float().mean().item()
        errors.append(total)
    return errors
''', "wrong", "counted once"),
    ("depth_and_width", 3, "the theory returned as the measurement", '''
depth_curve = lambda: (e for e in ex.depth_theory())
''', "wrong", "n, d, L, trials and seed"),
    ("depth_and_width", 3, "the theory, with the stub's signature", '''
def depth_curve(n=16, d=16, L=3, trials=200, seed=0):
    return list(ex.depth_theory())
''', "wrong", "another setting"),
    # 06
    ("delta_and_oja", 1, "threshold 0.6 instead of 0.95", '''
def recovery_time(beta, n_keys=8, seeds=3, period=100):
    stream = drift.redraw_stream(n_keys, 16, 16, steps=4 * period, period=period, batch_shape=(seeds,),
                                 generator=torch.Generator().manual_seed(0))
    memory = pl.AssociativeMemory(16, 16, rule="delta", lr=beta, batch_shape=(seeds,))
    cosine = []
    for t in range(stream.steps):
        memory.write(stream.keys[:, t], stream.values[:, t])
        cosine.append(torch.cosine_similarity(memory.read(stream.probes), stream.targets[:, t], dim=-1).mean(-1))
    cosine = torch.stack(cosine, dim=-1)
    waits = []
    for start in stream.drift_times.tolist():
        back = cosine[:, start:start + period] >= 0.6
        waits.append(torch.where(back.any(-1), back.float().argmax(-1), torch.inf))
    return torch.stack(waits).mean().item()
''', "wrong", "too soon"),
    ("delta_and_oja", 1, "the count of writes per key returned as the measurement", '''
def recovery_time(beta, n_keys=8, seeds=3, period=100):
    return float(n_keys * ex.writes_to_recover(beta))
''', "wrong", "another setting"),
    ("delta_and_oja", 1, "a literal float64 loop over a stream of its own, right", '''
def recovery_time(beta, n_keys=8, seeds=4, period=120):
    gen = torch.Generator().manual_seed(5)
    K = torch.linalg.qr(torch.randn(seeds, 16, 16, generator=gen, dtype=torch.float64))[0][..., :n_keys].mT
    S, waits = torch.zeros(seeds, 16, 16, dtype=torch.float64), []
    for regime in range(4):
        V = torch.nn.functional.normalize(torch.randn(seeds, n_keys, 16, generator=gen, dtype=torch.float64), dim=-1)
        found = torch.full((seeds,), math.inf, dtype=torch.float64)
        for t in range(period):
            i = (3 * t + regime) % n_keys
            S = S + beta * (V[:, i] - (S @ K[:, i, :, None])[..., 0])[..., :, None] * K[:, i, None, :]
            cos = torch.nn.functional.cosine_similarity(K @ S.mT, V, dim=-1).mean(-1)
            found[torch.isinf(found) & (cos >= 0.95)] = float(t)
        if regime:
            waits.append(found)
    return torch.stack(waits).mean().item()
''', "right", ""),
    ("delta_and_oja", 2, "in place, right", '''
def delta_write(S, k, v, beta):
    S += beta * torch.outer(v - S @ k, k)
    return S
''', "right", ""),
    ("delta_and_oja", 2, "in place with add_, right", '''
def delta_write(S, k, v, beta):
    error = v.sub_(S @ k)
    return S.add_(beta * torch.outer(error, k))
''', "right", ""),
    ("delta_and_oja", 2, "normalised by k·k, diagnosed", '''
def delta_write(S, k, v, beta):
    return S + beta * torch.outer(v - S @ k, k) / (k @ k)
''', "wrong", "keys of length 1, not for this one"),
    ("delta_and_oja", 2, "overwrites v with the prediction, returns a copy", '''
def delta_write(S, k, v, beta):
    v.copy_(S @ k)
    return S.clone()
''', "wrong", "values are off"),
    ("delta_and_oja", 2, "a float64 loop over the entries, right", '''
def delta_write(S, k, v, beta):
    new = S.clone().double()
    for a in range(S.shape[0]):
        surprise = v[a] - sum(S[a, b] * k[b] for b in range(S.shape[1]))
        for b in range(S.shape[1]):
            new[a, b] += beta * surprise * k[b]
    return new
''', "right", ""),
    ("delta_and_oja", 2, "a list, diagnosed", '''
def delta_write(S, k, v, beta):
    return (S + beta * torch.outer(v - S @ k, k)).tolist()
''', "wrong", "as a Python list"),
    ("delta_and_oja", 2, "the transpose, diagnosed", '''
def delta_write(S, k, v, beta):
    return (S + beta * torch.outer(v - S @ k, k)).T
''', "wrong", "the other way round"),
    ("delta_and_oja", 2, "the error the wrong way round, diagnosed", '''
def delta_write(S, k, v, beta):
    return S + beta * torch.outer(S @ k - v, k)
''', "wrong", "which way round is the surprise"),
    ("delta_and_oja", 3, "a tensor from a function, right", '''
def unstable_beta():
    return torch.tensor(2.0, dtype=torch.float64)
''', "right", ""),
    ("delta_and_oja", 3, "β = 1, the fastest, diagnosed", '''
def unstable_beta():
    return 1.0
''', "wrong", "removes the whole error"),
    ("delta_and_oja", 3, "β = 3, beyond the edge", '''
def unstable_beta():
    return 3
''', "wrong", "not where the delta rule starts to diverge"),
    ("delta_and_oja", 4, "power iteration with a flipped sign, right", '''
def oja_fixed_point(C):
    w = torch.ones(C.shape[0], dtype=C.dtype)
    for _ in range(2000):
        w = C @ w
        w = w / w.norm()
    return -w
''', "right", ""),
    ("delta_and_oja", 4, "the smallest eigenvector, diagnosed", '''
def oja_fixed_point(C):
    return torch.linalg.eigh(C).eigenvectors[:, 0]
''', "wrong", "smallest eigenvalue"),
    ("delta_and_oja", 4, "a row of the eigenvector matrix, diagnosed", '''
def oja_fixed_point(C):
    return torch.linalg.eigh(C).eigenvectors[-1]
''', "wrong", "a row of the eigenvector matrix"),
    # 07
    ("decay_and_unlearning", 1, "the closed form returned directly", '''
def measure_half_life(gamma, trials=100, d=64, max_lag=120):
    return float(np.log(2) / -np.log(gamma))
''', "wrong", "another setting"),
    ("decay_and_unlearning", 1, "the effective window returned as the measurement", '''
def measure_half_life(gamma, trials=100, d=64, max_lag=120):
    return 1 / (1 - gamma)
''', "wrong", "too late"),
    ("decay_and_unlearning", 1, "a literal loop in float64, first whole lag below one half, right", '''
def measure_half_life(gamma, trials=150, d=48, max_lag=120):
    gen = torch.Generator().manual_seed(3)
    k = torch.nn.functional.normalize(torch.randn(trials, max_lag + 1, d, generator=gen, dtype=torch.float64), dim=-1)
    v = torch.nn.functional.normalize(torch.randn(trials, max_lag + 1, d, generator=gen, dtype=torch.float64), dim=-1)
    S = torch.zeros(trials, d, d, dtype=torch.float64)
    for lag in range(max_lag + 1):
        S = gamma * S + v[:, lag, :, None] * k[:, lag, None, :]
        if ((S @ k[:, 0, :, None])[..., 0] * v[:, 0]).sum(-1).mean() < 0.5:
            return lag
    return math.inf
''', "right", ""),
    ("decay_and_unlearning", 2, "math.log, right", '''
def my_half_life(gamma):
    return math.log(2) / -math.log(gamma)
''', "right", ""),
    ("decay_and_unlearning", 2, "torch logs of one half, right", '''
def my_half_life(gamma):
    return torch.log(torch.tensor(0.5, dtype=torch.float64)) / torch.log(torch.tensor(gamma, dtype=torch.float64))
''', "right", ""),
    ("decay_and_unlearning", 2, "the approximation for γ near 1, diagnosed", '''
def my_half_life(gamma):
    return 0.69 / (1 - gamma)
''', "wrong", "approximation for γ close to 1"),
    ("decay_and_unlearning", 2, "a negative half-life, diagnosed", '''
def my_half_life(gamma):
    return math.log(2) / math.log(gamma)
''', "wrong", "negative"),
    ("decay_and_unlearning", 2, "the effective window, diagnosed", '''
def my_half_life(gamma):
    return 1 / (1 - gamma)
''', "wrong", "effective window"),
    ("decay_and_unlearning", 3, "in place, right", '''
def my_unlearn(S, k):
    S -= (S @ k)[:, None] * k[None, :] / k.dot(k)
    return S
''', "right", ""),
    ("decay_and_unlearning", 3, "divides by the key's length once, diagnosed", '''
def my_unlearn(S, k):
    return S - torch.outer(S @ k, k) / k.norm()
''', "wrong", "divides by the key's length once"),
    ("decay_and_unlearning", 3, "forgets the key's length, diagnosed", '''
def my_unlearn(S, k):
    return S - torch.outer(S @ k, k)
''', "wrong", "right for a key of length 1"),
    ("decay_and_unlearning", 3, "zeroes the whole memory in place", '''
def my_unlearn(S, k):
    S.zero_()
    return S
''', "wrong", "values are off"),
    # 08
    ("conditioning_in_trained_models", 1, "Rescorla–Wagner's prediction returned as the measurement", '''
def blocking_sweep(rule="delta"):
    return [(lr, sequences.rw_effect("blocking", lr=lr), 0.01) for lr in [0.1, 0.2, 0.4, 0.6, 0.8]]
''', "wrong", "return a prediction"),
    ("conditioning_in_trained_models", 1, "numpy rates, its own mean and 1.96 sd/√n in float64, right", '''
def blocking_sweep(rule="delta"):
    rows = []
    for lr in np.linspace(0.1, 1.0, 4):
        x = probes.circuit_effects("blocking", rule=rule, lr=float(lr), n=400, seed=5).double()
        rows.append([float(lr), x.mean(), 1.96 * x.std() / math.sqrt(len(x))])
    return rows
''', "right", ""),
    ("conditioning_in_trained_models", 1, "20 sequences per rate", '''
def blocking_sweep(rule="delta"):
    results = []
    for lr in [0.1, 0.2, 0.4, 0.8]:
        e = statistics.summarize(probes.circuit_effects("blocking", rule=rule, lr=lr, n=20)[None])
        results.append((lr, e.mean, e.hi - e.mean))
    return results
''', "wrong", "how many did you use"),
    ("conditioning_in_trained_models", 1, "the textbook's additive compound", '''
def blocking_sweep(rule="delta"):
    results = []
    for lr in [0.1, 0.2, 0.4, 0.6, 0.8]:
        e = statistics.summarize(probes.circuit_effects("blocking", rule=rule, lr=lr, n=200, compound="sum")[None])
        results.append((lr, e.mean, e.hi - e.mean))
    return results
''', "wrong", "additive compound"),
    ("conditioning_in_trained_models", 1, "the closed form at small rates only", '''
def blocking_sweep(rule="delta"):
    return [(lr, sequences.rw_effect("blocking", lr=lr), 0.04) for lr in [0.02, 0.04, 0.06, 0.08]]
''', "wrong", "where is blocking large"),
    ("conditioning_in_trained_models", 2, "a literal loop over pairs, right", '''
def my_crosstalk(keys):
    n = keys.shape[-2]
    total = torch.zeros(keys.shape[:-2], dtype=keys.dtype)
    for j in range(n):
        for i in range(n):
            if i != j:
                total = total + (keys[..., i, :] * keys[..., j, :]).sum(-1) ** 2
    return total / n
''', "right", ""),
    ("conditioning_in_trained_models", 2, "einsum with a mask, right", '''
def my_crosstalk(keys):
    G = torch.einsum("...id,...jd->...ij", keys, keys)
    off = ~torch.eye(keys.shape[-2], dtype=torch.bool)
    return (G.pow(2) * off).sum((-2, -1)) / keys.shape[-2]
''', "right", ""),
    ("conditioning_in_trained_models", 2, "averaged over pairs, not per key", '''
def my_crosstalk(keys):
    G = keys @ keys.mT
    n = keys.shape[-2]
    return (G.pow(2).sum((-2, -1)) - G.diagonal(dim1=-2, dim2=-1).pow(2).sum(-1)) / (n * (n - 1))
''', "wrong", "average over pairs of keys"),
    ("conditioning_in_trained_models", 2, "signed overlaps, not squared", '''
def my_crosstalk(keys):
    G = keys @ keys.mT
    return (G.sum((-2, -1)) - G.diagonal(dim1=-2, dim2=-1).sum(-1)) / keys.shape[-2]
''', "wrong", "whatever its sign"),
]

SLOW = {("hebbian_memory", 3), ("linear_attention", 3), ("capacity_limits", 4), ("depth_and_width", 3),
        ("delta_and_oja", 1), ("decay_and_unlearning", 1), ("conditioning_in_trained_models", 1)}
"""Design exercises whose check runs the learner's measurement (several seconds each)."""


def _marks(module: str, number: int) -> list:
    return [pytest.mark.slow] if (module, number) in SLOW else []


def _cells(notebook: str) -> list[dict]:
    return json.loads((COURSE / f"{notebook}.ipynb").read_text(encoding="utf-8"))["cells"]


def _src(cell: dict) -> str:
    s = cell["source"]
    return "".join(s) if isinstance(s, list) else s


def check_cell(notebook: str, number: int) -> str:
    """The notebook's check cell of exercise ``number``: the first code cell after its solution cell."""
    cells = [c for c in _cells(notebook) if c["cell_type"] == "code"]
    for i, c in enumerate(cells):
        if _src(c).strip("\n") == SOLUTIONS[notebook][str(number)]:
            return _src(cells[i + 1]).strip("\n")
    raise AssertionError(f"{notebook}: no solution cell for exercise {number}")


def run(module: str, number: int, answer: str, fresh: bool = True) -> str:
    """A learner's run in a fresh namespace: setup, the answer, the notebook's check cell; what it printed.
    ``ex`` is the checker module, as the notebook's set-up makes it; ``fresh``: in a new session (a new kernel),
    else in the session of the run before."""
    book = BOOK_OF[module]
    if fresh:
        book.session()
    ns: dict = {}
    exec(PRELUDE, ns)
    ns["ex"] = importlib.import_module(book.module)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(SETUP.get((module, number), ""), ns)
        exec(answer, ns)
        exec(check_cell(book.notebook, number), ns)
    return out.getvalue()


def _tokens(code: str) -> list[str]:
    toks = []
    try:
        for t in tokenize.generate_tokens(io.StringIO(code).readline):
            if t.type in (tokenize.NAME, tokenize.OP, tokenize.NUMBER, tokenize.STRING):
                toks.append(t.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        toks = re.findall(r"\w+|[^\w\s]", code)
    return toks


_TRIVIAL = {"def", "return", "import", "from", "for", "in", "if", "else", "print", "(", ")", ":", ",", "=",
            "[", "]", "None", "True", "False", "."}


def _key_expressions(solution: str, stub: str) -> list[list[str]]:
    """The solution's lines that the stub does not share, as token lists with enough substance to be an
    answer (at least 4 tokens that are not keywords or punctuation)."""
    stub_lines = {re.sub(r"\s+", "", ln.split("#", 1)[0]) for ln in stub.splitlines()}
    keys = []
    for line in solution.splitlines():
        code = line.split("#", 1)[0].strip()
        if not code or re.sub(r"\s+", "", code) in stub_lines or code.startswith(("def ", "import ", "from ")):
            continue
        toks = _tokens(code)
        if toks and toks[0] == "return":
            toks = toks[1:]
        if sum(t not in _TRIVIAL for t in toks) >= 4:
            keys.append(toks)
    return keys


def _contains(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return any(haystack[i:i + n] == needle for i in range(len(haystack) - n + 1))


def _gives_nothing_away(out: str, module: str, number: int, wrong: str) -> None:
    notebook = BOOK_OF[module].notebook
    toks = _tokens(out)
    for key in _key_expressions(SOLUTIONS[notebook][str(number)], wrong):
        assert not _contains(toks, key), f"the first ❌ contains the solution's {' '.join(key)!r}:\n{out}"


# ------------------------------------------------------------------------------------ one source
def test_solutions_json_is_current():
    """solutions.json, which ex.solution(n) reads, is what `make student` extracts from the notebooks now."""
    assert registry.SOLUTIONS.read_text(encoding="utf-8") == student.solutions_json(COURSE), (
        "pavlovlab/teach/exercises/solutions.json is out of date: run `make student` and commit it")


def test_every_exercise_has_one_stub_one_solution_and_one_check_cell():
    for book in BOOKS:
        cells = [c for c in _cells(book.notebook) if c["cell_type"] == "code"]
        stubs = sorted(key[0] for c in cells if (key := exercise_keys.cell_key(c)) and key[1] == "stub")
        assert stubs == [e.number for e in book], f"{book.notebook}: stubs {stubs}, declared {[e.number for e in book]}"
        assert sorted(SOLUTIONS[book.notebook]) == [str(e.number) for e in book]
        for e in book:
            assert check_cell(book.notebook, e.number).startswith(f"ex.{e.checker}("), (book.notebook, e.number)


def test_every_notebook_has_an_implement_and_a_design_exercise():
    kinds: dict[str, set[str]] = {}
    for book, e in EXERCISES:
        kinds.setdefault(book.notebook, set()).add(e.kind)
    for nb in sorted(p.stem for p in COURSE.glob("0[1-9]_*.ipynb")):
        assert kinds.get(nb, set()) >= {"implement", "design"}, f"{nb}: exercise kinds {kinds.get(nb)}"


def test_a_solution_cell_without_a_key_is_refused(tmp_path):
    import nbformat
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["solution"]})]
    nbformat.write(nb, tmp_path / "01_x.ipynb")
    with pytest.raises(ValueError, match="a solution without an exercise key"):
        student.solution_sources(tmp_path)


# --------------------------------------------------------------------------- solutions and mistakes
@pytest.mark.parametrize("book, exercise", [pytest.param(b, e, marks=_marks(_short(b.module), e.number))
                                            for b, e in EXERCISES], ids=IDS)
def test_solution_accepted(book, exercise):
    out = run(_short(book.module), exercise.number, SOLUTIONS[book.notebook][str(exercise.number)])
    assert "✅" in out and "❌" not in out, out


@pytest.mark.parametrize("module, number, what, code", [pytest.param(*c, marks=_marks(c[0], c[1])) for c in TYPICAL],
                         ids=[f"{c[0]}-{c[1]}" for c in TYPICAL])
def test_typical_mistake_rejected_without_giving_it_away(module, number, what, code):
    out = run(module, number, code)
    assert "❌" in out and "✅" not in out, out
    assert f"ex.hint({number})" in out, "a ❌ must say where the next hint is"
    assert "(expected" not in out and "(yours" not in out, f"expected values on a first attempt:\n{out}"
    _gives_nothing_away(out, module, number, code)


@pytest.mark.parametrize("module, number, what, code, verdict, says",
                         [pytest.param(*c, marks=_marks(c[0], c[1])) for c in REGISTERED],
                         ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in REGISTERED])
def test_registered_answer(module, number, what, code, verdict, says):
    out = run(module, number, code)
    assert "Traceback" not in out and "math domain error" not in out
    if verdict == "right":
        assert "✅" in out and "❌" not in out, out
    else:
        assert "❌" in out and "✅" not in out, out
        assert says in out, f"{what}: the verdict should say {says!r}:\n{out}"
        _gives_nothing_away(out, module, number, code)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_depth_curve_with_160_chains_of_its_own_passes_for_every_seed(seed):
    """A correct depth_curve whose own default is 10 stacks (160 chains) passes: the check runs it with its
    own, larger sample and sizes the band from that."""
    code = SOLUTIONS["05_depth_and_width"]["3"].replace("trials=200", "trials=10")
    assert "trials=10" in code
    ns: dict = {}
    exec(PRELUDE + SETUP[("depth_and_width", 3)] + "\n" + code, ns)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ok = importlib.import_module(BOOK_OF["depth_and_width"].module).check_depth_curve(ns["depth_curve"], seed=seed)
    assert ok, out.getvalue()


# ------------------------------------------------------------------------------ attempts and hints
def test_the_same_answer_run_again_is_not_a_second_attempt():
    wrong = "def unstable_beta():\n    return 1.0\n"
    first, again = run("delta_and_oja", 3, wrong), run("delta_and_oja", 3, wrong, fresh=False)
    assert BOOK_OF["delta_and_oja"].current().attempts[3] == 1
    assert "ex.reveal(3)" in first and "expected" not in first and "expected" not in again, again


def test_expected_values_only_once_asked_for():
    """Another wrong answer, and another, never shows the expected values; ``ex.reveal(n)`` shows the last
    check's, and every later ❌ of that exercise shows its own."""
    answers = [f"def unstable_beta():\n    return {b}\n" for b in (1.0, 3.0, 4.0)]
    outs = [run("delta_and_oja", 3, a, fresh=i == 0) for i, a in enumerate(answers)]
    assert not any("expected" in out for out in outs), outs
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        BOOK_OF["delta_and_oja"].reveal(3)
    assert "your last check: expected 2, got 4" in shown.getvalue()
    after = run("delta_and_oja", 3, "def unstable_beta():\n    return 5.0\n", fresh=False)
    assert "expected 2, got 5" in after and "ex.reveal(3)" not in after, after


def test_expected_values_after_reading_the_solution():
    BOOK_OF["delta_and_oja"].session()
    with contextlib.redirect_stdout(io.StringIO()):
        BOOK_OF["delta_and_oja"].solution(3)
    assert "expected 2" in run("delta_and_oja", 3, "def unstable_beta():\n    return 1.0\n", fresh=False)


def test_a_stub_is_not_an_attempt():
    stub = "def unstable_beta():\n    raise NotImplementedError('Exercise 3')\n"
    assert "not yet implemented" in run("delta_and_oja", 3, stub)
    assert BOOK_OF["delta_and_oja"].current().attempts.get(3, 0) == 0


@pytest.mark.parametrize("book, exercise", EXERCISES, ids=IDS)
def test_hints_in_tiers_and_solution_reachable(book, exercise, capsys):
    ex = book.session()
    assert len(exercise.hints) >= 2, "at least two hint tiers: the idea, then a nearer step"
    ex.hint(exercise.number)
    assert "hint 1 of" in capsys.readouterr().out
    solution = SOLUTIONS[book.notebook][str(exercise.number)]
    for key in _key_expressions(solution, ""):
        assert not _contains(_tokens(exercise.hints[0]), key), f"hint 1 gives away {' '.join(key)!r}"
    ex.solution(exercise.number)
    shown = capsys.readouterr().out
    assert exercise.title in shown and solution.splitlines()[-1].strip() in shown


def test_a_function_that_never_returns_gets_a_time_limit(monkeypatch):
    monkeypatch.setattr(checking, "IMPLEMENT_TIME_LIMIT", 0.5)
    out = run("start_here", 1, "import time\ndef match(b, t):\n    time.sleep(3)\n    return (b * t).sum()\n")
    assert "took more than 0 s on test case 1 (a torch.float64 tensor of shape (1,)" in out
    assert "restart the kernel" in out


@pytest.fixture
def ipython(monkeypatch):
    """An IPython shell in the course folder (where the hook reads the notebook's cells), cleared afterwards."""
    pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell
    monkeypatch.chdir(COURSE)
    shell = InteractiveShell.instance()

    def run_cells(*cells: str) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            for cell in cells:
                shell.run_cell(cell, store_history=True)
        return out.getvalue()
    yield run_cells
    name_errors.switch_off()
    InteractiveShell.clear_instance()


def test_a_cell_run_too_early_says_which_cell_to_run(ipython):
    text = ipython("from pavlovlab.teach.exercises import start_here as ex\nex.start()", "ex.check_match(match)",
                   "torch.ones(3)", "undefined_name_elsewhere")
    assert "`match` is not defined yet: run the exercise cell above" in text
    assert "`torch` is made by the set-up cell at the top of the notebook: run the set-up cell at the top first" in text
    assert text.count("Traceback") <= 1 and "NameError" in text   # a name no cell makes keeps its traceback


def test_a_name_of_an_earlier_section_names_the_section(ipython):
    best_cell = next(i for i, c in enumerate(_cells("05_depth_and_width")) if c["cell_type"] == "code"
                     and "best" in name_errors.names_made(_src(c)))
    heading = [m for c in _cells("05_depth_and_width")[:best_cell] if c["cell_type"] == "markdown"
               for m in name_errors.SECTION.finditer(_src(c)) if not m.group("title").startswith("Exercise")][-1]
    text = ipython("from pavlovlab.teach.exercises import depth_and_width as ex\nex.start()", "print(best)")
    assert f"`best` is made in section {heading.group('number')}, “{heading.group('title')}”: run that section" in text
    assert "Traceback" not in text


def test_the_hook_is_off_until_started_and_after_the_session_ends(ipython):
    assert "Traceback" in ipython("from pavlovlab.teach.exercises import start_here as ex", "ex.check_match(match)")
    assert "Traceback" not in ipython("ex.start()", "ex.check_match(match)")
    assert "Traceback" in ipython("ex.BOOK.stop()", "ex.check_match(match)")
    assert name_errors.switched_on() is None


def test_the_names_a_cell_makes():
    cell = ("import torch\nfrom a import b as c\nx, (y, *z) = 1, (2, 3)\nfor i in range(2):\n    j = i\n"
            "def f(q):\n    inner = q\nclass K: pass\nwith open('f') as fh: pass\n%timeit x\nn += 1\n")
    assert name_errors.names_made(cell) == {"torch", "c", "x", "y", "z", "i", "j", "f", "K", "fh", "n"}


# ----------------------------------------------------------------------------------------- progress
def test_progress_is_recorded_beside_the_notebooks(tmp_path, capsys):
    BOOK_OF["start_here"].session(tmp_path)
    ex = importlib.import_module(BOOK_OF["start_here"].module)
    ex.check_match(lambda b, t: (b * t).mean())
    ex.check_match(lambda b, t: (b * t).sum())
    data = json.loads((tmp_path / sessions.PROGRESS_FILE).read_text(encoding="utf-8"))
    assert data["00_start_here"]["1"] == {"attempts": 2, "done": True}
    ex.check_match(lambda b, t: (b * t).max())            # a wrong try after the exercise was done: still done
    data = json.loads((tmp_path / sessions.PROGRESS_FILE).read_text(encoding="utf-8"))
    assert data["00_start_here"]["1"] == {"attempts": 3, "done": True}
    BOOK_OF["delta_and_oja"].session(tmp_path)
    other = importlib.import_module(BOOK_OF["delta_and_oja"].module)
    with contextlib.redirect_stdout(io.StringIO()):
        other.check_unstable_beta(lambda: 1.0)
    capsys.readouterr()
    other.progress()
    text = capsys.readouterr().out
    total = sum(len(b) for b in BOOKS)
    assert f"1 of {total} exercises done" in text
    row = next(ln for ln in text.splitlines() if "06_delta_and_oja" in ln)
    assert "1 ·" in row and "3 ❌" in row
    assert "1 ✅" in next(ln for ln in text.splitlines() if "00_start_here" in ln)
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]


def test_progress_that_cannot_be_written_is_silent(tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    BOOK_OF["start_here"].session(blocker)
    ex = importlib.import_module(BOOK_OF["start_here"].module)
    assert ex.check_match(lambda b, t: (b * t).sum()) is True
    ex.progress()
    out = capsys.readouterr().out
    assert "Traceback" not in out and "0 of" in out


# ------------------------------------------------------------------------------------ the notebooks
@pytest.mark.parametrize("notebook", sorted(p.stem for p in COURSE.glob("[0-9]*.ipynb")))
def test_every_think_has_an_answer(notebook):
    cells = _cells(notebook)
    for i, c in enumerate(cells):
        if c["cell_type"] == "markdown" and "think!" in _src(c).lower():
            near = [_src(d) for d in cells[i:i + 2] if d["cell_type"] == "markdown"]
            tail = near[0][near[0].lower().rfind("think!"):]
            assert "<details" in tail or (len(near) > 1 and "<details" in near[1]), \
                f"{notebook} cell {i}: a Think! without an answer block under it"


@pytest.mark.parametrize("book, exercise", EXERCISES, ids=IDS)
def test_stub_gives_nothing_away(book, exercise):
    stubs = [_src(c) for c in _cells(book.notebook)
             if exercise_keys.cell_key(c) == (exercise.number, "stub")]
    assert len(stubs) == 1
    for key in _key_expressions(SOLUTIONS[book.notebook][str(exercise.number)], stubs[0]):
        assert not _contains(_tokens(stubs[0]), key), f"the stub contains the solution's {' '.join(key)!r}"


@pytest.mark.parametrize("notebook", sorted(p.stem for p in COURSE.glob("[0-9]*.ipynb")))
def test_check_cells_end_with_the_verdict(notebook):
    checks = {check_cell(b.notebook, e.number) for b, e in EXERCISES if b.notebook == notebook}
    for c in _cells(notebook):
        if c["cell_type"] == "code" and _src(c).strip("\n") in checks:
            kinds = [o["output_type"] for o in c.get("outputs", [])]
            assert "execute_result" not in kinds, f"{notebook}: a check cell prints a stray value after its verdict"


def test_the_notebook_that_uses_math_imports_it():
    setup = next(_src(c) for c in _cells("07_decay_and_unlearning") if name_errors.SETUP_MARK in _src(c))
    assert re.search(r"^import math$", setup, re.M)


def test_learner_copies_keep_stubs_and_drop_solutions(tmp_path):
    student.make_student_copies(COURSE, tmp_path / "learner")
    for book in BOOKS:
        cells = json.loads((tmp_path / "learner" / f"{book.notebook}.ipynb").read_text())["cells"]
        srcs = [_src(c) for c in cells]
        for e in book:
            assert not any(s.strip("\n") == SOLUTIONS[book.notebook][str(e.number)] for s in srcs)
            assert any(exercise_keys.cell_key(c) == (e.number, "stub") for c in cells)


def test_progress_lives_beside_learner_copies_never_in_the_course(tmp_path, monkeypatch):
    monkeypatch.setattr(sessions, "in_kernel", lambda: True)
    learner = tmp_path / "learner"
    student.make_student_copies(COURSE, learner)
    monkeypatch.chdir(learner)
    assert BOOK_OF["start_here"].session().folder == learner
    monkeypatch.chdir(COURSE)
    assert BOOK_OF["start_here"].session().folder is None          # the course's notebooks hold their solutions


@pytest.mark.slow
def test_capacity_probe_catches_an_off_by_one_function_behind_right_numbers():
    """Right capacities at the learner's own d_k, but the function the check runs again at another setting
    counts the failing write too: the second setting catches it."""
    off_by_one = '''
_right = measure_capacity
def measure_capacity(d_k, trials=100, theta=0.8):
    return _right(d_k, trials=trials, theta=theta) + 1
'''
    out = run("capacity_limits", 4, SOLUTIONS["04_capacity_limits"]["4"] + "\n" + off_by_one)
    assert "❌" in out and "not counting the write that failed" in out, out


def test_a_book_is_found_by_the_notebook_name_or_number():
    assert registry.book("04") is registry.book("04_capacity_limits")
    with pytest.raises(ValueError, match="notebook: expected one of"):
        registry.book("99")
    with pytest.raises(TypeError, match="notebook"):
        registry.book(4)


NUMBERS_WATCHED = ("hebbian_memory", "linear_attention", "capacity_limits")
WRONG_WATCHED = [r for r in REGISTERED if r[0] in NUMBERS_WATCHED and r[4] == "wrong"]


@pytest.mark.parametrize("row", [pytest.param(r, marks=_marks(r[0], r[1])) for r in WRONG_WATCHED],
                         ids=[r[2] for r in WRONG_WATCHED])
def test_a_first_wrong_attempt_holds_none_of_the_numbers_shown_once_asked(row):
    """A registered wrong answer of 02–04: the numbers its ❌ shows once the learner has read the solution (in the
    same session) are none of the numbers of its first ❌."""
    module, number, _, code, _, _ = row
    first = next(line for line in run(module, number, code).splitlines() if line.startswith("❌"))
    with contextlib.redirect_stdout(io.StringIO()):
        BOOK_OF[module].solution(number)
    asked = next(line for line in run(module, number, code, fresh=False).splitlines() if line.startswith("❌"))
    assert asked.startswith(first)
    detail = asked[len(first):]
    assert not set(re.findall(r"\d+\.\d+", detail)) & set(re.findall(r"\d+\.\d+", first)), (first, detail)


# ------------------------------------------------------------------------------ the editions' language
class _Recording(gettext.NullTranslations):
    """The edition's catalogue, noting every sentence asked for that it does not hold."""

    def __init__(self, inner: gettext.NullTranslations, missed: set[str]) -> None:
        super().__init__()
        self.inner, self.missed = inner, missed

    def gettext(self, message: str) -> str:
        if re.search(r"[A-Za-z]{2}", message) and message not in getattr(self.inner, "_catalog", {}):
            self.missed.add(message)
        return self.inner.gettext(message)


@pytest.fixture
def speaking(request):
    """The edition ``request.param`` chosen as its set-up cell chooses it, with the sentences its catalogue lacks
    recorded; English again afterwards."""
    from pavlovlab.teach import language

    missed: set[str] = set()
    language.use(request.param)
    language._translation = _Recording(language._translation, missed)  # undone by use("en") below
    yield request.param, missed
    language.use("en")


EDITION_ROWS = list({(r[0], r[1], r[4]): r for r in reversed(REGISTERED)}.values())
"""One right and one wrong registered answer of every exercise (the first of each)."""


@pytest.mark.parametrize("speaking", ["zh", "fr"], indirect=True)
@pytest.mark.parametrize("row", [pytest.param(r, marks=_marks(r[0], r[1])) for r in EDITION_ROWS],
                         ids=[f"{r[0]}-{r[1]}-{r[4]}" for r in EDITION_ROWS])
def test_a_check_and_its_hints_speak_the_editions_language(row, speaking):
    """In an edition, a verdict, every hint tier, the values revealed and the solution's heading are the edition's:
    every sentence said is in its catalogue, and no printed line reads as English (code and names excepted)."""
    edition, missed = speaking
    module, number, _, code, _, _ = row
    out = run(module, number, code)
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        for _tier in range(len(BOOK_OF[module].get(number).hints) + 1):
            BOOK_OF[module].hint(number)
        BOOK_OF[module].reveal(number)
    with contextlib.redirect_stdout(io.StringIO()):   # the solution is code: its words are not checked here
        BOOK_OF[module].solution(number)
    assert "Traceback" not in out, out
    assert not missed, f"{edition}: said without a translation: {sorted(missed)}"
    english = learnercopy.english_lines(out + said.getvalue(), edition)
    assert not english, english


@pytest.mark.parametrize("speaking", ["zh", "fr"], indirect=True)
def test_the_frameworks_own_sentences_speak_the_editions_language(speaking, tmp_path, capsys):
    """Everything the framework composes around a checker's words is said in the edition: the verdict heads, the
    case described, ⏳ for a stub and for a missing name, a crash, a `sys.exit`, a time limit, the stuck line, the
    hint tiers' frame and a tier out of range, the values revealed, a missing solution, a loose check's verdicts and
    the learner's progress. The exercise's title and hints are code only, so every word printed is the framework's."""
    import threading

    import torch

    from pavlovlab.teach.exercises.book import Book
    from pavlovlab.teach.progress import show_learner_progress

    edition, missed = speaking
    book = Book("99_framework", __name__)

    @book.exercise(1, "`S`", kind="implement", hints=["`S = 0`", "`S += v k`"])
    def check_double(fn, *, turn, limit=None):
        cases = [((torch.ones(2, dtype=torch.float64),), {}), ((torch.ones(3, 2),), {})]
        return checking.check_function(fn, lambda k: 2 * k, cases, turn=turn, limit=limit)

    def stub(k):
        raise NotImplementedError

    def missing_name(k):
        return undefined_in_this_kernel  # noqa: F821

    def crash(k):
        raise ValueError("42")

    def leave(k):
        raise SystemExit(1)

    never = threading.Event()

    def wait(k):
        never.wait()

    book.session(tmp_path)
    for answer in (stub, missing_name, crash, leave, 5, lambda k: (2 * k).float(), lambda k: 3 * k):
        check_double(answer)
    check_double(wait, limit=0.01)
    never.set()
    for _tier in range(3):
        book.hint(1)
    book.hint(1, 7)
    book.hint(99)
    book.reveal(1)
    book.solution(1)
    check_double(lambda k: 3 * k + 1)
    check_double(lambda k: 2 * k)
    checking.check_value(lambda: 4, 3)
    checking.check_value(lambda: 2.5, 3)
    checking.check_value(lambda: "42", 3.0)
    checking.check_measurement(lambda: {}, lambda result: 1 / 0)
    show_learner_progress(tmp_path)
    (tmp_path / sessions.PROGRESS_FILE).write_text("{", encoding="utf-8")
    show_learner_progress(tmp_path)
    out = capsys.readouterr().out
    heads = [line[0] for line in out.splitlines() if line]
    assert (heads.count("✅"), heads.count("⏳"), heads.count("💡")) == (1, 2, 5), out
    assert not missed, f"{edition}: said without a translation: {sorted(missed)}"
    assert not learnercopy.english_lines(out, edition), learnercopy.english_lines(out, edition)


def _where_made(name: str, notebook: str, folder: Path) -> str:
    """Which cell explain() sends the learner to, language aside: the set-up cell, the exercise cell, a section by
    its number, an unnumbered section, or further up."""
    said = name_errors.explain(name, notebook, cell="ex.check_it(x)", folder=folder) or "a typo"
    number = re.search(r"section (\w+),", said)
    kinds = ("set-up cell", "exercise cell", "the section", "further up", "a typo")
    return number.group(1) if number else next(kind for kind in kinds if kind in said)


@pytest.mark.parametrize("edition", ["zh", "fr"])
@pytest.mark.parametrize("notebook", sorted(MODULES))
def test_a_cell_run_too_early_in_an_edition_is_sent_where_the_english_is(notebook, edition):
    """Every name a learner copy's code makes: a NameError in the edition's copy points to the same cell as in the
    English copy: its set-up cell (which says ex.start(language=...)) and its sections, never an exercise heading
    (练习 2, Exercice 2) taken for a section."""
    english, translated = ROOT / "student", ROOT / "student" / edition
    names = sorted({n for c in name_errors.notebook_cells(notebook, english) if c.get("cell_type") == "code"
                    for n in name_errors.names_made(name_errors._source(c))})
    assert names
    assert ([_where_made(n, notebook, translated) for n in names] == [_where_made(n, notebook, english) for n in names])
