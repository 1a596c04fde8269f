"""Builders for the parts a decoder is made of, each returning a ledger subtree with Hugging Face's tensor names.

Shapes follow the reference implementations in Hugging Face `transformers` (the source of the ✓ the lessons
show): a Linear(in, out) weight is stored as (out, in); a bias is (out,). Kinds tag what a part is for, so the
ledger can be summed by purpose (FFN, attention, norm, ...) however deep the part sits.
"""
from __future__ import annotations

from .tree import Node, group, leaf


def linear(name: str, d_in: int, d_out: int, bias: bool = False, kind: str = "") -> list[Node]:
    out = [leaf(f"{name}.weight", d_out, d_in, kind=kind)]
    if bias:
        out.append(leaf(f"{name}.bias", d_out, kind=kind, matmul=False))
    return out


def norm(name: str, width: int, bias: bool = False) -> Node:
    """RMSNorm (weight only) or LayerNorm (weight + bias) as one node."""
    parts = [leaf("weight", width, matmul=False)] + ([leaf("bias", width, matmul=False)] if bias else [])
    return group(name, parts, kind="norm")


def swiglu(d: int, d_ff: int, bias: bool = False, name: str = "mlp") -> Node:
    """Gated FFN: down(act(gate(x)) * up(x)), three matrices."""
    return group(name, linear("gate_proj", d, d_ff, bias) + linear("up_proj", d, d_ff, bias)
                 + linear("down_proj", d_ff, d, bias), kind="ffn")


def gelu_mlp(d: int, d_ff: int) -> Node:
    """GPT-2's two-matrix MLP (Conv1D stores weights as (in, out); the count is the same)."""
    return group("mlp", [leaf("c_fc.weight", d, d_ff), leaf("c_fc.bias", d_ff, matmul=False),
                         leaf("c_proj.weight", d_ff, d), leaf("c_proj.bias", d, matmul=False)], kind="ffn")


def attention(d: int, n_heads: int, n_kv: int, head_dim: int, *, qkv_bias=False, o_bias=False,
              qk_norm=False, output_gate=False, sinks=False, name="self_attn", kind="attention") -> Node:
    """Multi-head / grouped-query attention. With output_gate, q_proj also produces a sigmoid gate per head
    (twice the width); with qk_norm, q and k are RMS-normalised per head; sinks add one learned logit per head."""
    q_width = n_heads * head_dim * (2 if output_gate else 1)
    parts = (linear("q_proj", d, q_width, qkv_bias) + linear("k_proj", d, n_kv * head_dim, qkv_bias)
             + linear("v_proj", d, n_kv * head_dim, qkv_bias) + linear("o_proj", n_heads * head_dim, d, o_bias))
    if qk_norm:
        parts += [leaf("q_norm.weight", head_dim, kind="norm"), leaf("k_norm.weight", head_dim, kind="norm")]
    if sinks:
        parts.append(leaf("sinks", n_heads, matmul=False))
    return group(name, parts, kind=kind)


def gated_deltanet(d: int, n_k_heads: int, n_v_heads: int, k_head_dim: int, v_head_dim: int,
                   conv_kernel: int, name: str = "linear_attn") -> Node:
    """Gated DeltaNet mixer (Qwen3-Next / Qwen3.5 layout): fused q,k,v input projection, output gate z,
    per-head beta (b) and decay (a) projections, a depthwise causal conv over q,k,v, per-head dt_bias and
    A_log, a gated RMSNorm over one value head, and the output projection."""
    key_dim, value_dim = n_k_heads * k_head_dim, n_v_heads * v_head_dim
    conv_dim = 2 * key_dim + value_dim
    return group(name, [
        leaf("in_proj_qkv.weight", conv_dim, d),
        leaf("in_proj_z.weight", value_dim, d),
        leaf("in_proj_b.weight", n_v_heads, d),
        leaf("in_proj_a.weight", n_v_heads, d),
        leaf("conv1d.weight", conv_dim, 1, conv_kernel, matmul=True),
        leaf("dt_bias", n_v_heads, matmul=False),
        leaf("A_log", n_v_heads, matmul=False),
        leaf("norm.weight", v_head_dim, kind="norm"),
        leaf("out_proj.weight", d, value_dim),
    ], kind="linear_attention")


