"""The RNN baseline: GRU encoder-decoder with and without Bahdanau attention. Book: week 1.

Sutskever et al. (2014) and Cho et al. (2014) squeeze the whole source into
one fixed context vector; Bahdanau et al. (2015) let every decoder step
attend over all encoder states instead.
"""

from __future__ import annotations

from typing import Optional, Union

import torch
from torch import nn

from txcourse import _validation as V
from txcourse.config import Seq2SeqConfig, check_config, check_int
from txcourse.torch._checks import check_float, check_tokens
from txcourse.torch.init import embedding, gru, gru_cell, linear

__all__ = ["BahdanauAttention", "Seq2SeqEncoder", "Seq2SeqDecoder", "Seq2Seq"]


class BahdanauAttention(nn.Module):
    """Additive attention, Bahdanau et al. (2015), Eq. (6) and Appendix A.1.2.

    e_j = v_a^T tanh(W_a s + U_a h_j),  alpha = softmax(e),  c = sum_j alpha_j h_j.
    The context is the weighted sum of the encoder states h_j themselves;
    the source notes summed the projected states U_a h_j (errata E7).

    Args:
        units: width of the hidden alignment layer (and the default width
            of the decoder state and of the encoder states).
        query_dim: width of the decoder state s (default ``units``).
        value_dim: width of the encoder states h_j (default ``units``).

    Shape:
        query (B, query_dim), values (B, T_src, value_dim), mask (B, T_src)
        with ``True`` at padding, keys (B, T_src, units): U_a h_j computed
        beforehand (decoding computes them once per sentence, not at every
        step; default: from ``values``). Returns context (B, value_dim) and
        weights (B, T_src).
    """

    def __init__(self, units: int, query_dim: Optional[int] = None, value_dim: Optional[int] = None):
        super().__init__()
        check_int("units", units, 1)  # the rule Seq2SeqConfig applies to its units
        self.units = units
        self.query_dim = query_dim or units
        self.value_dim = value_dim or units
        self.w_a = linear(self.query_dim, units)  # W_a: decoder state
        self.u_a = linear(self.value_dim, units, bias=False)  # U_a: encoder states
        self.v_a = linear(units, 1, bias=False)  # v_a

    def forward(
        self,
        query: torch.Tensor,
        values: torch.Tensor,
        mask: Optional[torch.Tensor] = None,
        keys: Optional[torch.Tensor] = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        V.check_rank("query", tuple(query.shape), 2, "(B, query_dim)")
        V.check_rank("values", tuple(values.shape), 3, "(B, T_src, value_dim)")
        if V.debugging():  # per step of the decoder: in debug mode only
            check_float("query", query, self)
            check_float("values", values, self)
            V.check_width("query", tuple(query.shape), self.query_dim, "query_dim")
            V.check_width("values", tuple(values.shape), self.value_dim, "value_dim")
        keys = self.u_a(values) if keys is None else keys  # (B, T_src, units) U_a h_j
        scores = self.v_a(torch.tanh(self.w_a(query)[:, None, :] + keys))  # (B, T_src, 1)
        scores = scores[..., 0]  # (B, T_src)
        if mask is not None:
            if V.debugging():
                V.check_mask(tuple(mask.shape), tuple(scores.shape))
            mask = mask if mask.dtype == torch.bool else mask != 0  # (B, T_src)
            scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)  # (B, T_src)
        weights = torch.softmax(scores, dim=-1)  # (B, T_src)
        if mask is not None:
            weights = weights.masked_fill(mask, 0.0)  # (B, T_src)
        context = torch.sum(weights[:, :, None] * values, dim=1)  # (B, value_dim)
        return context, weights


