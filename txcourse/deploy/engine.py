"""An exported CTranslate2 model folder, run as ``txcourse translate`` and ``evaluate`` run a checkpoint.

:func:`load_exported` reads the folder :func:`~txcourse.deploy.ctranslate2.export_ctranslate2`
wrote and returns what :func:`txcourse.cli.frameworks.start_model` returns for
a checkpoint: a backend (:class:`EngineBackend`, the fields of
:class:`~txcourse.registry.Backend` that decoding uses), the model, the header
(with ``framework`` "ctranslate2"), and the checkpoint's tokenizers. So
:func:`txcourse.evaluation.translate.translate` runs it unchanged: the same
tokenizers, the same batches of padded ids, the same step limit
(:func:`~txcourse.decoding.max_steps`), only the decoding loop is
CTranslate2's (``Translator.translate_batch``, token strings in and out).

Greedy decoding gives txcourse's outputs (tests/deploy). Beam search: CTranslate2's
length penalty divides log P by |Y|^alpha, txcourse's by ((5 + |Y|) / 6)^alpha
(Wu et al. 2016), so the two agree for alpha = 0 only (on the numbers model,
CTranslate2's own penalty at alpha 0.6 changed 1.7% and 6.9% of the outputs
of two draws of 1,000 numbers, each change for the worse:
benchmarks/decode_engines.py). Here CTranslate2 searches by log P
(alpha 0) and returns its ``beam_size`` finished hypotheses; the best by
txcourse's penalty is kept. Sampling is refused: CTranslate2's draws are not
txcourse's, seed for seed. ``ctranslate2`` is imported when a folder is
loaded, not before.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np

from txcourse.config import TransformerConfig
from txcourse.data.prepare import tokenizers_from_meta
from txcourse.decoding import check_beam, length_penalty, max_steps
from txcourse.deploy.ctranslate2 import FORMAT, META_FILE, import_ctranslate2
from txcourse.errors import TxcourseError

__all__ = ["ExportedModel", "EngineBackend", "EngineOutput", "load_exported", "engine_device", "read_header"]


@dataclass
class ExportedModel:
    """A loaded CTranslate2 Translator and what txcourse needs around it.

    Attributes:
        translator: the ``ctranslate2.Translator``.
        config: the checkpoint's TransformerConfig (``max_len`` bounds the steps, as for the checkpoint).
        src_vocab, tgt_vocab: the tokenizers' tokens in id order (CTranslate2 reads and writes strings).
    """

    translator: Any
    config: TransformerConfig
    src_vocab: list[str]
    tgt_vocab: list[str]

    def __post_init__(self) -> None:
        self.tgt_ids = {token: i for i, token in enumerate(self.tgt_vocab)}

    def sources(self, src: np.ndarray, pad_id: int) -> list[list[str]]:
        """Padded source ids (B, T_src) -> each row's token strings, padding dropped."""
        return [[self.src_vocab[i] for i in row if i != pad_id] for row in np.asarray(src).tolist()]

    def tokens(self, hypotheses: list[list[str]], pad_id: int) -> np.ndarray:
        """Each row's output strings -> ids (B, T_out), padded with ``pad_id`` as txcourse's decoders pad."""
        width = max(1, max(len(h) for h in hypotheses))
        out = np.full((len(hypotheses), width), pad_id, dtype=np.int64)  # (B, T_out)
        for row, hypothesis in enumerate(hypotheses):
            out[row, : len(hypothesis)] = [self.tgt_ids[token] for token in hypothesis]
        return out


@dataclass
class EngineOutput:
    """What a decoder produced (as txcourse's DecodeOutput): tokens (B, T_out) with <eos>, scores (B,)."""

    tokens: np.ndarray
    scores: np.ndarray
    attention: Optional[np.ndarray] = None


def _run(
    model: ExportedModel, src: np.ndarray, max_len: Optional[int], pad_id: int, alpha: float = 0.0, **options: Any
) -> EngineOutput:
    """One batch through ``translate_batch``: at most txcourse's number of steps, <eos> returned, no minimum.

    The finished hypotheses come back ranked by log P (CTranslate2's ``length_penalty`` 0); each sentence's
    best is then the one with the highest log P / lp(|Y|), lp the length penalty of Wu et al. (2016) that
    txcourse's beam search ranks by (|Y| counting <eos>; alpha 0: the first).
    """
    steps = max_steps(model, np.asarray(src).shape[1], max_len)
    results = model.translator.translate_batch(
        model.sources(src, pad_id),
        max_decoding_length=steps,
        min_decoding_length=0,
        return_end_token=True,
        return_scores=True,
        max_input_length=0,
        length_penalty=0.0,
        **options,
    )
    best = [
        max(range(len(r.hypotheses)), key=lambda k: r.scores[k] / length_penalty(len(r.hypotheses[k]), alpha))
        for r in results
    ]
    hypotheses = [result.hypotheses[k] for result, k in zip(results, best)]
    scores = np.array([result.scores[k] for result, k in zip(results, best)], dtype=np.float32)  # (B,)
    return EngineOutput(model.tokens(hypotheses, pad_id), scores)


