"""Every model's generic numbers, computed from its config, each with its derivation (the course's numbers are
these, the cited figures and every lesson's own: experiments/course_numbers.py).

Names are ``<model>.<quantity>`` where <model> is an alias from data/course.json (``anchor``, ``gpt2`` ...) or,
for any other model, its id with dots and dashes turned into underscores (``qwen3_235b_a22b``). Generic
quantities exist for every model (totals, FFN shares, the classic estimate and its gap, compute crossover, KV
cache); each lesson's package (lessons/<id>/) adds its own derived numbers. Cited figures that cannot be
derived from a config come from data/citations.json as ``cited.<name>`` with their source.

What a learner reads about a number's origin is Chinese and about the course: a model's numbers name "<模型名> 的
config.json" and its keys (``ModelNumbers.where``), never a repository path; a citation shows its ``source_zh``
when data/citations.json gives one. A model's display name may be overridden in data/course.json
(``display_names``: id or alias -> name), e.g. for a model whose config file carries an English maintainer name.
A ✓ only marks agreement with an independent count (what transformers instantiates, data/reference_counts.json):
a published total quoted from the same source the config was taken from would only compare the source with
itself, so it is shown without a mark.
"""
from __future__ import annotations

from fractions import Fraction

from ..expr import Const, Expr, Sym, total
from ..labels import PART_ZH
from ..ledger import Ledger, ledger_of, views
from ..numbers import Number

LEDGER = "（由课程的账本引擎逐张量现算）"
GAP_ZH = {"ffn": "FFN", "mixer/full_attention": "全注意力层", "mixer/linear_attention": "GDN 层",
          "embedding": "embedding", "norm": "归一化", "lm_head": "lm_head", "mtp": "MTP", "vision": "视觉塔"}


def slug(model_id: str) -> str:
    return model_id.replace(".", "_").replace("-", "_")


class Registry:
    """Collects Numbers; refuses duplicates and checks every expression against the engine's own value.

    ``strict=False`` is for what-if inputs (tests/claim_inputs.py moves one config key to see which claims fail):
    an expression that disagrees with the engine keeps its own value, as a hand count would, so a claim that
    compares it with the engine's count can be seen to fail."""

    def __init__(self, strict: bool = True):
        self.numbers: dict[str, Number] = {}
        self.strict = strict

    def add(self, name: str, label: str, expr: Expr | None = None, value=None, *, sources=(), check=None,
            kind="count", style="n", symbols=None) -> Number:
        if name in self.numbers:
            raise ValueError(f"number {name!r} defined twice")
        if expr is not None:
            if value is not None and expr.value != value and self.strict:
                raise AssertionError(f"{name}: expression gives {expr.value}, engine gives {value}")
            value = expr.value
        number = Number(name, value, label, expr, tuple(sources), check, kind, style, symbols or {})
        self.numbers[name] = number
        return number

    def __getitem__(self, name: str) -> Number:
        return self.numbers[name]


