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


def attention(d: int, n_heads: int, n_kv: int, head_dim: int, *, qkv_bias: bool = False, o_bias: bool = False,
              qk_norm: bool = False, output_gate: bool = False, sinks: bool = False, name: str = "self_attn",
              kind: str = "attention", o_name: str = "o_proj", qk_norm_names: tuple[str, str] = ("q_norm", "k_norm"),
              qk_norm_bias: bool = False, qk_norm_width: int | None = None, v_head_dim: int | None = None) -> Node:
    """Multi-head / grouped-query attention. With output_gate, q_proj also produces a sigmoid gate per head
    (twice the width); with qk_norm, q and k are normalised per head (RMSNorm, or LayerNorm with qk_norm_bias;
    qk_norm_names as the family calls them, qk_norm_width when it is not head_dim); sinks add one learned logit
    per head. o_name: the output projection's name (phi calls it ``dense``). v_head_dim: a value head narrower
    than the query/key head (MiMo-V2-Flash), which v_proj and o_proj then use."""
    q_width = n_heads * head_dim * (2 if output_gate else 1)
    v_dim = v_head_dim or head_dim
    parts = (linear("q_proj", d, q_width, qkv_bias) + linear("k_proj", d, n_kv * head_dim, qkv_bias)
             + linear("v_proj", d, n_kv * v_dim, qkv_bias) + linear(o_name, n_heads * v_dim, d, o_bias))
    if qk_norm:
        width = qk_norm_width or head_dim
        for norm_name in qk_norm_names:
            parts.append(leaf(f"{norm_name}.weight", width, kind="norm"))
            if qk_norm_bias:
                parts.append(leaf(f"{norm_name}.bias", width, kind="norm"))
    if sinks:
        parts.append(leaf("sinks", n_heads, matmul=False))
    return group(name, parts, kind=kind)


def fused_attention(d: int, q_width: int, kv_width: int, *, qkv: str = "qkv_proj", out: str = "o_proj",
                    bias: bool = False, name: str = "self_attn") -> Node:
    """Attention whose q, k and v come out of ONE fused projection (phi3 ``qkv_proj``, GPT-NeoX and Falcon
    ``query_key_value``): width q_width + 2 * kv_width; the output projection maps q_width back to d."""
    return group(name, linear(qkv, d, q_width + 2 * kv_width, bias) + linear(out, q_width, d, bias),
                 kind="attention")


def gated_fused(d: int, d_ff: int, name: str = "mlp") -> Node:
    """Gated FFN whose gate and up projections are ONE fused matrix (phi3, GLM-4 ``gate_up_proj``, 2·d_ff
    wide), then ``down_proj``: the same three d×d_ff matrices as swiglu, stored as two tensors."""
    return group(name, linear("gate_up_proj", d, 2 * d_ff) + linear("down_proj", d_ff, d), kind="ffn")


def mlp2(d: int, d_ff: int, up: str, down: str, bias: bool, name: str = "mlp") -> Node:
    """Two-matrix (ungated) FFN, down(act(up(x))), with the family's names: phi fc1/fc2, GPT-NeoX and Falcon
    dense_h_to_4h/dense_4h_to_h, StarCoder2 c_fc/c_proj (nn.Linear, stored (out, in))."""
    return group(name, linear(up, d, d_ff, bias) + linear(down, d_ff, d, bias), kind="ffn")


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
        shared_name: str = "shared_experts", shared_gate: bool = False, name: str = "mlp",
        router_weight: str = "weight", shared_bias: bool = False, router_extra: tuple[Node, ...] = (),
        block_extra: tuple[Node, ...] = (), gated: bool = True, latent: int | None = None) -> Node:
    """Mixture-of-experts FFN (kind "ffn"): a router (kind "router": one logit per expert, optional bias), the
    routed experts as ONE node of n_experts copies of one gated expert (n_active = top_k: a token passes through
    top_k of them), optional always-active shared expert(s) (n_shared copies of a gated FFN of width
    shared_d_ff) and an optional sigmoid gate on the shared expert's output.

    router_buffer names a per-expert vector the checkpoint stores in the router but transformers registers as a
    buffer, not a parameter (DeepSeek-V3's e_score_correction_bias); it is tagged kind "hf_buffer" so the
    ledger can leave it out of ``hf_count`` while it still counts in the FFN and the total.

    router_weight names the router's weight where a family nests it (Hunyuan: gate.wg.weight); shared_bias gives
    the shared expert's three matrices biases (DeepSeek-V2 mlp_bias, ERNIE-4.5 use_bias); router_extra and
    block_extra are further tensors of the router and of the block itself (ERNIE-4.5's moe_statics correction
    bias, a parameter; MiniMax-M2's e_score_correction_bias, a buffer held by the block).
    gated=False: experts and shared expert are two-matrix MLPs, down(act(up(x))) (Nemotron-H's relu² experts).
    latent: the routed experts work in a narrower width, reached through fc1_latent_proj / fc2_latent_proj
    (Nemotron-H moe_latent_size)."""
    gate = [leaf(router_weight, n_experts, d)]
    if router_bias:
        gate.append(leaf("bias", n_experts, matmul=False))
    if router_buffer:
        gate.append(leaf(router_buffer, n_experts, kind="hf_buffer", matmul=False))
    gate += list(router_extra)
    d_x = latent or d

    parts = [group(router, gate, kind="router"),
             group("experts", expert_matrices(d_x, expert_d_ff, expert_bias, gated), n=n_experts, n_active=top_k)]
    if latent:
        parts += [group("fc1_latent_proj", [leaf("weight", latent, d)]),
                  group("fc2_latent_proj", [leaf("weight", d, latent)])]
    if n_shared:
        parts.append(group(shared_name, expert_matrices(d, shared_d_ff, shared_bias, gated), n=n_shared))
    if shared_gate:
        parts.append(group(f"{shared_name}_gate", [leaf("weight", 1, d)]))
    return group(name, parts + list(block_extra), kind="ffn")


