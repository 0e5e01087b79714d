// The verbs' V8 code caches (scripts/code-cache.mjs, read by lib/cli/load-verb.ts) are made by `make build`
// and must be accepted by a plain process: V8 refuses a cache made under other flags, and a verb that
// changes a flag while the build trains it (status: cli/no-turbofan.ts) would leave every later run
// without one — slower, silently. code-cache.mjs throws such a cache away with a warning; this fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { cacheFor, wrapCommonJs } from '../../lib/cli/load-verb.js';
import { ROOT } from '../helpers.js';

test('every verb has a code cache that this Node accepts', () => {
  for (const verb of ['start-subagent', 'status', 'result', 'search', 'resume-subagent', 'cancel']) {
    const file = join(ROOT, 'dist', 'bin', `${verb}.cjs`);
    const cachedData = cacheFor(file);
    assert.ok(cachedData, `${verb}: a cache made for this bundle by this Node`);
    const script = new Script(wrapCommonJs(readFileSync(file, 'utf8')), { filename: file, cachedData });
    assert.equal(script.cachedDataRejected, false, `${verb}: accepted by V8`);
  }
});
