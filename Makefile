# gpufleet: two commands do all the set-up on a fresh machine: `make run` and `make test`.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
OUT ?= out

.PHONY: run test lint bench clean venv bytecode controlplane cluster-up cluster-down fidelity fuzz

$(STAMP): pyproject.toml
	@command -v $(PY) >/dev/null 2>&1 || { echo "need $(PY) (Python 3.11) on PATH" >&2; exit 2; }
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	@touch $(STAMP)

venv: $(STAMP)

# gpufleet's own modules compiled to bytecode, as pip does for a regular install: the editable install
# leaves them to the first import, and with PYTHONDONTWRITEBYTECODE set (as on our CI machines) every
# command compiled them again (about 0.1 s of each command's start). Only what changed is recompiled.
bytecode: $(STAMP)
	@$(BIN)/python -m compileall -q src bench e2e

run: bytecode
	$(BIN)/gpufleet simulate --out $(OUT)
	@echo "report: $(OUT)/report.html  summary: $(OUT)/summary.json"

# The whole suite, in two parts: the tests that need no control plane over every core (pytest-xdist,
# a test file to a worker), then the control-plane tests in one process (tests/conftest.py marks
# them); the second runs even when the first failed, and make fails if either did. The control-plane
# tests build the upstream components once (10-20 minutes on two cores, into
# ~/.cache/gpufleet/controlplane) and start them on loopback for the session.
test: bytecode
	@status=0; \
	$(BIN)/python -m pytest -n auto --maxprocesses=4 --dist loadgroup -m "not controlplane" tests || status=$$?; \
	$(BIN)/python -m pytest -m controlplane tests || status=$$?; \
	exit $$status

lint: $(STAMP)
	$(BIN)/ruff check src tests bench e2e
	$(BIN)/mypy
	$(BIN)/lint-imports

# The real control plane: build it (cached), start it for people (prints KUBECONFIG), stop it.
controlplane: $(STAMP)
	$(BIN)/python -m e2e build

cluster-up: $(STAMP)
	$(BIN)/python -m e2e up

cluster-down: $(STAMP)
	$(BIN)/python -m e2e down

# gpufleet against the real kube-scheduler, cluster-autoscaler (where a binary was given) and Job
# controller: every case, and the report in $(OUT)/fidelity/.
fidelity: bytecode
	$(BIN)/python -m e2e.fidelity --out $(OUT)/fidelity

# Coverage-guided fuzzing (atheris) of every input surface, FUZZ_SECONDS each (docs/fuzzing.md).
FUZZ_SECONDS ?= 60
fuzz: bytecode
	$(BIN)/python -m tests.fuzz.run --seconds $(FUZZ_SECONDS) --out $(OUT)/fuzz

bench: bytecode
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) $(OUT) .pytest_cache .mypy_cache .ruff_cache
