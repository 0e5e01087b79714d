// npm's `prepare` script: the build that `npm pack` packs and `npm install -g <clone>` links — tsc, then
// the bundles (scripts/bundle.mjs) — from a clean dist/, so that nothing a build made for one Node (a
// code cache, an addon) or a stale file lies in it. `make build` is the developer's build; this is the
// one a user's install runs, on whatever Node runs npm.
//
// npm 11 runs `prepare` when it packs a directory (npm pack, npm install -g --install-links <dir>) and in
// the clone itself when `npm install -g <dir>` links it, but in the latter case installs none of the
// clone's dependencies: the build tools (typescript, esbuild) are missing there. Then this installs them
// first, with `npm ci` in the clone (the lock's exact versions; the registry is needed once).
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const say = (m) => process.stderr.write(`subagents prepare: ${m}\n`);

if (!existsSync(tsc) || !existsSync(join(root, 'node_modules', 'esbuild', 'package.json'))) {
  say(`installing the build tools into ${join(root, 'node_modules')} (npm ci)`);
  // npm hands its own settings to the script as npm_config_*. Those of the install that runs this one
  // would be wrong here (global and prefix would make this `npm ci` one in the global prefix; npm 11's
  // allow-scripts is an error in a project's install; omit=dev would leave the build tools out): only
  // where and how to fetch is passed on. The nested npm reads the same npmrc files (userconfig).
  const KEEP =
    /^npm_config_(userconfig|cache|registry|@.+:registry|\/\/.+|cafile|ca|cert|key|strict_ssl|proxy|https_proxy|noproxy|local_address|prefer_offline|prefer_online|offline|fetch_.+|maxsockets|loglevel|color|progress|unicode|update_notifier)$/i;
  const env = { ...process.env };
  for (const k of Object.keys(env)) {
    if (/^npm_config_/i.test(k) && !KEEP.test(k)) delete env[k];
  }
  const npm = process.env.npm_execpath;
  const [cmd, args] = npm && /\.[cm]?js$/.test(npm) ? [process.execPath, [npm]] : ['npm', []];
  // --ignore-scripts: no `prepare` again (this is it), and esbuild's postinstall only checks its binary.
  execFileSync(cmd, [...args, 'ci', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: root, env, stdio: ['ignore', 2, 2] });
}

rmSync(join(root, 'dist'), { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: root, stdio: ['ignore', 2, 2] });
execFileSync(process.execPath, ['scripts/bundle.mjs'], { cwd: root, stdio: ['ignore', 2, 2] });
say(`built ${join(root, 'dist')} with Node ${process.version}`);
