# The two commands of the README: `make demo` and `make test`. Both install what they need.
PYTHON ?= python3
VENV   := .venv
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench clean-venv

$(STAMP): pyproject.toml
	scripts/bootstrap.sh "$(PYTHON)"

demo: $(STAMP)
	$(VENV)/bin/skillharness demo

test: $(STAMP)
	scripts/test.sh

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks

clean-venv:
	rm -rf $(VENV)
