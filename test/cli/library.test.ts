// The library API (lib/index.ts): the functions the verbs call, for Node callers. Each resolves to the
// object the verb prints, or rejects with a SubagentError carrying the code the verb would print. Also:
// the package's "exports" resolve from another project (`import('subagents')`), and its types exist
// and type-check a consumer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { start, status, result, search, resume, cancel, follow, SubagentError, ERROR_CODES, REASONS } from '../../lib/index.js';
import { FILES, runDir } from '../../lib/registry/store.js';
import { ROOT } from '../support/paths.js';
import { runProgramAsync, type Verb } from '../support/run.js';
import { until } from '../support/wait.js';
import { makeBox } from '../support/box.js';
import { statusOf } from '../support/shell.js';

const box = makeBox('library');

/** What every library call gets: the sandbox's registry, environment and directory. */
const ctx = { registry: box.registry, env: box.env, cwd: box.dir };

/** A verb through its executable (async: nothing here blocks the event loop). */
const verb = (v: Verb, args: string[]) => box.runAsync(v, args);

/** Asserts that `p` rejects with a SubagentError of `code`; returns it. */
async function rejectsWith(p: Promise<unknown>, code: string): Promise<SubagentError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof SubagentError, `not a SubagentError: ${String(err)}`);
    assert.ok(err instanceof Error);
    assert.equal(err.code, code, err.message);
    assert.ok((ERROR_CODES as readonly string[]).includes(err.code));
    assert.equal(typeof err.message, 'string');
    assert.ok(err.message.length > 0);
    assert.equal(typeof err.details.hint, 'string', 'details.hint, as the verb prints it');
    assert.equal(err.exitCode, code === 'E_WAIT_TIMEOUT' ? 124 : 1);
    return err;
  }
  assert.fail(`expected a rejection with ${code}`);
}

async function waitDone(name: string): Promise<any> {
  const w = await status({ ...ctx, names: [name], waitTerminal: true, timeoutSec: 90 });
  assert.equal(w.ok, true);
  const a = (w.agents as any[]).find((x) => x.name === name);
  assert.equal(a?.status, 'done', JSON.stringify(w));
  return a;
}

test('spend caps and reasons: numbers checked (E_ARG_INVALID), refused where the CLI cannot be held to them (E_ARG_UNSUPPORTED); a failure has its reason', async () => {
  const bad = await rejectsWith(start({ ...ctx, name: 'lib/cap', prompt: 'x', cli: 'claude', maxCostUsd: -1 }), 'E_ARG_INVALID');
  assert.equal(bad.details.flag, '--max-cost');
  await rejectsWith(start({ ...ctx, name: 'lib/cap', prompt: 'x', cli: 'claude', maxTurns: 1.5 }), 'E_ARG_INVALID');
  const unsupported = await rejectsWith(start({ ...ctx, name: 'lib/cap', prompt: 'x', cli: 'shell', maxTokens: 100 }), 'E_ARG_UNSUPPORTED');
  assert.equal(unsupported.details.flag, '--max-tokens');
  await start({ ...ctx, name: 'lib/cap', prompt: 'exit 4', cli: 'shell', maxTokens: null });
  const a = await waitDone('lib/cap');
  assert.equal(a.reason, 'exit-code');
  assert.ok(REASONS.includes(a.reason));
  assert.deepEqual(a.caps, { maxCostUsd: null, maxTokens: null, maxTurns: null, maxTimeSec: null, maxMemoryBytes: null });
});

test('start (prompt as a string) → status waitTerminal → result → search, the same objects the verbs print', async () => {
  const s = await start({ ...ctx, name: 'lib/one', prompt: 'echo one-from-the-library; echo second line', cli: 'shell' });
  assert.equal(s.ok, true);
  assert.equal(s.name, 'lib/one');
  assert.equal(s.registry, box.registry);
  assert.equal(s.cli, 'shell');
  assert.equal(s.mode, 'new');
  assert.equal(s.run, 1);
  assert.equal(typeof s.pid, 'number');
  assert.ok(['scheduled', 'running', 'done'].includes(String(s.status)));

  const a = await waitDone('lib/one');
  assert.equal(a.outcome, 'succeeded');
  assert.equal(a.exitCode, 0);

  const r = await result({ ...ctx, name: 'lib/one' });
  assert.equal(r.ok, true);
  assert.equal(r.lastAssistantText, 'one-from-the-library\nsecond line\n');
  assert.equal(r.status, 'done');
  assert.equal(r.outcome, 'succeeded');

  // The verbs print the same (the library is what they call).
  const vr = await verb('result', ['--name', 'lib/one', '--json']);
  assert.deepEqual(vr.json, r);
  const vs = await verb('status', ['--name', 'lib/one']);
  const ls = await status({ ...ctx, names: ['lib/one'] });
  assert.deepEqual(vs.json, ls);

  const found = await search({ ...ctx, name: 'lib/one', pattern: 'second', role: 'assistant' });
  assert.equal(found.ok, true);
  assert.deepEqual(
    (found.matches as any[]).map((m) => [m.run, m.role, m.line, m.snippet]),
    [[1, 'assistant', 2, 'second line']],
  );
  assert.deepEqual(found, (await verb('search', ['--name', 'lib/one', '--pattern', 'second', '--role', 'assistant'])).json);
});