class ModelNumbers:
    """The generic numbers of one model, registered under ``prefix``."""

    def __init__(self, reg: Registry, prefix: str, model_id: str, doc: dict, reference: dict | None,
                 file: str | None = None, name: str | None = None):
        self.reg, self.p, self.id, self.doc = reg, prefix, model_id, doc
        self.meta = doc.get("meta", {})
        self.name = name or self.meta.get("name", model_id)
        self.file = file or f"data/models/{model_id}/config.json"      # for maintainers; pages show `where`
        self.where = file if file else f"{self.name} 的 config.json"
        self.ledger: Ledger = ledger_of(doc["config"])   # (shared with the widgets' calls)
        self.arch = self.ledger.arch
        self.reference = reference or {}
        self.keys = dict(self.arch.symbols)
        self.keys.setdefault("L_full", "layer_types 中 full_attention 的层数")

    # helpers ------------------------------------------------------------------------------------------------
    def sym(self, s: str, value) -> Sym:
        return Sym(s, value)

    def src(self, *symbols: str) -> tuple[str, ...]:
        keys = [self.keys[s] for s in symbols if s in self.keys]
        return (f"{self.where}：" + "、".join(keys),) if keys else (self.where,)

    def add(self, q: str, label: str, expr=None, value=None, **kw) -> Number:
        kw.setdefault("symbols", self.keys)
        kw.setdefault("sources", (self.where + LEDGER,))
        return self.reg.add(f"{self.p}.{q}", f"{self.name}：{label}", expr, value, **kw)

    def cfg(self) -> dict[str, Sym]:
        a = self.arch
        return {"d": Sym("d", a.d_model), "L": Sym("L", a.n_layers), "V": Sym("V", a.vocab_size),
                "d_ff": Sym("d_ff", a.d_ff), "h": Sym("h", a.n_heads), "h_kv": Sym("h_kv", a.n_kv_heads),
                "d_h": Sym("d_h", a.head_dim), "T_max": Sym("T_max", a.context_length)}

    def check_hf(self, value: int, what: str) -> str | None:
        ref = self.reference.get(what)
        if ref is None:
            return None
        mark = "✓" if ref == value else "✗"
        return f"transformers 实现在 meta 设备上实例化数得 {ref:,} {mark}"

    def published_checks(self, total: int) -> str | None:
        """The checkpoint total beside what others published (meta.yaml): ``checkpoint_total`` (a sum over the
        published safetensors tensors) must equal it; ``published_total`` (the publisher's figure) must equal it,
        or, with ``published_total_rounded``, lie within one unit of its last stated digit (46.7B: ±0.1B). An exact
        published_total equal to the total is not shown: it came with the config and checks nothing."""
        out = []
        ck = self.meta.get("checkpoint_total")
        if isinstance(ck, int) and not isinstance(ck, bool):
            out.append(f"checkpoint 各张量合计 {ck:,} {'✓' if ck == total else '✗'}")
        pub = self.meta.get("published_total")
        if isinstance(pub, int) and not isinstance(pub, bool):
            if self.meta.get("published_total_rounded"):
                unit = 1
                while pub % (unit * 10) == 0:
                    unit *= 10
                near = abs(total - pub) < unit
                out.append(f"发布方公布约 {pub:,}（只给到 {unit:,} 这一位），相差"
                           + ("不到一个末位单位 ✓" if near else "超过一个末位单位 ✗"))
            elif pub != total:
                out.append(f"发布方公布的总数 {pub:,} 与此不同 ✗")
        return "；".join(out) or None

    # the generic set ------------------------------------------------------------------------------------------
    def register(self):
        L, c = self.ledger, self.cfg()
        zh = {"d": "隐藏维 d", "L": "层数 L", "V": "词表 V", "d_ff": "FFN 中间维 d_ff", "h": "注意力头数 h",
              "h_kv": "KV 头数 h_kv", "d_h": "每头维度 d_h", "T_max": "原生上下文长度"}
        for s, symbol in c.items():
            self.add(s, zh[s], symbol, sources=self.src(s), kind="config")
        parts = views.breakdown(L)
        part_zh = PART_ZH
        for cat, count in parts.items():
            self.add(f"part.{cat}", f"{part_zh[cat]}参数（全部层合计）", value=count)
        text_syms = [Sym(part_zh[k], v) for k, v in parts.items() if k not in ("mtp", "vision")]
        self.add("text_backbone", "文本主干参数", total(text_syms), L.text_backbone,
                 check=self.check_hf(L.text_backbone, "text_backbone"))
        top = [Sym("文本主干", L.text_backbone)] + [Sym(part_zh[k], parts[k]) for k in ("mtp", "vision") if k in parts]
        check = self.check_hf(L.hf_count, "hf_count")
        if check and L.hf_count != L.total:
            check = (f"其中 transformers 构建的部分 {L.hf_count:,}（总数减去它不构建的 MTP 层和缓冲区 "
                     f"{L.total - L.hf_count:,}）：{check}")
        published = self.published_checks(L.total)
        check = "；".join(c for c in (check, published) if c) or None
        self.add("total", "checkpoint 全部参数", total(top), L.total, check=check)
        self.add("hf_count", "transformers 实现构建的参数（不含 MTP）", value=L.hf_count,
                 check=self.check_hf(L.hf_count, "hf_count"))
        self.add("active_per_token", "每个 token 激活的参数", value=L.active_per_token)
        ffn = Sym("FFN", L.ffn)
        self.add("ffn", "FFN 参数（全部层）", self.ffn_expr(), L.ffn)
        self.add("ffn_share_total", "FFN 占整个 checkpoint 的比例", ffn / Sym("总参数", L.total), kind="ratio",
                 style="pct")
        self.add("ffn_share_backbone", "FFN 占文本主干的比例", ffn / Sym("文本主干", L.text_backbone),
                 kind="ratio", style="pct")
        emb = Sym("embedding", parts["embedding"])
        self.add("embedding_share", "输入 embedding 占全部参数的比例", emb / Sym("总参数", L.total),
                 kind="ratio", style="pct")
        self.register_layers()
        self.register_classic()
        self.register_compute()

    def ffn_expr(self) -> Expr | None:
        """3·d·d_ff per layer (SwiGLU) or 2·d·d_ff + d_ff + d (GPT-2 MLP with biases), times L, when every layer
        has the same dense FFN; otherwise None (the value is the ledger's sum)."""
        a, L, c = self.arch, self.ledger, self.cfg()
        per = self.ffn_layer_expr()
        if per is None or per.value * a.n_layers != L.ffn:
            return None
        return c["L"] * per

    def ffn_layer_expr(self) -> Expr | None:
        c = self.cfg()
        candidates = [Const(3) * c["d"] * c["d_ff"], Const(2) * c["d"] * c["d_ff"] + c["d_ff"] + c["d"]]
        per_layer = {ln: self.ledger.layer(ln) for ln in self.ledger.layer_types}
        values = {node.sum_where(lambda leaf, kinds: "ffn" in kinds) // node.n for node in per_layer.values()}
        if len(values) != 1:
            return None
        (value,) = values
        for e in candidates:
            if e.value == value:
                return e
        return None

    def register_layers(self):
        L = self.ledger
        per = self.ffn_layer_expr()
        if per is not None:
            self.add("ffn_per_layer", "每层 FFN 参数", per)
        for ln in L.layer_types:
            node = L.layer(ln)
            self.add(f"layers.{ln}", f"{ln} 层数", value=node.n, kind="config")
            self.add(f"layer.{ln}", f"一层 {ln} 的全部参数", value=node.per_copy,
                     check=self.check_hf(node.per_copy, f"layer.{ln}"))
            mixer = views.mixer_per_layer(L, ln)
            self.add(f"mixer.{ln}", f"一层 {ln} 的 token mixer 参数", value=mixer)
            share = node.sum_where(lambda leaf, kinds: "ffn" in kinds) // node.n
            self.add(f"ffn_share_layer.{ln}", f"一层 {ln} 里 FFN 的占比",
                     Sym("FFN_layer", share) / Sym("layer", node.per_copy), kind="ratio", style="pct")

    def register_classic(self):
        L, c = self.ledger, self.cfg()
        classic = Const(12) * c["L"] * c["d"] ** 2 + c["V"] * c["d"]
        self.add("classic", "经典公式 12·L·d² + V·d 的估计", classic, views.classic_estimate(L),
                 sources=self.src("L", "d", "V"))
        gap = views.classic_gap(L)
        gap_expr = total([Sym(GAP_ZH.get(name, name), v) for name, v in gap])
        self.add("classic_gap", "真实总数减经典估计", gap_expr, L.total - classic.value)
        for name, v in gap:
            self.add(f"gap.{name.replace('/', '.')}", f"经典公式在「{name}」上的差额", value=v)
        self.add("classic_short", "经典公式少算的比例",
                 Sym("差额", L.total - classic.value) / Sym("总参数", L.total), kind="ratio", style="pct0")

    def register_compute(self):
        L, a, c = self.ledger, self.arch, self.cfg()
        ffn_flops = views.ffn_flops_per_token(L)
        per = self.ffn_layer_expr()
        if per is not None and per.value * a.n_layers == L.ffn and a.ffn_matrices == 3:
            fe = Const(2) * Const(3) * c["d"] * c["d_ff"] * c["L"]
        else:
            fe = Const(2) * Sym("FFN 矩阵权重", ffn_flops // 2)
        self.add("ffn_flops_per_token", "FFN 每 token 前向 FLOPs", fe, ffn_flops, kind="flops")
        self.add("param_flops_per_token", "全部权重矩阵每 token 前向 FLOPs（不含注意力打分）",
                 Const(2) * Sym("激活的矩阵权重", views.matmul_weights(L)), kind="flops")
        if a.n_full:
            lf = Sym("L_full", a.n_full)
            # the full-attention layers' own score width (a family may give them other heads than Arch's default)
            widths = {m.score_width for m, _ in a.mixer_counts if m.grows}
            width = widths.pop() if len(widths) == 1 else None
            if width == a.score_width == 2 * a.n_heads * a.head_dim:
                per_T = lf * Const(2) * Const(2) * c["h"] * c["d_h"]
            elif width is not None:
                per_T = lf * Const(2) * Sym("h·(d_qk+d_v)", width)
            else:
                per_T = Sym("全注意力层的打分宽度之和 × 2", views.score_flops_per_context_token(L))
            self.add("layers_full", "全注意力层数", lf, a.n_full, kind="config")
            self.add("score_flops_per_T", "每多一个历史 token，全注意力多做的 FLOPs", per_T,
                     views.score_flops_per_context_token(L), kind="flops")
            cross = fe / per_T
            self.add("crossover_T", "全注意力打分计算追上 FFN 的上下文长度 T", cross, views.crossover_T(L),
                     kind="tokens")
            ratio = per_T * c["T_max"] / fe
            self.add("ratio_at_T_max", "原生上下文长度处，全注意力打分计算是 FFN 的几倍", ratio, kind="ratio",
                     style="x")
        self.add("kv_bytes_per_token", "BF16 下每个 token 的 KV cache 字节（全注意力层）",
                 value=views.kv_bytes_per_token(L), kind="bytes")


def load_citations(citations: dict | None, reg: Registry):
    for name, item in (citations or {}).items():
        reg.add(f"cited.{name}", item["label"], value=_as_number(item["value"]),
                sources=(item.get("source_zh") or item["source"],),
                kind="cited", style=item.get("style", "n"))


def _as_number(v):
    if isinstance(v, str):
        return Fraction(v)
    return v


def generic_numbers(models: dict[str, dict], course: dict | None = None, reference: dict | None = None,
                    citations: dict | None = None, strict: bool = True) -> tuple[Registry, dict[str, ModelNumbers]]:
    """Every model's generic numbers and the cited figures, in a Registry the lessons add theirs to; and each
    model's ModelNumbers (ledger, arch, name) keyed by its alias or slug. models: id -> data/models document;
    course: data/course.json; reference: data/reference_counts.json; strict: see Registry."""
    reg = Registry(strict)
    aliases = {v: k for k, v in ((course or {}).get("aliases") or {}).items()}
    names = (course or {}).get("display_names") or {}
    per_model = {}
    for model_id in sorted(models):
        prefix = aliases.get(model_id, slug(model_id))
        mn = ModelNumbers(reg, prefix, model_id, models[model_id], (reference or {}).get(model_id),
                          name=names.get(model_id) or names.get(prefix))
        mn.register()
        per_model[prefix] = mn
    load_citations(citations, reg)
    return reg, per_model


def model_numbers(config: dict, name: str = "你的模型", file: str = "粘贴的 config.json",
                  prefix: str = "model") -> dict[str, Number]:
    """The generic numbers of one config that is not in data/ (the bring-your-own-config widget)."""
    reg = Registry()
    ModelNumbers(reg, prefix, prefix, {"meta": {"name": name}, "config": config}, None, file).register()
    return reg.numbers
