"""C14's exercise (issue #48): one decode step's time on the roofline.

The learner writes decode_step_time(weight_bytes, kv_bytes_per_seq, flops_per_token, batch, bandwidth,
peak_flops): a step of `batch` sequences reads the weights once and every sequence's KV cache, does `batch` times
one token's FLOPs, and takes the larger of bytes / bandwidth and FLOPs / peak (Williams, Waterman & Patterson
2009). The reference is the course's own experiments.toolkit.serving.roofline on the config's ledger and the
device (``step_time``); the learner's numbers are read off that same roofline (its weight bytes for the batch, its
KV bytes and FLOPs divided by the batch) and off the device's datasheet figures (experiments.toolkit.devices), so
the learner's formula is checked against the function C14's serving widget draws. The cases are real configs x
devices: two shown (Qwen3-8B on an H100, one bound by bandwidth and one by compute), others on every device with
a BF16 tensor core, and one model, device, batch and context drawn with the page's seed from the course's models.
"""
from __future__ import annotations

from fractions import Fraction

from experiments.exercise import Case
from experiments.ledger import ledger_of
from experiments.toolkit.devices import DEVICES, device
from experiments.toolkit.serving import CONTEXTS, peak_flops, roofline

# (model folder, device key, batch, context)
SHOWN = (("qwen3-8b", "80", 1, CONTEXTS[0]), ("qwen3-8b", "80", 512, 0))
OTHERS = (("llama-2-7b", "24", 16, 2048), ("deepseek-v3", "141", 64, CONTEXTS[1]), ("mixtral-8x7b", "40", 128, 1024),
          ("mistral-7b-v0.1", "40", 1024, 16), ("gpt2", "24", 256, 1024))
DRAWN_BATCHES = (1, 8, 64, 512)


def step_time(config, device_key, batch, context) -> Fraction:
    """The course's decode step time (seconds) of `batch` sequences with `context` cached tokens, BF16."""
    return roofline(ledger_of(config), device(device_key), batch, context)["step_time"]


def _number(x: Fraction) -> int | float:
    return x.numerator if x.denominator == 1 else float(x)


def step_cases(models, rng) -> list[Case]:
    by_id = {m["id"]: m for m in models.values()}

    def case(folder: str, key: str, batch: int, context: int, label: str = "", shown: bool = False) -> Case:
        config, dev = by_id[folder]["config"], device(key)
        r = roofline(ledger_of(config), dev, batch, context)
        args = (_number(r["weight_bytes"]), _number(Fraction(r["kv_bytes"], batch)),
                _number(Fraction(r["flops"], batch)), batch, dev.bandwidth, peak_flops(dev, "BF16"))
        return Case(f"{label}{by_id[folder]['name']}，{dev.name}，批大小 {batch:,}，上下文 {context:,}", args,
                    shown=shown, ref_args=(config, key, batch, context))

    cases = [case(*c, shown=True) for c in SHOWN] + [case(*c) for c in OTHERS]
    folder = rng.choice(sorted(by_id))
    key = rng.choice(sorted(k for k, d in DEVICES.items() if d.bf16_flops))
    return cases + [case(folder, key, rng.choice(DRAWN_BATCHES), rng.choice((0, *CONTEXTS)), "随机抽到的 ")]


SOLUTION = '''def decode_step_time(weight_bytes, kv_bytes_per_seq, flops_per_token, batch, bandwidth, peak_flops):
    read = weight_bytes + batch * kv_bytes_per_seq    # 权重整批只读一次，KV cache 每条序列各读自己的
    memory_time = read / bandwidth
    compute_time = batch * flops_per_token / peak_flops
    return max(memory_time, compute_time)             # 慢的那一边就是这一步的时间
'''
