# Lab notebooks (issue 5): nbgrader course in labs/.
#
#   make labs        build labs/source from labs/specs, then the student versions in labs/release; the same
#                    for the Korean edition in labs/ko/ (source, probes, release: labs/README.md)
#   make test-labs   run every lab notebook (papermill, smoke parameters), re-run it under
#                    pytest --nbval-lax, autograde the source version (full marks) and the
#                    student version (zero); prints a table of scores and times. Then grades
#                    three fake week-3 submissions (tests/course/test_grading.py::test_real_lab_submissions)
#                    and the hostile week-2 submissions (tests/course/test_grading_sandbox.py).
#                    The Korean edition (labs/ko): the same week-3 code (solution, a partial answer, the blank)
#                    graded alike by both editions (tests/course/test_labs_i18n.py, whose quick tests in
#                    test-python hold every Korean notebook to its English twin but for the Markdown: the code,
#                    tests, probes and points the English check grades)
#   make test-labs-ko   the Korean edition graded as students are, every lab in one framework (weeks 1, 3, 5
#                    PyTorch, weeks 2, 4, 6 TensorFlow), then the check above (papermill, nbval, autograde) on
#                    every Korean notebook in both frameworks; not in `make test` (CI's 45 minutes)
#   make grade SUBMISSIONS=folder LAB=week3_attention [GRADES=file.csv] [CELL_TIMEOUT=300]
#              [GRADE_ARGS='--jobs 2 --memory 8G --notebook-timeout 1800']
#                    grade a folder of submissions (one subfolder per student): CSV + HTML feedback;
#                    each notebook's kernel runs in bubblewrap (bwrap)
#   make sandbox-deps   install bubblewrap when `bwrap` is missing (a prerequisite of the above)
#   make mutants     measure the probes' power (labs/mutants/probe_power.py: every stub of labs/mutants/stubs.py,
#                    zeros / its input / random / a constant / txcourse's version / a forbidden built-in, must
#                    keep no point of its exercise, both frameworks), then
#                    grade every mutant of labs/mutants/catalogue.py and every stub (wrong answers and shortcuts, one
#                    exercise each) like a student's notebook: each must lose points on its exercise (a stub all),
#                    the solutions and the correct variants keep full marks, no feedback shows hidden tests
#                    and every attack of labs/attacks/attack_catalogue.py (hostile submissions: each must get its
#                    expected outcome, the solution beside it full marks, the host files unchanged)
#   make test-mutants   the same for the subsets marked in both catalogues, and the probes' power on weeks 3
#                    and 4 (part of `make test`)

LABS_DIR      := labs
LABS_BUILD    := _build/labs
LABS_KO       := $(LABS_DIR)/ko
LABS_JOBS     ?= 2
LABS_ARGS     ?=
SUBMISSIONS   ?=
LAB           ?=
GRADES        ?= _build/grades/$(LAB).csv
CELL_TIMEOUT  ?= 300
GRADE_ARGS    ?=

MUTANT_ARGS   ?=

TEST_STEPS += test-labs test-mutants

.PHONY: labs test-labs test-labs-ko grade sandbox-deps mutants test-mutants test-caps

# bubblewrap from apt when `bwrap` is missing (txcourse/course/grading/sandbox.py runs each graded notebook's
# kernel in it). CI runs as root; APT_SUDO (Makefile) adds sudo on CI runners that are not root.
# Elsewhere (macOS, no apt) it only says so: `txcourse grade` then refuses with the same advice
# unless given --no-sandbox, and the sandbox tests fail under `make test` (TXCOURSE_SANDBOX_TESTS=1).
sandbox-deps:
	@if ! command -v bwrap >/dev/null 2>&1; then \
	  if [ '$(APT_OK)' = yes ]; then \
	    echo "==> installing bubblewrap (bwrap) for sandboxed grading"; \
	    $(APT_SUDO) apt-get update -qq && \
	    $(APT_SUDO) $(APT_ENV) apt-get install -y -qq bubblewrap >/dev/null; \
	  else \
	    echo "note: bwrap (bubblewrap) is missing and cannot be installed with apt here; install it" \
	         "to grade in a sandbox (txcourse grade --no-sandbox grades without one)" >&2; \
	  fi; \
	fi

# The grading tests in test-python (tests/course/test_grading.py) run students' code in the sandbox too;
# under make they must not skip for want of bwrap.
test-python: sandbox-deps
test-python test-labs: export TXCOURSE_SANDBOX_TESTS = 1

