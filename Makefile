# Each target creates .venv when missing and installs the project there with the extras of EXTRAS
# (the agent frameworks' extras each get an environment of their own: tests/compat_envs.py).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: demo check test test-latest test-long test-mutations bench lint clean official-mcp system-packages constraints contest

# What .venv installs: the project with these extras, and the distributions beside it.
EXTRAS := tools,sandbox,mcp,anthropic,archive,fsspec,upath,dev
LOCAL_PROJECTS := -e '.[$(EXTRAS)]' -e ./agent -e './safefs_bench[plot]'
# Every direct and transitive dependency of those, pinned: `make constraints` writes it.
CONSTRAINTS := constraints.txt

$(STAMP): pyproject.toml setup.py build_ext.py safefs/fastpath.c safefs/fastread.c safefs/sandbox/launcher.c agent/pyproject.toml safefs_bench/pyproject.toml $(CONSTRAINTS)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade -c $(CONSTRAINTS) pip
	$(PY) -m pip install --quiet -c $(CONSTRAINTS) $(LOCAL_PROJECTS)
	touch $(STAMP)

# Resolves every dependency afresh (the newest release each requirement admits) in a throwaway
# virtualenv and writes the result to $(CONSTRAINTS), our own distributions left out; then the
# same for the extra of each own_env table of compat.toml, each into constraints/<name>.txt (and
# its oldest end, the lower bound with those pins, into constraints/<name>-oldest.txt).
constraints:
	@set -e; scratch="$$(mktemp -d)"; trap 'rm -rf "$$scratch"' EXIT; \
	$(PYTHON) -m venv "$$scratch/venv"; \
	"$$scratch/venv/bin/python" -m pip install --quiet --upgrade pip; \
	"$$scratch/venv/bin/python" -m pip install --quiet $(LOCAL_PROJECTS); \
	{ echo "# Every dependency of $(LOCAL_PROJECTS), pinned; regenerate with: make constraints"; \
	  "$$scratch/venv/bin/python" -m pip freeze --exclude-editable --all \
	    | grep -v -i -E '^(safefs|safefs-agent|safefs-bench|setuptools|wheel)==' ; } > $(CONSTRAINTS); \
	echo "wrote $(CONSTRAINTS): $$(grep -c '==' $(CONSTRAINTS)) pins"; \
	"$$scratch/venv/bin/python" tests/compat_envs.py pins

demo: $(STAMP)
	$(VENV)/bin/safefs-agent demo

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy

# The official MCP filesystem server from npm, into the git-ignored .bench-node/, for the
# differential test and the benchmark; without npm this says so and the tests skip.
official-mcp: $(STAMP)
	$(PY) -c "from safefs_bench.mcp_client import official_server; print(official_server()[1])"

# Debian packages some tests use: strace, for the system-call tests; GNU tar and bsdtar
# (libarchive-tools), which the archive tests compare safefs-extract with. Where they cannot be had
# (no apt-get, not root, offline) those tests skip with the reason.
system-packages:
	@command -v strace >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] \
		&& apt-get update -qq >/dev/null && apt-get install -y -qq strace >/dev/null; } \
		|| echo "strace is not installed: the system-call tests skip"
	@command -v bwrap >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] \
		&& apt-get update -qq >/dev/null && apt-get install -y -qq bubblewrap >/dev/null; } \
		|| echo "bubblewrap is not installed: the sandbox's cost beside it is not measured"
	@{ command -v tar >/dev/null 2>&1 && command -v bsdtar >/dev/null 2>&1; } \
		|| { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] \
		&& apt-get update -qq >/dev/null && apt-get install -y -qq tar libarchive-tools >/dev/null; } \
		|| echo "tar or bsdtar is not installed: the archive comparison tests skip"

# The inner loop: lint, then the suite without the tests marked slow on a worker per core
# (pytest-xdist, whole files per worker), every race window shortened (tests/race_window.py).
# About 4 minutes on an idle 2-core machine: 264.8 s wall (user 373.6 s, sys 101.7 s) measured
# with `/usr/bin/time make check` at load 1, 6,466 tests; in one process it took 423 s.
CHECK_RACE_SECONDS := 0.5
CHECK_WORKERS := auto
check: lint official-mcp
	SAFEFS_RACE_SECONDS=$(CHECK_RACE_SECONDS) $(PY) -m pytest --benchmark-disable -m "not slow" -q \
		-n $(CHECK_WORKERS) --dist loadfile tests