def mla(d: int, n_heads: int, q_lora_rank: int | None, kv_lora_rank: int, qk_nope_dim: int, qk_rope_dim: int,
        v_head_dim: int, bias: bool = False, name: str = "self_attn") -> Node:
    """Multi-head latent attention (DeepSeek-V2/V3). Queries go through a low-rank bottleneck (q_a_proj ->
    q_a_layernorm -> q_b_proj) or, with q_lora_rank None, one q_proj. Keys and values are compressed together
    into kv_lora_rank latent elements plus one shared rotary key of qk_rope_dim (kv_a_proj_with_mqa; the cache
    holds exactly these), normalised, and expanded per head by kv_b_proj into the non-rotary key part and the
    value. attention_bias adds biases to q_a_proj, kv_a_proj_with_mqa and o_proj (as in transformers)."""
    qk_dim = qk_nope_dim + qk_rope_dim
    if q_lora_rank:
        parts = (linear("q_a_proj", d, q_lora_rank, bias) + [leaf("q_a_layernorm.weight", q_lora_rank, kind="norm")]
                 + linear("q_b_proj", q_lora_rank, n_heads * qk_dim))
    else:
        parts = linear("q_proj", d, n_heads * qk_dim)
    parts += (linear("kv_a_proj_with_mqa", d, kv_lora_rank + qk_rope_dim, bias)
              + [leaf("kv_a_layernorm.weight", kv_lora_rank, kind="norm")]
              + linear("kv_b_proj", kv_lora_rank, n_heads * (qk_nope_dim + v_head_dim))
              + linear("o_proj", n_heads * v_head_dim, d, bias))
    return group(name, parts, kind="attention")


def moe(d: int, n_experts: int, top_k: int, expert_d_ff: int, *, router: str = "gate", router_bias: bool = False,
        router_buffer: str | None = None, expert_bias: bool = False, n_shared: int = 0, shared_d_ff: int = 0,
        shared_name: str = "shared_experts", shared_gate: bool = False, name: str = "mlp", gated: bool = True,
        latent: int | None = None) -> Node:
    """Mixture-of-experts FFN (kind "ffn"): a router (kind "router": one logit per expert, optional bias), the
    routed experts as ONE node of n_experts copies of one gated expert (n_active = top_k: a token passes through
    top_k of them), optional always-active shared expert(s) (n_shared copies of a gated FFN of width
    shared_d_ff) and an optional sigmoid gate on the shared expert's output.

    router_buffer names a per-expert vector the checkpoint stores in the router but transformers registers as a
    buffer, not a parameter (DeepSeek-V3's e_score_correction_bias); it is tagged kind "hf_buffer" so the
    ledger can leave it out of ``hf_count`` while it still counts in the FFN and the total.

    gated=False: experts and shared expert are two-matrix MLPs, down(act(up(x))) (Nemotron-H's relu² experts).
    latent: the routed experts work in a narrower width, reached through fc1_latent_proj / fc2_latent_proj
    (Nemotron-H moe_latent_size)."""
    gate = [leaf("weight", n_experts, d)]
    if router_bias:
        gate.append(leaf("bias", n_experts, matmul=False))
    if router_buffer:
        gate.append(leaf(router_buffer, n_experts, kind="hf_buffer", matmul=False))
    d_x = latent or d

    parts = [group(router, gate, kind="router"),
             group("experts", expert_matrices(d_x, expert_d_ff, expert_bias, gated), n=n_experts, n_active=top_k)]
    if latent:
        parts += [group("fc1_latent_proj", [leaf("weight", latent, d)]),
                  group("fc2_latent_proj", [leaf("weight", d, latent)])]
    if n_shared:
        parts.append(group(shared_name, expert_matrices(d, shared_d_ff, False, gated), n=n_shared))
    if shared_gate:
        parts.append(group(f"{shared_name}_gate", [leaf("weight", 1, d)]))
    return group(name, parts, kind="ffn")


def expert_matrices(d: int, d_ff: int, bias: bool = False, gated: bool = True) -> list[Node]:
    """One expert's tensors: gate_proj, up_proj, down_proj (gated) or up_proj, down_proj (plain MLP)."""
    return ((linear("gate_proj", d, d_ff, bias) if gated else []) + linear("up_proj", d, d_ff, bias)
            + linear("down_proj", d_ff, d, bias))


def decoder_layer(mixer: Node, ffn: Node, norms: list[Node], name: str, n: int) -> Node:
    """n identical decoder layers: token mixer + FFN + their norms."""
    return group(name, [mixer, ffn] + norms, n=n)


