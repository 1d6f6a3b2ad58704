"""Parameter and FLOP account of the encoder-decoder Transformer, from its config alone.

Framework-free: the numbers follow from :class:`~txcourse.config.TransformerConfig`
and the layer shapes of Vaswani et al. (2017), Sec. 3.1-3.4, and are tested
against the real models of :mod:`txcourse.torch` and :mod:`txcourse.tf`
(``tests/evaluation/test_accounting.py``). Book: "Interlude: why self-attention".

Conventions:

* Parameters are counted as the course builds them: every linear map has a
  bias (``attention_bias=False`` drops the four biases of each attention
  sublayer, as tensor2tensor does), each LayerNorm has a gain and a bias,
  the sinusoidal positional encoding (Sec. 3.5) has none.
* A multiply-add counts 2 FLOPs. Only matrix products are counted (the
  linear maps, Q K^T and the weighted sum of the values); softmax,
  LayerNorm, ReLU, the residual additions, the bias additions and the
  embedding look-up are O(n d) element-wise work and are left out, as
  ``torch.utils.flop_counter.FlopCounterMode`` leaves them out.
* The attention terms that grow as n^2 d (Table 1, "complexity per layer"
  of self-attention) are kept apart from the terms that grow as n d^2.
* Grouped-query attention (``config.num_kv_heads`` = H_kv < H, Ainslie et
  al. 2023; multi-query for H_kv = 1, Shazeer 2019) shrinks W^K and W^V to
  d x H_kv d_k, their projections' FLOPs with them, and the key/value
  cache (:func:`kv_cache_bytes`); the scores and the mix still run over all
  H query heads, so their FLOPs do not change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from txcourse.config import TransformerConfig
from txcourse.errors import TxcourseError

__all__ = ["ParameterAccount", "FlopAccount", "count_parameters", "forward_flops", "kv_cache_bytes"]


@dataclass(frozen=True)
class ParameterAccount:
    """Parameters per component, summed over the layers of the stack.

    ``components`` maps a name (the attribute path of the PyTorch and Keras
    models with the layer index dropped, e.g. ``"encoder.self_attn"``) to
    its number of parameters; a component the model does not have (the
    output projection when tied, the final LayerNorm of a post-LN stack)
    counts 0.
    """

    components: dict[str, int]

    @property
    def total(self) -> int:
        """All parameters, each shared matrix counted once."""
        return sum(self.components.values())

    @property
    def embeddings(self) -> int:
        """The vocabulary-sized matrices: the two embeddings and the output projection."""
        return sum(v for k, v in self.components.items() if k.endswith(".embedding") or k == "output_projection")

    @property
    def non_embedding(self) -> int:
        """Everything else: attention, feed-forward networks and LayerNorms."""
        return self.total - self.embeddings


@dataclass(frozen=True)
class FlopAccount:
    """Forward FLOPs of one sequence pair (batch 1) per component, summed over the layers.

    Keys ending in ``.scores`` (Q K^T) and ``.mix`` (weights times V) are the
    attention terms, n_q n_k d FLOPs each up to the factor 2; every other
    key is a linear map, n d_in d_out up to the factor 2.
    """

    components: dict[str, int]
    src_len: int
    tgt_len: int

    @property
    def total(self) -> int:
        """All counted FLOPs of one forward pass (teacher forcing, whole target at once)."""
        return sum(self.components.values())

    @property
    def attention(self) -> int:
        """The n^2 d terms: Q K^T and the weighted sum of the values, in every attention sublayer."""
        return sum(v for k, v in self.components.items() if k.endswith((".scores", ".mix")))

    @property
    def linear(self) -> int:
        """The n d^2 terms: projections, feed-forward networks and the output projection."""
        return self.total - self.attention

    @property
    def per_token(self) -> float:
        """``total`` divided by the tokens processed, ``src_len + tgt_len``."""
        return self.total / (self.src_len + self.tgt_len)


def _kv_width(config: TransformerConfig) -> int:
    """Width of the projected keys (and of the values): H_kv d_k, which is d unless num_kv_heads < num_heads."""
    return config.kv_heads * config.d_k


def _attention_parameters(d: int, bias: bool, kv_width: int) -> int:
    """W^Q, W^O, each d x d (Sec. 3.2.2, h d_k = d), W^K, W^V, each d x kv_width, plus their biases."""
    return 2 * d * d + 2 * d * kv_width + ((2 * d + 2 * kv_width) if bias else 0)


def _check_count_args(config, share_source_target, attention_bias) -> None:
    """:func:`count_parameters`'s arguments, checked; each error names its argument."""
    if not isinstance(config, TransformerConfig):
        raise TxcourseError(f"config must be a TransformerConfig, got {type(config).__name__}", "config")
    for name, value in (("share_source_target", share_source_target), ("attention_bias", attention_bias)):
        if not isinstance(value, bool):
            raise TxcourseError(f"{name} must be True or False, got {value!r}", name)
    if share_source_target and config.src_vocab_size != config.tgt_vocab_size:
        raise TxcourseError(
            f"share_source_target=True needs one vocabulary for both sides, got src_vocab_size "
            f"{config.src_vocab_size} and tgt_vocab_size {config.tgt_vocab_size}; make them equal "
            f"or pass share_source_target=False",
            "share_source_target",
        )


