"""C15 分歧 — the lesson's numbers (``c15.*``), each from a model's ledger and fork card (experiments/ledger/forks.py).

Per model of the fork map: the cache of one sequence at 4K / 32K / 128K / 1M tokens (BF16, 10⁹ bytes; only up to
the model's own context length), cache bytes per token, the attention FLOPs each further cached token adds per
generated token (forks.attention_flops_per_context_token), the token mixers' parameters and their share, the
active share, the embedding share, the vocabulary, MTP's parameters and FLOPs share, and what each stability device
costs in parameters (QK-norm's q_norm / k_norm, the sandwich's extra norms, attention sinks); for a model with MLA,
its cache per token were the latent expanded into every head's K and V (MHA). For each model with a DSA indexer
(DeepSeek-V3.2 as ``c15.dsa.*``, the others as ``c15.<alias>.dsa.*``) the sparse-attention cost at 128K (indexer,
the top-k attention and dense MLA for comparison, both in MLA's MQA mode as the V3.2-Exp report runs it), its
parameters and index keys, and the context from which the sparse path is cheaper. Counts are expression trees
where the quantity has a short formula over config keys, else the engine's value with the ledger named as the
source.
"""
from __future__ import annotations

from fractions import Fraction

from ...expr import Const, Sym
from ...ledger import forks as F
from ...ledger import views
from ...toolkit.model_numbers import LEDGER
from . import FORK_MODELS

GB = Const(10**9)
T_POINTS = {"t4k": 4096, "t32k": 32768, "t128k": 131072, "t1m": 1048576}
DSA_MODEL = "deepseek_v3_2"


def register(reg, models, course=None) -> None:
    for alias in FORK_MODELS:
        if alias in models:
            _model(reg, alias, models[alias])
    for alias in FORK_MODELS:
        if alias in models:
            _dsa(reg, models[alias], "c15.dsa" if alias == DSA_MODEL else f"c15.{alias}.dsa")
    for key, T in T_POINTS.items():
        reg.add(f"c15.T.{key}", f"本课比较缓存用的上下文长度 T（{T:,} 个 token）", value=T, kind="tokens",
                sources=("本课取的比较点：2 的整数次幂",))
    present = [a for a in FORK_MODELS if a in models]
    if present:
        reg.add("c15.n_models", "分歧图里的模型数", value=len(present), kind="config", sources=("本课分歧图",))
        vocabs = [models[a].arch.vocab_size for a in present]
        reg.add("c15.vocab_max", "分歧图里最大的词表", value=max(vocabs), kind="config",
                sources=tuple(f"{models[a].where}：vocab_size" for a in present if models[a].arch.vocab_size
                              == max(vocabs))[:1])
        reg.add("c15.vocab_min", "分歧图里最小的词表", value=min(vocabs), kind="config",
                sources=tuple(f"{models[a].where}：vocab_size" for a in present if models[a].arch.vocab_size
                              == min(vocabs))[:1])


def _src(mn, *keys: str) -> tuple[str, ...]:
    return (f"{mn.where}：" + "、".join(keys),) if keys else (mn.where + LEDGER,)


