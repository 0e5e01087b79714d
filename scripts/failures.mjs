// A `node --test` reporter for scripts/test.sh: each failed test in a few lines — its file, its name and
// what failed (the assertion's message, its actual and expected values), without the stack. The script
// prints them just above its closing summary, so that the tail of a long log (all a CI page may keep)
// says why each test failed, not only which.
const MAX = 1500;

function why(error) {
  const e = error?.cause ?? error;
  if (!e) return 'failed (no error)';
  const parts = [String(e.message ?? e).trim()];
  if ('actual' in e && 'expected' in e && !/\n/.test(parts[0])) {
    parts.push(`actual: ${JSON.stringify(e.actual)?.slice(0, 300)}`, `expected: ${JSON.stringify(e.expected)?.slice(0, 300)}`);
  }
  const text = parts.join('\n');
  return text.length > MAX ? `${text.slice(0, MAX)}…` : text;
}

export default async function* failures(source) {
  const cwd = `${process.cwd()}/`;
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { name, file, details, nesting } = event.data;
    // A test that failed only because a subtest did says nothing new.
    if (details?.error?.failureType === 'subtestsFailed') continue;
    const where = file?.startsWith(cwd) ? file.slice(cwd.length) : (file ?? '?');
    const text = why(details?.error)
      .split('\n')
      .map((l) => `    ${l}`)
      .join('\n');
    yield `✖ ${where}${nesting > 0 ? ' (subtest)' : ''}: ${name}\n${text}\n`;
  }
}
