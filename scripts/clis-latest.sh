#!/usr/bin/env bash
# Staying current with the agent CLIs: for each CLI of test/clis/pins.json, the versions pinned and the
# latest release on the npm registry; then the latest installed beside the pins (test/.clis/<cli>-<version>)
# and the end-to-end suite run against them.
#
#   make test-latest                  the same, after a build (what a maintainer runs)
#   scripts/clis-latest.sh --report   only the report: one line per CLI, then a JSON line
#
# A CLI whose latest is already pinned is still run (its e2e tests then run that version). Exit status:
# the test runner's (0 when every e2e test passed against the latest). Needs the npm registry.
set -euo pipefail
cd "$(dirname "$0")/.."
me=scripts/clis-latest.sh
PATH="$(dirname "$(scripts/node.sh path default)"):$PATH"

report="$(node -e '
  const { execFileSync } = require("child_process");
  const pins = JSON.parse(require("fs").readFileSync("test/clis/pins.json", "utf8"));
  const rows = [];
  for (const [cli, p] of Object.entries(pins)) {
    let latest = null;
    try {
      latest = execFileSync("npm", ["view", p.package, "version"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 60000 }).trim();
    } catch (e) {
      console.error(`'"$me"': npm view ${p.package} failed: ${String(e.stderr || e.message).trim().split("\n")[0]}`);
    }
    rows.push({ cli, package: p.package, pinned: p.versions, latest, current: latest !== null && p.versions.includes(latest) });
  }
  for (const r of rows)
    console.error(`${r.cli.padEnd(9)} pinned ${r.pinned.join(", ").padEnd(18)} latest ${r.latest ?? "?"}${r.current ? "" : r.latest ? "  (not pinned yet)" : "  (registry unreachable)"}`);
  console.log(JSON.stringify({ clis: rows }));
')"
echo "$report"
[[ "${1:-}" == "--report" ]] && exit 0

also="$(node -e 'for (const r of JSON.parse(process.argv[1]).clis) if (r.latest) console.log(`${r.cli}@${r.latest}`)' "$report" | tr '\n' ' ')"
versions="$(node -e 'console.log(JSON.parse(process.argv[1]).clis.filter((r) => r.latest).map((r) => `${r.cli}=${r.latest}`).join(","))' "$report")"
[[ -n "$versions" ]] || { echo "$me: no latest version known (is the npm registry reachable?)" >&2; exit 1; }
CLIS_ALSO="$also" bash test/clis/install.sh
[[ -d dist/test/e2e ]] || { echo "$me: no dist/test/e2e: run make build first" >&2; exit 1; }
echo "$me: running the e2e suite against $versions" >&2
SUBAGENT_TEST_CLI_VERSIONS="$versions" node --test --test-concurrency=2 --test-timeout=900000 dist/test/e2e/*.test.js
