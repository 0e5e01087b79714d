# The two commands of the README do everything on a fresh machine:
#   make demo   install, build, fan out three shell subagents, wait, print their results
#   make test   install, build, run every test (unit, cli, fault, e2e against the real agent CLIs) on
#               Node 24, the CLI and fault suites on Node 22 (with SUBAGENT_PROC_BACKEND=ps), the CLI
#               suite on 26 (but the files marked `test-matrix: once`: scripts/test.sh)
SHELL := /bin/bash
# --test-timeout also bounds each test FILE as a whole: the e2e files take 2.5-4 min on a loaded 2-core
# machine, so the bound is a hang detector with room for a slower CI machine, not a budget.
NODE_TEST_FLAGS ?= --test-concurrency=4 --test-timeout=900000

# Every recipe runs with one Node first on PATH: the machine's own when it is >= 22, else a pinned Node 24
# that scripts/node.sh fetches from the npm registry into .node/ (once; gitignored). bin/* are
# `#!/usr/bin/env node` and npm runs on whatever `node` PATH finds, so PATH decides which Node builds,
# runs the demo, the verbs and their supervisors. NODE_DEFAULT=/path/to/node chooses another (>= 22).
ifneq ($(filter-out clean,$(or $(MAKECMDGOALS),install)),)
BUILD_NODE := $(shell NODE_DEFAULT='$(NODE_DEFAULT)' scripts/node.sh path default)
ifeq ($(BUILD_NODE),)
$(error no Node.js >= 22 to build with (scripts/node.sh said why, above))
endif
export PATH := $(patsubst %/,%,$(dir $(BUILD_NODE))):$(PATH)
endif

.PHONY: install build test demo bench clean test-clis test-tools test-latest lint format

# --ignore-scripts: the project's own `prepare` (the build, for npm pack and npm install -g) is make
# build's job here; esbuild's postinstall only checks its binary, which it finds without it.
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund

install: node_modules/.package-lock.json

build: install
	rm -rf dist
	npx tsc -p tsconfig.json
	node scripts/bundle.mjs

# The real agent CLIs, pinned, installed for the tests only (a user brings their own; this needs the npm
# registry), and the system tools the tests shell out to (git, tmux, script, setsid, unshare, perl,
# libfaketime, xmllint), installed with apt-get where missing.
test-clis:
	bash test/clis/install.sh

test-tools:
	bash test/setup-tools.sh

# Each CLI's pinned versions against the latest on the npm registry; the latest installed beside the pins
# and the e2e suite run against it (scripts/clis-latest.sh).
test-latest: build test-clis test-tools
	bash scripts/clis-latest.sh

# scripts/test.sh: every test on the Node above, then the CLI and fault suites on the other pinned
# majors (22, 24, 26; fetched into .node/ when the machine has none), the oldest with SUBAGENT_PROC_BACKEND=ps;
# it ends with one line, `N passed, N failed, N skipped`, summing every run.
test: build test-clis test-tools
	NODE_TEST_FLAGS='$(NODE_TEST_FLAGS)' bash scripts/test.sh

# Biome (biome.json): the formatter and the linter over lib/, test/ and scripts/. make test runs the same
# check as a test (test/lint/biome.test.ts); make format writes what the formatter and the safe fixes change.
lint: install
	npx biome ci

format: install
	npx biome check --write

demo: build
	bash scripts/demo.sh

# The bench runs on the Node above (24 where the machine's is older) and reports Node 22 and 26 beside it.
bench: build
	SUBAGENT_BENCH_NODES="$$(scripts/node.sh path 22):$$(scripts/node.sh path 26)" node dist/test/bench/run.js

# .node/ (the fetched Node releases) stays: `rm -rf .node` to fetch them again.
clean:
	rm -rf dist .subagents
