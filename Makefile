# Two entry points (see README): `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
# the CPU build of torch; any other torch pulls gigabytes of CUDA packages. PyPI's torch is the
# CUDA one, so the CPU index is asked first; where it cannot be reached (an offline mirror), the
# configured indexes' torch is installed (plain PyPI: the CUDA build)
TORCH  ?= torch==2.13.0
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
# llama.cpp is compiled here; a native (-march=native) build uses the CPU's AMX tiles where it
# has them, and those crash (SIGSEGV in ggml_backend_amx_mul_mat) where the kernel does not
# grant AMX state, as in some containers. The portable build (AVX2/FMA/F16C) runs everywhere.
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF
LLAMA  ?= llama-cpp-python>=0.3.8

.PHONY: demo test install install-test clean

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "ragraphs needs Python 3.11 or later: make PYTHON=python3.11 ...")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/pip install --timeout 20 --retries 1 --index-url $(TORCH_INDEX) $(TORCH) || $(BIN)/pip install $(TORCH)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install --no-cache-dir "$(LLAMA)"
	$(BIN)/pip install -e . --config-settings editable_mode=compat  # a path mypy and pyright follow
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(BIN)/pip install -e '.[test]' --config-settings editable_mode=compat
	touch $@

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

demo: install
	HF_HUB_OFFLINE=1 $(BIN)/ragraphs demo

test: install-test
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) build *.egg-info
