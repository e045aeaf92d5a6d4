# The course's entry points. `make lab` opens the learner copies (student/); `make lab-instructor` the full course
# (course/, with solutions); `make test` runs every check.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# JupyterLab refuses to run as root (containers, cloud VMs) unless told: add the flag only for root.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u 2>/dev/null)),--allow-root,)
# `make lab TORCH_INDEX=https://download.pytorch.org/whl/cpu` takes torch's pinned version from that index first
# (on Linux, PyPI's wheel is the CUDA build, about 4 GB); the requirements files' pin is then already satisfied.
TORCH_PIN  := $(shell grep -m1 '^torch==' requirements-learner.txt)
# `make test` runs the tests on this many workers (pytest-xdist): one test file at a time each, in collection order.
TEST_WORKERS ?= 2
NOTEBOOKS  := $(wildcard course/[0-9]*.ipynb) $(wildcard student/[0-9]*.ipynb)

.PHONY: setup dev-setup lab lab-instructor test lint book normalize student translations launch-cells alt-text release bench clean

setup: $(VENV)/.installed  ## what the course needs: the learner's pins (requirements-learner.txt) and the package

$(VENV)/.installed: requirements-learner.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(if $(TORCH_INDEX),$(BIN)/python -m pip install --quiet "$(TORCH_PIN)" --index-url $(TORCH_INDEX))
	$(BIN)/python -m pip install --quiet -r requirements-learner.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $@

dev-setup: $(VENV)/.dev-installed  ## and what the checks need on top: the test and CI tools, the book's and the hub test's pins

$(VENV)/.dev-installed: $(VENV)/.installed requirements.txt docs/requirements.txt deploy/requirements-hub.txt
	$(BIN)/python -m pip install --quiet -r requirements.txt -r docs/requirements.txt -r deploy/requirements-hub.txt
	touch $@

lab: setup  ## set up, then open the learner copies (student/: exercises without their solutions) in JupyterLab
	$(BIN)/jupyter lab $(ALLOW_ROOT) student/00_start_here.ipynb

lab-instructor: setup  ## set up, then open the full course (course/: solutions folded in) in JupyterLab
	$(BIN)/jupyter lab $(ALLOW_ROOT) course/00_start_here.ipynb

test: dev-setup  ## set up, then run the package tests, the book build and nbval over every notebook
	$(BIN)/python -m pytest tests course -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --nbval-lax --nbval-current-env -p no:cacheprovider

lint: setup  ## ruff over the repository, mypy over the core package (what .pre-commit-config.yaml runs)
	$(BIN)/python -m ruff check .
	$(BIN)/python -m mypy

book: dev-setup  ## the course as a static web site in _build/html (executes nothing: outputs are stored)
	$(BIN)/python tools/build_book.py

normalize: setup  ## strip per-run noise (timestamps, widget state, version churn) from committed notebooks
	$(BIN)/python tools/normalize_notebooks.py $(NOTEBOOKS)

student: dev-setup  ## regenerate the committed learner copies in student/ from course/, and every edition (student/zh, student/fr)
	$(BIN)/python tools/student_copies.py --write

translations: dev-setup  ## after an English edit: extract the learner copies' text and the package's marked sentences into locales/ (a changed paragraph's translation turns fuzzy), compile the package's, then rebuild the editions
	$(BIN)/python tools/student_copies.py --write
	$(BIN)/python tools/translations.py update
	$(BIN)/python tools/translations.py compile
	$(BIN)/python tools/student_copies.py --write
	$(BIN)/python tools/translations.py status

launch-cells: dev-setup  ## Colab/Binder badges and the Colab install cell atop every notebook, from the release setting
	$(BIN)/python tools/launch_links.py cells course/[0-9]*.ipynb
	$(BIN)/python tools/normalize_notebooks.py course/[0-9]*.ipynb
	$(BIN)/python tools/student_copies.py --write

alt-text: dev-setup  ## move each figure's "# alt:" line into its cell's metadata (the book's <img alt>), then student/
	$(BIN)/python tools/alt_text.py course/[0-9]*.ipynb
	$(BIN)/python tools/student_copies.py --write

release:  ## make release VERSION=X.Y.Z: bump the version, re-point every launch link, commit, tag and branch
	$(BIN)/python tools/release.py $(VERSION)

bench: dev-setup  ## speed and memory measurements, printed as tables of ratios (notebooks and attention kernels at one and two threads)
	for b in benchmarks/*.py; do \
	  case $$b in */notebooks.py|*/attention.py) args="--threads 1 2";; *) args="";; esac; \
	  $(BIN)/python $$b $$args || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache _build
