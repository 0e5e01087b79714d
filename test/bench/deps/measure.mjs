/**
 * The measurements behind docs/dependencies.md: each package the design card named (mri,
 * write-file-atomic, tree-kill, ps-list, ndjson) against what the suite does instead.
 *
 *   make build                                   # dist/lib: our side of each comparison
 *   node test/bench/deps/measure.mjs [section…]  # sections: mri wfa tree-kill ps-list ndjson (default: all)
 *
 * Run it with Node 24 (the figures in the doc were taken with 24.21.0). It installs the packages, at the
 * versions pinned in PACKAGES, with `npm install --prefix` into DEPS_PREFIX (default
 * /tmp/subagents-deps-bench): nothing is added to package.json. The write-file-atomic section mounts a
 * 64 KiB tmpfs and needs root (it says so and skips otherwise); strace, when present, shows which fsyncs
 * each writer makes. Linux only (/proc). Timings are medians of interleaved runs; on a shared machine
 * compare the ratios, not the milliseconds. It ends every process it starts (by its own process group or
 * by pid after checking the start time) and removes its temp files and mount.
 */
import { execFile, execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, statfsSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const PACKAGES = { mri: '1.2.0', 'write-file-atomic': '8.0.0', 'tree-kill': '1.2.2', 'ps-list': '9.0.0', ndjson: '2.0.0' };
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const PREFIX = process.env.DEPS_PREFIX || '/tmp/subagents-deps-bench';
const DIST = join(ROOT, 'dist', 'lib');
const NODE = process.execPath;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
const ms = (x) => `${x < 1 ? x.toFixed(3) : x < 10 ? x.toFixed(2) : x.toFixed(0)} ms`;
const say = (...a) => console.log(...a);

function install() {
  const want = Object.entries(PACKAGES).map(([n, v]) => `${n}@${v}`);
  const have = Object.entries(PACKAGES).every(([n, v]) => {
    try {
      return JSON.parse(readFileSync(join(PREFIX, 'node_modules', n, 'package.json'), 'utf8')).version === v;
    } catch {
      return false;
    }
  });
  if (!have)
    execFileSync('npm', ['install', '--prefix', PREFIX, '--no-audit', '--no-fund', '--loglevel=error', '--save-exact', ...want], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  const require = createRequire(join(PREFIX, 'package.json'));
  return { require, dir: (n) => join(PREFIX, 'node_modules', n) };
}

function pkgFacts(dir, name) {
  const files = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) e.isDirectory() ? walk(join(d, e.name)) : files.push(statSync(join(d, e.name)).size);
  };
  walk(dir(name));
  const deps = Object.keys(JSON.parse(readFileSync(join(dir(name), 'package.json'), 'utf8')).dependencies ?? {});
  return `${name} ${PACKAGES[name]}: ${(files.reduce((a, b) => a + b, 0) / 1024).toFixed(1)} KiB unpacked, dependencies: ${deps.join(', ') || 'none'}`;
}