def count_parameters(
    config: TransformerConfig, *, share_source_target: bool = False, attention_bias: bool = True
) -> ParameterAccount:
    """Parameters of :class:`txcourse.torch.model.Transformer` (and its Keras twin) per component.

    Per layer (Vaswani et al. 2017): multi-head attention 4 d^2 + 4 d
    (Sec. 3.2.2; with H_kv key/value heads of d_k,
    2 d^2 + 2 d H_kv d_k + 2 d + 2 H_kv d_k), the position-wise FFN 2 d d_ff + d_ff + d (Eq. (2),
    Sec. 3.3), each LayerNorm 2 d (Sec. 3.1); an encoder layer has one
    attention sublayer, a decoder layer two. The embeddings are V x d each
    (Sec. 3.4); the output projection d V + V unless tied to the target
    embedding (``config.tie_embeddings``). Pre-LN stacks (``norm_first``)
    end with one more LayerNorm each.

    Args:
        config: the model's :class:`~txcourse.config.TransformerConfig`
            (vocabulary sizes and ``tie_embeddings`` included).
        share_source_target: also share the source embedding with the target
            one, as the paper does with its shared byte-pair vocabulary
            (Sec. 3.4: "the same weight matrix between the two embedding
            layers and the pre-softmax linear transformation"). The course's
            models do not: they keep a source embedding of their own, even
            where both sides share one vocabulary (the file task's
            default); the count shows what sharing would save. Needs
            equal vocabulary sizes.
        attention_bias: count the biases of the attention projections
            (the course's layers have them; tensor2tensor's do not).

    Returns:
        a :class:`ParameterAccount`.

    Example:
        >>> count_parameters(TransformerConfig()).components["encoder.self_attn"]
        6303744
    """
    _check_count_args(config, share_source_target, attention_bias)
    d, f = config.d_model, config.d_ff
    n_enc, n_dec = config.num_encoder_layers, config.num_decoder_layers
    attention = _attention_parameters(d, attention_bias, _kv_width(config))
    ffn = 2 * d * f + f + d  # W_1, b_1, W_2, b_2 (Eq. 2)
    norm = 2 * d  # gain and bias
    final_norm = norm if config.norm_first else 0
    components = {
        "encoder.embedding": config.src_vocab_size * d,
        "encoder.self_attn": n_enc * attention,
        "encoder.self_attn_norm": n_enc * norm,
        "encoder.feed_forward": n_enc * ffn,
        "encoder.feed_forward_norm": n_enc * norm,
        "encoder.final_norm": final_norm,
        "decoder.embedding": 0 if share_source_target else config.tgt_vocab_size * d,
        "decoder.self_attn": n_dec * attention,
        "decoder.self_attn_norm": n_dec * norm,
        "decoder.cross_attn": n_dec * attention,
        "decoder.cross_attn_norm": n_dec * norm,
        "decoder.feed_forward": n_dec * ffn,
        "decoder.feed_forward_norm": n_dec * norm,
        "decoder.final_norm": final_norm,
        "output_projection": 0 if config.tie_embeddings else d * config.tgt_vocab_size + config.tgt_vocab_size,
    }
    return ParameterAccount(components)