test('start with the prompt as a Buffer: bytes kept exactly (UTF-8 and an invalid byte in a comment); resume adds run 2', async () => {
  const script = Buffer.concat([Buffer.from('# \xff\xfe not UTF-8\n', 'latin1'), Buffer.from("printf '%s\\n' 'héllo-буфер-😀'\n", 'utf8')]);
  const s = await start({ ...ctx, name: 'lib/buf', prompt: script, cli: 'shell' });
  assert.equal(s.ok, true);
  const a = await waitDone('lib/buf');
  assert.equal(a.outcome, 'succeeded', JSON.stringify(a));
  assert.equal((await result({ ...ctx, name: 'lib/buf' })).lastAssistantText, 'héllo-буфер-😀\n');
  assert.deepEqual(readFileSync(join(runDir(box.registry, 'lib/buf', 1), FILES.prompt)), script, 'the stored prompt is the Buffer, byte for byte');

  const r2 = await resume({ ...ctx, name: 'lib/buf', prompt: Buffer.from('echo run-two') });
  assert.equal(r2.ok, true);
  assert.equal(r2.mode, 'resume');
  assert.equal(r2.run, 2);
  const b2 = await waitDone('lib/buf');
  assert.equal(b2.run, 2);
  assert.equal(b2.outcome, 'succeeded');
  const since = await result({ ...ctx, name: 'lib/buf', since: 0 });
  assert.deepEqual(
    (since.runs as any[]).map((x) => [x.run, x.lastAssistantText]),
    [
      [1, 'héllo-буфер-😀\n'],
      [2, 'run-two\n'],
    ],
  );
  assert.equal((await result({ ...ctx, name: 'lib/buf', run: 1 })).lastAssistantText, 'héllo-буфер-😀\n');
  // A prompt is searchable as the user's message of its run.
  const p = await search({ ...ctx, name: 'lib/buf', pattern: 'run-two', role: 'user' });
  assert.deepEqual(
    (p.matches as any[]).map((m) => m.run),
    [2],
  );
});

test('cancel a running run; a second cancel rejects with E_NOT_RUNNING', async () => {
  const gate = join(box.dir, 'never-opened');
  await start({ ...ctx, name: 'lib/long', prompt: `echo waiting; while [ ! -e '${gate}' ]; do sleep 0.05; done`, cli: 'shell' });
  await until('lib/long runs', () => statusSync('lib/long') === 'running', 60_000, 50);
  const c = await cancel({ ...ctx, name: 'lib/long' });
  assert.equal(c.ok, true);
  assert.equal(c.previousStatus, 'running');
  assert.equal(c.status, 'done');
  assert.equal(c.outcome, 'cancelled');
  assert.deepEqual(c.survivors, []);
  const a = await waitDone('lib/long');
  assert.equal(a.outcome, 'cancelled');
  await rejectsWith(cancel({ ...ctx, name: 'lib/long' }), 'E_NOT_RUNNING');
});

test('follow streams the transcript through `write` as it grows and resolves to the result; json: the events the verb prints', async () => {
  const gate = join(box.dir, 'gate-follow');
  await start({ ...ctx, name: 'lib/follow', prompt: `echo first; while [ ! -e '${gate}' ]; do sleep 0.05; done; echo second`, cli: 'shell' });
  const written: string[] = [];
  const following = follow({ ...ctx, name: 'lib/follow', write: (t) => written.push(t) });
  await until('the first line is followed', () => written.join('') === 'first\n', 60_000, 20);
  writeFileSync(gate, '');
  const r = await following;
  assert.equal(written.join(''), 'first\nsecond\n');
  assert.equal(r.ok, true);
  assert.equal(r.status, 'done');
  assert.equal(r.lastAssistantText, 'first\nsecond\n');
  assert.deepEqual(r, await result({ ...ctx, name: 'lib/follow' }));

  const events: string[] = [];
  const rj = await follow({ ...ctx, name: 'lib/follow', json: true, write: (t) => events.push(t) });
  assert.deepEqual(
    events.map((e) => JSON.parse(e)),
    [
      { type: 'message', run: 1, index: 1, line: 1, role: 'assistant', text: 'first' },
      { type: 'message', run: 1, index: 1, line: 2, role: 'assistant', text: 'second' },
    ],
  );
  const printed = await verb('result', ['--name', 'lib/follow', '--follow', '--json']);
  assert.equal(printed.code, 0, printed.stdout);
  assert.equal(printed.stdout, events.join('') + JSON.stringify(rj) + '\n', 'the verb prints the same events, then the result');
});

/** The status of a name through the verb, synchronously (only used with shell runs, no fake server). */
const statusSync = (name: string): string | undefined => statusOf(box, name)?.status;

test('errors reject with SubagentError and the code (and details) the verb prints', async () => {
  const cases: Array<[string, () => Promise<unknown>, Verb, string[]]> = [
    [
      'E_NAME_INVALID',
      () => start({ ...ctx, name: 'bad//name', prompt: 'echo x', cli: 'shell' }),
      'start-subagent',
      ['--name', 'bad//name', '--prompt', 'echo x', '--cli', 'shell'],
    ],
    ['E_NAME_INVALID', () => status({ ...ctx, names: ['h\u00e9'] }), 'status', ['--name', 'h\u00e9']],
    ['E_NAME_REQUIRED', () => start({ ...ctx, name: undefined, prompt: 'echo x', cli: 'shell' }), 'start-subagent', ['--prompt', 'echo x', '--cli', 'shell']],
    [
      'E_PROMPT_REQUIRED',
      () => start({ ...ctx, name: 'lib/empty', prompt: Buffer.alloc(0), cli: 'shell' }),
      'start-subagent',
      ['--name', 'lib/empty', '--prompt', '', '--cli', 'shell'],
    ],
    [
      'E_CLI_UNKNOWN',
      () => start({ ...ctx, name: 'lib/x', prompt: 'x', cli: 'nope' }),
      'start-subagent',
      ['--name', 'lib/x', '--prompt', 'x', '--cli', 'nope'],
    ],
    ['E_NAME_NOT_FOUND', () => result({ ...ctx, name: 'lib/missing' }), 'result', ['--name', 'lib/missing']],
    ['E_NAME_NOT_FOUND', () => cancel({ ...ctx, name: 'lib/missing' }), 'cancel', ['--name', 'lib/missing']],
    ['E_NAME_NOT_FOUND', () => status({ ...ctx, names: ['lib/missing'], waitTerminal: true }), 'status', ['--name', 'lib/missing', '--wait-terminal']],
    ['E_SESSION_NOT_FOUND', () => resume({ ...ctx, name: 'lib/missing', prompt: 'x' }), 'resume-subagent', ['--name', 'lib/missing', '--prompt', 'x']],
    ['E_PATTERN_INVALID', () => search({ ...ctx, name: 'lib/one', pattern: '(' }), 'search', ['--name', 'lib/one', '--pattern', '(']],
    ['E_WAIT_NAME_REQUIRED', () => status({ ...ctx, waitTerminal: true }), 'status', ['--wait-terminal']],
    ['E_SIGNAL_UNSUPPORTED', () => cancel({ ...ctx, name: 'lib/one', signal: 'HUP' }), 'cancel', ['--name', 'lib/one', '--signal', 'HUP']],
    ['E_RUN_NOT_FOUND', () => result({ ...ctx, name: 'lib/one', run: 9 }), 'result', ['--name', 'lib/one', '--run', '9']],
    // Flags are checked before the name is looked up: a bad run number wins over an unknown name.
    ['E_ARG_INVALID', () => result({ ...ctx, name: 'lib/missing', run: 0 }), 'result', ['--name', 'lib/missing', '--run', '0']],
    ['E_ARG_INVALID', () => result({ ...ctx, name: 'lib/missing', since: -1 }), 'result', ['--name', 'lib/missing', '--since', 'x']],
    ['E_NAME_NOT_FOUND', () => follow({ ...ctx, name: 'lib/missing', write: () => undefined }), 'result', ['--name', 'lib/missing', '--follow']],
  ];
  // lib/one exists after the first test; make sure of it when this test runs alone.
  if (statusSync('lib/one') === undefined) {
    await start({ ...ctx, name: 'lib/one', prompt: 'echo one', cli: 'shell' });
    await waitDone('lib/one');
  }
  for (const [code, call, v, args] of cases) {
    const err = await rejectsWith(call(), code);
    const printed = await verb(v, args);
    assert.equal(printed.code, 1, `${v} ${args.join(' ')}: ${printed.stdout}`);
    assert.equal(printed.json?.code, code, `the verb prints the same code: ${printed.stdout}`);
    if (code === 'E_NAME_INVALID') assert.equal(err.details.rule, printed.json.details.rule);
  }
  const dup = await rejectsWith(start({ ...ctx, name: 'lib/one', prompt: 'echo again', cli: 'shell' }), 'E_NAME_EXISTS');
  assert.equal(dup.details.name ?? 'lib/one', 'lib/one');
});

test('a wait that times out rejects with E_WAIT_TIMEOUT (exitCode 124) carrying the last known agents', async () => {
  const gate = join(box.dir, 'gate-timeout');
  await start({ ...ctx, name: 'lib/slow', prompt: `while [ ! -e '${gate}' ]; do sleep 0.05; done`, cli: 'shell' });
  const t0 = Date.now();
  const err = await rejectsWith(status({ ...ctx, names: ['lib/slow'], waitTerminal: true, timeoutSec: 0.5 }), 'E_WAIT_TIMEOUT');
  assert.ok(Date.now() - t0 >= 400);
  const agents = err.extra.agents as any[];
  assert.ok(Array.isArray(agents) && agents.length === 1 && agents[0].name === 'lib/slow', JSON.stringify(err.extra));
  writeFileSync(gate, '');
  assert.equal((await waitDone('lib/slow')).outcome, 'succeeded');
});

test('ERROR_CODES is the contract table; SubagentError is constructible by callers', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'contract.md'), 'utf8');
  const table = doc.slice(doc.indexOf('## Error codes'), doc.indexOf('## Exit codes'));
  const documented = [...table.matchAll(/^\| `(E_[A-Z_]+)` \|/gm)].map((m) => m[1]);
  assert.deepEqual([...ERROR_CODES].sort(), [...documented].sort());
  const e = new SubagentError('E_ARG_INVALID', 'x', { hint: 'y' });
  assert.equal(e.code, 'E_ARG_INVALID');
  assert.equal(e.exitCode, 1);
});

test('the package: import("subagents") from another project resolves through "exports"; the types exist and check', async () => {
  const proj = join(box.dir, 'consumer');
  mkdirSync(join(proj, 'node_modules'), { recursive: true });
  symlinkSync(ROOT, join(proj, 'node_modules', 'subagents'), 'dir');
  writeFileSync(join(proj, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module', private: true }));

  // Runtime: the export map points at dist/lib/index.js, and the library works from there.
  const program = `
    const m = await import('subagents');
    const where = import.meta.resolve('subagents');
    const s = await m.start({ name: 'pkg/one', prompt: 'echo from-the-package', cli: 'shell', registry: ${JSON.stringify(box.registry)} });
    const w = await m.status({ names: ['pkg/one'], waitTerminal: true, timeoutSec: 60, registry: ${JSON.stringify(box.registry)} });
    const r = await m.result({ name: 'pkg/one', registry: ${JSON.stringify(box.registry)} });
    let code = null;
    try { await m.result({ name: 'pkg/none', registry: ${JSON.stringify(box.registry)} }); } catch (e) { code = e instanceof m.SubagentError ? e.code : String(e); }
    console.log(JSON.stringify({ keys: Object.keys(m).sort(), where, started: s.ok, status: w.agents[0].outcome, text: r.lastAssistantText, code }));
  `;
  writeFileSync(join(proj, 'main.mjs'), program);
  const out = await runProgramAsync(process.execPath, ['main.mjs'], { cwd: proj, env: box.env });
  assert.equal(out.code, 0, out.stdout + out.stderr);
  const got = JSON.parse(out.stdout);
  for (const k of [
    'start',
    'status',
    'result',
    'search',
    'follow',
    'resume',
    'cancel',
    'batch',
    'SubagentError',
    'ERROR_CODES',
    'validateName',
    'locateRegistry',
  ])
    assert.ok(got.keys.includes(k), `exports ${k}: ${got.keys}`);
  assert.equal(realpathSync(new URL(got.where)), realpathSync(join(ROOT, 'dist', 'lib', 'index.js')));
  assert.equal(got.started, true);
  assert.equal(got.status, 'succeeded');
  assert.equal(got.text, 'from-the-package\n');
  assert.equal(got.code, 'E_NAME_NOT_FOUND');

  // Types: "types" resolves to dist/lib/index.d.ts, which declares the API; a consumer type-checks
  // against it (and a wrong call does not).
  const dts = join(ROOT, 'dist', 'lib', 'index.d.ts');
  assert.ok(existsSync(dts), dts);
  const decl = readFileSync(dts, 'utf8');
  for (const k of [
    'start',
    'status',
    'history',
    'result',
    'search',
    'follow',
    'resume',
    'cancel',
    'batch',
    'SubagentError',
    'ERROR_CODES',
    'StartOptions',
    'StartResult',
    'StatusOptions',
    'StatusResult',
    'AgentEntry',
    'HistoryResult',
    'ResultResult',
    'RunAnswer',
    'SearchResult',
    'CancelResult',
    'BatchResult',
    'FollowOptions',
    'FollowLine',
    'RunRecord',
  ])
    assert.match(decl, new RegExp(`\\b${k}\\b`), `index.d.ts exports ${k}`);
  writeFileSync(
    join(proj, 'use.ts'),
    `import { start, status, history, result, search, resume, cancel, follow, batch, SubagentError, ERROR_CODES, REASONS, type Reason, type Caps, type CapOptions, type StartOptions, type StartResult, type StatusOptions, type StatusResult, type AgentEntry, type HistoryResult, type RunAnswer, type RunsAnswer, type SearchResult, type CancelResult, type BatchResult, type FollowOptions, type FollowLine, type ErrorCode, type RunRecord } from 'subagents';
const o: StartOptions = { name: 'x', prompt: Buffer.from('echo'), cli: 'shell', registry: '/tmp/r', maxConcurrent: 4 };
const s: StatusOptions = { names: ['x'], waitTerminal: true, timeoutSec: 90 };
const p: Promise<StartResult> = start(o);
const q: Promise<StatusResult> = status(s);
const h: Promise<HistoryResult> = history({ name: 'x' });
const ra: Promise<RunAnswer> = result({ name: 'x', run: 2 });
const rs: Promise<RunsAnswer> = result({ name: 'x', since: 0 });
const se: Promise<SearchResult> = search({ name: 'x', pattern: 'p' });
const ca: Promise<CancelResult> = cancel({ name: 'x' });
const ba: Promise<BatchResult> = batch({ batch: '-' });
void [p, q, h, ra, rs, se, ca, ba, resume];
async function typed(): Promise<number | null> {
  const first: AgentEntry | undefined = (await q).agents[0];
  const pid: number | null = (await p).pid;
  return first?.exitCode ?? pid;
}
void typed;
// @ts-expect-error: numbers are numbers
const textual: StatusOptions = { names: ['x'], timeoutSec: '90' };
void textual;
const fo: FollowOptions = { name: 'x', json: true, timeoutSec: 1, write: (text: string) => void text };
const fl: Promise<RunAnswer> = follow(fo);
const ev: FollowLine = { type: 'message', run: 1, index: 1, role: 'assistant', text: 't' };
void [fl, ev];
const reason: Reason = REASONS[0];
const caps: Caps = { maxCostUsd: 2.5, maxTokens: null, maxTurns: 10 };
const capped: CapOptions & StartOptions = { name: 'x', prompt: 'p', maxCostUsd: caps.maxCostUsd, maxTurns: null };
// @ts-expect-error: not a reason
const notAReason: Reason = 'timeout';
void [reason, capped, notAReason];
const code: ErrorCode = ERROR_CODES[0];
const e = new SubagentError(code, 'm', { hint: 'h' });
const n: number = e.exitCode;
let r: RunRecord | null = null;
void [n, r];
// @ts-expect-error: the prompt is required
const bad: StartOptions = { name: 'x' };
// @ts-expect-error: not an error code
const notACode: ErrorCode = 'E_NOPE';
void [bad, notACode];
`,
  );
  writeFileSync(
    join(proj, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: ['node'],
        typeRoots: [join(ROOT, 'node_modules', '@types')],
      },
      files: ['use.ts'],
    }),
  );
  const tsc = await runProgramAsync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'lib', 'tsc.js'), '-p', 'tsconfig.json'], {
    cwd: proj,
    env: box.env,
  });
  assert.equal(tsc.code, 0, `tsc on a consumer of 'subagents':\n${tsc.stdout}${tsc.stderr}`);
});
