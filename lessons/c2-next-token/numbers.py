"""C2 从向量到下一个 token — the lesson's numbers (c2.*).

- the stored speaker (data/train_speaker.json, passed in as data["train_speaker"]): its size, the cross-entropy
  at initialisation on several seeds against ln V, the training and held-out loss after training, perplexity
  exp(loss) and bits per character loss / ln 2 (one token is one character here);
- the stage itself, measured on the stored model's logits by the trainer's own functions: the gradient of softmax
  cross-entropy, softmax - one-hot (model.cross_entropy's backward in loss_and_grads), against central finite
  differences in float64; the embedding lookup E[ids] against the product one_hot(ids) @ E; the most probable next
  characters and the size of the top-p nucleus for two prompts (experiments.train.generate), and the number of
  candidates left at top-p DEMO_P (temperature 1) after the page's first prompt SPEAK_PROMPT;
- the published configs: whether the output head is tied to the embedding, the two matrices' share of all
  parameters (the ledger engine's parts), Gemma 2's final-logit soft-cap (its config's final_logit_softcapping);
- cited: PaLM's z-loss coefficient (the one C8's runs use, experiments.train.runs_stability.PALM_Z).
"""
from __future__ import annotations

import math
from fractions import Fraction

from ...expr import RealDiv, Sym
from ...toolkit.stored import document

STORED = "课程训练代码在构建时训练好的小模型"     # data/train_speaker.json
TRAINER = "课程的训练代码"
NUCLEUS_P = Fraction(9, 10)
DEMO_P = Fraction(1, 2)                      # the top-p the prose asks the learner to try in the widget
SPEAK_PROMPT = "子曰：“"                      # the widget's first prompt (c2-speak's default)
PROMPTS = {"ziyue": "子曰", "junzi": "君子"}
TIED_MODELS = ("gpt2", "gemma_2_9b", "llama7b", "qwen3_8b", "anchor")


def measure(doc: dict) -> dict:
    """The stage's figures on the stored model (floats): finite-difference error of the cross-entropy gradient,
    the one-hot product's error, and per prompt the top probability and the top-p nucleus size."""
    import numpy as np

    from ...train import generate as G
    from ...train import model as M
    from ...train.data import CharTokenizer
    params = G.unpack_params(doc["model"])
    cfg = M.ModelConfig(**doc["spec"]["model"])
    tok = CharTokenizer(doc["chars"])
    out = {}
    z = G.last_logits(params, cfg, tok.encode(PROMPTS["junzi"]), doc["context"])        # float64, (V,)
    target = int(tok.encode("之")[0])
    _, probs = M.cross_entropy(z[None, :], np.array([target]))
    grad = probs[0].copy()
    grad[target] -= 1                                                                   # softmax - one-hot
    h = 1e-5
    fd = np.empty_like(z)
    for i in range(len(z)):
        up, down = z.copy(), z.copy()
        up[i] += h
        down[i] -= h
        fd[i] = (M.cross_entropy(up[None, :], np.array([target]))[0]
                 - M.cross_entropy(down[None, :], np.array([target]))[0]) / (2 * h)
    out["grad_fd_err"] = float(np.max(np.abs(grad - fd)))
    out["grad_sum"] = float(abs(grad.sum()))
    out["grad_target"] = float(grad[target])
    E = params["embed_tokens.weight"]
    ids = tok.encode("子曰学而时习之")
    onehot = np.zeros((len(ids), E.shape[0]), dtype=np.float32)
    onehot[np.arange(len(ids)), ids] = 1
    out["onehot_err"] = float(np.max(np.abs(onehot @ E - E[ids])))
    for key, prompt in PROMPTS.items():
        p = G.softmax(G.last_logits(params, cfg, tok.encode(prompt), doc["context"]))
        out[f"top1_{key}"] = float(p.max())
        out[f"nucleus_{key}"] = len(G.top_p_keep(p, float(NUCLEUS_P)))
    p = G.softmax(G.last_logits(params, cfg, tok.encode(SPEAK_PROMPT), doc["context"]))
    out["nucleus_demo"] = len(G.top_p_keep(p, float(DEMO_P)))
    return out


