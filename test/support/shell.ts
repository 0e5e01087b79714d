/**
 * Shell runs (`--cli shell`: the prompt is the script) and the verbs that watch them, each asserted to
 * keep the contract. Gates: a script line that blocks until the test creates a file.
 *
 * The plain names run the verb synchronously; the `…Async` ones keep the event loop turning (tests
 * that run side by side, as the fault suite's do).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import type { Box } from './box.js';
import { settledTree } from './registry.js';
import { assertError, assertOk, type RunOpts, type Verb } from './run.js';
import { LONG, WAIT_SEC } from './wait.js';

/** A script line that blocks until `file` exists (the test creates it when it wants the run to go on). */
export function gate(file: string): string {
  return `while [ ! -e '${file}' ]; do sleep 0.05; done`;
}

/** Opens a gate. */
export function open(file: string): void {
  writeFileSync(file, '');
}

export function shellArgs(name: string, script: string, extra: string[] = []): string[] {
  return ['--name', name, '--cli', 'shell', '--prompt', script, ...extra];
}

/** start-subagent --cli shell, asserted ok; `promptArgs` instead of `--prompt script` (e.g. `--prompt-file F`). Returns the line. */
export function startShell(b: Box, name: string, script: string, extra: string[] = [], opts: RunOpts = {}, promptArgs: string[] | null = null): any {
  const args = promptArgs ? ['--name', name, '--cli', 'shell', ...promptArgs, ...extra] : shellArgs(name, script, extra);
  return assertOk(b.run('start-subagent', args, opts), `start ${name}`);
}

export async function startShellAsync(b: Box, name: string, script: string, extra: string[] = [], opts: RunOpts = {}): Promise<any> {
  return assertOk(await b.runAsync('start-subagent', shellArgs(name, script, extra), opts), `start ${name}`);
}

function oneAgent(line: any): any {
  assert.ok(line.agents.length <= 1, JSON.stringify(line));
  return line.agents[0];
}

/** status --name, asserted to be one ok line; the agent (or undefined). */
export function statusOf(b: Box, name: string, opts: RunOpts = {}): any {
  return oneAgent(assertOk(b.run('status', ['--name', name], opts), `status ${name}`));
}

export async function statusOfAsync(b: Box, name: string, opts: RunOpts = {}): Promise<any> {
  return oneAgent(assertOk(await b.runAsync('status', ['--name', name], opts), `status ${name}`));
}

/** `status ARGS` without blocking the event loop, asserted ok; the whole line. */
export async function statusLineAsync(b: Box, args: string[]): Promise<any> {
  return assertOk(await b.runAsync('status', args), `status ${args.join(' ')}`);
}

/** A listing's agents by name. */
export function byName(agents: any[]): Record<string, any> {
  return Object.fromEntries(agents.map((a) => [a.name, a]));
}

/** Polls `status --name` (without blocking the event loop) until `pred` holds for the agent; returns it. */
export async function untilStatus(b: Box, name: string, pred: (a: any) => boolean, what: string, timeoutMs = LONG): Promise<any> {
  const end = Date.now() + timeoutMs;
  let last: any;
  for (;;) {
    last = await statusOfAsync(b, name);
    if (last && pred(last)) return last;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${name}: ${what}; last: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 40));
  }
}

function waitArgs(names: string[]): string[] {
  return ['--wait-terminal', '--timeout', WAIT_SEC, ...names.flatMap((n) => ['--name', n])];
}

/** status --wait-terminal on the names, asserted ok; the agents by name. */
export function waitTerminal(b: Box, names: string[], opts: RunOpts = {}): Record<string, any> {
  return byName(assertOk(b.run('status', waitArgs(names), opts), `wait-terminal ${names.join(',')}`).agents);
}

export async function waitTerminalAsync(b: Box, names: string[], opts: RunOpts = {}): Promise<Record<string, any>> {
  return byName(assertOk(await b.runAsync('status', waitArgs(names), opts), `wait-terminal ${names.join(',')}`).agents);
}

/** `result --name N` in plain mode, asserted ok (exit 0); returns the text. */
export function resultText(b: Box, name: string, opts: RunOpts = {}): string {
  const r = b.run('result', ['--name', name], opts);
  assert.equal(r.code, 0, `result ${name}: code ${r.code} stdout=${r.stdout.slice(0, 500)} stderr=${r.stderr.slice(0, 1000)}`);
  return r.stdout;
}

/** `result --name N --json`, asserted to be one ok JSON line. */
export function resultJson(b: Box, name: string): any {
  return assertOk(b.run('result', ['--name', name, '--json']), `result --json ${name}`);
}

/** Runs a verb expecting an error; asserts the contract and that the box's directory (the registry in it) did not change. */
export function expectError(b: Box, verb: Verb, args: string[], code: string, opts: RunOpts = {}): any {
  const before = settledTree(b.dir);
  const json = assertError(b.run(verb, args, opts), code);
  assert.deepEqual(settledTree(b.dir), before, `${verb} ${code} changed the sandbox`);
  return json;
}