def decoder_layer(mixer: Node, ffn: Node, norms: list[Node], name: str, n: int, kind: str = "") -> Node:
    """n identical decoder layers: token mixer + FFN + their norms. kind "parallel" marks a parallel block
    (GPT-J style: attention and FFN read the same normalised input and their outputs are added to the residual
    together, as in phi, GPT-NeoX with use_parallel_residual and Falcon); it is not a purpose category, so it
    changes no sum."""
    return group(name, [mixer, ffn] + norms, kind=kind, n=n)


# -- norms inside a mixer, parallel blocks (olmo2, cohere) --------------------------------------------------------
def with_norms(mixer: Node, norms: list[Node]) -> Node:
    """The same token mixer with extra norm tensors inside it (OLMo-2's q_norm / k_norm over all heads,
    Cohere's per-head q_norm / k_norm), keeping its name and kind."""
    return group(mixer.name, list(mixer.children) + norms, kind=mixer.kind)


def parallel_decoder_layer(mixer: Node, ffn: Node, norms: list[Node], name: str, n: int) -> Node:
    """n identical *parallel* decoder layers (Cohere, GPT-J style): one input norm feeds attention and the FFN
    side by side and both outputs are added to the residual, x + attn(norm(x)) + mlp(norm(x)). Same tensors as a
    sequential layer; the layer group is tagged kind "parallel" so the ledger shows the block shape (kind
    "parallel" is not a purpose category: the leaves below still sum as attention / FFN / norm)."""
    return decoder_layer(mixer, ffn, norms, name, n, kind="parallel")


def siglip_vision(width: int, d_ff: int, depth: int, channels: int, patch: int, n_positions: int,
                  use_head: bool, name: str = "vision_tower") -> Node:
    """SigLIP vision encoder (transformers SiglipVisionModel): a Conv2d patch embedding (with bias), one learned
    position per patch, `depth` pre-LN encoder layers (LayerNorms with bias; q/k/v/out projections with biases;
    a GELU MLP fc1/fc2 with biases), a final post_layernorm, and, with vision_use_head, the attention-pooling head
    (a learned probe, torch MultiheadAttention with fused in_proj, a LayerNorm and an MLP)."""
    def mlp() -> Node:
        return group("mlp", linear("fc1", width, d_ff, True) + linear("fc2", d_ff, width, True))

    layer = group("layers", [
        norm("layer_norm1", width, bias=True),
        group("self_attn", linear("k_proj", width, width, True) + linear("v_proj", width, width, True)
              + linear("q_proj", width, width, True) + linear("out_proj", width, width, True)),
        norm("layer_norm2", width, bias=True), mlp()], n=depth)
    parts = [
        group("embeddings", [leaf("patch_embedding.weight", width, channels, patch, patch, matmul=True),
                             leaf("patch_embedding.bias", width, matmul=False),
                             leaf("position_embedding.weight", n_positions, width, matmul=False)]),
        group("encoder", [layer]),
        norm("post_layernorm", width, bias=True),
    ]
    if use_head:
        parts.append(group("head", [
            leaf("probe", 1, 1, width, matmul=False),
            group("attention", [leaf("in_proj_weight", 3 * width, width), leaf("in_proj_bias", 3 * width, matmul=False)]
                  + linear("out_proj", width, width, True)),
            norm("layernorm", width, bias=True), mlp()]))
    return group(name, parts)


def expert_matrices(d: int, d_ff: int, bias: bool = False, gated: bool = True) -> list[Node]:
    """One expert's tensors: gate_proj, up_proj, down_proj (gated) or up_proj, down_proj (plain MLP)."""
    return ((linear("gate_proj", d, d_ff, bias) if gated else []) + linear("up_proj", d, d_ff, bias)
            + linear("down_proj", d_ff, d, bias))


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


def dsa_indexer(d: int, q_lora_rank: int, n_heads: int, head_dim: int, name: str = "indexer") -> Node:
    """DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2, GLM-5; transformers DeepseekV32Indexer):
    index queries from the query latent (wq_b: q_lora_rank -> heads × head_dim), one shared index key per token
    (wk, with a LayerNorm k_norm), and one weight per index head (weights_proj). It scores every earlier token
    and keeps the top index_topk for the attention proper."""
    return group(name, linear("wq_b", q_lora_rank, n_heads * head_dim) + linear("wk", d, head_dim)
                 + [norm("k_norm", head_dim, bias=True)] + linear("weights_proj", d, n_heads), kind="attention")
