# The course's entry points. `make lab` opens the course; `make test` runs every check.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# JupyterLab refuses to run as root (containers, cloud VMs) unless told: add the flag only for root.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u 2>/dev/null)),--allow-root,)
NOTEBOOKS  := $(wildcard course/[0-9]*.ipynb) $(wildcard student/[0-9]*.ipynb)

.PHONY: setup dev-setup lab test lint book normalize student bench clean

setup: $(VENV)/.installed  ## what the course needs: the pinned requirements and the package

$(VENV)/.installed: requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $@

dev-setup: $(VENV)/.dev-installed  ## and what the checks need on top: the book's and the hub test's pins

$(VENV)/.dev-installed: $(VENV)/.installed docs/requirements.txt deploy/requirements-hub.txt
	$(BIN)/python -m pip install --quiet -r docs/requirements.txt -r deploy/requirements-hub.txt
	touch $@

lab: setup  ## set up, then open the course in JupyterLab
	$(BIN)/jupyter lab $(ALLOW_ROOT) course/00_start_here.ipynb

test: dev-setup  ## set up, then run the package tests, the book build and nbval over every notebook
	$(BIN)/python -m pytest tests course --nbval-lax --nbval-current-env -p no:cacheprovider

lint: setup  ## ruff over the repository, mypy over the core package (what .pre-commit-config.yaml runs)
	$(BIN)/python -m ruff check .
	$(BIN)/python -m mypy

book: dev-setup  ## the course as a static web site in _build/html (executes nothing: outputs are stored)
	$(BIN)/python tools/build_book.py

normalize: setup  ## strip per-run noise (timestamps, widget state, version churn) from committed notebooks
	$(BIN)/python tools/normalize_notebooks.py $(NOTEBOOKS)

student: setup  ## regenerate the committed learner copies in student/ from course/
	$(BIN)/python tools/student_copies.py --write

bench: dev-setup  ## speed and memory measurements, printed as tables of ratios
	for b in benchmarks/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache _build
