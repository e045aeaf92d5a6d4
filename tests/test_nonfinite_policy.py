"""The non-finite policy on every public path (``pavlovlab._checks``): a result that becomes NaN/inf from finite
inputs warns once with a NonFiniteWarning (or a documented bound raises first). Every public function of the
core package (the names the coverage walk of ``tests/test_bad_input_coverage.py`` sees) is either fed a
diverging case here, or listed in ``CANNOT_DIVERGE`` with the reason its result stays finite."""

from __future__ import annotations

import torch
from badinput import check, parametrize
from test_bad_input_coverage import UNCHECKED_MODULES, public_names

import pavlovlab as pl
from pavlovlab import statistics as Stt
from pavlovlab.attention import forms as A
from pavlovlab.capacity import readouts as R
from pavlovlab.conditioning import learning as C
from pavlovlab.forgetting import drift as Dr
from pavlovlab.forgetting import oja as O
from pavlovlab.forgetting import unlearning as U
from pavlovlab.memory import associative as M
from pavlovlab.memory import hebbian as Hb
from pavlovlab.models import head_memory as Hm
from pavlovlab.phenomena import probes as Pr
from pavlovlab.phenomena import sequences as De

HUGE = 1e20            # finite in float32; its square is not


def _g(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _huge(*shape: int) -> torch.Tensor:
    return HUGE * (1 + torch.rand(*shape, generator=_g()))


def _unnormalised_keys(T: int = 200, d: int = 8) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    q = torch.randn(1, T, d, generator=_g(1))
    k = 3 * torch.nn.functional.normalize(torch.randn(1, T, d, generator=_g(2)), dim=-1)   # ‖k‖ = 3, β = 1
    return q, k, torch.randn(1, T, d, generator=_g(3))


def _nan_rule(S, k, v):
    return torch.full_like(S, float("nan"))


def _memory(rule, lr: float = 1.0) -> torch.Tensor:
    mem = pl.AssociativeMemory(8, 8, rule=rule, lr=lr)
    _, k, v = _unnormalised_keys()
    mem.write(k[0], v[0])
    return mem.S


def _huge_read() -> torch.Tensor:
    mem = pl.AssociativeMemory(4, 4)
    mem.write(torch.full((3, 4), 1e19), torch.full((3, 4), 1e19))
    return mem.read(torch.full((4,), 1e19))


def _drifting_values():
    stream = Dr.redraw_stream(n_keys=4, d_k=8, d_v=8, steps=400, period=100, generator=_g())
    return Dr.track(Dr.scale_values(stream, [40.0] * 8), rules=("oja_subspace",), lr=1.0)


def _probe_nan():
    batch = De.make_probes("acquisition", 4, generator=_g())
    return Pr.effects(batch, lambda w: torch.full(w.shape[:1], float("nan")))


x_cloud = torch.randn(200, 4, generator=_g())

DIVERGING = [
    ("softmax_attention: huge q and k", lambda: pl.softmax_attention(_huge(6, 4), _huge(6, 4), torch.ones(6, 4)),
     "warn", "softmax_attention"),
    ("linear_attention: huge q, k, v", lambda: pl.linear_attention(_huge(6, 4), _huge(6, 4), _huge(6, 4)),
     "warn", "linear_attention"),
    ("linear_attention: a feature map returning NaN", lambda: pl.linear_attention(
        *_unnormalised_keys(), feature_map=lambda x: x * float("nan")), "warn", "feature map returned NaN"),
    ("delta_rule_attention(recurrent): keys of norm 3", lambda: pl.delta_rule_attention(
        *_unnormalised_keys(), 1.0, mode="recurrent"), "warn", "are the keys L2-normalised"),
    ("delta_rule_attention(chunk): keys of norm 3", lambda: pl.delta_rule_attention(
        *_unnormalised_keys(), 1.0, mode="chunk"), "warn", "are the keys L2-normalised"),
    ("scalar_gated_linear_attention: huge q, k, v", lambda: A.scalar_gated_linear_attention(
        _huge(6, 4), _huge(6, 4), _huge(6, 4), torch.full((6,), 0.5)), "warn", "scalar_gated_linear_attention"),
    ("AssociativeMemory(delta): keys of norm 3", lambda: _memory("delta"), "warn", "AssociativeMemory(rule='delta')"),
    ("AssociativeMemory: a custom rule returning NaN", lambda: _memory(_nan_rule), "warn", "AssociativeMemory"),
    ("AssociativeMemory.read: S q overflowing", _huge_read, "warn", "AssociativeMemory.read"),
    ("step: a custom rule returning NaN", lambda: M.step(torch.zeros(4, 4), torch.ones(4), torch.ones(4), _nan_rule),
     "warn", "step"),
    ("step(delta): huge memory and key", lambda: M.step(torch.full((4, 4), 1e30), torch.full((4,), 1e10),
                                                        torch.ones(4), "delta"), "warn", "step"),
    ("track(oja_subspace): values scaled by 40", _drifting_values, "warn", "track"),
    ("oja_pca(lr=5)", lambda: O.oja_pca(x_cloud, lr=5.0, generator=_g()), "warn", "oja_pca"),
    ("hebbian_unit in float32 growing to inf", lambda: O.hebbian_unit(10 * x_cloud, lr=1.0, epochs=50, generator=_g()),
     "warn", "oja_pca(rule='hebbian')"),
    ("oja_subspace(lr=5)", lambda: O.oja_subspace(x_cloud, 2, lr=5.0, generator=_g()), "warn", "oja_subspace"),
    ("principal_components: samples whose second moment overflows", lambda: O.principal_components(_huge(50, 3)),
     ValueError, "x: expected samples whose second moment xᵀx/n fits in torch.float32"),
    ("memory_fixed_point: huge values", lambda: O.memory_fixed_point(torch.zeros(3, 4), torch.eye(4)[:2],
                                                                      _huge(2, 3)), "warn", "memory_fixed_point"),
    ("outer_product_memory: huge pairs", lambda: Hb.outer_product_memory(_huge(3, 4), _huge(3, 4)), "warn",
     "outer_product_memory"),
    ("crosstalk: huge pairs", lambda: Hb.crosstalk(_huge(3, 4), _huge(3, 4)), "warn", "crosstalk"),
    ("recall_cosine: huge pairs", lambda: Hb.recall_cosine(_huge(3, 4), _huge(3, 4)), "warn", "recall_cosine"),
    ("mean_squared_overlap: huge keys", lambda: Hm.mean_squared_overlap(_huge(3, 4)), "warn", "mean_squared_overlap"),
    ("readout_weights(softmax): huge keys", lambda: R.readout_weights(_huge(3, 4), torch.ones(3, 2), "softmax"),
     "warn", "readout_weights"),
    ("readout_weights(delta): huge keys", lambda: R.readout_weights(_huge(3, 4), torch.ones(3, 2), "delta"),
     "warn", "readout_weights"),
    ("rescorla_wagner: huge cues (the bound αβ·Σ x² <= 2 refuses them)", lambda: C.rescorla_wagner(
        _huge(5, 2), torch.ones(5), alpha=0.1), ValueError, "alpha: expected α·β <= 2"),
    ("hebbian_conditioning: huge cues", lambda: C.hebbian_conditioning(_huge(5, 2), _huge(5)), "warn",
     "hebbian_conditioning"),
    ("prediction: huge strengths and cues", lambda: C.prediction(_huge(3, 2), _huge(2, 2)), "warn", "prediction"),
    ("unlearn_hebbian: huge pair", lambda: U.unlearn_hebbian(torch.zeros(3, 4), _huge(4), _huge(3)), "warn",
     "unlearn_hebbian"),
    ("unlearn_delta: a memory whose read-out overflows",
     lambda: U.unlearn_delta(torch.full((3, 4), 3e38), torch.ones(4)), "warn", "unlearn_delta"),
    ("recall_strength: huge memory", lambda: U.recall_strength(_huge(3, 4), _huge(2, 4), torch.ones(2, 3)), "warn",
     "recall_strength"),
    ("cue_response: huge memory", lambda: U.cue_response(_huge(3, 4), _huge(2, 4), torch.ones(3)), "warn",
     "cue_response"),
    ("effects: a response function returning NaN", _probe_nan, "warn", "effects"),
    ("slope_through_origin: numbers whose squares overflow float64", lambda: Stt.slope_through_origin(
        torch.full((5,), 1e200, dtype=torch.float64), torch.full((3, 5), 1e200, dtype=torch.float64)), "warn",
     "slope_through_origin"),
    ("summarize: effects whose sum overflows float64", lambda: Stt.summarize(
        torch.full((2, 4), 1.7e308, dtype=torch.float64)), "warn", "summarize"),
]


@parametrize(DIVERGING)
def test_a_diverging_result_warns_or_raises(call, expect, fragment):
    check(call, expect, fragment)


BUILT = ("builds its tensors from sizes, probabilities and a generator (unit keys, bounded draws): no data of the "
         "caller's to diverge on")
BOOKKEEPING = "returns integers, names, shapes or a description: no arithmetic that can overflow"
CLOSED_FORM = ("a closed form of numbers that check_numbers/check_real bound (probabilities, sizes, decays in [0, 1]); "
               "raw_noise_theory, the one whose power can overflow float64, warns")
SIMULATION = ("a simulation on keys and values it draws itself (unit norm) with hyper-parameters whose documented "
              "bounds are checked, so its memories stay bounded; its inner calls are swept above")
READS_RESULTS = ("reads results already computed (slopes of logs of positive counts, comparisons, rankings, counts "
                 "of failures) and refuses non-finite ones as inputs")
MODEL = ("a torch module or a training/evaluation loop on it: torch's own layers, on token sequences that the "
         "package builds; the attention kernels it uses are swept above through the public attention functions")
BOUNDED = "a cosine (normalised by torch) or a masked mean of bounded numbers: in [−1, 1] by construction"
BUILDING_BLOCK = ("one ΔS of a learning rule, returned exactly as the formula gives it; the public paths that apply it "
                  "(step, AssociativeMemory, track) carry the non-finite check, once per call")

CANNOT_DIVERGE = {
    **dict.fromkeys(["acquisition", "blocking", "blocking_control", "conditioned_inhibition", "extinction",
                     "overexpectation", "overshadowing", "partial_reinforcement", "reacquisition",
                     "associative_recall", "pointer_chasing", "random_keys", "random_values", "data_cloud",
                     "make_probes", "arrival_stream", "redraw_stream", "rotation_stream", "key_reuse_task",
                     "random_associations", "probe_cues", "retnet_decays", "seed_everything", "n_grid",
                     "scale_values"], BUILT),
    **dict.fromkeys(["pointer_vocab_size", "vocab_size", "depth_width_configs",
                     "count_parameters", "resolve_rule", "trials", "describe", "steps_to_threshold",
                     "first_failure"], BOOKKEEPING),
    **dict.fromkeys(["average_capacity_theory", "fidelity_theory", "worst_case_bound", "blocking_theory",
                     "effective_window", "half_life", "retention", "hop_error_theory",
                     "hop_failure_bound", "loss_threshold", "paper_bound", "raw_noise_theory", "stack_error_theory",
                     "t_quantile", "rw_effect", "predicted_effect"], CLOSED_FORM),
    **dict.fromkeys(["simulate", "blocking_curve", "capacity_sweep", "recall_sweep", "capacity_scaling",
                     "retrieval_capacity", "measure_crosstalk_variance", "chain_error", "one_hop", "raw_chain",
                     "same_task_budget", "cached_shape_runs", "gated_recall", "recall_by_age", "recall_vs_lag",
                     "generalisation_after_unlearning", "unlearning_experiment", "circuit_effects",
                     "memory_response"], SIMULATION),
    "unlearning_report": "reads the memories through recall_strength and recall_cosine, swept above",
    **dict.fromkeys(["local_slopes", "scaling_residuals", "capacity_from_fidelity", "shape_difference",
                     "relative_effects", "size_loss", "model_effects", "verdicts", "separation_verdicts",
                     "recovery_steps", "measured_half_life", "decoding_curve", "min_cosine_curve",
                     "adversarial_error_curve", "fit_log_slope", "fit_slope", "bootstrap_slope_se"], READS_RESULTS),
    **dict.fromkeys(["Block", "TinyTransformer", "model_logits", "model_response", "readout_norm", "evaluate",
                     "train_configs", "train_models", "train_recall", "train_recall_batched", "head_states",
                     "recall_against_load", "trained_head_overlaps"], MODEL),
    **dict.fromkeys(["alignment"], BOUNDED),
    **dict.fromkeys(["delta_update", "hebbian_update", "oja_clamped_update", "oja_subspace_update"], BUILDING_BLOCK),
}


def test_every_public_function_is_swept_or_says_why_it_cannot_diverge():
    swept = " ".join(case for case, *_ in DIVERGING)
    names = {n for n, module in public_names().items() if module not in UNCHECKED_MODULES and not n.endswith("_kernel")}
    parts = set(swept.replace("(", " ").replace(":", " ").replace(".", " ").split())
    missing = sorted(n for n in names if n not in CANNOT_DIVERGE and n not in parts)
    assert not missing, f"public functions with neither a diverging case nor a reason: {missing}"
    assert not sorted(set(CANNOT_DIVERGE) - names), "reasons for names that are not public"
