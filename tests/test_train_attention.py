"""The trainer's attention (lesson C3): grouped key/value heads (MHA, GQA, MQA), RoPE, the causal switch, the
attention maps and KV-cached decoding (experiments/train/model.py, generate.py).

- cached decoding (prefill, then one decode_step per token) gives the full forward pass's logits within 1e-6 in
  float64 at every step of a 20-step decode, for MHA, GQA and MQA, and generate gives the same tokens both ways;
- GQA with as many key/value heads as query heads is MHA: the course baseline (8 heads, 8 KV heads) loses exactly
  what experiments.baseline's MHA forward loses; a grouped model equals the MHA model whose k/v rows repeat each
  shared head G times (same weights, same loss);
- RoPE's score q.k after rotation depends on the offset between the positions only (several offsets, positions);
- gradients of the grouped k/v (GQA, MQA) and of causal=False against central finite differences in float64 and
  against torch autograd (tests/gradient_reference.py);
- causal=False lets a position see the future; attention_maps' rows are softmaxes, zero above the diagonal.
"""
import math

import numpy as np
import pytest

from experiments import baseline
from experiments.train import generate as G
from experiments.train import model as M
from experiments.train import trainer as T
from tests.gradient_reference import central_differences, torch_disagreement, worst_relative_difference
from tests.test_train_model import tiny_case

HEADS = {"mha": 4, "gqa": 2, "mqa": 1}          # n_kv_heads of a 4-head model
SMALL = M.ModelConfig(d_model=16, n_layers=2, n_heads=4, d_ff=24, vocab_size=13)
TINY_GROUPED = M.ModelConfig(d_model=8, n_layers=2, n_heads=4, d_ff=12, vocab_size=11)   # head_dim 2


def perturbed(cfg, seed=1, spread=0.3):
    return tiny_case(np.float64, seed, cfg, spread)[0]


@pytest.mark.parametrize("kind", sorted(HEADS))
def test_cached_decoding_gives_the_full_forward_logits_at_every_step(kind):
    cfg = SMALL.with_(n_kv_heads=HEADS[kind])
    p = perturbed(cfg)
    rng = np.random.default_rng(2)
    ids = [int(i) for i in rng.integers(0, cfg.vocab_size, size=5)]
    logits, cache = G.prefill(p, cfg, ids, max_len=25)
    for step in range(20):
        full = M.forward(p, np.array(ids)[None, :], cfg, keep=False)[0][-1]
        assert np.abs(full - logits).max() < 1e-6, (kind, step)
        # the cache holds each layer's rotated keys and values of n_kv_heads heads, one row per position so far
        assert cache["pos"] == len(ids)
        assert cache["k"][0].shape == cache["v"][1].shape == (1, cfg.n_kv_heads, len(ids), cfg.head_dim)
        tok = int(rng.integers(0, cfg.vocab_size))
        ids.append(tok)
        logits, cache = G.decode_step(p, cfg, cache, tok)
    with pytest.raises(ValueError, match="max_len"):
        G.decode_step(p, cfg, cache, 0)


def test_generate_gives_the_same_tokens_with_and_without_the_cache():
    cfg = SMALL
    p = M.init_params(cfg, seed=4)
    for i in range(cfg.n_layers):      # float32 weights with some structure, so the text is not one token repeated
        p[f"layers.{i}.self_attn.q_proj.weight"] *= 20
    prompt = [1, 2, 3]
    for kwargs in ({"temperature": 0}, {"temperature": 1.0, "seed": 7}, {"temperature": 0.8, "top_k": 5}):
        # context 12 < 3 + 16: the window slides past its end, where both paths run the window
        cached = G.generate(p, cfg, prompt, 16, context=12, use_cache=True, **kwargs)
        plain = G.generate(p, cfg, prompt, 16, context=12, use_cache=False, **kwargs)
        assert cached == plain and len(cached) == 16


def test_the_cached_step_saves_the_recomputation_of_earlier_positions():
    cfg = SMALL
    t = 32
    full, cached = G.step_flops(cfg, t, use_cache=False), G.step_flops(cfg, t, use_cache=True)
    # the full pass does each position's work of the cached step again: t times the weights, t^2 scores
    weights = G.step_flops(cfg, 0, use_cache=True) // 2
    assert full - 2 * weights * t == t * (cached - 2 * weights)


