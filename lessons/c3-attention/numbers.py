"""C3 注意力 — the lesson's numbers (c3.*), beyond the generic ones (<alias>.h, .h_kv, .d_h, .kv_bytes_per_token,
.crossover_T ... from experiments/toolkit/model_numbers.py).

Each cache figure is an expression over the config's values (K and V: 2 · num_key_value_heads · head_dim elements
per token per layer; MLA: kv_lora_rank + qk_rope_head_dim), with the ledger engine's own value passed as
``value=`` so the Registry asserts both agree (experiments/ledger/views.py, arch.Mixer). Bytes are BF16 (2 per
element); ``*_gb`` are 10⁹ bytes. The text's three models: Llama 2 7B (MHA), Llama 2 70B (GQA), DeepSeek-V3 (MLA);
Gemma 2 9B (sliding window layers), Mistral 7B (every layer windowed) and Qwen3.8-27B (linear layers) beside them.
"""
from __future__ import annotations

from fractions import Fraction

from ...expr import Const, Sym
from ...ledger import forks as F
from ...ledger import views
from ...toolkit.config_text import text_config_of
from ...toolkit.stored import document

GB = Const(10**9)
BYTES = Const(2)                 # BF16
LONG = 32768                     # the long context the text quotes
SHORT = 4096                     # the widget's first context, and the short one the text quotes
LEDGER = "（由课程的账本引擎逐张量现算）"
ROPE_BASE = 10000                # RoFormer's base (Su et al. 2021, eq. 15: θ_i = 10000^(−2(i−1)/d))


def _kv_layer(reg, p: str, mn) -> Sym:
    """Bytes one token leaves in one full-attention layer: 2 · h_kv · d_h · 2 (MHA, GQA), checked by the engine."""
    a = mn.arch
    m = next(m for m, _ in a.mixer_counts if m.grows)
    expr = Const(2) * Sym("h_kv", a.n_kv_heads) * Sym("d_h", a.head_dim) * BYTES
    reg.add(f"{p}.kv_layer", f"{mn.name}：一个 token 在一层里留下的 K 和 V（BF16 字节）：2 × KV 头数 × 头维 × 2 字节",
            expr, value=m.kv_elems_per_token * 2, kind="bytes", symbols=mn.keys,
            sources=(mn.where + "：num_key_value_heads、head_dim",))
    return Sym("每层字节", expr.value)


def _sequence(reg, p: str, mn, T: int) -> None:
    reg.add(f"{p}.seq_{T // 1024}k_gb", f"{mn.name}：一条 {T:,} 个 token 的序列的缓存（BF16，GB）",
            Sym("缓存字节", views.cache_bytes_per_sequence(mn.ledger, T)) / GB, kind="ratio", style="x2",
            sources=(mn.where + LEDGER,))


def register(reg, models, course=None, data=None) -> None:
    reg.add("c3.short", "正文举例的短上下文（token）", value=SHORT, sources=("本课的设定：缓存组件默认的上下文长度",))
    reg.add("c3.long", "正文举例的长上下文（token）", value=LONG, sources=("本课的设定：正文比较各模型时的上下文长度",))
    if "llama7b" in models:
        mn = models["llama7b"]
        _kv_layer(reg, "c3.llama7b", mn)
        _sequence(reg, "c3.llama7b", mn, SHORT)
        _sequence(reg, "c3.llama7b", mn, LONG)
    if "llama70b" in models:
        _gqa(reg, models["llama70b"])
    if "deepseek_v3" in models:
        _mla(reg, models["deepseek_v3"])
    if "gemma_2_9b" in models:
        mn = models["gemma_2_9b"]
        _sequence(reg, "c3.gemma2", mn, LONG)
        reg.add("c3.gemma2.window", f"{mn.name}：滑窗层看多远（token）", value=mn.arch.sliding_window,
                kind="config", sources=(mn.where + "：sliding_window",))
        reg.add("c3.gemma2.sliding_layers", f"{mn.name}：滑窗层的层数",
                value=mn.arch.layer_types.count("sliding_attention"), kind="config",
                sources=(mn.where + "：layer_types（按 transformers 的默认：隔层交替）",))
    if "mistral_7b_v0_1" in models:
        mn = models["mistral_7b_v0_1"]
        reg.add("c3.mistral.window", f"{mn.name}：每层滑窗看多远（token）", value=mn.arch.sliding_window,
                kind="config", sources=(mn.where + "：sliding_window",))
        _sequence(reg, "c3.mistral", mn, SHORT)
        _sequence(reg, "c3.mistral", mn, LONG)
    if "anchor" in models:
        mn = models["anchor"]
        reg.add("c3.anchor.linear_layers", f"{mn.name}：线性注意力层的层数（不存 K、V）",
                value=mn.arch.layer_types.count("linear_attention"), kind="config",
                sources=(mn.where + "：full_attention_interval",))
        _sequence(reg, "c3.anchor", mn, LONG)
    _rope(reg, models)
    if data is not None:      # a caller with no data files (a test of another lesson's numbers) skips the runs
        _trained(reg, data)