def _model(reg, alias: str, mn) -> None:
    card = F.card_of(mn.doc["config"], mn.ledger)
    p = f"c15.{alias}"
    L = mn.ledger
    for key, T in T_POINTS.items():
        if T <= mn.arch.context_length:
            reg.add(f"{p}.cache_{key}_gb", f"{mn.name}：一条 {T:,} token 序列的缓存（BF16，GB）",
                    Sym("缓存字节", F.kv_bytes_at(L, T)) / GB, kind="ratio", style="x2", sources=(mn.where + LEDGER,))
    reg.add(f"{p}.kv_per_token", f"{mn.name}：每多一个 token，缓存多出的字节（BF16，看全文的层）",
            value=card["kv_bytes_per_token"], kind="bytes",
            sources=(mn.where + LEDGER,))
    reg.add(f"{p}.flops_per_context_token", f"{mn.name}：上下文每多一个 token，每生成一个 token 多出的注意力计算"
            "（FLOPs，已过窗口和 DSA 的 top-k）", value=F.attention_flops_per_context_token(mn.doc["config"], L),
            kind="flops", sources=(mn.where + LEDGER + "：看全文的层各 2 × 打分宽度，DSA 层只算索引器",))
    mixers = F.mixer_params(L)
    reg.add(f"{p}.mixer_params", f"{mn.name}：全部层的注意力（含线性注意力层、索引器）参数", value=mixers,
            sources=(mn.where + LEDGER,))
    reg.add(f"{p}.mixer_share", f"{mn.name}：注意力参数占总参数的比例",
            Sym("注意力参数", mixers) / Sym("总参数", L.total), kind="ratio", style="pct",
            sources=(mn.where + LEDGER,))
    if "d_c" in mn.arch.symbols:
        reg.add(f"{p}.mha_kv_per_token", f"{mn.name}：MLA 的潜向量若按头展开成每头一份 K、V（MHA，索引器一并去掉），"
                "每 token 的缓存字节（BF16）",
                value=F.mla_as_gqa_kv_bytes_per_token(mn.doc["config"], L, mn.arch.n_heads), kind="bytes",
                sources=_src(mn, "num_attention_heads", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"))
    reg.add(f"{p}.active_share", f"{mn.name}：每 token 激活参数占总参数的比例",
            Sym("激活参数", L.active_per_token) / Sym("总参数", L.total), kind="ratio", style="pct",
            sources=(mn.where + LEDGER,))
    reg.add(f"{p}.vocab", f"{mn.name}：词表大小", value=mn.arch.vocab_size, kind="config",
            sources=_src(mn, mn.keys.get("V", "vocab_size")))
    reg.add(f"{p}.emb_share", f"{mn.name}：输入 embedding 与 lm_head 占总参数的比例",
            Sym("embedding + lm_head", card["embedding"]["params"]) / Sym("总参数", L.total), kind="ratio",
            style="pct", sources=(mn.where + LEDGER,))
    reg.add(f"{p}.full_layers", f"{mn.name}：看全部上下文的层数", value=card["full_layers"], kind="config",
            sources=(mn.where + LEDGER,))
    reg.add(f"{p}.layers", f"{mn.name}：层数", value=card["layers"], kind="config",
            sources=_src(mn, mn.keys.get("L", "num_hidden_layers")))
    windows = sorted({run["window"] for run in card["attention"] if run["window"]})
    if len(windows) == 1:
        reg.add(f"{p}.window", f"{mn.name}：滑窗（或分块）的长度", value=windows[0], kind="tokens",
                sources=_src(mn, mn.keys.get("W") or mn.keys.get("W_chunk") or "sliding_window"))
    for key, v in card["norm"]["softcap"].items():
        reg.add(f"{p}.{key}", f"{mn.name}：config 里的 {key}", value=Fraction(str(v)), kind="config", style="x0",
                sources=_src(mn, key))
    m = card["mtp"]
    if m["modules"]:
        reg.add(f"{p}.mtp_params", f"{mn.name}：MTP 模块的参数", value=m["params"], sources=(mn.where + LEDGER,))
        reg.add(f"{p}.mtp_share", f"{mn.name}：MTP 参数占 checkpoint 的比例",
                Sym("MTP", m["params"]) / Sym("总参数", L.total), kind="ratio", style="pct",
                sources=(mn.where + LEDGER,))
        reg.add(f"{p}.mtp_flops_share", f"{mn.name}：多预测一个 token 的 MTP 前向计算，占主模型每 token 权重计算的比例",
                value=Fraction(m["flops_per_token"]) / Fraction(views.param_flops_per_token(L)), kind="ratio",
                style="pct", sources=(mn.where + LEDGER + "：2 × MTP 模块里一个 token 经过的矩阵权重",))
    costs = F.stability_params(L)
    for key, label in (("qk_norm", "QK-norm（q_norm、k_norm）的参数"), ("sinks", "注意力 sinks 的参数"),
                       ("extra_norms", "夹心结构多出的归一化（每层子层之后那两个）的参数")):
        if costs[key]:
            reg.add(f"{p}.{key}_params", f"{mn.name}：{label}", value=costs[key], sources=(mn.where + LEDGER,))
            reg.add(f"{p}.{key}_share", f"{mn.name}：{label}占总参数的比例",
                    Sym(label, costs[key]) / Sym("总参数", L.total), kind="ratio", style="e2",
                    sources=(mn.where + LEDGER,))


def _dsa(reg, mn, p: str) -> None:
    """The sparse-attention numbers of a model with a DSA indexer, under prefix p (nothing without one)."""
    config, L = mn.doc["config"], mn.ledger
    ix = F.indexer_of(config, L)
    if ix is None:
        return
    keys = ("index_n_heads", "index_head_dim", "index_topk")
    H, dI, k = Sym("H_I", ix.heads), Sym("d_I", ix.head_dim), Sym("k_idx", ix.top_k)
    sym = {"H_I": "index_n_heads", "d_I": "index_head_dim", "k_idx": "index_topk", "L_I": "有索引器的层数",
           "L_S": "只看 top-k 的层数", "h": "num_attention_heads", "d_c": "kv_lora_rank", "d_rope": "qk_rope_head_dim"}
    reg.add(f"{p}.heads", f"{mn.name}：索引器的头数 H_I", H, kind="config", sources=_src(mn, keys[0]), symbols=sym)
    reg.add(f"{p}.head_dim", f"{mn.name}：索引器每头的宽度 d_I", dI, kind="config", sources=_src(mn, keys[1]),
            symbols=sym)
    reg.add(f"{p}.top_k", f"{mn.name}：每个 token 只看的 token 数 k_idx", k, kind="config",
            sources=_src(mn, keys[2]), symbols=sym)
    reg.add(f"{p}.layers", f"{mn.name}：带索引器的层数", value=ix.own_layers, kind="config",
            sources=(mn.where + LEDGER,))
    index_params = F.indexer_params(L)
    reg.add(f"{p}.index_params", f"{mn.name}：全部索引器的参数", value=index_params, sources=(mn.where + LEDGER,))
    reg.add(f"{p}.index_share", f"{mn.name}：索引器占总参数的比例",
            Sym("索引器", index_params) / Sym("总参数", L.total), kind="ratio", style="pct2",
            sources=(mn.where + LEDGER,))
    T = 131072
    f = F.attention_flops(config, L, T)
    LI = Sym("L_I", ix.own_layers)
    idx_expr = LI * (Const(2) * H * dI * Const(T) + Const(2) * H * Const(T))
    reg.add(f"{p}.indexer_t128k", f"{mn.name}：T = {T:,} 时索引器给一个新 token 打分的 FLOPs", idx_expr,
            value=f["indexer"], kind="flops", style="e2", sources=_src(mn, *keys), symbols=sym)
    mqa = ("d_c" in mn.arch.symbols)
    mode = "，按 MLA 的 MQA 模式：每头的键是潜向量加 RoPE 键、值是潜向量" if mqa else ""
    attend_expr = dense_expr = None
    if mqa:      # every head against the shared entry: 2 · (d_c + d_rope) for the score, 2 · d_c for the sum
        r = F.text_reader(config, L)
        dc, drope = Sym("d_c", r.int("kv_lora_rank")), Sym("d_rope", r.int("qk_rope_head_dim"))
        per = Sym("L_S", ix.sparse_layers) * Sym("h", mn.arch.n_heads) * (Const(2) * (dc + drope) + Const(2) * dc)
        attend_expr, dense_expr = per * k, per * Const(T)
        reg.add(f"{p}.mqa_key_dim", f"{mn.name}：MQA 模式下每个头的键宽（潜向量 + RoPE 键）", dc + drope, kind="config",
                sources=_src(mn, "kv_lora_rank", "qk_rope_head_dim"), symbols=sym)
        reg.add(f"{p}.mqa_value_dim", f"{mn.name}：MQA 模式下每个头的值宽（潜向量）", dc, kind="config",
                sources=_src(mn, "kv_lora_rank"), symbols=sym)
    reg.add(f"{p}.attend_t128k", f"{mn.name}：T = {T:,} 时只看 top-k 的 MLA 注意力 FLOPs{mode}", attend_expr,
            value=f["attend"], kind="flops", style="e2",
            sources=_src(mn, "num_attention_heads", "kv_lora_rank", "qk_rope_head_dim", keys[2]) if mqa
            else (mn.where + LEDGER,), symbols=sym)
    reg.add(f"{p}.dense_t128k", f"{mn.name}：T = {T:,} 时若每层都看全部 token 的 MLA 注意力 FLOPs{mode}", dense_expr,
            value=f["dense"], kind="flops", style="e2",
            sources=_src(mn, "num_attention_heads", "kv_lora_rank", "qk_rope_head_dim") if mqa
            else (mn.where + LEDGER,), symbols=sym)
    reg.add(f"{p}.ratio_t128k", f"{mn.name}：T = {T:,} 时稀疏注意力（含索引器）的计算是稠密的几分之几",
            Sym("稀疏", f["total"]) / Sym("稠密", f["dense"]), kind="ratio", style="pct",
            sources=(mn.where + LEDGER,))
    reg.add(f"{p}.indexer_share_t128k", f"{mn.name}：T = {T:,} 时索引器占稀疏注意力计算的比例",
            Sym("索引器", f["indexer"]) / Sym("稀疏", f["total"]), kind="ratio", style="pct",
            sources=(mn.where + LEDGER,))
    cross = F.sparse_crossover_T(config, L)
    if cross is not None:
        reg.add(f"{p}.crossover_T", f"{mn.name}：从多长的上下文起，稀疏注意力（含索引器）比稠密 MLA 省计算",
                value=cross, kind="tokens", sources=(mn.where + LEDGER,))
    per_token_index = ix.own_layers * ix.head_dim * 2
    reg.add(f"{p}.index_key_bytes", f"{mn.name}：每个 token 在全部层留下的索引键字节（BF16）",
            LI * dI * Const(2), value=per_token_index, kind="bytes", sources=_src(mn, keys[1]), symbols=sym)
