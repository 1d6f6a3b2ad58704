"""The TensorFlow/Keras reference implementation. Imports only TensorFlow and Keras (and NumPy).

Mirrors :mod:`txcourse.torch`: the same modules, classes, arguments and shapes.
See :mod:`txcourse` for the shape legend and the mask convention.
"""

try:
    import keras as _keras  # noqa: F401
    import tensorflow as _tf  # noqa: F401
except ImportError as error:  # pragma: no cover - depends on the installation
    raise ImportError(
        "txcourse.tf needs TensorFlow and Keras 3: pip install 'txcourse[tf]' (see README.md for GPU builds)"
    ) from error

from txcourse.tf.alibi import alibi_bias, alibi_slopes
from txcourse.tf.attention import MultiHeadAttention, fused_attention, scaled_dot_product_attention
from txcourse.tf.decode import DecodeOutput, beam_search, greedy_decode
from txcourse.tf.decoder import Decoder, DecoderLayer
from txcourse.tf.embedding import TransformerEmbedding
from txcourse.tf.encoder import Encoder, EncoderLayer
from txcourse.tf.feed_forward import PositionwiseFeedForward
from txcourse.tf.loss import label_smoothed_cross_entropy, token_accuracy
from txcourse.tf.masks import look_ahead_mask, padding_mask
from txcourse.tf.model import Transformer
from txcourse.tf.positional import LearnedPositionalEmbedding, PositionalEncoding, positional_encoding
from txcourse.tf.rotary import apply_rotary, rotary_tables, rotate_pairs
from txcourse.tf.sample import filter_logits, sample_decode
from txcourse.tf.seq2seq import BahdanauAttention, Seq2Seq, Seq2SeqDecoder, Seq2SeqEncoder
from txcourse.tf.tiled import tiled_attention
from txcourse.tf.train import Trainer, build_model, load_model

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
