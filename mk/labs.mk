# Lab notebooks (issue 5): nbgrader course in labs/.
#
#   make labs        build labs/source from labs/specs, then the student versions in labs/release
#   make test-labs   run every lab notebook (papermill, smoke parameters), re-run it under
#                    pytest --nbval-lax, autograde the source version (full marks) and the
#                    student version (zero); prints a table of scores and times. Then grades
#                    three fake week-3 submissions (tests/test_grading.py::test_real_lab_submissions)
#   make grade SUBMISSIONS=folder LAB=week3_attention [GRADES=file.csv] [CELL_TIMEOUT=300]
#                    grade a folder of submissions (one subfolder per student): CSV + HTML feedback

LABS_DIR      := labs
LABS_BUILD    := _build/labs
LABS_JOBS     ?= 2
LABS_ARGS     ?=
SUBMISSIONS   ?=
LAB           ?=
GRADES        ?= _build/grades/$(LAB).csv
CELL_TIMEOUT  ?= 300

TEST_STEPS += test-labs

.PHONY: labs test-labs grade

labs: $(VENV_STAMP)
	$(PY) $(LABS_DIR)/make_sources.py
	$(PY) -m txcourse.grading release --labs-dir $(LABS_DIR)

test-labs: $(VENV_STAMP)
	$(PY) $(LABS_DIR)/make_sources.py --check
	$(PY) -m txcourse.grading check --labs-dir $(LABS_DIR) --build-dir $(LABS_BUILD) --jobs $(LABS_JOBS) $(LABS_ARGS)
	@# make grade on week 3 with a correct, an endlessly looping and a test-cell-deleting submission
	TXCOURSE_LAB_TESTS=1 $(PY) -m pytest -q -p no:cacheprovider tests/test_grading.py -k real_lab

grade: $(VENV_STAMP)
	@if [ -z '$(SUBMISSIONS)' ] || [ -z '$(LAB)' ]; then \
	  echo "usage: make grade SUBMISSIONS=<folder with one subfolder per student> LAB=<lab> [GRADES=out.csv]" >&2; \
	  echo "labs: week1_seq2seq week2_positional week3_attention week4_encoder week5_decoder week6_training" >&2; \
	  exit 2; fi
	$(PY) -m txcourse.grading grade '$(SUBMISSIONS)' --lab '$(LAB)' --out '$(GRADES)' --timeout $(CELL_TIMEOUT)