def _gqa(reg, mn) -> None:
    p = "c3.llama70b"
    a = mn.arch
    _kv_layer(reg, p, mn)
    h, hkv, dh = Sym("h", a.n_heads), Sym("h_kv", a.n_kv_heads), Sym("d_h", a.head_dim)
    reg.add(f"{p}.group", f"{mn.name}：每组共用一对 K、V 的查询头数 h ÷ h_kv", h / hkv, kind="config",
            symbols=mn.keys, sources=(mn.where + "：num_attention_heads、num_key_value_heads",))
    reg.add(f"{p}.mha_layer", f"{mn.name}：若每个查询头都有自己的 K、V（MHA），一个 token 一层的字节",
            Const(2) * h * dh * BYTES, kind="bytes", symbols=mn.keys,
            sources=(mn.where + "：num_attention_heads、head_dim",))
    reg.add(f"{p}.mqa_layer", f"{mn.name}：若所有查询头共用一对 K、V（MQA），一个 token 一层的字节",
            Const(2) * Const(1) * dh * BYTES, kind="bytes", symbols=mn.keys, sources=(mn.where + "：head_dim",))
    _sequence(reg, p, mn, SHORT)
    _sequence(reg, p, mn, LONG)


def _mla(reg, mn) -> None:
    p = "c3.dsv3"
    config = mn.doc["config"]
    r = F.text_reader(config, mn.ledger)
    dc, dr = Sym("d_c", r.int("kv_lora_rank")), Sym("d_rope", r.int("qk_rope_head_dim"))
    m = next(m for m, _ in mn.arch.mixer_counts if m.grows)
    reg.add(f"{p}.latent", f"{mn.name}：MLA 每层缓存的潜向量宽度", dc, kind="config", symbols=mn.keys,
            sources=(mn.where + "：kv_lora_rank",))
    reg.add(f"{p}.rope_key", f"{mn.name}：MLA 每层缓存的共享 RoPE 键宽度", dr, kind="config", symbols=mn.keys,
            sources=(mn.where + "：qk_rope_head_dim",))
    layer = (dc + dr) * BYTES
    reg.add(f"{p}.kv_layer", f"{mn.name}：一个 token 在一层里留下的缓存（潜向量 + RoPE 键，BF16 字节）", layer,
            value=m.kv_elems_per_token * 2, kind="bytes", symbols=mn.keys,
            sources=(mn.where + "：kv_lora_rank、qk_rope_head_dim",))
    mha = F.mla_as_gqa_kv_bytes_per_token(config, mn.ledger, mn.arch.n_heads)
    reg.add(f"{p}.mha_per_token", f"{mn.name}：若把潜向量按 {mn.arch.n_heads} 个头展开成每头一份 K、V（MHA），"
            "每个 token 全部层的字节（BF16）", value=mha, kind="bytes",
            sources=(mn.where + "：num_attention_heads、qk_nope_head_dim、qk_rope_head_dim、v_head_dim",))
    reg.add(f"{p}.saving", f"{mn.name}：MHA 展开的缓存是 MLA 实际缓存的几倍",
            Sym("MHA 展开每 token 字节", mha) / Sym("MLA 每 token 字节", views.kv_bytes_per_token(mn.ledger)),
            kind="ratio", style="x0", sources=(mn.where + LEDGER,))
    _sequence(reg, p, mn, LONG)


