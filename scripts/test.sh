#!/usr/bin/env bash
# `make test`'s runs of the built suite (dist/test), one after another, each on its own Node:
#
#   1. every test file            on the default Node (the machine's when >= 22, else the pinned 24),
#                                 with the platform's process backend (/proc on Linux)
#   2. the CLI and fault suites   on the oldest other pinned major (22, or 24), with SUBAGENT_PROC_BACKEND=ps
#   3. the CLI suite              on the other one (26), with the platform's backend
#
# Each Node of the matrix runs every CLI assertion and each process backend every CLI and fault
# assertion, but not every pair of them: the ps backend is the same code on every Node (it runs `ps` and
# reads its text), and what differs between Nodes does not depend on the backend. A run of the CLI and
# fault suites on the default Node with the ps backend as well (TEST_RUNS=ps) would repeat both for
# nothing: it is not in `all`. The fault suite (kill -9, a full disk, PID reuse, locks, hangs) runs on
# the oldest and the default Node, with both backends; what it adds over the CLI suite is our recovery
# code and the kernel's behaviour, not Node's, so run 3 leaves it out (it is a third of a run's time).
#
# The CLI and fault suites are every *.test.js under dist/test/cli and dist/test/fault, sub-folders
# (test/cli/fanout/) included; test/README.md says what each folder of test/ holds. Runs 2 and 3 leave
# out the files whose source has a line `// test-matrix: once — <why>`: what they check (a page's text,
# an output's schema, a flag's parsing) does not depend on the Node version or the process backend, and
# the code they go through is run on every Node and backend by the files that do. They run in run 1
# only, and runs 2 and 3 name them in their heading.
#
# Each run starts the files that take longest first — those with a line `// test-order: first — <why>`
# (the longest of each run), then the real agent CLIs' (dist/test/e2e) and those with `// test-order: early —
# <why>` — so that the short ones fill the cores around them rather than one long file running alone at
# the end (measured per file: dist/test-times/).
#
# A run's Node is first on PATH (bin/* are `#!/usr/bin/env node`, and the tests spawn them), so it runs
# the test runner, the verbs and their supervisors. The build is plain JavaScript for Node 22 and later,
# so one build serves every run. test/install/ finds every Node of the matrix in SUBAGENT_TEST_NODES.
#
# Every run goes to its end even when one fails. After each run come its slowest files, and the processes
# it started that still run (a test that left one behind: it takes CPU from every later run); at the end,
# each failed test with what failed (no stack), then a line per run, then one closing line,
# `N passed, N failed, N skipped`, summing every run (a cancelled test counts as failed, a todo as
# skipped, a runner that died before its summary as one failure); the exit status is 1 when any failed.
#
#   NODE_TEST_FLAGS   flags for `node --test` (the Makefile passes its own)
#   TEST_RUNS         which runs: all (default: suite other), or a space-separated list of: suite other ps
#                     (ps: the CLI and fault suites on the default Node with SUBAGENT_PROC_BACKEND=ps)
#   TEST_SLOWEST      how many of a run's slowest files it lists after the run (12; scripts/file-times.mjs;
#                     every file's time is kept in dist/test-times/runN.txt)
set -uo pipefail
cd "$(dirname "$0")/.."
me=scripts/test.sh
flags=(${NODE_TEST_FLAGS:---test-concurrency=4 --test-timeout=900000})
runs="${TEST_RUNS:-all}"
[[ "$runs" == all ]] && runs="suite other"

# Every Node first (fetching what is missing), so that a Node that cannot be had fails before any run.
main="$(scripts/node.sh path default)" || exit 1
main_version="$("$main" --version)" || exit 1
main_major="${main_version#v}"
main_major="${main_major%%.*}"
others=()
nodes="$main"
for m in 22 24 26; do
  [[ "$m" == "$main_major" ]] && continue
  n="$(scripts/node.sh path "$m")" || exit 1
  others+=("$n")
  nodes="$nodes:$n"
done
export SUBAGENT_TEST_NODES="$nodes"

