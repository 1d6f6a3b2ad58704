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
        with ``True`` at padding. Returns context (B, value_dim) and
        weights (B, T_src).
    """

    def __init__(self, units: int, query_dim: Optional[int] = None, value_dim: Optional[int] = None):
        super().__init__()
        V.check_positive("units", units)
        self.units = units
        self.query_dim = query_dim or units
        self.value_dim = value_dim or units
        self.w_a = linear(self.query_dim, units)  # W_a: decoder state
        self.u_a = linear(self.value_dim, units, bias=False)  # U_a: encoder states
        self.v_a = linear(units, 1, bias=False)  # v_a

    def forward(
        self, query: torch.Tensor, values: torch.Tensor, mask: Optional[torch.Tensor] = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        check_float("query", query, self)
        check_float("values", values, self)
        V.check_rank("query", tuple(query.shape), 2, "(B, query_dim)")
        V.check_rank("values", tuple(values.shape), 3, "(B, T_src, value_dim)")
        V.check_width("query", tuple(query.shape), self.query_dim, "query_dim")
        V.check_width("values", tuple(values.shape), self.value_dim, "value_dim")
        scores = self.v_a(torch.tanh(self.w_a(query)[:, None, :] + self.u_a(values)))  # (B, T_src, 1)
        scores = scores[..., 0]  # (B, T_src)
        if mask is not None:
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
        vocab_size: source vocabulary size.
        embedding_dim: width of the token embeddings.
        units: GRU hidden units U.
        pad_id: id of <pad>.

    Shape:
        tokens (B, T_src). Returns outputs (B, T_src, U) and the final state (B, U).
    """

    def __init__(self, vocab_size: int, embedding_dim: int, units: int, pad_id: int = 0):
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("embedding_dim", embedding_dim), ("units", units)):
            V.check_positive(name, value)
        self.vocab_size = vocab_size
        self.pad_id = pad_id
        self.embedding = embedding(vocab_size, embedding_dim)
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
        vocab_size: target vocabulary size V.
        embedding_dim: width of the token embeddings.
        units: GRU hidden units U (the encoder must have the same).
        attention: use Bahdanau attention.

    Shape:
        tokens (B, T_tgt) (<sos> + target), encoder_outputs (B, T_src, U),
        encoder_state (B, U), mask (B, T_src) ``True`` at source padding.
        Returns logits (B, T_tgt, V) and attention weights (B, T_tgt, T_src)
        (``None`` without attention).
    """

    def __init__(self, vocab_size: int, embedding_dim: int, units: int, attention: bool = True):
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("embedding_dim", embedding_dim), ("units", units)):
            V.check_positive(name, value)
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
    ) -> tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]:
        """One decoding step: token (B,), state (B, U) -> logits (B, V), new state (B, U), weights (B, T_src)."""
        if self.attention is not None:
            context, weights = self.attention(state, encoder_outputs, mask)  # (B, U), (B, T_src)
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
        src_vocab_size, tgt_vocab_size: vocabulary sizes.
        embedding_dim: width of the token embeddings.
        units: GRU hidden units U.
        attention: Bahdanau attention (True) or one fixed context vector (False).
        pad_id: id of <pad>.

    Shape:
        src (B, T_src), tgt (B, T_tgt). Returns logits (B, T_tgt, V_tgt); with
        ``return_weights=True`` the pair (logits, attention weights
        (B, T_tgt, T_src), None without attention).
    """

    def __init__(
        self,
        src_vocab_size: int,
        tgt_vocab_size: int,
        embedding_dim: int = 256,
        units: int = 512,
        attention: bool = True,
        pad_id: int = 0,
    ):
        super().__init__()
        self.pad_id = pad_id
        self.encoder = Seq2SeqEncoder(src_vocab_size, embedding_dim, units, pad_id)
        self.decoder = Seq2SeqDecoder(tgt_vocab_size, embedding_dim, units, attention)

    def start_decoding(self, src: torch.Tensor, use_cache: bool = True) -> dict:
        """Encode ``src`` and return the decoding state for :meth:`decode_step`.

        ``use_cache`` is accepted for the same call as the Transformer: an RNN
        always carries its state from step to step.
        """
        encoder_outputs, encoder_state = self.encoder(src)  # (B, T_src, U), (B, U)
        return {
            "encoder_outputs": encoder_outputs,
            "encoder_state": encoder_state,
            "mask": src == self.pad_id,
            "state": encoder_state,
        }

    def decode_step(self, token: torch.Tensor, state: dict) -> tuple[torch.Tensor, dict, Optional[torch.Tensor]]:
        """Feed the next token (B,); returns logits (B, V_tgt), the new state and attention (B, 1, T_src) or None.

        ``state`` is not changed: the new one holds the new GRU state.
        """
        logits, hidden, weights = self.decoder.step(
            token, state["state"], state["encoder_outputs"], state["encoder_state"], state["mask"]
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
