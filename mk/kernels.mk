# Portability across CPUs (issue 20). A training trajectory, and the last bits of a float comparison, depend on
# the vector kernels the CPU offers: PyTorch picks AVX-512, AVX2 or plain kernels at start-up
# (ATEN_CPU_CAPABILITY caps the choice), TensorFlow runs oneDNN's kernels unless TF_ENABLE_ONEDNN_OPTS=0.
# test-python runs everything with this machine's own kernels; this step runs again the tests that train or
# compare floating point across runs, with the kernels of an older CPU, so a test that only holds on one
# CPU fails on the machine it was written on:
#
#   make test-kernels    ATEN_CPU_CAPABILITY=default with TF_ENABLE_ONEDNN_OPTS=0, and beside it
#                        ATEN_CPU_CAPABILITY=avx2 (where the CPU has AVX2) with oneDNN on; logs in _build/kernels/
#
# A claim about a training run holds in all three modes, or it comes from a shipped artefact (book/data).

KERNEL_TESTS ?= tests/training/test_trainer.py tests/torch_tf/test_decode.py tests/first_contact/test_first_contact.py tests/training/test_distributed.py tests/parity/test_parity.py \
                tests/evaluation/test_digit_buckets.py tests/course/test_artefacts.py tests/torch_tf/test_fused.py \
                tests/parity/test_reference_agreement.py tests/course/test_errata.py tests/course/test_errata_e6.py tests/book/test_exercises.py
KERNEL_PYTEST := $(PY) -m pytest -q -p no:cacheprovider $(PYTEST_ARGS) $(KERNEL_TESTS)

TEST_STEPS += test-kernels

.PHONY: test-kernels

# The two passes run side by side, one thread each (CI has two cores): each writes its log, shown when both are
# done; the step fails if either fails.
KERNEL_LOGS := _build/kernels

test-kernels: $(VENV_STAMP)
	@mkdir -p $(KERNEL_LOGS)
	@echo "==> the training and float tests with PyTorch's plain kernels, TensorFlow without oneDNN"
	@if grep -qw avx2 /proc/cpuinfo 2>/dev/null; then \
	  echo "==> beside it, the same with PyTorch's AVX2 kernels, TensorFlow with oneDNN"; \
	else echo "note: this CPU has no AVX2: the avx2 pass is skipped (the plain-kernel pass runs)"; fi
	@export OMP_NUM_THREADS=1 TF_NUM_INTRAOP_THREADS=1 TF_NUM_INTEROP_THREADS=1 TF_CPP_MIN_LOG_LEVEL=3; \
	ATEN_CPU_CAPABILITY=default TF_ENABLE_ONEDNN_OPTS=0 $(KERNEL_PYTEST) >$(KERNEL_LOGS)/default.log 2>&1 & pid=$$!; \
	plain=0; avx2=0; if grep -qw avx2 /proc/cpuinfo 2>/dev/null; then \
	  ATEN_CPU_CAPABILITY=avx2 TF_ENABLE_ONEDNN_OPTS=1 $(KERNEL_PYTEST) >$(KERNEL_LOGS)/avx2.log 2>&1 || avx2=$$?; \
	else : >$(KERNEL_LOGS)/avx2.log; fi; \
	wait $$pid || plain=$$?; \
	echo "==> plain kernels (ATEN_CPU_CAPABILITY=default, TF_ENABLE_ONEDNN_OPTS=0): exit $$plain"; \
	tail -n 40 $(KERNEL_LOGS)/default.log; \
	echo "==> AVX2 kernels (ATEN_CPU_CAPABILITY=avx2, TF_ENABLE_ONEDNN_OPTS=1): exit $$avx2"; \
	tail -n 40 $(KERNEL_LOGS)/avx2.log; \
	test $$plain = 0 && test $$avx2 = 0
