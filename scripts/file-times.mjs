// A `node --test` reporter for scripts/test.sh: where a run's time goes, per test file.
//
// A file's time is the sum of its top-level tests' (and suites') durations: the tests of one file run one after
// another (the runner runs files side by side, not the tests inside one), so the sum is the file's own
// wall time less its imports. It writes one line per file, slowest first: `SECONDS FILE TESTS`.
export default async function* fileTimes(source) {
  const files = new Map();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { nesting, file, details } = event.data;
    if (nesting !== 0 || !file) continue;
    const f = files.get(file) ?? { ms: 0, tests: 0 };
    f.ms += details?.duration_ms ?? 0;
    f.tests += 1;
    files.set(file, f);
  }
  const cwd = `${process.cwd()}/`;
  const rows = [...files].sort((a, b) => b[1].ms - a[1].ms);
  for (const [file, f] of rows) {
    yield `${(f.ms / 1000).toFixed(1).padStart(7)} ${file.startsWith(cwd) ? file.slice(cwd.length) : file} ${f.tests}\n`;
  }
}
