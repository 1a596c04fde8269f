"""C6 模型该多大 — the lesson's numbers (``c6.*``), each from experiments/scaling.py, a model's ledger, its meta.yaml's
published training tokens, or data/citations.json.

Exact counts (6·N·D, 20·N, tokens per parameter) are expression trees over the ledger's N and the published D;
what a fit predicts (optima, losses) is floating point from the fit's cited coefficients, registered by value
with the fit named in its source. Models appear only where their meta.yaml has a published token figure.
"""
from __future__ import annotations

import math

from ...expr import Const, Sym
from ...toolkit import scaling as S
from ...toolkit.model_numbers import LEDGER
from ...toolkit.stored import document
from . import BUDGETS, PLACED
from .exercises import TOKENS_PER_PARAM

FIT_SRC = {"chinchilla": "Hoffmann 等 2022 的方法三拟合（四舍五入后的发表值），闭式解 N_opt = G·(C/6)^(β/(α+β))",
           "epoch": "Besiroglu 等 2024（Epoch AI）重新拟合的系数，同一个闭式解"}
FIT_NAME = {"chinchilla": "Chinchilla 原文（四舍五入）系数", "epoch": "Epoch AI 重新拟合的系数"}
DEEPSEEK_SRC = "DeepSeek-AI 2024（DeepSeek LLM）第 3.2 节的拟合 M_opt = 0.1715·C^0.5243、D_opt = 5.8316·C^0.4757"
TOKENS = ("gpt3", "llama7b", "llama_2_13b", "llama70b", "gemma_2_9b", "qwen3_8b")


def cited_fits(cited) -> tuple[dict[str, S.ParametricFit], S.KaplanFit, S.DeepSeekFit]:
    """The fits with the coefficients data/citations.json gives (experiments.toolkit.scaling holds the same values
    for the browser; tests/test_scaling.py keeps them equal), so a number below moves with its cited figure."""
    def v(name):
        return float(cited[name].value)
    fits = {key: S.ParametricFit(key, **{p: v(f"{key}_{p}") for p in ("E", "A", "B", "alpha", "beta")})
            for key in S.FITS}
    kaplan = S.KaplanFit(**{p: v(f"kaplan_{p}") for p in ("N_c", "alpha_N", "D_c", "alpha_D", "N_exponent",
                                                              "D_exponent")})
    deepseek = S.DeepSeekFit(**{p: v(f"deepseek_{p}") for p in ("M_base", "a", "D_base", "b")})
    return fits, kaplan, deepseek


def register(reg, models, course=None, data=None) -> None:
    cited = {name[len("cited."):]: num for name, num in reg.numbers.items() if name.startswith("cited.")}
    fits, kaplan, deepseek = cited_fits(cited)
    _fits(reg, cited, fits, deepseek)
    _baseline(reg, models["baseline"], cited, fits)
    for alias in TOKENS:
        if alias in models and models[alias].meta.get("training_tokens"):
            _trained(reg, models[alias], fits["epoch"])
    _placed_orders(reg, models)
    _gpt3(reg, models["gpt3"], cited)
    _llama7b(reg, models["llama7b"], cited)
    _attention(reg, models)
    _kaplan(reg, cited, kaplan)
    _llama3(reg, cited)
    if data is not None:
        _own(reg, cited, data)
    if "deepseek_v3" in models and models["deepseek_v3"].meta.get("training_tokens"):
        mn = models["deepseek_v3"]
        reg.add("c6.dsv3_tpa", f"{mn.name}：训练 token 数 ÷ 每 token 激活参数",
                Sym("D", mn.meta["training_tokens"]) / Sym("激活参数", mn.ledger.active_per_token), kind="ratio",
                style="n0", sources=(mn.meta["training_tokens_source_zh"], mn.where + LEDGER))


