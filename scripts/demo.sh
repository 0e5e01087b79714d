#!/usr/bin/env bash
# The main job, end to end on the built-in `shell` CLI (no API key): fan out three named subagents —
# one of them fails — wait for all of them with `status --wait-terminal`, print their results and statuses.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$PWD/bin"
export SUBAGENT_DIR="${SUBAGENT_DIR:-$(mktemp -d)/.subagents}"
echo "registry: $SUBAGENT_DIR"
echo

# Shows each command as it could be pasted into a shell (arguments quoted where they need it), then runs it.
# (Quoted by hand: bash's ${a@Q} needs bash 4.4, and macOS's /bin/bash is 3.2.)
step() {
  local shown='$' a
  for a in "$@"; do
    if [[ $a =~ ^[A-Za-z0-9_./=+:-]+$ ]]; then shown+=" $a"; else shown+=" '$(printf '%s' "$a" | sed "s/'/'\\\\''/g")'"; fi
  done
  printf '%s\n' "$shown"
  "$@"
  echo
}

step "$bin/start-subagent" --cli shell --name demo/primes --prompt 'n=2; found=""; while [ $n -lt 40 ]; do d=2; p=1; while [ $((d*d)) -le $n ]; do [ $((n%d)) -eq 0 ] && p=0; d=$((d+1)); done; [ $p -eq 1 ] && found="$found $n"; n=$((n+1)); done; echo "primes below 40:$found"'
step "$bin/start-subagent" --cli shell --name demo/system --prompt 'sleep 1; echo "kernel $(uname -r), $(nproc) cores, $(ls / | wc -l) entries in /"'
step "$bin/start-subagent" --cli shell --name demo/broken --prompt 'echo "looking for /nonexistent…"; ls /nonexistent'

set +e
step "$bin/status" --wait-terminal --name demo/primes --name demo/system --name demo/broken --timeout 60
set -e

for name in demo/primes demo/system demo/broken; do
  echo "── result of $name"
  "$bin/result" --name "$name"
done
echo
echo "── statuses"
"$bin/status" --name demo/primes --name demo/system --name demo/broken | node -e '
  const { agents } = JSON.parse(require("fs").readFileSync(0, "utf8"));
  for (const a of agents) console.log(`${a.name.padEnd(14)} ${a.status.padEnd(5)} ${String(a.outcome).padEnd(10)} exit=${a.exitCode} ${a.durationMs} ms${a.error ? "  (" + a.error + ")" : ""}`);
'