class Seq2SeqEncoder(nn.Module):
    """Embedding + one GRU layer over the source.

    The final state is the GRU output at each row's last non-padding token,
    so right-padding never leaks into it.

    Args:
        config: a :class:`~txcourse.config.Seq2SeqConfig`; the encoder reads
            src_vocab_size, embedding_dim (width of the token embeddings),
            units (GRU hidden units U) and pad_id.

    Shape:
        tokens (B, T_src). Returns outputs (B, T_src, U) and the final state (B, U).
    """

    def __init__(self, config: Seq2SeqConfig):
        super().__init__()
        check_config(config, Seq2SeqConfig)
        embedding_dim, units = config.embedding_dim, config.units
        self.vocab_size = config.src_vocab_size
        self.pad_id = config.pad_id
        self.embedding = embedding(config.src_vocab_size, embedding_dim)
        self.gru = gru(embedding_dim, units)

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        V.check_rank("tokens", tuple(tokens.shape), 2, "(B, T_src)")
        check_tokens("tokens", tokens, self.vocab_size)
        outputs, _ = self.gru(self.embedding(tokens))  # (B, T_src, U)
        lengths = torch.sum(tokens != self.pad_id, dim=1)  # (B,)
        last = torch.clamp(lengths - 1, min=0)  # (B,)
        state = outputs[torch.arange(tokens.shape[0], device=tokens.device), last]  # (B, U)
        state = state * (lengths > 0)[:, None].to(state.dtype)  # (B, U) all-padding rows: zeros
        return outputs, state


class Seq2SeqDecoder(nn.Module):
    """GRU decoder fed, at every step, its previous token and a context vector.

    With ``attention=True`` the context is recomputed at every step by
    :class:`BahdanauAttention` from the previous decoder state; with
    ``attention=False`` it is the encoder's final state, one fixed vector for
    the whole sentence (Cho et al. 2014), the bottleneck week 1 measures.

    Args:
        config: a :class:`~txcourse.config.Seq2SeqConfig`; the decoder reads
            tgt_vocab_size (V), embedding_dim and units (U, the encoder's too).
        attention: use Bahdanau attention.

    Shape:
        tokens (B, T_tgt) (<sos> + target), encoder_outputs (B, T_src, U),
        encoder_state (B, U), mask (B, T_src) ``True`` at source padding.
        Returns logits (B, T_tgt, V) and attention weights (B, T_tgt, T_src)
        (``None`` without attention).
    """

    def __init__(self, config: Seq2SeqConfig, attention: bool = True):
        super().__init__()
        check_config(config, Seq2SeqConfig)
        vocab_size, embedding_dim, units = config.tgt_vocab_size, config.embedding_dim, config.units
        self.vocab_size = vocab_size
        self.units = units
        self.embedding = embedding(vocab_size, embedding_dim)
        self.attention = BahdanauAttention(units) if attention else None
        self.gru = gru_cell(embedding_dim + units, units)
        self.output_projection = linear(units, vocab_size)

    def step(
        self,
        token: torch.Tensor,
        state: torch.Tensor,
        encoder_outputs: torch.Tensor,
        encoder_state: torch.Tensor,
        mask: Optional[torch.Tensor] = None,
        keys: Optional[torch.Tensor] = None,
    ) -> tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]:
        """One decoding step: token (B,), state (B, U) -> logits (B, V), new state (B, U), weights (B, T_src);
        ``keys``: the attention's U_a h_j (B, T_src, U), if computed beforehand."""
        if self.attention is not None:
            given = {} if keys is None else {"keys": keys}  # another attention (a lab's) takes no keys
            context, weights = self.attention(state, encoder_outputs, mask, **given)  # (B, U), (B, T_src)
        else:
            context, weights = encoder_state, None  # (B, U): the fixed context vector
        x = torch.cat([context, self.embedding(token)], dim=-1)  # (B, U + E)
        state = self.gru(x, state)  # (B, U)
        return self.output_projection(state), state, weights  # (B, V), (B, U), (B, T_src)

    def forward(
        self,
        tokens: torch.Tensor,
        encoder_outputs: torch.Tensor,
        encoder_state: torch.Tensor,
        mask: Optional[torch.Tensor] = None,
    ) -> tuple[torch.Tensor, Optional[torch.Tensor]]:
        V.check_rank("tokens", tuple(tokens.shape), 2, "(B, T_tgt)")
        check_tokens("tokens", tokens, self.vocab_size)
        state = encoder_state  # (B, U)
        logits, weights = [], []
        for t in range(tokens.shape[1]):  # teacher forcing: feed the true previous token
            step_logits, state, step_weights = self.step(tokens[:, t], state, encoder_outputs, encoder_state, mask)
            logits.append(step_logits)  # (B, V)
            weights.append(step_weights)  # (B, T_src) or None
        all_weights = torch.stack(weights, dim=1) if self.attention is not None else None  # (B, T_tgt, T_src)
        return torch.stack(logits, dim=1), all_weights  # (B, T_tgt, V), (B, T_tgt, T_src)