def _fits(reg, cited, fits, deepseek) -> None:
    C = float(cited["gopher_flops"].value)
    for fit in fits.values():
        N, D = fit.optimum(C)
        src = (FIT_SRC[fit.key], cited["gopher_flops"].sources[0])
        reg.add(f"c6.{fit.key}.a", f"按{FIT_NAME[fit.key]}的 N_opt ∝ C^a 中的 a = β/(α+β)", value=fit.a, kind="ratio",
                style="x3", sources=src[:1])
        reg.add(f"c6.{fit.key}.N_gopher", f"按{FIT_NAME[fit.key]}在 Gopher 的算力预算下给出的最优参数量", value=N,
                kind="count", style="B1", sources=src)
        reg.add(f"c6.{fit.key}.D_gopher", f"按{FIT_NAME[fit.key]}在 Gopher 的算力预算下给出的最优 token 数", value=D,
                kind="tokens", style="e2", sources=src)
        reg.add(f"c6.{fit.key}.tpp_gopher", f"按{FIT_NAME[fit.key]}在 Gopher 的算力预算下的最优 token/参数",
                value=D / N, kind="ratio", style="x1", sources=src)
        reg.add(f"c6.{fit.key}.n_growth", f"按{FIT_NAME[fit.key]}，算力翻 10 倍时最优参数量变为几倍",
                value=10 ** fit.a, kind="ratio", style="x2", sources=src[:1])
    reg.add("c6.chinchilla_tpp", "Chinchilla 的 token/参数（1.4T ÷ 70B）",
            Sym("D", cited["chinchilla_tokens"].value) / Sym("N", cited["chinchilla_params"].value), kind="ratio",
            style="n", sources=cited["chinchilla_tokens"].sources)
    reg.add("c6.exercise_tpp", "练习把模型规模折算成算力预算时每个参数读的 token（D = 这个数 × N）",
            value=TOKENS_PER_PARAM, kind="ratio", style="n", sources=("本课练习的设定：取 Chinchilla 的比例",))
    reg.add("c6.gopher_tpp", "Gopher 的 token/参数（用同一笔算力，C ÷ 6N ÷ N）",
            Sym("C", cited["gopher_flops"].value) / Const(6) / Sym("N", cited["gopher_params"].value)
            / Sym("N", cited["gopher_params"].value), kind="ratio", style="x1", sources=cited["gopher_flops"].sources)
    M, D = deepseek.optimum(C)
    reg.add("c6.ds.M_gopher", "DeepSeek LLM 拟合在 Gopher 的算力预算下的最优 M（每 token 非 embedding FLOPs）",
            value=M, kind="flops", style="e2", sources=(DEEPSEEK_SRC,))
    reg.add("c6.ds.N_equiv_gopher", "这个 M 相当于 6N 里的 N（M ÷ 6）", value=M / 6, kind="count", style="B1",
            sources=(DEEPSEEK_SRC,))
    reg.add("c6.ds.D_gopher", "DeepSeek LLM 拟合在 Gopher 的算力预算下的最优 token 数", value=D, kind="tokens",
            style="e2", sources=(DEEPSEEK_SRC,))
    reg.add("c6.ds.tpp_gopher", "DeepSeek LLM 拟合的最优点折算成 token/参数（D ÷ (M/6)）", value=D / (M / 6),
            kind="ratio", style="x1", sources=(DEEPSEEK_SRC,))
    reg.add("c6.ds.budget_check", "M_opt × D_opt ÷ C（两条拟合合起来是否用完预算）", value=M * D / C, kind="ratio",
            style="x4", sources=(DEEPSEEK_SRC,))
    ratio = fits["epoch"].optimum(C)[0] / fits["chinchilla"].optimum(C)[0]
    reg.add("c6.fit_ratio_gopher", "同一预算下 Epoch 拟合与原文拟合的最优参数量之比", value=ratio, kind="ratio",
            style="x1", sources=(FIT_SRC["chinchilla"], FIT_SRC["epoch"]))
    reg.add("c6.epoch.N_gap", "Epoch 拟合的最优参数量与 Chinchilla 实际 70B 的相对差",
            value=abs(fits["epoch"].optimum(C)[0] - cited["chinchilla_params"].value)
            / cited["chinchilla_params"].value,
            kind="ratio", style="pct", sources=(FIT_SRC["epoch"], cited["chinchilla_params"].sources[0]))


