"""C14's calculators: plain values in, strings a learner reads out. The build calls them for each widget's first
state and for the answers it embeds (widgets.py `states`); the browser's Python calls the same functions as
experiments.api:c14_*, so the two cannot differ in a digit.

- serve: one model (built-in or pasted config) on one device: the decode step's roofline at a batch and a context,
  where the step turns compute-bound, tokens per second per device and per user as the batch grows, the KV cache
  beside the weights at 4K / 32K / 128K in BF16 and FP8, the weight schemes with their group scales, paged against
  contiguous KV memory, and prefill per prompt token. All arithmetic is experiments/toolkit/serving.py's.
- batching: the course's trace of requests served with static batching, continuous batching, and continuous batching
  with paged cache, each decode step timed by the roofline (serving.batching).
- speculate: the course's two small models (C2's speaker as target, the draft of data/train_speculative.json)
  generate with speculative sampling in the page (experiments/train/speculative.py), step by step.

Every typed value is read by experiments.toolkit.inputs (a Chinese message naming the field on bad input), and
the work is bounded: contexts up to MAX_CONTEXT, batches up to serving.MAX_BATCH, a trace of serving.TRACE's 512
requests served with at least serving.MIN_SLOTS sequences a step, a generation of at most the models' 64 positions.
"""
from __future__ import annotations

from fractions import Fraction

from ...format import format_value, gb, ms, n, pct, per_second, sci, trim_decimal
from ...toolkit import devices as DV
from ...toolkit import serving as S
from ...toolkit.config_text import ledger_of_input
from ...toolkit.inputs import got, parse_int
from ...widget import uses

MAX_CONTEXT = 2 ** 20                       # 1,048,576 tokens: the longest context a learner may type
CONTEXT_CHOICES = (4096, 32768, 131072)     # serving.CONTEXTS, the select's positions
BATCHES = (1, 4, 16, 64, 256, 1024, 4096)   # the batch table's rows
BOUND_ZH = {"memory": "带宽", "compute": "算力"}
SCHEME_ZH = {"BF16": "BF16", "FP8": "FP8（每张量一个缩放）", "INT8": "INT8（每 128 个一组缩放）",
             "INT4": "INT4（每 128 个一组缩放）"}


def context_label(T: int) -> str:
    """4096 -> 4K, 131072 -> 128K; other lengths as digits."""
    return f"{T // 1024}K" if T % 1024 == 0 else n(T)


def _choice(value, choices, what: str) -> str:
    text = str(value).strip() if value is not None else ""
    if text not in choices:
        raise ValueError(f"{what}：应为 {'、'.join(choices)} 之一，得到{got(value)}")
    return text


def _inputs(config, device, scheme, kv, context, batch):
    led = ledger_of_input(config)
    dev = DV.device(str(device).strip() if device is not None else "")
    scheme = _choice(scheme, S.SCHEMES, "权重精度")
    kv = _choice(kv, tuple(S.KV_BYTES), "KV cache 精度")
    S.peak_flops(dev, scheme)                       # a card without that tensor-core path: said in Chinese here
    return (led, dev, scheme, kv, parse_int(context, "上下文长度（token）", 1, MAX_CONTEXT),
            parse_int(batch, "批大小", 1, S.MAX_BATCH))


def _step_text(r: dict) -> dict:
    return {"t_step": ms(r["step_time"]), "t_mem": ms(r["memory_time"]), "t_flop": ms(r["compute_time"]),
            "bound": BOUND_ZH[r["bound"]], "tps": per_second(r["tokens_per_s"]),
            "tps_user": per_second(r["tokens_per_s_per_user"])}


def mb(nbytes) -> str:
    """Bytes as decimal MB (10⁶ bytes), two decimals: one KV block is a few MB."""
    return format_value(Fraction(nbytes, 10**6), "x2") + " MB"


def crossover_text(x: int | None) -> str:
    return f"批大小到 {n(x)} 时" if x is not None else f"批大小到 {n(S.MAX_BATCH)} 仍未"