def _rope(reg, models) -> None:
    reg.add("c3.rope_base", "RoFormer 原文的旋转频率底数", value=ROPE_BASE, kind="cited",
            sources=("Su 等 2021（RoFormer，arXiv 2104.09864）式 (15)",))
    for alias in ("qwen3_8b", "llama_4_scout_17b_16e", "gpt_oss_120b"):
        if alias not in models:
            continue
        mn = models[alias]
        text, prefix = text_config_of(mn.doc["config"])
        theta = text.get("rope_theta")
        if isinstance(theta, (int, float)):
            reg.add(f"c3.theta.{alias}", f"{mn.name}：rope_theta", value=Fraction(str(theta)), kind="config",
                    sources=(f"{mn.where}：{prefix}rope_theta",))
        scaling = text.get("rope_scaling")
        if isinstance(scaling, dict) and "factor" in scaling:
            reg.add(f"c3.rope_factor.{alias}", f"{mn.name}：rope_scaling 的放大倍数 factor",
                    value=Fraction(str(scaling["factor"])), kind="config",
                    sources=(f"{mn.where}：{prefix}rope_scaling.factor",))
            reg.add(f"c3.rope_orig.{alias}", f"{mn.name}：rope_scaling 的原训练长度",
                    value=scaling["original_max_position_embeddings"], kind="config",
                    sources=(f"{mn.where}：{prefix}rope_scaling.original_max_position_embeddings",))


def _trained(reg, data) -> None:
    """The course's small model (C2's stored speaker) and the stored mask experiment (data/train_attention.json)."""
    from ...train import generate as G
    from ...train.model import ModelConfig
    from . import CACHE_DEFAULTS
    from .trained import MAX_NEW
    sp = document(data, "train_speaker")
    m = sp["spec"]["model"]
    src = ("构建时由课程的训练代码训练的小模型（C2 的那一个）：它的设定",)
    for key, label in (("d_model", "隐藏维 d"), ("n_layers", "层数"), ("n_heads", "每层查询头数"),
                       ("n_kv_heads", "每层 KV 头数")):
        reg.add(f"c3.speaker.{key}", f"课程小模型的{label}", value=m[key], kind="config", sources=src)
    reg.add("c3.speaker.context", "课程小模型一次读的字数（训练窗口）", value=sp["context"], kind="config", sources=src)
    cfg = ModelConfig(**m).validate()
    t = len(CACHE_DEFAULTS["prompt"]) + CACHE_DEFAULTS["n_new"] - 1
    fsrc = ("课程的生成代码对每一步矩阵乘的计数（每次乘加算 2 次）",)
    reg.add("c3.cache.positions", "缓存组件默认设置下，最后一步读的位置数（开头的字数 + 写的字数 − 1）", value=t,
            kind="tokens", sources=("本课的设定：缓存组件默认的开头与字数",))
    reg.add("c3.cache.flops_cached", "用 KV cache 时最后一步的浮点运算", value=G.step_flops(cfg, t, True),
            kind="flops", sources=fsrc)
    reg.add("c3.cache.flops_full", "每步重算整段时最后一步的浮点运算", value=G.step_flops(cfg, t, False),
            kind="flops", sources=fsrc)
    reg.add("c3.cache.max_new", "缓存组件一次最多写几个字", value=MAX_NEW, sources=("本课的设定",))
    doc = document(data, "train_attention")
    runs = doc["runs"]
    rsrc = ("构建时的掩码实验：同一个小模型有无因果掩码各训练一次",)
    reg.add("c3.mask.steps", "掩码实验每一头训练的步数", value=doc["steps"], sources=rsrc)
    reg.add("c3.mask.held_windows", "掩码实验评估留出 loss 用的段数", value=doc["held_windows"], sources=rsrc)
    for arm, zh in (("causal", "有因果掩码"), ("leak", "去掉因果掩码")):
        r = runs[arm]
        reg.add(f"c3.mask.{arm}.train", f"{zh}训练：最后一步的训练 loss",
                value=Fraction(str(r["loss"][-1][1])), kind="ratio", style="x2", sources=rsrc)
        reg.add(f"c3.mask.{arm}.held", f"{zh}训练：最后的留出 loss（评估时有掩码，和生成时一样）",
                value=Fraction(str(r["held_out"][-1][1])), kind="ratio", style="x2", sources=rsrc)
    reg.add("c3.mask.leak.held_leak", "去掉因果掩码训练：留出 loss，评估时也不加掩码（后文仍看得见）",
            value=Fraction(str(runs["leak"]["held_out_leak"][-1][1])), kind="ratio", style="x2", sources=rsrc)