# What CI runs (.ci/run): lint, the whole suite with the benchmarks run once each as tests, then
# the compat environments. About 40 minutes on a fresh clone of a 2-core machine (CI's last run,
# with pip; uv now builds each environment about three times as fast).
test: lint official-mcp system-packages
	$(PY) -m pytest --benchmark-disable tests benchmarks
	$(PY) tests/compat_envs.py oldest
	$(PY) tests/compat_envs.py pinned

# Each integration of compat.toml at the newest releases its extra admits (no constraints), each
# in .venv-compat/<name>-newest; the report, naming every failing test, also goes to compat-latest.md.
test-latest: $(STAMP) official-mcp
	$(PY) tests/compat_envs.py newest --report compat-latest.md

# The link invariant (tests/safefs/test_link_invariant.py) with 60 times the calls make test runs
# (300 sequences of 40 calls against 10 of 20), then every race test (each module that imports
# tests/race_window.py) with a window 10 times the default 1.5 s.
RACE_TESTS = $(shell grep -rl --include='test_*.py' '^from tests.race_window import' tests)
test-long: $(STAMP)
	SAFEFS_LINK_EXAMPLES=300 SAFEFS_LINK_STEPS=40 $(PY) -m pytest tests/safefs/test_link_invariant.py --benchmark-disable
	SAFEFS_RACE_SECONDS=15 $(PY) -m pytest --benchmark-disable $(RACE_TESTS)

# Each mutation of tests/mutations/table.py (a bug planted in a safety check) in a copy of the tree,
# with the tests that must fail on it; a table of killed and survived. Not part of `make test`.
test-mutations: $(STAMP)
	$(PY) -m tests.mutations.run

# Fails when a criterion of benchmarks/criteria.py is missed (the ratios of the run just saved).
bench: $(STAMP)
	$(PY) -m pytest benchmarks --benchmark-only --benchmark-storage=bench-results \
		--benchmark-autosave --benchmark-columns=median,iqr,ops --benchmark-sort=name
	$(PY) -m benchmarks.criteria

# The containment contest with every agent framework's rows: safefs-bench in .venv for what it has,
# then, in each own_env table's pinned environment (built when missing, no tests run), that
# framework's original and drop-in alone; the runs (kept in $(CONTEST_RUNS)/) merged into the
# pictures and the generated part of docs/benchmarks.md. Not part of `make test`.
CONTEST_SECONDS ?= 3
CONTEST_FRAMEWORKS ?= $$($(PY) tests/compat_envs.py pinned --list)
CONTEST_PLOTS ?= docs/benchmarks
CONTEST_MARKDOWN ?= docs/benchmarks.md
CONTEST_RUNS := .contest-runs
contest: $(STAMP)
	@set -e; rm -rf $(CONTEST_RUNS); mkdir -p $(CONTEST_RUNS); \
	$(VENV)/bin/safefs-bench --seconds $(CONTEST_SECONDS) --json $(CONTEST_RUNS)/main.json; \
	runs="--from $(CONTEST_RUNS)/main.json"; frameworks="$(CONTEST_FRAMEWORKS)"; \
	for name in $$frameworks; do \
		env="$$($(PY) tests/compat_envs.py pinned --only "$$name" --build-only)"; \
		"$$env/bin/safefs-bench" --seconds $(CONTEST_SECONDS) --only "$$name-*,safefs-$$name-*" \
			--json $(CONTEST_RUNS)/"$$name".json; \
		runs="$$runs --from $(CONTEST_RUNS)/$$name.json"; \
	done; \
	$(VENV)/bin/safefs-bench $$runs --plot $(CONTEST_PLOTS) --markdown $(CONTEST_MARKDOWN)

clean:
	rm -rf $(VENV) .venv-compat $(CONTEST_RUNS) compat-latest.md build *.egg-info agent/*.egg-info safefs_bench/*.egg-info safefs/_native*.so safefs/sandbox/_native*.so