def serve(config, device="80", scheme="BF16", kv="BF16", context=4096, batch=1, used=1000) -> dict:
    """Everything the serving widget shows for one model on one device (see the module docstring)."""
    led, dev, scheme, kv, T, B = _inputs(config, device, scheme, kv, context, batch)
    u = parse_int(used, "每条请求实际用到的长度（token）", 1, T)
    weights = S.quantized_weight_bytes(led, scheme)
    r = S.roofline(led, dev, B, T, scheme, kv)
    w = S.step_weights(led)
    moe = ""
    if w.E:
        touched = w.E * (1 - (1 - Fraction(w.k, w.E)) ** B)
        moe = (f"这是 MoE：每层 {n(w.E)} 个专家、每个 token 选 {n(w.k)} 个；批里 {n(B)} 个 token 一步平均碰到 "
               f"{trim_decimal(round(touched, 1))} 个专家，所以这一步读的权重不止一个 token 的激活部分。")
    room = S.fits_kv(led, dev, T, scheme, kv)
    xo = S.crossover_batch(led, dev, T, scheme, kv)
    pre = S.prefill(led, dev, T, 1, scheme, kv)
    contexts = []
    for c in CONTEXT_CHOICES:
        both = {k: S.fits_kv(led, dev, c, scheme, k) for k in S.KV_BYTES}
        contexts.append({"context": context_label(c), "bf16": gb(both["BF16"]["per_sequence"]),
                         "bf16_seqs": n(both["BF16"]["sequences"]), "fp8": gb(both["FP8"]["per_sequence"]),
                         "fp8_seqs": n(both["FP8"]["sequences"])})
    batches = []
    for b in BATCHES:
        rb = S.roofline(led, dev, b, T, scheme, kv)
        batches.append({"batch": n(b), **_step_text(rb), "fits": "放得下" if b <= room["sequences"] else "放不下"})
    schemes = []
    for row in S.quantization_table(led, dev, B, T):
        schemes.append({"scheme": SCHEME_ZH[row["scheme"]], "bits": trim_decimal(row["bits"]),
                        "weights": gb(row["weights"]), "t_step": ms(row["step_time"]),
                        "tps_user": per_second(row["tokens_per_s_per_user"]),
                        "speedup": trim_decimal(round(row["speedup"], 2)) + "×", "bound": BOUND_ZH[row["bound"]]})
    page = S.paging(led, dev, u, T, scheme, kv)
    paging = {"used": n(u), "reserved": n(T), "page": n(page["page"]), "block": mb(page["block_bytes"]),
              "contiguous_seqs": n(page["contiguous"]["sequences"]), "paged_seqs": n(page["paged"]["sequences"]),
              "contiguous_waste": pct(page["contiguous"]["waste"]), "paged_waste": pct(page["paged"]["waste"]),
              "paged_tokens": n(page["paged"]["tokens"])}
    fit = (f"权重 {gb(weights)}，一张 {dev.name} 有 {gb(dev.bytes)}：放得下，剩 {gb(room['free'])} 给 KV cache。"
           if room["weights_fit"] else
           f"权重 {gb(weights)} 超过一张 {dev.name} 的 {gb(dev.bytes)}：一张卡放不下，要切到几张卡上（C10）；"
           "下面的时间按「一张卡的带宽和算力」算，只作为量级参考。")
    return {"fit": fit, "weights": gb(weights), "device": dev.name, "scheme": scheme, "kv": kv,
            "context": n(T), "batch": n(B),
            "step": {"weight_read": gb(r["weight_bytes"]), "kv_read": gb(r["kv_bytes"]), "flops": sci(r["flops"]),
                     **_step_text(r)},
            "crossover": crossover_text(xo), "room": n(room["sequences"]), "moe": moe,
            "prefill": {"per_token": ms(pre["time_per_token"]), "total": ms(pre["time"]),
                        "bound": BOUND_ZH[pre["bound"]]},
            "contexts": contexts, "batches": batches, "schemes": schemes, "paging": paging}


# ---- speculative sampling on the course's own models -------------------------------------------------------------

_MODELS: dict[str, tuple] = {}              # (speaker sha, draft sha) -> (target, draft, chars), unpacked once
MAX_PROMPT = 40                             # characters of prompt kept (the models hold 64 positions)


def _models(speaker: dict, spec_doc: dict):
    from ...train import generate as G
    from ...train.model import ModelConfig
    if not isinstance(speaker, dict) or "model" not in speaker or not isinstance(spec_doc, dict) \
            or "draft" not in spec_doc:
        raise ValueError("模型：应为课程预先训练好的两个小模型")
    key = speaker.get("inputs_sha256", "") + spec_doc.get("inputs_sha256", "")
    if key not in _MODELS:
        _MODELS.clear()
        _MODELS[key] = ((G.unpack_params(speaker["model"]), ModelConfig(**speaker["spec"]["model"]).validate()),
                        (G.unpack_params(spec_doc["draft"]), ModelConfig(**spec_doc["draft_spec"]["model"]).validate()),
                        speaker["chars"])
    return _MODELS[key]