# Mutants are graded as students are: in the sandbox (sandbox-deps); the runner fails without bwrap.
mutants: $(VENV_STAMP) sandbox-deps
	$(PY) $(LABS_DIR)/mutants/probe_power.py
	$(PY) $(LABS_DIR)/mutants/run.py --jobs $(LABS_JOBS) --out _build/mutants $(MUTANT_ARGS)
	rm -rf _build/attacks && $(PY) $(LABS_DIR)/attacks/run.py --jobs $(LABS_JOBS) --out _build/attacks
	@$(MAKE) --no-print-directory test-caps

# Every channel capped (issue 30, item 6): the toy lab graded beside notebooks that emit a 150 MB result,
# 300 MB on the kernel's own stdout, 3 GiB of fallocate, forged probe lines and a bloated notebook, with the
# grader's peak memory and the disk measured (tests/course/test_grading_caps.py), and the CPU quota (200 busy
# processes beside a neighbour that must finish on time). Minutes: not in `make test`, which keeps that file's
# oversized-output tests.
test-caps: $(VENV_STAMP) sandbox-deps
	TXCOURSE_SANDBOX_TESTS=1 TXCOURSE_CAPS_TESTS=1 $(PY) -m pytest -q -p no:cacheprovider tests/course/test_grading_caps.py

test-mutants: $(VENV_STAMP) sandbox-deps
	$(PY) $(LABS_DIR)/mutants/probe_power.py --subset
	$(PY) $(LABS_DIR)/mutants/run.py --subset --jobs $(LABS_JOBS) --out _build/mutants-subset --quiet $(MUTANT_ARGS)
	rm -rf _build/attacks-subset && $(PY) $(LABS_DIR)/attacks/run.py --subset --jobs $(LABS_JOBS) --out _build/attacks-subset --quiet

labs: $(VENV_STAMP)
	$(PY) $(LABS_DIR)/make_sources.py
	$(PY) -m txcourse.course.grading release --labs-dir $(LABS_DIR)
	$(PY) -m txcourse.course.grading release --labs-dir $(LABS_KO)

test-labs: $(VENV_STAMP) sandbox-deps
	$(PY) $(LABS_DIR)/make_sources.py --check
	$(PY) -m txcourse.course.grading check --labs-dir $(LABS_DIR) --build-dir $(LABS_BUILD) --jobs $(LABS_JOBS) $(LABS_ARGS)
	@# make grade on week 3 with a correct, an endlessly looping and a test-cell-deleting submission
	TXCOURSE_LAB_TESTS=1 $(PY) -m pytest -q -p no:cacheprovider tests/course/test_grading.py -k real_lab
	@# make grade on week 2 with hostile submissions next to correct ones, in the sandbox
	TXCOURSE_LAB_TESTS=1 $(PY) -m pytest -q -p no:cacheprovider tests/course/test_grading_sandbox.py
	@# every lab's probes: the solution passes them, the unchanged student version fails every one
	TXCOURSE_LAB_TESTS=1 $(PY) -m pytest -q -p no:cacheprovider tests/course/test_probes.py -k blank
	@# the Korean edition: the same week-3 code graded alike in both editions (equal rows)
	TXCOURSE_LAB_TESTS=1 $(PY) -m pytest -q -p no:cacheprovider tests/course/test_labs_i18n.py -k same_grades

# The Korean edition graded as students are: every lab in one framework, then every notebook in both.
test-labs-ko: $(VENV_STAMP) sandbox-deps
	$(PY) $(LABS_DIR)/make_sources.py --check
	TXCOURSE_LAB_TESTS=1 $(PY) -m pytest -q -p no:cacheprovider tests/course/test_labs_i18n.py -k full_marks
	$(PY) -m txcourse.course.grading check --labs-dir $(LABS_KO) --build-dir $(LABS_BUILD)-ko --jobs $(LABS_JOBS) $(LABS_ARGS)

grade: $(VENV_STAMP) sandbox-deps
	@if [ -z '$(SUBMISSIONS)' ] || [ -z '$(LAB)' ]; then \
	  echo "usage: make grade SUBMISSIONS=<folder with one subfolder per student> LAB=<lab> [GRADES=out.csv]" >&2; \
	  echo "labs: $$($(PY) -c 'from txcourse.course.labs import LABS; print(*LABS)')" >&2; \
	  exit 2; fi
	$(PY) -m txcourse.course.grading grade '$(SUBMISSIONS)' --lab '$(LAB)' --out '$(GRADES)' --timeout $(CELL_TIMEOUT) $(GRADE_ARGS)