def _baseline(reg, mn, cited, fits) -> None:
    L = mn.ledger
    N = Sym("N", L.total)
    src = (mn.where + LEDGER,)
    d20 = reg.add("c6.base.D20", "课程基线训练到 20 token/参数要的 token 数 D = 20·N", Const(20) * N, kind="tokens",
                  sources=src)
    C = reg.add("c6.base.C", "课程基线训练到 20 token/参数的算力 C = 6·N·D", Const(6) * N * Sym("D", d20.value),
                kind="flops", style="e2", sources=src)
    per = S.training_flops_per_token(L)
    reg.add("c6.base.seq", "课程基线的序列长度（config 的上下文长度）", value=per["seq"], kind="config", sources=src)
    w = reg.add("c6.base.weights_per_token",
                "课程基线每个训练 token 的矩阵乘 FLOPs：6 × 每 token 乘过的权重（含共享的输出层）",
                Const(6) * Sym("乘过的权重", S.matmul_weights_per_token(L)), value=per["weights"], kind="flops",
                sources=src)
    a = reg.add("c6.base.attention_per_token",
                f"课程基线每个训练 token 的注意力打分 FLOPs（序列长 {per['seq']:,}，3 × 前向）",
                value=per["attention"], kind="flops", sources=src)
    reg.add("c6.base.six_n", "课程基线的 6N（每个训练 token）", Const(6) * N, kind="flops", sources=src)
    reg.add("c6.base.per_token", "课程基线每个训练 token 的 FLOPs（矩阵乘 + 注意力）",
            Sym("矩阵乘", w.value) + Sym("注意力", a.value), value=per["total"], kind="flops", sources=src)
    reg.add("c6.base.attention_share", f"课程基线注意力项与矩阵乘项之比（序列长 {per['seq']:,}）",
            Sym("注意力", a.value) / Sym("矩阵乘", w.value), kind="ratio", style="pct0", sources=src)
    reg.add("c6.base.C_exact", "课程基线训练到 20 token/参数、逐项算（含注意力）的算力",
            Sym("每 token", per["total"]) * Sym("D", d20.value), kind="flops", style="e2", sources=src)
    M = S.deepseek_M(L)
    reg.add("c6.base.M", "课程基线的 DeepSeek M（每 token 非 embedding FLOPs，含注意力）", value=M, kind="flops",
            sources=src)
    reg.add("c6.base.six_n_over_M", "课程基线 6N 与 M 之比", Sym("6N", 6 * L.total) / Sym("M", M), kind="ratio",
            style="pct0", sources=src)
    reg.add("c6.base.nonemb", "课程基线的非 embedding 参数（Kaplan 的 N）", value=S.non_embedding_params(L),
            sources=src)
    tpp = {}
    for fit in fits.values():
        N_opt, D_opt = fit.optimum(float(C.value))
        reg.add(f"c6.base.{fit.key}_N", f"按{FIT_NAME[fit.key]}在课程基线这笔算力下的最优参数量（远在拟合范围之外）",
                value=N_opt, style="M1", sources=(FIT_SRC[fit.key],))
        tpp[fit.key] = D_opt / N_opt
    reg.add("c6.base.tpp_ratio", "课程基线这笔算力下，Epoch 与原文系数给的最优 token/参数之比",
            value=tpp["epoch"] / tpp["chinchilla"], kind="ratio", style="x1",
            sources=(FIT_SRC["chinchilla"], FIT_SRC["epoch"]))