[[ -d dist/test ]] || { echo "$me: no dist/test: run make build first" >&2; exit 1; }
# The source of built test file $1 has a line starting with $2.
marked() {
  local src="test/${1#dist/test/}"
  grep -q "^$2" "${src%.js}.ts" 2>/dev/null
}
first=() early=() later=()
while IFS= read -r f; do
  if marked "$f" '// test-order: first'; then
    first+=("$f")
  elif [[ "$f" == dist/test/e2e/* ]] || marked "$f" '// test-order: early'; then
    early+=("$f")
  else
    later+=("$f")
  fi
done < <(find dist/test -name '*.test.js' | LC_ALL=C sort)
all_files=(${first[@]+"${first[@]}"} ${early[@]+"${early[@]}"} "${later[@]}")
cf_files=() cli_files=() once=()
for f in "${all_files[@]}"; do
  [[ "$f" == dist/test/cli/* || "$f" == dist/test/fault/* ]] || continue
  if marked "$f" '// test-matrix: once'; then
    src="test/${f#dist/test/}"
    once+=("${src%.js}.ts")
    continue
  fi
  cf_files+=("$f")
  [[ "$f" == dist/test/cli/* ]] && cli_files+=("$f")
done

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
summary=()
total_pass=0 total_fail=0 total_skip=0 bad=0 k=0

# The last `# KEY N` line of TAP file $2 (the runner's closing counts), or nothing.
count() { grep -E "^# $1 [0-9]+$" "$2" 2>/dev/null | tail -n 1 | cut -d' ' -f3; }

# run LABEL NODE ENV-ASSIGNMENTS… -- FILES…
run() {
  local label="$1" node="$2" envs=() files=() version started rc tap pass fail cancelled skip todo secs
  shift 2
  while [[ $# -gt 0 && "$1" != -- ]]; do envs+=("$1"); shift; done
  shift
  files=("$@")
  k=$((k + 1))
  tap="$tmp/run$k.tap"
  echo
  version="$("$node" --version)"
  echo "── run $k: $label on Node $version ($node), ${#files[@]} files"
  [[ "$label" == "every test" || ${#once[@]} -eq 0 ]] || echo "   (run 1 only, test-matrix: once: ${once[*]})"
  started=$(date +%s)
  # The spec reporter for people; TAP into a file for the counts (its closing `# pass N` lines).
  # Four reporters are more `end` listeners than Node's default limit warns of (harmless; the flag is the
  # runner's own, not handed to the tests).
  env ${envs[@]+"${envs[@]}"} PATH="$(dirname "$node"):$PATH" "$node" --disable-warning=MaxListenersExceededWarning --test "${flags[@]}" \
    --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$tap" \
    --test-reporter=./scripts/file-times.mjs --test-reporter-destination="$tmp/times$k" \
    --test-reporter=./scripts/failures.mjs --test-reporter-destination="$tmp/fail$k" \
    "${files[@]}" </dev/null
  rc=$?
  secs=$(($(date +%s) - started))
  # Where the run's time went: its slowest files (seconds, file, tests).
  echo "── run $k: the slowest files (s, file, tests)"
  head -n "${TEST_SLOWEST:-12}" "$tmp/times$k" 2>/dev/null
  # What the run started and left running (started within it, still alive, not a kernel thread): a
  # test's leftover slows every later run; this shows it where a CI page keeps it.
  left="$(sub=$BASHPID; ps -eo pid=,ppid=,etimes=,time=,args= | awk -v s="$secs" -v me="$sub" -v top="$$" '$3 < s && $5 !~ /^\[/ && $1 != me && $2 != me && $1 != top && $2 != top' | head -n 20)"
  if [[ -n "$left" ]]; then
    echo "── run $k: processes it started that still run (pid, ppid, seconds, CPU time, command)"
    cut -c1-220 <<<"$left"
  fi
  # Every file's, kept beside the build (gitignored) for a closer look.
  mkdir -p dist/test-times && cp "$tmp/times$k" "dist/test-times/run$k.txt" 2>/dev/null
  pass="$(count pass "$tap")" fail="$(count fail "$tap")" cancelled="$(count cancelled "$tap")"
  skip="$(count skipped "$tap")" todo="$(count todo "$tap")"
  if [[ -z "$pass" || -z "$fail" ]]; then
    # The runner died before its summary: the run counts as one failure.
    pass=${pass:-0} fail=1 cancelled=0 skip=${skip:-0} todo=${todo:-0}
    echo "$me: run $k ($label) ended without a summary (exit status $rc)" >&2
  fi
  fail=$((fail + ${cancelled:-0}))
  skip=$((${skip:-0} + ${todo:-0}))
  if [[ $rc -ne 0 && $fail -eq 0 ]]; then
    fail=1
    echo "$me: run $k ($label) exited $rc with no failed test" >&2
  fi
  total_pass=$((total_pass + pass)) total_fail=$((total_fail + fail)) total_skip=$((total_skip + skip))
  [[ $fail -eq 0 ]] || bad=1
  summary+=("$(printf 'run %d: %-72s %4d passed, %d failed, %d skipped  %4d s' "$k" "$label on Node $version" "$pass" "$fail" "$skip" "$secs")")
}

for r in $runs; do
  case "$r" in
    suite)
      run "every test" "$main" -- "${all_files[@]}"
      ;;
    other)
      # The oldest other Node with the ps backend, the newer with the platform's (see the top).
      for i in "${!others[@]}"; do
        if [[ $i -eq 0 ]]; then
          run "CLI and fault suites with SUBAGENT_PROC_BACKEND=ps" "${others[$i]}" SUBAGENT_PROC_BACKEND=ps -- "${cf_files[@]}"
        else
          run "CLI suite" "${others[$i]}" -- "${cli_files[@]}"
        fi
      done
      ;;
    ps)
      run "CLI and fault suites with SUBAGENT_PROC_BACKEND=ps" "$main" SUBAGENT_PROC_BACKEND=ps -- "${cf_files[@]}"
      ;;
    *) echo "$me: unknown run '$r' in TEST_RUNS (suite, other, ps)" >&2; exit 2 ;;
  esac
done

# Why each failed test failed, just above the summary: the tail of a long log is what a CI page keeps.
for ((i = 1; i <= k; i++)); do
  [[ -s "$tmp/fail$i" ]] || continue
  echo
  echo "── run $i: the failed tests, why (scripts/failures.mjs)"
  head -c 20000 "$tmp/fail$i"
done

echo
echo "── $k runs"
printf '%s\n' "${summary[@]}"
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
exit $bad
