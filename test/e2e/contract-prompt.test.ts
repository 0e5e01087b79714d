// The contract suite (test/e2e/contract/): every agent CLI of the table given a 300 KB prompt (quotes,
// back-slashes, tabs, `$HOME`, non-ASCII text) in a file, which must reach the model whole, byte for byte
// (stdin, never argv). The real pinned CLIs against the fake model servers on 127.0.0.1, what each CLI
// does to a prompt (a date before it, a separator after it) in its row.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestsWith, startBig } from '../fakes/world.js';
import { assertOk } from '../support/run.js';
import { ROWS } from './contract/rows.js';

for (const row of ROWS) {
  const spec = row.big;
  test(spec.title, async (t) => {
    const c = await row.open(t, 'big');
    if (!c) return;
    const tag = spec.tag();
    const prompt = spec.prompt(tag);
    assert.ok(Buffer.byteLength(prompt) > 300 * 1024);
    const a = await startBig(c.b, ['--cli', row.cli, ...c.where], prompt, t);
    assert.equal(assertOk(c.b.run('result', ['--name', 'big', '--json']), 'result').lastAssistantText, tag);
    const req = requestsWith(c.srv, tag, { main: spec.main })[0];
    assert.ok(req, 'the fake received the prompt');
    spec.arrived(c, req, prompt, a);
  });
}