def up_down_mlp(d: int, d_ff: int, bias: bool = False, name: str = "mlp") -> Node:
    """Two-matrix FFN without a gate, down(act(up(x))) (Nemotron-H's squared-ReLU MLP)."""
    return group(name, linear("up_proj", d, d_ff, bias) + linear("down_proj", d_ff, d, bias), kind="ffn")


def mamba2(d: int, n_heads: int, head_dim: int, d_state: int, n_groups: int, conv_kernel: int, *,
           d_inner: int | None = None, in_bias: bool = False, conv_bias: bool = True, out_bias: bool = False,
           gated_norm: bool = True, name: str = "mixer") -> Node:
    """Mamba-2 mixer (Dao & Gu 2024; transformers NemotronHMamba2Mixer / FalconH1Mixer). in_proj produces, in one
    matrix, the gate z (d_inner), the conv input x,B,C (conv_dim = d_inner + 2·groups·d_state) and one dt per
    head; a depthwise causal conv over x,B,C; per-head dt_bias, A_log and D; an optional gated RMSNorm over
    d_inner; out_proj back to d. d_inner defaults to heads × head_dim."""
    d_inner = d_inner if d_inner is not None else n_heads * head_dim
    conv_dim = d_inner + 2 * n_groups * d_state
    parts = linear("in_proj", d, d_inner + conv_dim + n_heads, in_bias)
    parts.append(leaf("conv1d.weight", conv_dim, 1, conv_kernel, matmul=True))
    if conv_bias:
        parts.append(leaf("conv1d.bias", conv_dim, matmul=False))
    parts += [leaf("dt_bias", n_heads, matmul=False), leaf("A_log", n_heads, matmul=False),
              leaf("D", n_heads, matmul=False)]
    if gated_norm:
        parts.append(leaf("norm.weight", d_inner, kind="norm"))
    parts += linear("out_proj", d_inner, d, out_bias)
    return group(name, parts, kind="mamba")


def mamba2_state(n_heads: int, head_dim: int, d_state: int, n_groups: int, conv_kernel: int,
                 d_inner: int | None = None) -> int:
    """Elements a Mamba-2 layer keeps per sequence: the SSM state (heads × head_dim × d_state) plus the conv
    buffer of the last conv_kernel − 1 inputs over conv_dim channels. It does not grow with context."""
    d_inner = d_inner if d_inner is not None else n_heads * head_dim
    return n_heads * head_dim * d_state + (conv_kernel - 1) * (d_inner + 2 * n_groups * d_state)


def mamba1(d: int, d_inner: int, d_state: int, dt_rank: int, conv_kernel: int, *, conv_bias: bool = True,
           proj_bias: bool = False, inner_norms: bool = False, name: str = "mamba") -> Node:
    """Mamba (selective SSM, Gu & Dao 2023; transformers JambaMambaMixer): in_proj to x and the gate z
    (2·d_inner), a depthwise causal conv over x, x_proj to dt (dt_rank) and B, C (d_state each), dt_proj back to
    d_inner (with bias), A_log (d_inner × d_state), D, out_proj. Jamba adds RMSNorms on dt, B and C."""
    parts = linear("in_proj", d, 2 * d_inner, proj_bias)
    parts.append(leaf("conv1d.weight", d_inner, 1, conv_kernel, matmul=True))
    if conv_bias:
        parts.append(leaf("conv1d.bias", d_inner, matmul=False))
    parts += linear("x_proj", d_inner, dt_rank + 2 * d_state) + linear("dt_proj", dt_rank, d_inner, True)
    parts += [leaf("A_log", d_inner, d_state, matmul=False), leaf("D", d_inner, matmul=False)]
    parts += linear("out_proj", d_inner, d, proj_bias)
    if inner_norms:
        parts += [leaf("dt_layernorm.weight", dt_rank, kind="norm"), leaf("b_layernorm.weight", d_state, kind="norm"),
                  leaf("c_layernorm.weight", d_state, kind="norm")]
    return group(name, parts, kind="mamba")


def mamba1_state(d_inner: int, d_state: int, conv_kernel: int) -> int:
    """Elements a Mamba layer keeps per sequence: SSM state d_inner × d_state plus the conv buffer
    (conv_kernel − 1) × d_inner."""
    return d_inner * d_state + (conv_kernel - 1) * d_inner
