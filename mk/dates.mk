# The checkpoints of the chapter "Reordering: dates" (book/dates.md): a Transformer, a GRU with Bahdanau attention
# and a plain GRU encoder-decoder trained on the Korean `dates` task, with fixed seeds and a fixed number of steps
# (never a time budget), on one CPU thread.
#
#   make dates-checkpoints     trains the three into $(DATES_RUNS)/ (a few minutes each on one core) and
#                              writes book/data/dates-<kind>-torch.npz (weights, config, tokenizers; no optimizer
#                              state) and book/data/dates-<kind>-torch.history.jsonl
#
# Not a test step; commit the files it writes.

DATES_RUNS  ?= runs/dates
# The Transformer takes 2,000 steps (at 1,000 it got 99.0% of every 50th day, "en full" 97.5%: days read as
# another day, years with two digits swapped: benchmarks/results/dates_exhaustive_transformer-1000-steps_torch_stride50.json);
# the GRUs 1,000. Every day in every phrasing: make bench-dates (mk/bench.mk; the saved runs in benchmarks/results).
DATES_TRAIN := $(PY) -m txcourse train --task dates --framework torch --seed 0 --threads 1 \
               --device cpu --no-progress --overwrite

.PHONY: dates-checkpoints

dates-checkpoints: $(VENV_STAMP)
	$(DATES_TRAIN) --model transformer --steps 2000 --out $(DATES_RUNS)/transformer
	$(DATES_TRAIN) --model bahdanau --steps 1000 --lr-factor 1 --out $(DATES_RUNS)/bahdanau
	$(DATES_TRAIN) --model seq2seq --steps 1000 --lr-factor 1 --out $(DATES_RUNS)/seq2seq
	for kind in transformer bahdanau seq2seq; do \
	    $(PY) -m txcourse.training.checkpoint strip $(DATES_RUNS)/$$kind/model.npz book/data/dates-$$kind-torch.npz && \
	    cp $(DATES_RUNS)/$$kind/history.jsonl book/data/dates-$$kind-torch.history.jsonl || exit 1; \
	done
