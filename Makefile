# The course's entry points. `make lab` opens the course; `make test` runs every check.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: setup lab test bench clean

setup: $(VENV)/.installed

$(VENV)/.installed: requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $@

lab: setup  ## set up, then open the course in JupyterLab
	$(BIN)/jupyter lab course/00_start_here.ipynb

test: setup  ## set up, then run the package tests and nbval over every notebook
	$(BIN)/python -m pytest tests course --nbval-lax --nbval-current-env -p no:cacheprovider

bench: setup  ## speed and memory measurements, printed as tables of ratios
	for b in benchmarks/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache
