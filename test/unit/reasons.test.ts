// The reasons (docs/contract.md, "Reasons"): one list in the code, the contract and the schema; a
// model-API error's reason from its status or its words (lib/base/api-error.ts, with the phrasings the
// real CLIs print); records of any age read back (lib/registry/record.ts). The adapters' verdicts are
// tested on captured streams in test/unit/<cli>-adapter.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiErrorReason } from '../../lib/base/api-error.js';
import { REASONS, parseRecord, resetsAtOf, serialiseRecord } from '../../lib/registry/record.js';
import { cancelledEnd } from '../../lib/runs/reason.js';
import { FIXTURES, ROOT } from '../support/paths.js';
import { stateOf } from '../../lib/views/table.js';

test('the reasons are one list: the code, the table of docs/contract.md and the schema', () => {
  const contract = readFileSync(join(ROOT, 'docs', 'contract.md'), 'utf8');
  const at = contract.indexOf('\n## Reasons\n');
  assert.notEqual(at, -1, 'docs/contract.md has a "Reasons" section');
  const section = contract.slice(at, contract.indexOf('\n## ', at + 1));
  const listed = [...section.matchAll(/^\| `([a-z-]+)` \|/gm)].map((m) => m[1]);
  assert.deepEqual(listed, [...REASONS]);
  const schema = JSON.parse(readFileSync(join(ROOT, 'docs', 'schemas', 'status.schema.json'), 'utf8'));
  assert.deepEqual(schema.$defs.reason.enum, [...REASONS]);
});

test('apiErrorReason: the HTTP status first, else the words the CLIs print', () => {
  const cases: Array<[number | null, string, string | null]> = [
    [401, '', 'auth'],
    [403, '', 'auth'],
    [429, '', 'rate-limit'],
    [402, '', 'rate-limit'],
    [500, '', 'api-error'],
    [529, 'overloaded', 'api-error'],
    [400, 'rate limit in the words, but the status says', 'api-error'],
    [null, 'Failed to authenticate. API Error: 401 fake failure 401', 'auth'],
    [null, 'unexpected status 401 Unauthorized: fake upstream error 401', 'auth'],
    [null, 'Invalid API key · Please run /login', 'auth'],
    [null, 'API Error: Request rejected (429) · You have reached your usage limit', 'rate-limit'],
    [null, 'exceeded retry limit, last status: 429 Too Many Requests, request id: req_1', 'rate-limit'],
    [null, 'You’ve hit your usage limit. Upgrade to Pro', 'rate-limit'],
    [null, 'Quota exceeded. Check your plan and billing details.', 'rate-limit'],
    [null, 'Credit balance is too low', 'rate-limit'],
    [null, 'We’re currently experiencing high demand, which may cause temporary errors.', 'api-error'],
    [null, 'stream disconnected before completion: the model exploded', 'api-error'],
    [null, 'Unable to connect to API (ConnectionRefused)', 'api-error'],
    [null, 'Could not connect to local model provider at http://127.0.0.1:1/v1.', 'api-error'],
    [null, 'API Error: 500 fake failure 500', 'api-error'],
    [null, 'the tool crashed', null],
    [null, 'listening on 127.0.0.1:4010', null],
  ];
  for (const [status, text, reason] of cases) assert.equal(apiErrorReason(status, text), reason, `${status} ${text}`);
});

test('reasonOf: as recorded; a record from before the field says what its end implies', () => {
  // The oldest shape of a record (no reason field), upgraded as it is read (lib/registry/record.ts).
  const oldest = JSON.parse(readFileSync(join(FIXTURES, 'records', '01-core.json'), 'utf8'));
  const reasonOf = (over: Record<string, unknown>) =>
    parseRecord(JSON.stringify({ ...oldest, status: 'done', outcome: 'failed', endReason: null, ...over }), 'record.json').reason;
  assert.equal(reasonOf({ reason: 'auth' }), 'auth');
  assert.equal(reasonOf({ reason: null, outcome: 'succeeded' }), null);
  assert.equal(reasonOf({}), 'unknown');
  assert.equal(reasonOf({ outcome: 'cancelled' }), 'cancelled');
  assert.equal(reasonOf({ endReason: 'spawn-failed' }), 'spawn-failed');
  assert.equal(reasonOf({ outcome: 'succeeded' }), null);
  assert.equal(reasonOf({ status: 'running', outcome: null, finishedAt: null, exitCode: null, signal: null, error: null }), null);
});

test('cancelledEnd: a caller’s cancel is cancelled; the supervisor’s at a cap is a failure with the cap', () => {
  assert.deepEqual(cancelledEnd({ requestedAt: 't', signal: 'SIGINT', by: 1 }), { outcome: 'cancelled', error: 'cancelled with SIGINT', reason: 'cancelled' });
  assert.deepEqual(cancelledEnd({ requestedAt: 't', signal: 'SIGTERM', by: 1, reason: 'max-cost', message: 'stopped at --max-cost 1' }), {
    outcome: 'failed',
    error: 'stopped at --max-cost 1',
    reason: 'max-cost',
  });
});

test('resetsAt and limitWarning: read when there (and checked), absent in older records, written only when set', () => {
  const done = readFileSync(join(FIXTURES, 'records', '13-done.json'), 'utf8');
  const running = readFileSync(join(FIXTURES, 'records', '13-running.json'), 'utf8');
  const parsed = parseRecord(done, 'record.json');
  assert.equal(parsed.status === 'done' && parsed.resetsAt, null, 'a record written before the field: no reset time');
  assert.equal(parsed.limitWarning, null, 'nor a warning');
  assert.equal(serialiseRecord(parsed), done, 'and none is written');
  const limited = { ...JSON.parse(done), outcome: 'failed', reason: 'rate-limit', resetsAt: '2026-11-28T05:00:00.000Z' };
  const read = parseRecord(JSON.stringify(limited), 'record.json');
  assert.equal(read.status === 'done' && read.resetsAt, '2026-11-28T05:00:00.000Z');
  assert.equal(resetsAtOf(read), '2026-11-28T05:00:00.000Z');
  const bad =
    (over: Record<string, unknown>, base = done) =>
    () =>
      parseRecord(JSON.stringify({ ...JSON.parse(base), ...over }), 'record.json');
  assert.throws(bad({ resetsAt: 'at dawn' }), /bad field: resetsAt/);
  assert.throws(bad({ resetsAt: '2026-11-28T05:00:00.000Z' }, running), /a running run has the fields of an end/);
  assert.throws(bad({ limitWarning: { window: 5, utilization: null, resetsAt: null } }), /bad field: limitWarning/);
  const warned = parseRecord(
    JSON.stringify({ ...JSON.parse(running), limitWarning: { window: 'five_hour', utilization: 0.92, resetsAt: null } }),
    'record.json',
  );
  assert.deepEqual(warned.limitWarning, { window: 'five_hour', utilization: 0.92, resetsAt: null }, 'a running run shows its warning');
  assert.equal(resetsAtOf(warned), null, 'a run not done has no reset time');
});

test("the table's STATUS cell: when a rate limit resets (where the CLI said), how near a warned running run's limit is", () => {
  const now = Date.parse('2026-11-28T02:00:00.000Z');
  const row = (over: Record<string, unknown>) =>
    ({ status: 'done', outcome: 'failed', reason: 'rate-limit', resetsAt: null, limitWarning: null, stalled: false, ...over }) as never;
  assert.equal(stateOf(row({ resetsAt: '2026-11-28T02:04:10.000Z' }), now), 'failed (rate-limit, resets in 4m)');
  assert.equal(stateOf(row({ resetsAt: '2026-11-28T01:58:00.000Z' }), now), 'failed (rate-limit, reset 2m ago)');
  assert.equal(stateOf(row({}), now), 'failed (rate-limit)', 'the CLI did not say');
  assert.equal(stateOf(row({ resetsAt: '2026-11-28T02:04:10.000Z' }), now, true), 'failed', 'short: the outcome alone');
  assert.equal(stateOf(row({ reason: 'auth' }), now), 'failed (auth)');
  const running = { status: 'running', outcome: null, reason: null };
  assert.equal(stateOf(row({ ...running, limitWarning: { window: 'five_hour', utilization: 0.92, resetsAt: null } }), now), 'running (limit 92%)');
  assert.equal(stateOf(row({ ...running, limitWarning: { window: null, utilization: null, resetsAt: null } }), now), 'running (limit near)');
  assert.equal(stateOf(row(running), now), 'running');
});