def register(reg, models, course=None, data=None) -> None:
    from ...ledger import views
    from ...train import model as M
    from ...train.runs_stability import PALM_Z
    if data is None:
        return
    doc = document(data, "train_speaker")
    m = doc["spec"]["model"]
    V = m["vocab_size"]
    src = (STORED,)
    cfg = M.ModelConfig(**m)
    shapes = M.param_shapes(cfg)
    params = sum(math.prod(s) for s in shapes.values())
    reg.add("c2.vocab", "课程文本里不同的字（字表大小 V）", value=V, sources=src, style="n")
    reg.add("c2.d", "小模型的隐藏维 d", value=m["d_model"], sources=src, style="n", kind="config")
    reg.add("c2.layers", "小模型的层数", value=m["n_layers"], sources=src, style="n", kind="config")
    reg.add("c2.params", "小模型的参数量", value=params, sources=(TRAINER,), style="n")
    reg.add("c2.embed", "小模型词嵌入矩阵的参数（V × d，与输出层共享）", value=V * m["d_model"], sources=(TRAINER,),
            style="n")
    reg.add("c2.embed_share", "词嵌入占小模型全部参数的比例",
            RealDiv(Sym("V·d", V * m["d_model"]), Sym("全部参数", params)), sources=(TRAINER,), style="pct",
            kind="ratio")
    reg.add("c2.stored_kb", "存进页面的小模型权重（float16）的千字节数", value=Fraction(2 * params, 1000),
            sources=(TRAINER + "：每个参数 2 字节",), style="x0", kind="value")
    reg.add("c2.steps", "小模型训练的步数", value=doc["spec"]["schedule"]["total"], sources=src, style="n",
            kind="value")
    reg.add("c2.batch", "每步的段数", value=doc["spec"]["batch_size"], sources=src, style="n", kind="value")
    reg.add("c2.seq", "每段的字数", value=doc["spec"]["seq_len"], sources=src, style="n", kind="value")
    reg.add("c2.ln_v", "什么都不知道（均匀分布）时的 loss：ln V", value=math.log(V), sources=(TRAINER,),
            style="x2", kind="value")
    reg.add("c2.log2_v", "均匀分布时每个字的比特数：log₂ V", value=math.log2(V), sources=(TRAINER,), style="x1",
            kind="value")
    init = doc["init_loss"]
    mean0 = sum(init["loss"]) / len(init["loss"])
    reg.add("c2.init_seeds", "量初始 loss 用的随机种子个数", value=len(init["seeds"]), sources=src, style="n",
            kind="value")
    reg.add("c2.init_loss", "初始化后第一批的交叉熵（几个种子的平均）", value=Fraction(str(round(mean0, 6))),
            sources=src, style="x2", kind="measured")
    reg.add("c2.init_loss_max", "初始 loss 离 ln V 最远的那个种子的 loss",
            value=Fraction(str(max(init["loss"], key=lambda x: abs(x - math.log(V))))), sources=src, style="x3",
            kind="measured")
    reg.add("c2.init_ppl", "初始困惑度 exp(loss)", value=math.exp(mean0), sources=src, style="x0", kind="measured")
    last = doc["loss"][-1][1]
    held = doc["held_out_loss"]
    reg.add("c2.final_loss", "训练结束时的训练 loss", value=Fraction(str(last)), sources=src, style="x2",
            kind="measured")
    reg.add("c2.held_loss", "训练结束时留出文本上的 loss", value=Fraction(str(held)), sources=src, style="x2",
            kind="measured")
    for key, loss in (("final", last), ("held", held)):
        reg.add(f"c2.{key}_ppl", "困惑度 exp(loss)", value=math.exp(loss), sources=src, style="x1", kind="measured")
        reg.add(f"c2.{key}_bpc", "每字比特数 loss / ln 2", value=loss / math.log(2), sources=src, style="x2",
                kind="measured")
    f = measure(doc)
    msrc = (STORED + "：在它的输出上用训练代码的函数量得",)
    reg.add("c2.grad_fd_err", "softmax − one-hot 与有限差分的最大差", value=f["grad_fd_err"], sources=msrc,
            style="e0", kind="measured")
    reg.add("c2.grad_sum", "梯度各分量之和的绝对值", value=f["grad_sum"], sources=msrc, style="e0", kind="measured")
    reg.add("c2.grad_target", "正确答案那一格的梯度 p − 1", value=f["grad_target"], sources=msrc, style="x2",
            kind="measured")
    reg.add("c2.onehot_err", "one-hot 乘矩阵与直接取行的最大差", value=f["onehot_err"], sources=msrc, style="x0",
            kind="measured")
    reg.add("c2.nucleus_p", "示例里 top-p 的 p", value=NUCLEUS_P, sources=(TRAINER,), style="x1", kind="value")
    for key, prompt in PROMPTS.items():
        reg.add(f"c2.top1_{key}", f"「{prompt}」之后最可能的字的概率", value=f[f"top1_{key}"], sources=msrc,
                style="pct", kind="measured")
        reg.add(f"c2.nucleus_{key}", f"「{prompt}」之后 top-p 核里的字数", value=f[f"nucleus_{key}"], sources=msrc,
                style="n", kind="measured")
    reg.add("c2.demo_p", "请读者在组件里试的 top-p", value=DEMO_P, sources=(TRAINER,), style="x1", kind="value")
    reg.add("c2.nucleus_demo", f"「{SPEAK_PROMPT}」之后、温度 1 时 top-p 核里的字数", value=f["nucleus_demo"],
            sources=msrc, style="n", kind="measured")
    reg.add("c2.palm_z", "PaLM 的 z-loss 系数", value=Fraction(str(PALM_Z)),
            sources=("Chowdhery 等 2022（PaLM，arXiv 2204.02311）训练设置：z_loss = 10⁻⁴·log²Z",), style="e0",
            kind="cited")
    for alias in TIED_MODELS:
        mn = models.get(alias)
        if mn is None:
            continue
        where = (mn.where + "：tie_word_embeddings 与账本引擎的 embedding、lm_head 两部分",)
        tied = bool(mn.arch.tied_embeddings)
        reg.add(f"c2.{alias}_tied", f"{mn.name} 的输出层是否与词嵌入共享（1 是，0 否）", value=int(tied),
                sources=where, style="n", kind="config")
        parts = views.breakdown(mn.ledger)
        vocab = parts.get("embedding", 0) + parts.get("lm_head", 0)
        reg.add(f"c2.{alias}_vocab_share", f"{mn.name} 的词嵌入加输出层占全部参数的比例",
                RealDiv(Sym("词嵌入 + 输出层", vocab), Sym("全部参数", mn.ledger.total)), sources=where,
                style="pct", kind="ratio")
    g = models.get("gemma_2_9b")
    if g is not None:
        reg.add("c2.gemma2_cap", "Gemma 2 输出 logit 的软封顶 c", value=Fraction(str(g.doc["config"]
                                                                          ["final_logit_softcapping"])),
                sources=(g.where + "：final_logit_softcapping",), style="x0", kind="config")
