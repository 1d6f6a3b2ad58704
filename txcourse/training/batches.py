"""A deterministic, resumable stream of training batches. Book: week 6."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Optional

from txcourse.data.batching import Batch, EncodedPairs, make_batches

__all__ = ["BatchStream"]


class BatchStream:
    """An endless, deterministic stream of batches: epoch after epoch, reshuffled by (seed, epoch).

    ``state()`` and ``load_state()`` give the exact position, so a resumed
    run sees the same batches as one that never stopped.
    """

    def __init__(
        self, data: EncodedPairs, batch_size: Optional[int] = None, max_tokens: Optional[int] = None, seed: int = 0
    ):
        self.data, self.batch_size, self.max_tokens, self.seed = data, batch_size, max_tokens, seed
        self.epoch, self.index = 0, 0
        self._batches: Optional[list[Batch]] = None

    def _epoch_batches(self) -> list[Batch]:
        if self._batches is None:
            self._batches = make_batches(
                self.data,
                batch_size=self.batch_size,
                max_tokens=self.max_tokens,
                shuffle=True,
                seed=self.seed,
                epoch=self.epoch,
            )
        return self._batches

    def __iter__(self) -> Iterator[Batch]:
        return self

    def __next__(self) -> Batch:
        batches = self._epoch_batches()
        if self.index >= len(batches):
            self.epoch, self.index, self._batches = self.epoch + 1, 0, None
            batches = self._epoch_batches()
        batch = batches[self.index]
        self.index += 1
        return batch

    def state(self) -> dict[str, int]:
        return {"epoch": self.epoch, "index": self.index}

    def load_state(self, state: dict[str, int]) -> None:
        self.epoch, self.index, self._batches = int(state["epoch"]), int(state["index"]), None