class EngineBackend:
    """The part of :class:`~txcourse.registry.Backend` that decoding uses, for a CTranslate2 model."""

    name = "ctranslate2"

    @staticmethod
    def to_tensor(array: Any, device: str = "cpu") -> np.ndarray:
        return np.asarray(array)

    @staticmethod
    def to_numpy(array: Any) -> np.ndarray:
        return np.asarray(array)

    @staticmethod
    def greedy_decode(
        model: ExportedModel, src: Any, max_len: Optional[int] = None, sos_id: int = 1, eos_id: int = 2, pad_id: int = 0
    ) -> EngineOutput:
        """Greedy decoding (beam 1) of a batch of padded source ids (B, T_src)."""
        return _run(model, src, max_len, pad_id, beam_size=1)

    @staticmethod
    def beam_search(
        model: ExportedModel,
        src: Any,
        beam_size: int = 4,
        max_len: Optional[int] = None,
        length_penalty_alpha: float = 0.6,
        sos_id: int = 1,
        eos_id: int = 2,
        pad_id: int = 0,
    ) -> EngineOutput:
        """Beam search by log P; the ``beam_size`` finished hypotheses re-ranked by log P / lp(|Y|) (see _run)."""
        check_beam(beam_size, length_penalty_alpha)
        return _run(model, src, max_len, pad_id, length_penalty_alpha, beam_size=beam_size, num_hypotheses=beam_size)

    @staticmethod
    def sample_decode(model: ExportedModel, src: Any, **kwargs: Any) -> EngineOutput:
        raise TxcourseError(
            "--sample: an exported CTranslate2 model decodes greedily or by beam search only (its random draws "
            "are not txcourse's, seed for seed); sample with the checkpoint it was exported from",
            "--sample",
        )


def engine_device(device: str) -> tuple[str, int]:
    """txcourse's --device as CTranslate2's (device, index): cpu, auto, cuda or cuda:i; mps is refused."""
    gpus = import_ctranslate2().get_cuda_device_count()
    if device == "cpu" or (device == "auto" and gpus == 0):
        return "cpu", 0
    if device == "auto":
        return "cuda", 0
    index = int(device.split(":", 1)[1]) if device.startswith("cuda:") else 0
    if not device.startswith("cuda") or index >= gpus:
        raise TxcourseError(
            f"--device {device!r}: this CTranslate2 sees {gpus} CUDA device(s) and runs on cpu or cuda[:i] only; "
            f"expected cpu" + (f" or cuda:0 .. cuda:{gpus - 1}" if gpus else ""),
            "--device",
        )
    return "cuda", index


def read_header(path: Path) -> dict[str, Any]:
    """The txcourse header of an exported folder, or a TxcourseError saying what the folder is not."""
    header_path = path / META_FILE
    if not header_path.is_file():
        raise TxcourseError(
            f"checkpoint {str(path)!r} is a folder without {META_FILE}; expected a checkpoint .npz or a folder "
            f"written by `txcourse export --to ctranslate2`",
            "--checkpoint",
        )
    try:
        header = json.loads(header_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise TxcourseError(f"--checkpoint {str(path)!r}: {META_FILE} is not readable JSON ({err})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        got = header.get("format") if isinstance(header, dict) else type(header).__name__
        raise TxcourseError(f"--checkpoint {str(path)!r}: {META_FILE} has format {got!r}, expected {FORMAT!r}")
    return header


def load_exported(
    path: str | os.PathLike,
    framework: Optional[str] = None,
    kind: Optional[str] = None,
    device: str = "cpu",
    threads: Optional[int] = None,
    compute_type: str = "default",
    workers: int = 1,
) -> tuple[EngineBackend, ExportedModel, dict[str, Any], Any, Any]:
    """An exported folder, loaded: ``(backend, model, header, src_tok, tgt_tok)`` as ``start_model`` returns them.

    ``framework`` and ``kind`` (the --framework and --model options), if given, must be those of the
    checkpoint it was exported from. ``threads``: CTranslate2's intra-op threads per worker (None: its
    default); ``workers``: translations run in parallel (``inter_threads``); ``compute_type``: "default"
    (the float32 weights) or "int8" (quantized when loaded).
    """
    ctranslate2 = import_ctranslate2()
    path = Path(path)
    header = read_header(path)
    origin = header.get("exported_from", {}).get("framework")
    if framework is not None and framework != origin:
        raise TxcourseError(
            f"--framework {framework}: {str(path)!r} was exported from a {origin!r} checkpoint; drop --framework",
            "--framework",
        )
    if kind is not None and kind != header["model"]["kind"]:
        raise TxcourseError(f"--model {kind}: {str(path)!r} holds a {header['model']['kind']!r} model", "--model")
    src_tok, tgt_tok = tokenizers_from_meta(header)
    engine, index = engine_device(device)
    translator = ctranslate2.Translator(
        str(path),
        device=engine,
        device_index=index,
        compute_type=compute_type,
        intra_threads=threads or 0,
        inter_threads=workers,
    )
    model = ExportedModel(
        translator, TransformerConfig.from_dict(header["model"]["config"]), list(src_tok.vocab), list(tgt_tok.vocab)
    )
    return EngineBackend(), model, {**header, "framework": "ctranslate2"}, src_tok, tgt_tok