def test_gqa_with_as_many_kv_heads_as_query_heads_is_the_baselines_mha():
    cfg = M.ModelConfig.from_hf(baseline.CONFIG)
    assert cfg.n_kv_heads == cfg.n_heads == baseline.CONFIG["num_key_value_heads"] and cfg.group == 1
    params = M.init_params(cfg, seed=0)
    ids = np.array(baseline.toy_token_ids(["小明", "把", "苹果", "给了", "小王"]))
    logits_ref, _, _ = baseline.forward(baseline.init_params(seed=0), ids.tolist())
    logits, _, _ = M.forward(params, ids[None, :], cfg, kernels="einsum", keep=False)
    assert np.array_equal(logits, logits_ref)


@pytest.mark.parametrize("kind", ["gqa", "mqa"])
def test_a_grouped_model_equals_mha_with_each_shared_head_repeated(kind):
    cfg = SMALL.with_(n_kv_heads=HEADS[kind])
    mha = cfg.with_(n_kv_heads=cfg.n_heads)
    p = perturbed(cfg, seed=3)
    wide = dict(p)
    hd = cfg.head_dim
    for i in range(cfg.n_layers):
        for name in ("k_proj", "v_proj"):
            key = f"layers.{i}.self_attn.{name}.weight"
            heads = p[key].reshape(cfg.n_kv_heads, hd, cfg.d_model)
            wide[key] = np.repeat(heads, cfg.group, axis=0).reshape(cfg.d_model, cfg.d_model)
    ids = np.random.default_rng(0).integers(0, cfg.vocab_size, size=(2, 7))
    tgt = np.roll(ids, -1, axis=1)
    assert M.loss_only(p, ids, tgt, cfg) == pytest.approx(M.loss_only(wide, ids, tgt, mha), abs=1e-13)
    assert sum(p[k].size for k in p) < sum(wide[k].size for k in wide)


def test_rope_score_depends_only_on_the_offset():
    hd, base = 16, 10000.0
    rng = np.random.default_rng(5)
    q, k = rng.standard_normal(hd), rng.standard_normal(hd)
    cos, sin = M.rope_tables(200, hd, base, np.float64)

    def score(m, n):           # query at position m, key at position n
        return float(M.rope(q, cos[m], sin[m]) @ M.rope(k, cos[n], sin[n]))

    by_offset = {}
    for offset in (0, 1, 3, 17, 60):
        scores = [score(n + offset, n) for n in (0, 5, 40, 99, 130)]
        assert max(scores) - min(scores) < 1e-10 * max(1.0, abs(scores[0])), offset
        by_offset[offset] = scores[0]
    assert len({round(s, 6) for s in by_offset.values()}) == len(by_offset)   # the offset does change it
    # a table that starts later (a KV cache's new positions) holds the same rotations
    c5, s5 = M.rope_tables(3, hd, base, np.float64, start=40)
    assert np.array_equal(c5, cos[40:43]) and np.array_equal(s5, sin[40:43])


GRADIENT_CASES = {"gqa": {"n_kv_heads": 2}, "mqa": {"n_kv_heads": 1}, "no_mask": {"causal": False},
                  "gqa_no_mask_qk_norm": {"n_kv_heads": 2, "causal": False, "qk_norm": True}}


@pytest.mark.parametrize("case", sorted(GRADIENT_CASES))
def test_grouped_and_unmasked_gradients_match_central_finite_differences(case):
    cfg = TINY_GROUPED.with_(**GRADIENT_CASES[case])
    p, ids, tgt = tiny_case(np.float64, 3, cfg, spread=0.5)
    _, grads, _ = M.loss_and_grads(p, ids, tgt, cfg, kernels="matmul")
    numeric = central_differences(lambda: M.loss_only(p, ids, tgt, cfg, "matmul"), p)
    assert p["layers.0.self_attn.k_proj.weight"].shape == (cfg.kv_dim, cfg.d_model)
    worst = worst_relative_difference(grads, numeric)
    assert worst < 1e-6, worst