// ------------------------------------------------------------------------------------------------ mri
async function mri(pkgs) {
  say(pkgFacts(pkgs.dir, 'mri'));
  const { parseArgs } = await import('node:util');
  const opts = { name: { type: 'string', multiple: true }, prompt: { type: 'string' }, watch: { type: 'string' }, json: { type: 'boolean' } };
  const probe = (label, args, extra = {}) => {
    let out;
    try {
      out = JSON.stringify(parseArgs({ args, options: opts, strict: true, ...extra }).values);
    } catch (e) {
      out = `throws ${e.code}`;
    }
    say(`  parseArgs strict ${label.padEnd(34)} ${out}`);
  };
  probe('--prompt 007', ['--prompt', '007']);
  probe('--prompt -x', ['--prompt', '-x']);
  probe('--prompt=-x', ['--prompt=-x']);
  probe('--name a --name b (multiple)', ['--name', 'a', '--name', 'b']);
  probe('--prompt a --prompt b', ['--prompt', 'a', '--prompt', 'b']);
  probe('--nmae a (unknown)', ['--nmae', 'a']);
  probe('--json=1', ['--json=1']);
  probe('--watch --json (optional value)', ['--watch', '--json']);
  probe('--watch (last)', ['--watch']);
  probe('--prompt x -- -m y', ['--prompt', 'x', '--', '-m', 'y']);
  const m = pkgs.require('mri');
  say(`  mri undeclared  --prompt 007            ${JSON.stringify(m(['--prompt', '007']))}`);
  say(`  mri declared    --prompt -x             ${JSON.stringify(m(['--prompt', '-x'], { string: ['prompt'] }))}`);
  say(`  mri declared    --json=1                ${JSON.stringify(m(['--json=1'], { boolean: ['json'] }))}`);

  // First use inside a bundle, as a verb pays it: the same entry bundled by esbuild (the project's own
  // devDependency), run in fresh processes, timing require + one parse of what our pre-pass hands over.
  const { build } = await import('esbuild');
  const work = mkdtempSync(join(tmpdir(), 'deps-mri-'));
  try {
    writeFileSync(
      join(work, 'entry.cjs'),
      `const { performance } = require('node:perf_hooks');
const argv = ['--name=a/b', '--prompt=-x y', '--cli=shell', '--json'];
const t0 = performance.now();
let r;
if (process.argv[2] === 'mri') r = require('mri')(argv, { string: ['name', 'prompt', 'cli'], boolean: ['json'] });
else if (process.argv[2] === 'parseArgs') r = require('node:util').parseArgs({ args: argv, strict: true, options: { name: { type: 'string', multiple: true }, prompt: { type: 'string', multiple: true }, cli: { type: 'string', multiple: true }, json: { type: 'boolean' } } }).values;
else { r = {}; for (const a of argv) { const eq = a.indexOf('='); if (eq === -1) r[a.slice(2)] = true; else (r[a.slice(2, eq)] ??= []).push(a.slice(eq + 1)); } }
const us = (performance.now() - t0) * 1000; // before process.stdout, a lazy getter that costs ~1.5 ms
process.stdout.write(String(us));
`,
    );
    await build({
      entryPoints: [join(work, 'entry.cjs')],
      outfile: join(work, 'bundle.cjs'),
      bundle: true,
      platform: 'node',
      target: 'node22',
      format: 'cjs',
      nodePaths: [join(PREFIX, 'node_modules')],
      logLevel: 'warning',
    });
    const t = { mri: [], parseArgs: [], hand: [] };
    for (let i = 0; i < 100; i++) for (const k in t) t[k].push(Number(execFileSync(NODE, [join(work, 'bundle.cjs'), k], { encoding: 'utf8' })));
    say(
      `  first use in a fresh process (bundled, 100 interleaved runs, median): mri ${median(t.mri).toFixed(0)} µs, parseArgs ${median(t.parseArgs).toFixed(0)} µs, hand-written split ${median(t.hand).toFixed(0)} µs`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------- write-file-atomic
async function wfa(pkgs) {
  say(pkgFacts(pkgs.dir, 'write-file-atomic'));
  const writeFileAtomic = pkgs.require('write-file-atomic');
  const { replaceFileDurably } = await import(join(DIST, 'registry', 'durable.js'));
  const writers = {
    'write-file-atomic.sync': (p, d) => writeFileAtomic.sync(p, d),
    'write-file-atomic (async)': (p, d) => writeFileAtomic(p, d),
    'lib/registry/durable.ts': (p, d) => replaceFileDurably(p, d),
  };
  if (process.getuid?.() !== 0) say('  nearly full disk: skipped (mounting a tmpfs needs root)');
  else {
    const mnt = mkdtempSync(join(tmpdir(), 'deps-full-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mnt]);
    try {
      for (const [label, write] of Object.entries(writers)) {
        for (const f of readdirSync(mnt)) rmSync(join(mnt, f), { force: true });
        const target = join(mnt, 'record.json');
        writeFileSync(target, '{"old":true}\n');
        const st = statfsSync(mnt);
        writeFileSync(join(mnt, 'filler'), Buffer.alloc(st.bavail * st.bsize - 16384, 1)); // 16 KiB left
        const data = Buffer.alloc(40000, 0x61);
        let outcome = 'returned';
        try {
          await write(target, data);
        } catch (e) {
          outcome = `threw ${e.code}`;
        }
        say(`  64 KiB tmpfs, 16 KiB free, 40 000-byte record: ${label.padEnd(26)} ${outcome}; record.json is now ${statSync(target).size} bytes`);
      }
    } finally {
      execFileSync('umount', [mnt]);
      rmSync(mnt, { recursive: true, force: true });
    }
  }
  if (spawnSync('strace', ['-V']).status !== 0) return say('  fsync trace: skipped (no strace)');
  const dir = mkdtempSync(join(tmpdir(), 'deps-fsync-'));
  try {
    for (const label of Object.keys(writers)) {
      const script = `const w = require(${JSON.stringify(join(PREFIX, 'node_modules', 'write-file-atomic'))}); const { replaceFileDurably } = require(${JSON.stringify(join(DIST, 'registry', 'durable.js'))});
const t = ${JSON.stringify(join(dir, 'r.json'))}, l = ${JSON.stringify(label)};
(async () => { if (l.endsWith('.sync')) w.sync(t, '{}'); else if (l.includes('async')) await w(t, '{}'); else replaceFileDurably(t, '{}'); })();`;
      const r = spawnSync('strace', ['-f', '-qq', '-e', 'trace=openat,fsync,fdatasync,rename,renameat2', NODE, '-e', script], { encoding: 'utf8' });
      const fds = new Map();
      const steps = [];
      for (const line of r.stderr.split('\n')) {
        const open = /openat\(AT_FDCWD, "([^"]+)", ([^,)]+).*= (\d+)$/.exec(line);
        if (open?.[1].startsWith(dir)) fds.set(open[3], open[2].includes('O_DIRECTORY') ? 'dir' : 'file');
        const sync = /(fsync|fdatasync)\((\d+)\)/.exec(line);
        if (sync && fds.has(sync[2])) steps.push(`${sync[1]}(${fds.get(sync[2])})`);
        if (/rename(at2)?\(/.test(line) && line.includes(dir)) steps.push('rename');
      }
      say(`  syscalls (strace): ${label.padEnd(26)} ${steps.join(' → ')}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------------------------------ tree-kill
async function treeKill(pkgs) {
  say(pkgFacts(pkgs.dir, 'tree-kill'));
  const kill = pkgs.require('tree-kill');
  const { snapshotRun } = await import(join(DIST, 'proc', 'tree.js'));
  const { signalAll } = await import(join(DIST, 'proc', 'signal.js'));
  const { identityOf, isAlive } = await import(join(DIST, 'proc', 'identity.js'));
  const work = mkdtempSync(join(tmpdir(), 'deps-tk-'));
  // A `ps` first on PATH that logs each call, then runs the real one: how many runs tree-kill makes.
  const realPs = execFileSync('sh', ['-c', 'command -v ps'], { encoding: 'utf8' }).trim();
  mkdirSync(join(work, 'bin'));
  writeFileSync(join(work, 'bin', 'ps'), `#!/bin/sh\necho "$*" >> ${work}/ps.log\nexec ${realPs} "$@"\n`, { mode: 0o755 });
  // 4 subshells with 2 sleeps each under one sh, plus one sleep that leaves the tree: setsid, and its
  // parent exits at once, so it is re-parented (to init or a subreaper). All carry the marker variable.
  const SCRIPT = 'for i in 1 2 3 4; do (sleep 1000 & sleep 1000; :) & done; setsid sh -c "sleep 1000 & echo \\$! > $ESC"; wait';
  const roots = [];
  const start = async (mark) => {
    const esc = join(work, `esc-${mark}`);
    const child = spawn('sh', ['-c', SCRIPT], { env: { ...process.env, ESC: esc, DEPS_BENCH_MARK: mark }, stdio: 'ignore', detached: true });
    for (let i = 0; i < 500; i++) {
      await sleep(10);
      const pid = existsSync(esc) ? Number(readFileSync(esc, 'utf8')) : 0;
      const escaped = pid ? identityOf(pid) : null;
      if (escaped) {
        await sleep(150); // let the subshells fork their sleeps
        const run = { root: identityOf(child.pid), pgid: child.pid, escaped, mark: `DEPS_BENCH_MARK=${mark}` };
        roots.push(run);
        return run;
      }
    }
    throw new Error('the test tree did not start');
  };
  const finish = (run) => {
    try {
      process.kill(-run.pgid, 'SIGKILL');
    } catch {}
    if (isAlive(run.escaped)) process.kill(run.escaped.pid, 'SIGKILL');
  };
  try {
    const t = { 'tree-kill': [], ours: [] };
    const escapedSurvived = { 'tree-kill': 0, ours: 0 };
    let size = 0;
    const RUNS = 15;
    for (let i = 0; i < RUNS; i++) {
      for (const k of Object.keys(t)) {
        const run = await start(`${process.pid}-${k}-${i}`);
        size = snapshotRun([run.root], run.mark).length;
        const t0 = performance.now();
        if (k === 'tree-kill') await new Promise((res, rej) => kill(run.root.pid, 'SIGKILL', (e) => (e ? rej(e) : res())));
        else signalAll(snapshotRun([run.root], run.mark), 'SIGKILL', false);
        t[k].push(performance.now() - t0);
        await sleep(100);
        if (isAlive(run.escaped)) escapedSurvived[k]++;
        finish(run);
      }
    }
    say(`  a run of ${size} processes (one of them escaped), ${RUNS} interleaved runs, SIGKILL:`);
    say(`    tree-kill: median ${ms(median(t['tree-kill']))}, escaped process survived ${escapedSurvived['tree-kill']}/${RUNS}`);
    say(
      `    ours (snapshotRun + signalAll): median ${ms(median(t.ours))}, escaped process survived ${escapedSurvived.ours}/${RUNS}; ratio ${(median(t['tree-kill']) / median(t.ours)).toFixed(1)}x`,
    );
    const run = await start(`${process.pid}-count`);
    const n = snapshotRun([run.root], run.mark).length - 1;
    await new Promise((res) => {
      const env = { ...process.env, PATH: `${join(work, 'bin')}:${process.env.PATH}` };
      const child = spawn(NODE, ['-e', `require(${JSON.stringify(join(PREFIX, 'node_modules', 'tree-kill'))})(${run.root.pid}, 'SIGKILL', () => {})`], {
        env,
        stdio: 'inherit',
      });
      child.on('exit', res);
    });
    const calls = readFileSync(join(work, 'ps.log'), 'utf8').trim().split('\n');
    say(`  tree-kill on a tree of ${n} processes ran ps ${calls.length} times, e.g. \`ps ${calls[0]}\``);
    finish(run);
  } finally {
    for (const run of roots) finish(run);
    rmSync(work, { recursive: true, force: true });
  }
}

// -------------------------------------------------------------------------------------------- ps-list
async function psList(pkgs) {
  say(pkgFacts(pkgs.dir, 'ps-list'));
  const list = (await import(join(pkgs.dir('ps-list'), 'index.js'))).default;
  const { allProcesses } = await import(join(DIST, 'proc', 'tree.js'));
  // A zombie: sh forks a child for `true &`, then becomes sleep, which never reaps it.
  const parent = spawn('sh', ['-c', 'true & exec sleep 30'], { stdio: 'ignore' });
  await sleep(500);
  let zombie = null;
  try {
    const kids = readFileSync(`/proc/${parent.pid}/task/${parent.pid}/children`, 'utf8').trim().split(' ').map(Number);
    const entry = (await list()).find((p) => kids.includes(p.pid));
    zombie = entry ? JSON.stringify(entry) : 'not listed';
  } finally {
    parent.kill('SIGKILL');
  }
  say(`  fields of one entry: ${Object.keys((await list())[0]).join(', ')}`);
  say(`  a zombie, as ps-list lists it: ${zombie}`);
  const run = promisify(execFile);
  const ARGS = ['-A', '-ww', '-o', 'pid=', '-o', 'ppid=', '-o', 'pgid=', '-o', 'stat=', '-o', 'lstart=', '-o', 'comm='];
  const variants = {
    'ps-list': async () => (await list()).length,
    '/proc (allProcesses)': async () => allProcesses().length,
    'one ps -A -o pid=,ppid=,pgid=,stat=,lstart=,comm=': async () =>
      (await run('ps', ARGS, { env: { ...process.env, LC_ALL: 'C', TZ: 'UTC' } })).stdout.split('\n').filter(Boolean).length,
  };
  const t = {};
  for (const k in variants) {
    t[k] = [];
    await variants[k]();
  }
  const ROUNDS = 40;
  for (let r = 0; r < ROUNDS; r++)
    for (const k in variants) {
      const t0 = performance.now();
      await variants[k]();
      t[k].push(performance.now() - t0);
    }
  const base = median(t['/proc (allProcesses)']);
  say(`  one listing of ${allProcesses().length} processes, ${ROUNDS} interleaved rounds, median (ratio to /proc):`);
  for (const k in t) say(`    ${k.padEnd(50)} ${ms(median(t[k])).padStart(9)}  ${(median(t[k]) / base).toFixed(1)}x`);
}

// --------------------------------------------------------------------------------------------- ndjson
async function ndjson(pkgs) {
  say(pkgFacts(pkgs.dir, 'ndjson'));
  const nd = pkgs.require('ndjson');
  const { LineFollower } = await import(join(DIST, 'lines.js'));
  const { createReadStream } = await import('node:fs');
  const work = mkdtempSync(join(tmpdir(), 'deps-nd-'));
  const viaNdjson = (file, strict) =>
    new Promise((resolve) => {
      const out = [];
      const s = createReadStream(file).pipe(nd.parse({ strict }));
      s.on('data', (o) => out.push(o));
      s.on('error', (e) => resolve({ out, error: e.message.slice(0, 40) }));
      s.on('end', () => resolve({ out }));
    });
  // What an adapter does with lib/base/lines.ts: complete lines while the file grows, the rest at the end.
  const viaOurs = (file) => {
    const out = [];
    let skipped = 0;
    const f = new LineFollower(file, (line) => {
      if (!line) return;
      try {
        out.push(JSON.parse(line));
      } catch {
        skipped++;
      }
    });
    f.poll();
    const whileRunning = out.length;
    f.flush();
    return { out, skipped, cut: f.cutLines, whileRunning };
  };
  try {
    const file = join(work, 'events.log');
    const cases = {
      'a line `null`': '{"a":1}\nnull\n{"a":2}\n',
      'an invalid line': '{"a":1}\n{oops\n{"a":2}\n',
      'a torn last line': '{"a":1}\n{"a":2}\n{"a":',
    };
    for (const [name, text] of Object.entries(cases)) {
      writeFileSync(file, text);
      say(`  ${name}: ${JSON.stringify(text)}`);
      for (const strict of [true, false]) say(`    ndjson strict=${strict}: ${JSON.stringify(await viaNdjson(file, strict))}`);
      say(`    LineFollower + JSON.parse: ${JSON.stringify(viaOurs(file))}`);
    }
    // A log still being written: the torn line is completed after the first read.
    writeFileSync(file, '{"a":1}\n{"a":');
    const seen = [];
    const f = new LineFollower(file, (line) => seen.push(JSON.parse(line)));
    f.poll();
    const before = seen.length;
    const early = await viaNdjson(file, false); // a stream read now ends here: it does not follow the file
    writeFileSync(file, '{"a":1}\n{"a":2}\n');
    f.poll();
    say(
      `  a growing log, torn line completed later: LineFollower ${before} line(s), then ${seen.length}; ndjson (read before the rest came) ${JSON.stringify(early)}, and never reads the rest`,
    );
    for (const mb of [1, 2, 5, 10]) {
      writeFileSync(file, `{"a":1}\n{"text":"${'x'.repeat(mb * 1024 * 1024)}"}\n{"a":2}\n`);
      const tn = [];
      const to = [];
      for (let i = 0; i < 7; i++) {
        let t0 = performance.now();
        const a = await viaNdjson(file, false);
        tn.push(performance.now() - t0);
        t0 = performance.now();
        const b = viaOurs(file);
        to.push(performance.now() - t0);
        if (a.out.length !== 3 || b.out.length !== 3) throw new Error('a reader lost a line');
      }
      say(
        `  one ${mb} MB line (7 runs, median): ndjson ${ms(median(tn))}, LineFollower + JSON.parse ${ms(median(to))}, ratio ${(median(tn) / median(to)).toFixed(0)}x`,
      );
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// ----------------------------------------------------------------------------------------------- main
const SECTIONS = { mri, wfa, 'tree-kill': treeKill, 'ps-list': psList, ndjson };
if (!existsSync(join(DIST, 'lines.js'))) throw new Error('run `make build` first: the comparisons use dist/lib');
const asked = process.argv.slice(2);
for (const a of asked) if (!(a in SECTIONS)) throw new Error(`unknown section ${a}; sections: ${Object.keys(SECTIONS).join(' ')}`);
const pkgs = install();
const load = execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).split(' ').slice(0, 3).join(' ');
say(`Node ${process.version}, ${(await import('node:os')).cpus().length} CPUs, load average ${load}`);
for (const name of asked.length ? asked : Object.keys(SECTIONS)) {
  say(`\n## ${name}`);
  await SECTIONS[name](pkgs);
}