def _check_length(name: str, value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1 (a number of tokens), got {value!r}")
    return value


def forward_flops(config: TransformerConfig, src_len: int, tgt_len: int) -> FlopAccount:
    """Forward FLOPs of the model on one source of ``src_len`` and one target of ``tgt_len`` tokens.

    With n = ``src_len``, m = ``tgt_len``, d = d_model, N layers, 2 FLOPs per
    multiply-add (Vaswani et al. 2017, Sec. 3 and Table 1):

    * encoder self-attention: projections 4 * 2 n d^2 (with H_kv < H key/value
      heads, 2 * 2 n d^2 + 2 * 2 n d H_kv d_k), scores Q K^T 2 n^2 d,
      mix (weights V) 2 n^2 d (the h heads of d_k = d / h add up to d);
    * decoder self-attention: the same with m (the masked half of the
      m x m scores is computed and then zeroed, so it counts);
    * cross-attention: W^Q and W^O on m positions, W^K and W^V on the n
      memory positions (2 * 2 m d^2 + 2 * 2 n d^2), scores and mix 2 m n d each;
    * FFN (Eq. 2): 2 * 2 n d d_ff per stack position;
    * output projection (Sec. 3.4): 2 m d V_tgt, tied or not.

    Training costs about three times this (the backward pass is two
    products per forward product).

    Args:
        config: a :class:`~txcourse.config.TransformerConfig`.
        src_len: source tokens n (>= 1).
        tgt_len: target tokens m fed to the decoder (>= 1).

    Returns:
        a :class:`FlopAccount`.

    Example:
        >>> acc = forward_flops(TransformerConfig(), src_len=10, tgt_len=10)
        >>> acc.components["encoder.self_attn.scores"] == 6 * 2 * 10 * 10 * 512
        True
    """
    if not isinstance(config, TransformerConfig):
        raise ValueError(f"config must be a TransformerConfig, got {type(config).__name__}")
    n, m = _check_length("src_len", src_len), _check_length("tgt_len", tgt_len)
    d, f, kv = config.d_model, config.d_ff, _kv_width(config)
    n_enc, n_dec = config.num_encoder_layers, config.num_decoder_layers
    components = {
        "encoder.self_attn.projections": n_enc * (2 * 2 * n * d * d + 2 * 2 * n * d * kv),
        "encoder.self_attn.scores": n_enc * 2 * n * n * d,
        "encoder.self_attn.mix": n_enc * 2 * n * n * d,
        "encoder.feed_forward": n_enc * 2 * 2 * n * d * f,
        "decoder.self_attn.projections": n_dec * (2 * 2 * m * d * d + 2 * 2 * m * d * kv),
        "decoder.self_attn.scores": n_dec * 2 * m * m * d,
        "decoder.self_attn.mix": n_dec * 2 * m * m * d,
        "decoder.cross_attn.projections": n_dec * (2 * 2 * m * d * d + 2 * 2 * n * d * kv),
        "decoder.cross_attn.scores": n_dec * 2 * m * n * d,
        "decoder.cross_attn.mix": n_dec * 2 * m * n * d,
        "decoder.feed_forward": n_dec * 2 * 2 * m * d * f,
        "output_projection": 2 * m * d * config.tgt_vocab_size,
    }
    return FlopAccount(components, n, m)


def kv_cache_bytes(
    config: TransformerConfig,
    length: int,
    batch: int = 1,
    bytes_per_value: int = 4,
    source_length: Optional[int] = None,
) -> int:
    """Bytes of the decoder's key/value cache after ``length`` target positions.

    What :meth:`Decoder.init_cache` and the decoding steps hold
    (:mod:`txcourse.cache`), per decoder layer and sequence:

    * the self-attention cache, keys and values of every position decoded so
      far: 2 x H_kv x length x d_k values;
    * with ``source_length`` given, also the encoder-decoder cache, the
      memory's keys and values projected once: 2 x H_kv x source_length x d_k
      values. Without it that part is not counted (a decoder-only model has
      none).

    In all, with N = ``num_decoder_layers`` and b = ``bytes_per_value``::

        bytes = 2 * N * batch * H_kv * (length [+ source_length]) * d_k * b

    H_kv = ``config.num_kv_heads`` (``num_heads`` when None). For the
    paper's base model H_kv d_k = d_model = 512: each position costs
    2 x 6 x 512 x 4 = 24 KiB in float32. Grouped-query attention divides
    the cache by H / H_kv (Ainslie et al. 2023). The encoder memory itself
    (B, T_src, D), the weights and the activations of a step are not counted.

    Args:
        config: the model's :class:`~txcourse.config.TransformerConfig`.
        length: target positions in the cache (>= 0).
        batch: sequences decoded at once, B (beams count as sequences).
        bytes_per_value: 4 for float32, 2 for float16/bfloat16.
        source_length: source positions T_src, to count the cross-attention
            cache; None leaves it out.

    Returns:
        the number of bytes, an int.

    Example:
        >>> kv_cache_bytes(TransformerConfig(), length=1)
        24576
        >>> kv_cache_bytes(TransformerConfig(num_kv_heads=1), length=1)
        3072
    """
    if not isinstance(config, TransformerConfig):
        raise ValueError(f"config must be a TransformerConfig, got {type(config).__name__}")
    for name, value, minimum in (
        ("length", length, 0),
        ("batch", batch, 1),
        ("bytes_per_value", bytes_per_value, 1),
        ("source_length", 0 if source_length is None else source_length, 0),
    ):
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    positions = length + (source_length or 0)  # self-attention keys, then the memory's
    return 2 * config.num_decoder_layers * batch * _kv_width(config) * positions * bytes_per_value
