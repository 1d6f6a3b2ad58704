"""The PyTorch reference implementation. Imports only PyTorch (and NumPy).

Mirrors :mod:`txcourse.tf`: the same modules, classes, arguments and shapes.
See :mod:`txcourse` for the shape legend and the mask convention.
"""

try:
    import torch as _torch  # noqa: F401
except ImportError as error:  # pragma: no cover - depends on the installation
    raise ImportError(
        "txcourse.torch needs PyTorch: pip install 'txcourse[torch]' (or torch itself, see README.md)"
    ) from error

from txcourse import _validation as _V
from txcourse.torch.alibi import alibi_bias, alibi_slopes
from txcourse.torch.attention import MultiHeadAttention, fused_attention, scaled_dot_product_attention
from txcourse.torch.decode import DecodeOutput, beam_search, greedy_decode
from txcourse.torch.decoder import Decoder, DecoderLayer
from txcourse.torch.embedding import TransformerEmbedding
from txcourse.torch.encoder import Encoder, EncoderLayer
from txcourse.torch.feed_forward import PositionwiseFeedForward
from txcourse.torch.loss import label_smoothed_cross_entropy, token_accuracy
from txcourse.torch.masks import look_ahead_mask, padding_mask
from txcourse.torch.model import Transformer
from txcourse.torch.positional import LearnedPositionalEmbedding, PositionalEncoding, positional_encoding
from txcourse.torch.rotary import apply_rotary, rotary_tables, rotate_pairs
from txcourse.torch.sample import filter_logits, sample_decode
from txcourse.torch.seq2seq import BahdanauAttention, Seq2Seq, Seq2SeqDecoder, Seq2SeqEncoder
from txcourse.torch.tiled import tiled_attention
from txcourse.torch.train import Trainer, build_model, load_model

_V.set_tracing_probe(_torch.compiler.is_compiling)  # torch.compile traces no per-call check (no graph break)

__all__ = [
    "BahdanauAttention",
    "DecodeOutput",
    "Decoder",
    "DecoderLayer",
    "Encoder",
    "EncoderLayer",
    "LearnedPositionalEmbedding",
    "MultiHeadAttention",
    "PositionalEncoding",
    "PositionwiseFeedForward",
    "Seq2Seq",
    "Seq2SeqDecoder",
    "Seq2SeqEncoder",
    "Trainer",
    "Transformer",
    "TransformerEmbedding",
    "alibi_bias",
    "alibi_slopes",
    "apply_rotary",
    "beam_search",
    "build_model",
    "filter_logits",
    "fused_attention",
    "greedy_decode",
    "label_smoothed_cross_entropy",
    "load_model",
    "look_ahead_mask",
    "padding_mask",
    "positional_encoding",
    "rotary_tables",
    "rotate_pairs",
    "sample_decode",
    "scaled_dot_product_attention",
    "tiled_attention",
    "token_accuracy",
]