@uses("numpy")
def speculate(prompt, gamma, seed, speaker, spec_doc) -> dict:
    """Speculative sampling from `prompt` (characters outside the models' vocabulary dropped and named; at most
    MAX_PROMPT kept) with `gamma` drafts a step until the sequence holds the models' context: every step's accepted
    drafts, the target's own token, the counts, and Leviathan's expectation at this run's own alpha."""
    from ...toolkit.speak import show
    from ...train import speculative as SP
    target, draft, chars = _models(speaker, spec_doc)
    g = parse_int(gamma, "每步草稿数 γ", 1, SP.GAMMA_MAX)
    s = parse_int(seed, "随机种子", 0, 99999)
    text = str(prompt) if prompt is not None else ""
    notes = []
    unknown = sorted({c for c in text if c not in chars})
    if unknown:
        notes.append(f"字表里没有的字已略去：{'、'.join(show(c) for c in unknown[:8])}")
    kept = "".join(c for c in text if c in chars)
    if len(kept) > MAX_PROMPT:
        notes.append(f"开头最多取最后 {MAX_PROMPT} 个字（收到 {len(kept)} 个）")
        kept = kept[-MAX_PROMPT:]
    if not kept:
        raise ValueError("开头：至少要有一个字表里的字（例如「子曰」）")
    out = SP.generate(target, draft, [chars.index(c) for c in kept], g, speaker["context"], seed=s)
    steps, betas, accepted, looked = [], [], 0, 0
    for st in out["steps"]:
        took = st["tokens"][:st["accepted"]]
        own = st["tokens"][st["accepted"]:]
        steps.append({"accepted": "".join(show(chars[i]) for i in took),
                      "own": "".join(show(chars[i]) for i in own),
                      "rejected": "".join(show(chars[i]) for i in st["drafted"][st["accepted"]:st["accepted"] + 1])})
        betas += st["betas"]
        accepted += st["accepted"]
        looked += len(st["betas"])
    alpha = sum(betas) / len(betas) if betas else 0.0
    n_steps, n_tokens = len(out["steps"]), len(out["tokens"])
    return {"prompt": "".join(show(c) for c in kept), "notes": [{"text": t} for t in notes], "gamma": str(g),
            "steps": steps, "n_steps": n(n_steps), "n_tokens": n(n_tokens),
            "per_step": f"{n_tokens / n_steps:.2f}", "accepted": n(accepted), "looked": n(looked),
            "alpha": f"{alpha:.2f}", "expected": f"{SP.expected_tokens(alpha, g):.2f}"}


# ---- static against continuous batching --------------------------------------------------------------------------

WAYS = (("static", "静态批处理（整段预留）"), ("continuous", "连续批处理（整段预留）"),
        ("paged", "连续批处理 + 分页"))


def batching(config, device="80", batch=256, seed=0) -> dict:
    """The course's trace of requests (serving.trace, the seed the learner's) decoded on one device with static
    batching, continuous batching and continuous batching with paged cache (serving.batching): per way the batch
    limit, the mean batch, the share of slot-steps left empty, tokens per second and the time; and the gains."""
    led = ledger_of_input(config)
    dev = DV.device(str(device).strip() if device is not None else "")
    B = parse_int(batch, "批大小上限", S.MIN_SLOTS, S.MAX_BATCH)
    s = parse_int(seed, "随机种子", 0, 99999)
    r = S.batching(led, dev, B, s)
    reqs = r["requests"]
    rows = []
    for key, name in WAYS:
        w = r[key]
        limit = n(w["slots"]) if key != "paged" else f"{n(w['slots'])}（看显存）"
        rows.append({"way": name, "limit": limit, "mean_batch": format_value(w["mean_batch"], "x1"),
                     "idle": pct(w["idle"]) if key != "paged" else "—", "tps": per_second(w["tokens_per_s"]),
                     "seconds": format_value(w["seconds"], "x1") + " 秒"})
    return {"device": dev.name, "requests": n(len(reqs)), "seed": str(s),
            "prompt": f"{n(S.TRACE['prompt'][0])} 到 {n(S.TRACE['prompt'][1])}",
            "output": f"{n(S.TRACE['output'][0])} 到 {n(S.TRACE['output'][1])}",
            "tokens": n(sum(g for _, g in reqs)), "reserve": n(r["reserve"]),
            "per_reserve": gb(S.kv_bytes(led, r["reserve"])), "free": gb(r["free"]), "fit": n(r["fit"]),
            "slots": n(r["static"]["slots"]), "ways": rows,
            "gain": trim_decimal(round(r["gain"], 2)) + "×",
            "paged_gain": trim_decimal(round(r["paged_gain"], 2)) + "×",
            "static_batch": format_value(r["static"]["mean_batch"], "x1"),
            "cont_batch": format_value(r["continuous"]["mean_batch"], "x1"),
            "paged_batch": format_value(r["paged"]["mean_batch"], "x1")}