@pytest.mark.parametrize("case", sorted(GRADIENT_CASES))
def test_grouped_and_unmasked_gradients_equal_torch_autograd(case):
    pytest.importorskip("torch")
    cfg = TINY_GROUPED.with_(**GRADIENT_CASES[case])
    p, ids, tgt = tiny_case(np.float64, 5, cfg, spread=0.5)
    d_loss, _, worst = torch_disagreement(p, ids, tgt, cfg)
    assert d_loss < 1e-12 and worst < 1e-10


def test_without_the_mask_a_position_sees_the_future():
    p = perturbed(SMALL, seed=6)
    ids = np.array([[1, 2, 3, 4, 5, 6]])
    changed = ids.copy()
    changed[0, -1] = 9
    for causal in (True, False):
        cfg = SMALL.with_(causal=causal)
        a = M.forward(p, ids, cfg, keep=False)[0]
        b = M.forward(p, changed, cfg, keep=False)[0]
        earlier_moved = float(np.abs(a[:-1] - b[:-1]).max())
        assert (earlier_moved == 0.0) if causal else (earlier_moved > 1e-6), causal
    with pytest.raises(ValueError, match="causal"):
        G.prefill(p, SMALL.with_(causal=False), [1, 2])


def test_attention_maps_are_softmax_rows_and_zero_above_the_diagonal():
    cfg = SMALL
    p = perturbed(cfg, seed=7)
    ids = [3, 1, 4, 1, 5, 9, 2]
    maps = M.attention_maps(p, cfg, ids)
    T_ = len(ids)
    assert maps.shape == (cfg.n_layers, cfg.n_heads, T_, T_)
    assert np.allclose(maps.sum(-1), 1.0, atol=1e-12) and (maps >= 0).all()
    assert np.all(maps[..., np.triu_indices(T_, 1)[0], np.triu_indices(T_, 1)[1]] == 0)
    assert not np.allclose(maps[0, 0], maps[0, 1])            # heads differ
    open_maps = M.attention_maps(p, cfg.with_(causal=False), ids)
    assert open_maps[0, 0, 0, -1] > 0
    with pytest.raises(ValueError, match="ids"):
        M.attention_maps(p, cfg, [])


def test_n_kv_heads_is_checked_and_read_from_hugging_face_configs():
    assert M.ModelConfig().n_kv_heads < M.ModelConfig().n_heads         # the default is grouped
    for bad in (3, 0, -2, 2.0, True):
        with pytest.raises(ValueError, match="n_kv_heads"):
            SMALL.with_(n_kv_heads=bad)
    assert M.ModelConfig.from_hf({**baseline.CONFIG, "num_key_value_heads": 2}).n_kv_heads == 2
    no_key = {k: v for k, v in baseline.CONFIG.items() if k != "num_key_value_heads"}
    assert M.ModelConfig.from_hf(no_key).n_kv_heads == baseline.CONFIG["num_attention_heads"]
    shapes = M.param_shapes(SMALL.with_(n_kv_heads=1))
    assert shapes["layers.0.self_attn.k_proj.weight"] == (SMALL.head_dim, SMALL.d_model)
    assert shapes["layers.0.self_attn.q_proj.weight"] == (SMALL.d_model, SMALL.d_model)


def test_qk_clip_with_shared_key_heads_scales_only_the_query_head():
    cfg = TINY_GROUPED.with_(qk_clip=0.8)
    p, ids, tgt = tiny_case(np.float64, 8, cfg, spread=0.5)
    _, _, diag = M.loss_and_grads(p, ids, tgt, cfg)
    heads = diag["max_attn_logit_per_head"]
    before = {k: v.copy() for k, v in p.items()}
    n = T.qk_clip_rescale(p, heads, cfg)
    assert n == sum(s > 0.8 for row in heads for s in row) and 0 < n
    assert all(np.array_equal(p[k], before[k]) for k in p if "q_proj" not in k)
    after = M.loss_and_grads(p, ids, tgt, cfg)[2]["max_attn_logit_per_head"]
    for h, s in enumerate(heads[0]):              # layer 0's input is unchanged: clipped heads peak at tau
        assert after[0][h] == pytest.approx(min(s, 0.8), rel=1e-9)
    assert math.isfinite(after[1][0])