def _trained(reg, mn, epoch) -> None:
    D = mn.meta["training_tokens"]
    src = (mn.where + LEDGER, mn.meta["training_tokens_source_zh"])
    N = Sym("N", mn.ledger.total)
    reg.add(f"c6.{mn.p}.D", f"{mn.name} 的训练 token 数（公开数字）", value=D, kind="tokens", style="e2",
            sources=src[1:])
    tpp = Sym("D", D) / N
    reg.add(f"c6.{mn.p}.tpp", f"{mn.name} 的训练 token 数 ÷ 参数量", tpp, kind="ratio",
            style="x2" if tpp.value < 10 else "n0", sources=src)
    C = reg.add(f"c6.{mn.p}.C", f"{mn.name} 的训练算力 C = 6·N·D", Const(6) * N * Sym("D", D), kind="flops",
                style="e2", sources=src)
    N_opt, D_opt = epoch.optimum(float(C.value))
    reg.add(f"c6.{mn.p}.epoch_N", f"同样的算力下 Epoch 拟合的最优参数量（{mn.name}）", value=N_opt, style="B1",
            sources=(FIT_SRC["epoch"],))
    reg.add(f"c6.{mn.p}.vs_opt", f"{mn.name} 的参数量 ÷ 同算力下 Epoch 拟合的最优参数量", value=mn.ledger.total / N_opt,
            kind="ratio", style="x2", sources=(FIT_SRC["epoch"],))
    loss, loss_opt = epoch.loss(mn.ledger.total, D), epoch.loss(N_opt, D_opt)
    reg.add(f"c6.{mn.p}.loss", f"Epoch 拟合对 {mn.name}（N、D 如实）预测的损失", value=loss, kind="ratio",
            style="x3", sources=(FIT_SRC["epoch"],))
    reg.add(f"c6.{mn.p}.loss_opt", f"同算力下 Epoch 最优点的预测损失（{mn.name}）", value=loss_opt, kind="ratio",
            style="x3", sources=(FIT_SRC["epoch"],))
    reg.add(f"c6.{mn.p}.loss_gap", f"{mn.name} 比同算力最优点多出的预测损失（相对值）",
            value=(loss - loss_opt) / loss_opt, kind="ratio", style="pct1", sources=(FIT_SRC["epoch"],))


def _placed_orders(reg, models) -> None:
    """How many orders of magnitude the explorer's real models (those with a published token count) sit above its
    smallest budget stop: the fewest and the most."""
    low = min(float(b) for b in BUDGETS)
    orders = [math.log10(6 * models[a].ledger.total * models[a].meta["training_tokens"] / low)
              for a in PLACED if a in models and models[a].meta.get("training_tokens")]
    src = ("各模型公开的训练 token 数（出处见该模型的资料）与账本的参数量，C = 6·N·D；图上最小的预算档",)
    reg.add("c6.placed.orders_min", "图上有公开训练 token 数的真实模型，算力比最小的预算档大几个数量级（最少）",
            value=min(orders), kind="ratio", style="x1", sources=src)
    reg.add("c6.placed.orders_max", "图上有公开训练 token 数的真实模型，算力比最小的预算档大几个数量级（最多）",
            value=max(orders), kind="ratio", style="x1", sources=src)


def _gpt3(reg, mn, cited) -> None:
    reg.add("c6.gpt3.paper_flops", "GPT-3 论文附录给 175B 模型报的训练总计算量（FLOPs）",
            Sym("论文值（10²¹ FLOPs）", cited["gpt3_train_flops_e21"].value) * Const(10**21), kind="flops",
            style="e2", sources=cited["gpt3_train_flops_e21"].sources)
    reg.add("c6.gpt3.nonemb", "GPT-3 175B 的非 embedding 参数（Kaplan 的 N：去掉词表与位置 embedding）",
            Sym("文本主干", mn.ledger.text_backbone) - Sym("embedding", S.vocab_params(mn.ledger)),
            value=S.non_embedding_params(mn.ledger), sources=(mn.where + LEDGER,))


