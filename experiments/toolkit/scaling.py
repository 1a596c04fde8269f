"""Scaling laws: how big a model should be for a compute budget, and what a training token costs.

Plain Python (math only, no I/O), imported by the build and by the browser's worker alike. Sources:

- Training FLOPs C ≈ 6·N·D: 2 FLOPs per weight per token forward, twice that backward (Kaplan et al. 2020,
  arXiv 2001.08361, section 2.1; Hoffmann et al. 2022, arXiv 2203.15556). ``training_flops_per_token`` counts
  one token exactly from a config's ledger instead: 3 × (2 × every weight that multiplies an activation, the
  output projection included even when it is tied) + 3 × the attention-score work at the training sequence length
  (q·k and the weighted sum of v, each token against the whole sequence: 4·n_layer·s·d_attn forward, the count
  inside DeepSeek's M below; ``causal=True`` averages the context over the positions of a causal sequence instead).
- Kaplan et al. 2020, Table 1: C_forward ≈ 2N + 2·n_layer·n_ctx·d_attn, the context-dependent row ("Attention:
  Mask") half of the count above; ``kaplan_attention_flops`` is that row, so their attention-to-weights ratio is
  n_ctx/(12·d_model) where the count above gives s/(6·d).
- Chinchilla's approach 3 (Hoffmann et al. 2022, section 3.3 and appendix D.2): L(N, D) = E + A/N^α + B/D^β with
  the rounded published E 1.69, A 406.4, B 410.7, α 0.34, β 0.28. At fixed C = 6ND the minimum is closed-form
  (the paper's equation 4): N_opt = G·(C/6)^(β/(α+β)), D_opt = G⁻¹·(C/6)^(α/(α+β)), G = (αA / (βB))^(1/(α+β)).
- Epoch AI's refit of the same form on data read back from the paper's figures (Besiroglu et al. 2024, arXiv
  2404.10102, table 1): E 1.8172, A 482.01, B 2085.43, α 0.3478, β 0.3658.
- Kaplan et al. 2020, equations 1.1, 1.2 and 1.5: L(N) = (N_c/N)^α_N, N_c 8.8e13 non-embedding parameters,
  α_N 0.076; L(D) = (D_c/D)^α_D, D_c 5.4e13 tokens, α_D 0.095; L(N, D) = ((N_c/N)^(α_N/α_D) + D_c/D)^α_D;
  compute-efficient training grows N as C^0.73 (equation 1.7 / section 6), D as C^0.27. N counts no vocabulary or
  position embedding: ``non_embedding_params`` takes it exactly from a ledger.
- DeepSeek LLM (DeepSeek-AI 2024, arXiv 2401.02954, section 3.2): model scale as non-embedding FLOPs per token
  M = 72·n_layer·d² + 12·n_layer·d·l_seq (for their blocks), C = M·D, and the IsoFLOP fits
  M_opt = 0.1715·C^0.5243, D_opt = 5.8316·C^0.4757. ``deepseek_M`` gives M exactly from a ledger: 6 × the
  non-vocabulary matmul weights + 3 × the attention-score work at l_seq.

The fits predict a loss on their own data and tokenizer: compare a fit with itself (its optimum, its curve), never
one fit's loss with another's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

SECONDS_PER_DAY = 86_400


# -- Chinchilla-form fits: L(N, D) = E + A/N^alpha + B/D^beta ---------------------------------------------------
@dataclass(frozen=True)
class ParametricFit:
    key: str
    E: float
    A: float
    B: float
    alpha: float
    beta: float

    def loss(self, N: float, D: float) -> float:
        """Predicted loss (nats per token, on the fit's own data) of N parameters trained on D tokens."""
        return self.E + self.A / N ** self.alpha + self.B / D ** self.beta

    @property
    def G(self) -> float:
        return (self.alpha * self.A / (self.beta * self.B)) ** (1 / (self.alpha + self.beta))

    @property
    def a(self) -> float:
        """N_opt grows as C^a."""
        return self.beta / (self.alpha + self.beta)

    @property
    def b(self) -> float:
        """D_opt grows as C^b (a + b = 1)."""
        return self.alpha / (self.alpha + self.beta)

    def optimum(self, C: float) -> tuple[float, float]:
        """(N_opt, D_opt) minimising the loss at C = 6·N·D: the closed form (Hoffmann et al., equation 4)."""
        N = self.G * (C / 6) ** self.a
        return N, C / (6 * N)

    def loss_at_budget(self, C: float, N: float) -> float:
        """The IsoFLOP curve: loss of N parameters trained on the D = C/(6N) tokens the budget buys."""
        return self.loss(N, C / (6 * N))


CHINCHILLA = ParametricFit("chinchilla", E=1.69, A=406.4, B=410.7, alpha=0.34, beta=0.28)
EPOCH = ParametricFit("epoch", E=1.8172, A=482.01, B=2085.43, alpha=0.3478, beta=0.3658)
FITS = {f.key: f for f in (CHINCHILLA, EPOCH)}


def isoflop_curve(fit: ParametricFit, C: float, Ns: list[float]) -> list[float]:
    """Loss against N at one budget (each N trained on C/(6N) tokens)."""
    return [fit.loss_at_budget(C, N) for N in Ns]


def log_grid(low: float, high: float, points: int) -> list[float]:
    """`points` values from low to high, evenly spaced in log (both ends included)."""
    if points < 2 or not 0 < low < high:
        raise ValueError("log_grid needs 0 < low < high and at least 2 points")
    step = math.log(high / low) / (points - 1)
    return [low * math.exp(i * step) for i in range(points)]


# -- Kaplan et al. 2020 -----------------------------------------------------------------------------------------
# its own class, not a ParametricFit: L(N), L(D) and L(N, D) have another form (only the fields' layout is alike)
@dataclass(frozen=True)
class KaplanFit:
    N_c: float = 8.8e13
    alpha_N: float = 0.076
    D_c: float = 5.4e13
    alpha_D: float = 0.095
    N_exponent: float = 0.73     # compute-efficient N ∝ C^0.73
    D_exponent: float = 0.27     # and D ∝ C^0.27

    def loss_N(self, N: float) -> float:
        return (self.N_c / N) ** self.alpha_N

    def loss_D(self, D: float) -> float:
        return (self.D_c / D) ** self.alpha_D

    def loss(self, N: float, D: float) -> float:
        return ((self.N_c / N) ** (self.alpha_N / self.alpha_D) + self.D_c / D) ** self.alpha_D


KAPLAN = KaplanFit()


def growth_split(N_exponent: float, D_exponent: float, factor: float = 10.0) -> tuple[float, float]:
    """How much N and D grow when compute grows by `factor`, given their exponents."""
    return factor ** N_exponent, factor ** D_exponent


# -- DeepSeek LLM 2024 ------------------------------------------------------------------------------------------
# its own class too: DeepSeek fits M_opt and D_opt as powers of C and publishes no loss (alike KaplanFit in layout)
@dataclass(frozen=True)
class DeepSeekFit:
    M_base: float = 0.1715
    a: float = 0.5243
    D_base: float = 5.8316
    b: float = 0.4757

    def optimum(self, C: float) -> tuple[float, float]:
        """(M_opt in non-embedding FLOPs per token, D_opt in tokens) for a budget C = M·D."""
        return self.M_base * C ** self.a, self.D_base * C ** self.b


DEEPSEEK = DeepSeekFit()


def deepseek_M_formula(n_layer: int, d_model: int, seq: int) -> int:
    """DeepSeek's M for their blocks: 72·n_layer·d² + 12·n_layer·d·l_seq."""
    return 72 * n_layer * d_model ** 2 + 12 * n_layer * d_model * seq


# -- from a ledger: exact counts ----------------------------------------------------------------------------------
def vocab_params(ledger) -> int:
    """Input embedding (with any position embedding) plus an untied lm_head: the vocabulary-sized matrices."""
    from ..ledger import views
    parts = views.breakdown(ledger)
    return parts.get("embedding", 0) + parts.get("lm_head", 0)


def non_embedding_params(ledger) -> int:
    """Kaplan's N: the text backbone without its vocabulary and position embeddings (norms and biases kept)."""
    return ledger.text_backbone - vocab_params(ledger)


def output_projection_weights(ledger) -> int:
    """The weights of the last matmul, hidden state -> vocabulary logits: lm_head's, or the embedding's when they
    are tied (the ledger counts a tied matrix once, under embedding, where it is looked up, not multiplied)."""
    a = ledger.arch
    head = ledger.part("text/lm_head")
    return head.count if head is not None else a.vocab_size * a.d_model


def matmul_weights_per_token(ledger) -> int:
    """Every weight a token multiplies on its way through (active experts only), the output projection included."""
    from ..ledger import views
    head = ledger.part("text/lm_head")
    return views.matmul_weights(ledger) + (0 if head is not None else output_projection_weights(ledger))


def attention_flops_per_token(ledger, seq: int, causal: bool = False) -> int | float:
    """Forward attention-score work per token of a training sequence of `seq` tokens: each token against the whole
    sequence (each layer capped at its window), or with causal=True against the positions before it (the mean over
    the sequence, exact)."""
    from ..ledger import views
    if not causal:
        return views.attention_score_flops(ledger, seq)
    total = 0
    for m, k in ledger.arch.mixer_counts:
        w = m.window or seq
        # sum over positions t = 1..seq of min(t, w)
        full = min(seq, w)
        attended = full * (full + 1) // 2 + (seq - full) * w
        total += 2 * m.score_width * attended * k
    return total / seq


def kaplan_attention_flops(n_layer: int, n_ctx: int, d_attn: int) -> int:
    """Kaplan et al. 2020, Table 1's context-dependent forward FLOPs per token: 2·n_layer·n_ctx·d_attn (half of
    ``attention_flops_per_token`` for a model whose every layer attends to the whole sequence)."""
    return 2 * n_layer * n_ctx * d_attn


def training_flops_per_token(ledger, seq: int | None = None, causal: bool = False) -> dict:
    """Training FLOPs of one token (forward + backward = 3 × forward): {"weights": 6 × matmul weights,
    "attention": 3 × the attention-score work at `seq` (the model's native context by default),
    "total": their sum, "six_n": 6 × the parameter count, "seq": seq}."""
    seq = seq or ledger.arch.context_length
    weights = 6 * matmul_weights_per_token(ledger)
    attention = 3 * attention_flops_per_token(ledger, seq, causal)
    return {"weights": weights, "attention": attention, "total": weights + attention,
            "six_n": 6 * ledger.total, "seq": seq}


def attention_breakeven_seq(ledger) -> float | None:
    """The training sequence length at which the attention term equals the weights term (full-context layers only;
    None when no layer's attention grows with the sequence)."""
    from ..ledger import views
    per = views.score_flops_per_context_token(ledger)
    if not per:
        return None
    return 2 * matmul_weights_per_token(ledger) / per


def deepseek_M(ledger, seq: int | None = None) -> int:
    """DeepSeek's M for any config: non-embedding FLOPs per training token, exactly from the ledger (6 × the matmul
    weights outside the vocabulary matrices + 3 × the attention-score work at l_seq)."""
    from ..ledger import views
    seq = seq or ledger.arch.context_length
    non_vocab = matmul_weights_per_token(ledger) - output_projection_weights(ledger)
    return 6 * non_vocab + 3 * views.attention_score_flops(ledger, seq)


# -- a budget in time ---------------------------------------------------------------------------------------------
def training_flops(N: float, D: float) -> float:
    return 6 * N * D


def training_seconds(C: float, n_devices: int, peak_flops: float, utilisation: float) -> float:
    """Wall-clock seconds for C FLOPs on n devices each sustaining utilisation × peak FLOP/s."""
    if n_devices <= 0 or peak_flops <= 0 or not 0 < utilisation <= 1:
        raise ValueError("n_devices and peak_flops must be positive, utilisation in (0, 1]")
    return C / (n_devices * peak_flops * utilisation)


def implied_utilisation(C: float, device_hours: float, peak_flops: float) -> float:
    """The share of peak a run sustained, from its FLOPs and the device-hours it reported."""
    return C / (device_hours * 3600 * peak_flops)