class Seq2Seq(nn.Module):
    """Encoder + decoder, with the same call as :class:`~txcourse.torch.model.Transformer`.

    Args:
        config: a :class:`~txcourse.config.Seq2SeqConfig` (vocabulary sizes,
            embedding width, GRU units U, pad_id).
        attention: Bahdanau attention (True, the model kind "bahdanau") or
            one fixed context vector (False, "seq2seq").

    Shape:
        src (B, T_src), tgt (B, T_tgt). Returns logits (B, T_tgt, V_tgt); with
        ``return_weights=True`` the pair (logits, attention weights
        (B, T_tgt, T_src), None without attention).
    """

    def __init__(self, config: Seq2SeqConfig, attention: bool = True):
        super().__init__()
        check_config(config, Seq2SeqConfig)
        self.config = config
        self.pad_id = config.pad_id
        self.encoder = Seq2SeqEncoder(config)
        self.decoder = Seq2SeqDecoder(config, attention)

    def start_decoding(self, src: torch.Tensor, use_cache: bool = True) -> dict:
        """Encode ``src`` and return the decoding state for :meth:`decode_step`.

        ``use_cache`` is accepted for the same call as the Transformer: an RNN
        always carries its state from step to step.
        """
        check_tokens("src", src, self.config.src_vocab_size, read_values=True)  # where decoding's input enters
        encoder_outputs, encoder_state = self.encoder(src)  # (B, T_src, U), (B, U)
        own = getattr(type(self.decoder.attention), "forward", None) is BahdanauAttention.forward  # not a lab's
        keys = {"keys": self.decoder.attention.u_a(encoder_outputs)} if own else {}
        return {
            "encoder_outputs": encoder_outputs,
            "encoder_state": encoder_state,
            "mask": src == self.pad_id,
            "state": encoder_state,
            **keys,  # Bahdanau: U_a h_j (B, T_src, U), once per sentence
        }

    def decode_step(self, token: torch.Tensor, state: dict) -> tuple[torch.Tensor, dict, Optional[torch.Tensor]]:
        """Feed the next token (B,); returns logits (B, V_tgt), the new state and attention (B, 1, T_src) or None.

        ``state`` is not changed: the new one holds the new GRU state.
        """
        logits, hidden, weights = self.decoder.step(
            token, state["state"], state["encoder_outputs"], state["encoder_state"], state["mask"], state.get("keys")
        )  # (B, V_tgt), (B, U)
        return logits, {**state, "state": hidden}, None if weights is None else weights[:, None]  # (B, 1, T_src)

    def forward(
        self, src: torch.Tensor, tgt: torch.Tensor, return_weights: bool = False
    ) -> Union[torch.Tensor, tuple[torch.Tensor, Optional[torch.Tensor]]]:
        if src.shape[0] != tgt.shape[0]:
            raise ValueError(
                f"src and tgt must have the same batch size, got src {tuple(src.shape)} and tgt {tuple(tgt.shape)}"
            )
        encoder_outputs, encoder_state = self.encoder(src)  # (B, T_src, U), (B, U)
        mask = src == self.pad_id  # (B, T_src)
        logits, weights = self.decoder(tgt, encoder_outputs, encoder_state, mask)  # (B, T_tgt, V), (B, T_tgt, T_src)
        return (logits, weights) if return_weights else logits
