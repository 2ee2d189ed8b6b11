# Two entry points (see README): `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
# the CPU build of torch; any other torch pulls gigabytes of CUDA packages
TORCH  ?= torch==2.13.0

.PHONY: demo test install install-test clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/pip install $(TORCH)
	$(BIN)/pip install -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(BIN)/pip install -e '.[test]'
	touch $@

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

demo: install
	HF_HUB_OFFLINE=1 $(BIN)/ragraphs demo

test: install-test
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) build *.egg-info