def _llama7b(reg, mn, cited) -> None:
    C = reg["c6.llama7b.C"].value
    peak = cited["a100_bf16_tflops"].value * 10**12
    hours = cited["llama2_7b_gpu_hours"].value
    reg.add("c6.llama7b.mfu", "由 Llama 2 7B 的 6ND 与论文报告的 A100 卡时反推的利用率",
            Sym("C", C) / (Sym("卡时", hours) * Const(3600) * Sym("峰值", peak)), kind="ratio", style="pct0",
            sources=cited["llama2_7b_gpu_hours"].sources + cited["a100_bf16_tflops"].sources)
    reg.add("c6.llama7b.infer_ratio", "同算力 Epoch 最优模型与 Llama 2 7B 每生成一个 token 的计算之比（≈ 参数量之比）",
            value=1 / reg["c6.llama7b.vs_opt"].value, kind="ratio", style="x1", sources=(FIT_SRC["epoch"],))


def _attention(reg, models) -> None:
    llama = models["llama7b"]
    seq = reg.add("c6.attn_seq", "本课比较注意力项时取的训练序列长度：Llama 2 7B 的上下文长度",
                  Sym("T_max", llama.arch.context_length), kind="config", sources=llama.src("T_max"),
                  symbols=llama.keys).value
    for alias in ("llama7b", "qwen3_8b", "gpt3", "baseline"):
        mn = models[alias]
        L = mn.ledger
        at = S.training_flops_per_token(L, seq)
        native = S.training_flops_per_token(L)
        src = (mn.where + LEDGER,)
        reg.add(f"c6.{alias}.attn_share_seq", f"{mn.name}：序列长取 Llama 2 7B 的上下文长度时注意力项与矩阵乘项之比",
                Sym("注意力", at["attention"]) / Sym("矩阵乘", at["weights"]), kind="ratio", style="pct0", sources=src)
        reg.add(f"c6.{alias}.attn_share_native", f"{mn.name}：序列长取 config 的上下文长度时注意力项与矩阵乘项之比",
                Sym("注意力", native["attention"]) / Sym("矩阵乘", native["weights"]), kind="ratio", style="pct0",
                sources=src)
        reg.add(f"c6.{alias}.breakeven_seq", f"{mn.name}：注意力项追上矩阵乘项的训练序列长度",
                value=S.attention_breakeven_seq(L), kind="tokens", style="n0", sources=src)
        reg.add(f"c6.{alias}.d_times_6", f"{mn.name}：6·d", Const(6) * Sym("d", L.arch.d_model), kind="tokens",
                sources=src)
    # Kaplan et al.'s Table 1 count of the same term, from the config's widths (not the ledger's score widths)
    a = llama.arch
    kaplan = Const(3) * Sym("2·n_layer·n_ctx·d_attn",
                            S.kaplan_attention_flops(a.n_layers, seq, a.n_heads * a.head_dim))
    reg.add("c6.llama7b.attn_share_kaplan",
            "Llama 2 7B：按 Kaplan 等表 1 的注意力项（每层每 token 前向 2·n_ctx·d_attn，训练 × 3）与矩阵乘项之比",
            kaplan / Sym("矩阵乘", S.training_flops_per_token(llama.ledger, seq)["weights"]), kind="ratio",
            style="pct0",
            sources=(llama.where + LEDGER, "Kaplan 等 2020 表 1：C_forward ≈ 2N + 2·n_layer·n_ctx·d_attn"))


def _kaplan(reg, cited, kaplan) -> None:
    n, d = S.growth_split(kaplan.N_exponent, kaplan.D_exponent)
    src = cited["kaplan_N_exponent"].sources
    reg.add("c6.kaplan.n_growth", f"按 Kaplan 的指数，算力翻 10 倍时模型参数变为几倍（10^{kaplan.N_exponent}）",
            value=n, kind="ratio", style="x2", sources=src)
    reg.add("c6.kaplan.d_growth", f"按 Kaplan 的指数，算力翻 10 倍时训练 token 变为几倍（10^{kaplan.D_exponent}）",
            value=d, kind="ratio", style="x2", sources=src)
    a2 = float(cited["chinchilla_a_approach2"].value)
    n, d = S.growth_split(a2, 1 - a2)
    src = cited["chinchilla_a_approach2"].sources
    reg.add("c6.isoflop.n_growth", f"按 Chinchilla 方法二的指数，算力翻 10 倍时模型参数变为几倍（10^{a2}）", value=n,
            kind="ratio", style="x1", sources=src)
    reg.add("c6.isoflop.d_growth", f"按 Chinchilla 方法二的指数，算力翻 10 倍时训练 token 变为几倍（10^(1 − {a2})）",
            value=d, kind="ratio", style="x1", sources=src)


def _llama3(reg, cited) -> None:
    reg.add("c6.llama3_8b.tpp", "Llama 3 8B 的 token/参数（15T ÷ 8B，两者都是四舍五入的公开值）",
            Sym("D", cited["llama3_8b_tokens"].value) / Sym("N", cited["llama3_8b_params"].value), kind="ratio",
            style="n0", sources=cited["llama3_8b_tokens"].sources + cited["llama3_8b_params"].sources)



OWN_SRC = ("课程训练代码在《论语》《大学》《中庸》上预先算好的 IsoFLOP 网格（同一个随机种子），"
           "本页按 Chinchilla 方法二拟合")


def _own(reg, cited, data) -> None:
    """The course trainer's own IsoFLOP grid (data/train_isoflop.json) and its fit (own_fit.py): the grid's extent,
    each budget's optimum, the exponents, and what limits them (the range of N, the passes over the text, the
    share of N that is the embedding, how far another seed moves a loss and the optimum)."""
    from fractions import Fraction

    from . import own_fit
    grid = document(data, "train_isoflop")
    runs = grid["runs"]
    f = own_fit.fit(runs)
    src = (OWN_SRC,)
    Ns = sorted({r["N"] for r in runs})
    budgets = [o["C"] for o in f["optima"]]
    reg.add("c6.iso.budgets", "网格里的算力预算个数", value=len(budgets), sources=src)
    reg.add("c6.iso.sizes", "每个预算训练的模型尺寸个数", value=len(grid["widths"]), sources=src)
    reg.add("c6.iso.runs", "网格里的训练次数", value=len(runs), sources=src)
    reg.add("c6.iso.steps", "整个网格一共训练的步数", value=sum(r["steps"] for r in runs), sources=src)
    reg.add("c6.iso.C_min", "网格最小的算力预算（FLOPs，6ND）", value=Fraction(str(budgets[0])), kind="flops",
            style="e0", sources=src)
    reg.add("c6.iso.C_max", "网格最大的算力预算（FLOPs，6ND）", value=Fraction(str(budgets[-1])), kind="flops",
            style="e0", sources=src)
    reg.add("c6.iso.N_min", "网格最小的模型的参数量（训练代码自己数的，含 embedding）", value=Ns[0], sources=src)
    reg.add("c6.iso.N_max", "网格最大的模型的参数量（训练代码自己数的，含 embedding）", value=Ns[-1], sources=src)
    reg.add("c6.iso.N_span", "网格里最大与最小模型的参数量之比", Sym("最大", Ns[-1]) / Sym("最小", Ns[0]),
            kind="ratio", style="x1", sources=src)
    reg.add("c6.iso.C_span", "网格里最大与最小算力预算之比", value=budgets[-1] / budgets[0], kind="ratio", style="x0",
            sources=src)
    lo, hi = float(cited["chinchilla_sweep_min_params"].value), float(cited["chinchilla_sweep_max_params"].value)
    reg.add("c6.iso.chinchilla_span", "Chinchilla 扫过的最大与最小模型的参数量之比", value=hi / lo, kind="ratio",
            style="n0", sources=cited["chinchilla_sweep_max_params"].sources)
    V = grid["vocab_size"]
    smallest = min(runs, key=lambda r: r["N"])
    reg.add("c6.iso.embed_share", "网格最小的模型里 embedding（字表 × d）占参数量的比例",
            Sym("字表", V) * Sym("d", smallest["width"]) / Sym("N", smallest["N"]), kind="ratio", style="pct0",
            sources=src)
    reg.add("c6.iso.train_tokens", "训练部分的字数（留出段落之外）", value=grid["train_tokens"],
            kind="tokens", sources=src)
    most = max(runs, key=lambda r: r["D"])
    reg.add("c6.iso.max_passes", "网格里读得最多的一次训练把训练文本读了几遍", Sym("D", most["D"])
            / Sym("训练文本", grid["train_tokens"]), kind="ratio", style="x0", sources=src)
    for k, o in enumerate(f["optima"], 1):
        reg.add(f"c6.iso.N{k}", f"第 {k} 个预算（C = {o['C']:.0e}）的抛物线最低点 N*", value=o["N"], style="n0",
                sources=src)
        reg.add(f"c6.iso.D{k}", f"第 {k} 个预算（C = {o['C']:.0e}）的最优 token 数 D* = C/(6N*)", value=o["D"],
                kind="tokens", style="n0", sources=src)
        reg.add(f"c6.iso.passes{k}", f"第 {k} 个预算的 D* 是训练文本的几遍", value=o["D"] / grid["train_tokens"],
                kind="ratio", style="x1", sources=src)
        reg.add(f"c6.iso.tpp{k}", f"第 {k} 个预算最优点的 token/参数", value=o["D"] / o["N"], kind="ratio", style="x1",
                sources=src)
    tpp = [o["D"] / o["N"] for o in f["optima"]]
    reg.add("c6.iso.tpp_min", "各预算最优点的 token/参数，最少的那个", value=min(tpp), kind="ratio", style="x2",
            sources=src)
    reg.add("c6.iso.tpp_max", "各预算最优点的 token/参数，最多的那个", value=max(tpp), kind="ratio", style="x2",
            sources=src)
    reg.add("c6.iso.inside", "最低点落在训练过的尺寸之间的预算个数", value=sum(o["inside"] for o in f["optima"]),
            sources=src)
    reg.add("c6.iso.a", "课程小模型网格拟合的 N* ∝ C^a 中的 a", value=f["a"], kind="ratio", style="x2", sources=src)
    reg.add("c6.iso.b", "课程小模型网格拟合的 D* ∝ C^b 中的 b", value=f["b"], kind="ratio", style="x2", sources=src)
    reg.add("c6.iso.n_growth", "按课程小模型网格的指数，算力翻 10 倍时最优参数量变为几倍", value=10 ** f["a"],
            kind="ratio", style="x1", sources=src)
    seeds = grid["seeds"]
    base = [r for r in runs if r["budget"] == seeds["budget"]]
    by_seed = [base] + [[r for r in seeds["runs"] if r["seed"] == s] for s in seeds["seeds"][1:]]
    reg.add("c6.iso.seeds", "最小的预算重跑的随机种子个数（含原来的）", value=len(by_seed), sources=src)
    reg.add("c6.iso.seed_spread", "只换随机种子，同一个模型的留出损失最多差多少（最小的预算，nats/字）",
            value=max(max(rs[i]["held_out"] for rs in by_seed) - min(rs[i]["held_out"] for rs in by_seed)
                      for i in range(len(base))), kind="ratio", style="x3", sources=src)
    stars = [own_fit.budget_optimum(seeds["budget"], [(r["N"], r["held_out"]) for r in rs])["N"] for rs in by_seed]
    reg.add("c6.iso.seed_N_ratio", "只换随机种子，最小的预算的最优 N* 最大与最小之比", value=max(stars) / min(stars),
            kind="ratio", style="x1", sources=src)
    reg.add("c6.iso.a_noise", "最小预算的 N* 只因种子就挪动这个倍数时，拟合的 a 跟着变多少（log 倍数 ÷ log 算力跨度）",
            value=math.log10(max(stars) / min(stars)) / math.log10(budgets[-1] / budgets[0]), kind="ratio",
            style="x2", sources=src)
