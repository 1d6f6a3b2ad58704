# Benchmarks (benchmarks/README.md). Not a test step: `make test` never runs them.
#
#   make bench                 every benchmark; the tables also go to benchmarks/results/last_run.md
#   make bench BENCH_QUICK=1   a smoke run (tiny repeats): checks that the scripts work, numbers mean little
#   make bench BENCH_THREADS=2 limit train_step.py and beam_search.py to 2 CPU threads per framework
#
# Tables go to stdout (and the file); framework log noise stays on stderr.
# gpu_mfu.py skips, and says so, without a CUDA GPU.

BENCH_RESULTS := benchmarks/results/last_run.md
BENCH_QUICK   ?=
BENCH_THREADS ?=
BENCH_FLAG     = $(if $(BENCH_QUICK),--quick,)
BENCH_CPU      = $(BENCH_FLAG) $(if $(BENCH_THREADS),--threads $(BENCH_THREADS),)
BENCH_DECODE   = $(if $(BENCH_QUICK),--repeats 1 --lengths 16,)

.PHONY: bench

bench: $(VENV_STAMP)
	mkdir -p $(dir $(BENCH_RESULTS))
	export PYTHONUNBUFFERED=1 TF_CPP_MIN_LOG_LEVEL=3; { \
	  echo "# Benchmarks: last run$(if $(BENCH_QUICK), (quick smoke run: not for reporting),)"; \
	  echo; \
	  echo "run $$(date -u '+%Y-%m-%d %H:%M UTC'), commit $$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"; \
	  echo "hardware: $$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo 2>/dev/null | head -n1 || uname -m)," \
	       "$$(nproc) CPUs, $$(awk '/^MemTotal/ {printf "%.0f GiB", $$2 / 1048576}' /proc/meminfo 2>/dev/null || echo '?') RAM," \
	       "GPU: $$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1 | grep . || echo none);" \
	       "load average before the run: $$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"; \
	  echo; echo '### Greedy decoding: key/value cache vs recompute'; echo; \
	  $(PY) benchmarks/decode_cache.py $(BENCH_DECODE); \
	  echo; echo 'TensorFlow with its Eigen kernels instead of oneDNN (TF_ENABLE_ONEDNN_OPTS=0):'; echo; \
	  $(PY) benchmarks/decode_cache.py --framework tf --no-onednn $(BENCH_DECODE) | grep '^| tf'; \
	  $(PY) benchmarks/train_step.py $(BENCH_CPU); \
	  $(PY) benchmarks/beam_search.py $(BENCH_CPU); \
	  echo; echo '### Attention memory: plain vs tiled vs F.scaled_dot_product_attention'; echo; \
	  $(PY) benchmarks/attention_memory.py $(if $(BENCH_QUICK),--quick --out $$(mktemp -d)/attention_memory.json,--lengths 256 512 1024 2048 4096 8192); \
	  $(PY) benchmarks/gpu_mfu.py $(BENCH_FLAG); \
	  echo; echo '### Data-parallel training on the CPU: 1 vs 2 torchrun processes'; echo; \
	  $(PY) benchmarks/distributed_throughput.py $(if $(BENCH_QUICK),--steps 4,); \
	  echo; echo '### Decoding engines: txcourse (PyTorch, TensorFlow) vs CTranslate2 float32 and int8, same weights'; echo; \
	  $(PY) benchmarks/decode_engines.py $(BENCH_FLAG); \
	  echo; echo '### Every number 0-999,999 through the shipped numbers checkpoints'; echo; \
	  for m in transformer bahdanau; do $(PY) benchmarks/numbers_exhaustive.py book/data/numbers-$$m-torch.npz --no-progress $(BENCH_CPU); echo; done; \
	} | tee $(BENCH_RESULTS)
	@echo "==> tables written to $(BENCH_RESULTS)"

# Every day of 1900-2099 in every phrasing of the dates task (511,343 inputs per checkpoint) through the three
# shipped dates checkpoints (PyTorch), then the Transformer's weights in TensorFlow (benchmarks/dates_exhaustive.py).
# The JSON of each full run goes to benchmarks/results/dates_exhaustive_<model>_<framework>.json. Long: on one
# loaded CPU core about an hour per run; BENCH_QUICK=1 scores every 97th day only (and writes no JSON).
#
#   make bench-dates                   every date, every checkpoint, torch; the Transformer in tf too
#   make bench-dates BENCH_QUICK=1     a smoke run
#   make bench-dates BENCH_THREADS=2   2 CPU threads per framework

DATES_BENCH = $(PY) benchmarks/dates_exhaustive.py --no-progress $(if $(BENCH_QUICK),--stride 97,) \
              $(if $(BENCH_THREADS),--threads $(BENCH_THREADS),)

.PHONY: bench-dates

bench-dates: $(VENV_STAMP)
	export PYTHONUNBUFFERED=1 TF_CPP_MIN_LOG_LEVEL=3; \
	for m in transformer bahdanau seq2seq; do \
	  $(DATES_BENCH) --checkpoint book/data/dates-$$m-torch.npz || exit 1; echo; \
	done; \
	$(DATES_BENCH) --checkpoint book/data/dates-transformer-torch.npz --framework tf
