# The two commands of the README: `make demo` and `make test`. Both install what they need.
PYTHON ?= python3
VENV   := .venv
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench clean-venv mutation

$(STAMP): pyproject.toml scripts/bootstrap.sh
	scripts/bootstrap.sh "$(PYTHON)"

demo: $(STAMP)
	$(VENV)/bin/skillharness demo

test: $(STAMP)
	scripts/test.sh

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks

# Mutation testing of the safety-critical modules (not part of CI or `make test`; about an hour on
# 2 cores). A subset: make mutation ARGS="--module breaker --module retry --workers 2".
mutation: $(STAMP)
	$(VENV)/bin/python scripts/mutation.py $(ARGS)

clean-venv:
	rm -rf $(VENV)
