// Environment (and config files) for running each real agent CLI against a fake model server, in a
// temp HOME of the test's own, with no traffic off 127.0.0.1. See README.md beside this file for
// why each variable is there.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { skipUnlessCi } from '../support/machine.js';
import { ROOT } from '../support/paths.js';

export type Env = Record<string, string>;

/** What a test needs to launch one CLI against a fake: the environment, and argv to add (always empty
 * today: everything fits in env vars and config files; kept so callers do not have to change if a
 * future CLI version needs a flag). */
export interface CliSetup {
  env: Env;
  extraArgs: string[];
  /** Config files written, for debugging. */
  files: string[];
}

export interface SetupOptions {
  /** The temp HOME for this run (created if missing). Everything the CLI writes goes below it. */
  home: string;
  /** The fake server's url, `srv.url` (http://127.0.0.1:PORT, no /v1). */
  baseUrl: string;
  /** Model name to ask for (default "fake-model"; Claude's default is whatever it picks). */
  model?: string;
  /** Environment to start from (default: process.env minus agent/provider variables, see baseEnv()). */
  base?: Env;
  /** Which installed version of the CLI runs (default: its first in cliVersions()): its directory goes first on PATH. */
  version?: string;
}

/** The environment a setup starts from: `base` or baseEnv(home), with version `version` of `cli` first on PATH, and HOME. */
function startEnv(cli: CliName, opts: SetupOptions): Env {
  return { ...withClisOnPath(opts.base ?? baseEnv(opts.home), cliBinDir(cli, opts.version)), HOME: opts.home };
}

/** The CLI's directory `<home>/<name>`, made (HOME with it) if missing. */
function homeDir(opts: SetupOptions, name: string): string {
  const dir = path.join(opts.home, name);
  mkdirs(opts.home, dir);
  return dir;
}

/** Where test/clis/install.sh puts the pinned CLIs: test/.clis/bin/<cli> is each CLI's default version. */
export const CLIS_BIN = path.join(ROOT, 'test', '.clis', 'bin');

export type CliName = 'claude' | 'codex' | 'copilot' | 'gemini' | 'opencode' | 'qwen';

interface Pin {
  package: string;
  versions: string[];
}
const PINS: Record<CliName, Pin> = JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'clis', 'pins.json'), 'utf8'));

/**
 * The versions of `name` the e2e tests run: every version pinned in test/clis/pins.json (the default
 * first), or the one `SUBAGENT_TEST_CLI_VERSIONS` names (`claude=2.1.400,codex=0.170.0`: what
 * scripts/clis-latest.sh sets to run the suite against the latest releases).
 */
export function cliVersions(name: CliName): string[] {
  for (const pair of (process.env.SUBAGENT_TEST_CLI_VERSIONS ?? '').split(',')) {
    const [cli, version] = pair.split('=');
    if (cli === name && version) return [version];
  }
  return PINS[name].versions;
}

/** The directory holding version `version` of `name` (default: its first pin), test/.clis/<cli>-<version>/node_modules/.bin. */
export function cliBinDir(name: CliName, version: string = cliVersions(name)[0]!): string {
  return path.join(ROOT, 'test', '.clis', `${name}-${version}`, 'node_modules', '.bin');
}

/** Absolute path of a pinned CLI binary (default: its first pinned version). */
export function cliBin(name: CliName, version?: string): string {
  return path.join(cliBinDir(name, version), name);
}

/**
 * Whether an end-to-end test of `name` (at `version`, default its first) can run. Without the CLI the
 * test is skipped with the reason; under CI (CI set, as every CI service does) that is a failure
 * instead: there the e2e tests must run, never pass by skipping.
 */
export function requireCli(t: TestContext, name: CliName, version?: string): boolean {
  if (fs.existsSync(cliBin(name, version))) return true;
  skipUnlessCi(t, `${name} ${version ?? cliVersions(name)[0]} is not installed (${cliBin(name, version)}); run: bash test/clis/install.sh`);
  return false;
}

/** True when test/clis/install.sh has installed every CLI's default version. */
export function clisInstalled(): boolean {
  return (Object.keys(PINS) as CliName[]).every((n) => fs.existsSync(cliBin(n)));
}

/** `PATH` with `dir` first (default: test/.clis/bin, every CLI at its default version). */
export function pathWithClis(pathVar: string | undefined = process.env.PATH, dir: string = CLIS_BIN): string {
  const rest = (pathVar ?? '/usr/local/bin:/usr/bin:/bin').split(path.delimiter).filter((p) => p !== '' && p !== dir && p !== CLIS_BIN);
  return [dir, ...rest].join(path.delimiter);
}

/** Returns `env` with PATH starting with `dir` (default: test/.clis/bin). */
export function withClisOnPath(env: Env, dir?: string): Env {
  return { ...env, PATH: pathWithClis(env.PATH, dir) };
}

// Variables from the caller's environment that would point a CLI somewhere else (a real API key, a
// real config dir, a proxy, the coding client the tests run under…). Removed from the base env.
const DROP = [
  /^ANTHROPIC_/,
  /^CLAUDE_/,
  /^CLAUDECODE$/,
  /^OPENAI_/,
  /^CODEX_/,
  /^OPENCODE/,
  /^XDG_/,
  /^AZURE_OPENAI/,
  /^GEMINI_/,
  /^GOOGLE_/,
  /^OPENROUTER_/,
  /^HTTPS?_PROXY$/i,
  /^ALL_PROXY$/i,
  /^NO_PROXY$/i,
  /^npm_/i,
  /^NODE_OPTIONS$/,
  /^DISABLE_/,
  /^SUBAGENT_/,
  /^OPENCODE_PSA_/,
  /^COPILOT_/,
  /^(GH|GITHUB)_TOKEN$/,
  /^QWEN_/,
];

/** process.env without the variables that would leak the caller's accounts or config into a test run,
 * with HOME set and loopback exempted from any proxy. */
export function baseEnv(home: string, from: NodeJS.ProcessEnv = process.env): Env {
  const env: Env = {};
  for (const [k, v] of Object.entries(from)) {
    if (v === undefined || DROP.some((re) => re.test(k))) continue;
    env[k] = v;
  }
  env.HOME = home;
  env.NO_PROXY = '127.0.0.1,localhost';
  env.no_proxy = '127.0.0.1,localhost';
  return withClisOnPath(env);
}

/** A fresh temp dir (mkdtemp under os.tmpdir()). The caller removes it. */
export function makeTempHome(prefix = 'subagents-e2e-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

function mkdirs(...dirs: string[]): void {
  for (const d of dirs) fs.mkdirSync(d, { recursive: true });
}

// ---------------------------------------------------------------------------------------------------

/** Claude Code → fake Anthropic server. No config file, no extra argv. Config and transcripts go to
 * `<home>/.claude` (CLAUDE_CONFIG_DIR). */
export function claudeSetup(opts: SetupOptions): CliSetup {
  const configDir = homeDir(opts, '.claude');
  const env: Env = {
    ...startEnv('claude', opts),
    CLAUDE_CONFIG_DIR: configDir,
    ANTHROPIC_BASE_URL: opts.baseUrl,
    ANTHROPIC_API_KEY: 'sk-ant-fake-key-for-tests',
    // No update checks, telemetry, error reports, feedback surveys… (all off-loopback traffic).
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_BUG_COMMAND: '1',
    // A 5xx/429 from the fake ends the run at once (default: 10 retries with back-off).
    CLAUDE_CODE_MAX_RETRIES: '0',
  };
  if (opts.model) env.ANTHROPIC_MODEL = opts.model;
  return { env, extraArgs: [], files: [] };
}

// ---------------------------------------------------------------------------------------------------

/** The config.toml that points Codex at the fake Responses server (CODEX_HOME=<home>/.codex). */
export function codexConfigToml(baseUrl: string, model = 'fake-model'): string {
  return [
    `model = ${JSON.stringify(model)}`,
    'model_provider = "fake"',
    'check_for_update_on_startup = false',
    '',
    '[model_providers.fake]',
    'name = "Fake"',
    `base_url = ${JSON.stringify(baseUrl.replace(/\/+$/, '') + '/v1')}`,
    'env_key = "FAKE_API_KEY"',
    'wire_api = "responses"',
    // Fail fast on a 5xx or a broken stream instead of retrying 4 / 5 times with back-off.
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
    '[features]',
    'plugins = false',
    'remote_plugin = false',
    // Same as `--disable unbounded_connection_retries` on argv: a refused connection is an error, not
    // an endless "Reconnecting…" loop.
    'unbounded_connection_retries = false',
    '',
    '[analytics]',
    'enabled = false',
    '',
  ].join('\n');
}

/** Codex → fake Responses server. Everything is in `<home>/.codex/config.toml`; no extra argv. */
export function codexSetup(opts: SetupOptions): CliSetup {
  const codexHome = homeDir(opts, '.codex');
  const configFile = path.join(codexHome, 'config.toml');
  fs.writeFileSync(configFile, codexConfigToml(opts.baseUrl, opts.model));
  const env: Env = {
    ...startEnv('codex', opts),
    CODEX_HOME: codexHome,
    FAKE_API_KEY: 'sk-fake-key-for-tests',
  };
  return { env, extraArgs: [], files: [configFile] };
}

// ---------------------------------------------------------------------------------------------------

/** The opencode.json that points OpenCode at the fake chat completions server. */
export function opencodeConfig(baseUrl: string, model = 'fake-model'): Record<string, unknown> {
  return {
    $schema: 'https://opencode.ai/config.json',
    provider: {
      fake: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Fake',
        options: { baseURL: baseUrl.replace(/\/+$/, '') + '/v1', apiKey: 'sk-fake-key-for-tests' },
        models: { [model]: { name: 'Fake model', tool_call: true, limit: { context: 128000, output: 8192 } } },
      },
    },
    model: `fake/${model}`,
    small_model: `fake/${model}`,
    autoupdate: false,
    share: 'disabled',
  };
}

/** OpenCode → fake chat completions server. Config file `<home>/.config/opencode/opencode.json` (the
 * global config under XDG_CONFIG_HOME), data (SQLite) under `<home>/.local/share/opencode`. */
export function opencodeSetup(opts: SetupOptions): CliSetup {
  const xdg = {
    XDG_CONFIG_HOME: path.join(opts.home, '.config'),
    XDG_DATA_HOME: path.join(opts.home, '.local', 'share'),
    XDG_CACHE_HOME: path.join(opts.home, '.cache'),
    XDG_STATE_HOME: path.join(opts.home, '.local', 'state'),
  };
  mkdirs(opts.home, ...Object.values(xdg), path.join(xdg.XDG_CONFIG_HOME, 'opencode'));
  const configFile = path.join(xdg.XDG_CONFIG_HOME, 'opencode', 'opencode.json');
  fs.writeFileSync(configFile, JSON.stringify(opencodeConfig(opts.baseUrl, opts.model), null, 2) + '\n');
  const env: Env = {
    ...startEnv('opencode', opts),
    ...xdg,
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_SHARE: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    // Its background `npm install @opencode-ai/plugin` into the config dir fails at once instead of
    // reaching the registry.
    npm_config_offline: 'true',
  };
  return { env, extraArgs: [], files: [configFile] };
}

// ---------------------------------------------------------------------------------------------------

/** Where every Copilot test run unpacks the CLI's package (~235 MB, once per version) instead of per HOME. */
export const COPILOT_PKG_CACHE = path.join(os.tmpdir(), 'subagents-e2e-copilot-pkg-cache');

/** A long fake key: Copilot masks the key's value wherever it appears in its output (a short one masks JSON keys). */
export const COPILOT_FAKE_KEY = 'sk-fake-copilot-key-for-tests-5d2b8e0c1f7a4c39';

/**
 * GitHub Copilot CLI → fake chat completions server, in its offline bring-your-own-key mode: no GitHub
 * account, no traffic off loopback, no config file. Sessions go to `<home>/.copilot` (COPILOT_HOME).
 */
export function copilotSetup(opts: SetupOptions): CliSetup {
  const copilotHome = homeDir(opts, '.copilot');
  const env: Env = {
    ...startEnv('copilot', opts),
    COPILOT_HOME: copilotHome,
    COPILOT_OFFLINE: 'true',
    COPILOT_PROVIDER_BASE_URL: `${opts.baseUrl.replace(/\/+$/, '')}/v1`,
    COPILOT_PROVIDER_API_KEY: COPILOT_FAKE_KEY,
    COPILOT_MODEL: opts.model ?? 'fake-model',
    COPILOT_AUTO_UPDATE: 'false',
    // The model's prompt budget, which BYOK cannot look up: 128 000 tokens by default, too few for 300 KB of dense text.
    COPILOT_PROVIDER_MAX_PROMPT_TOKENS: '1000000',
    COPILOT_PKG_CACHE_HOME: COPILOT_PKG_CACHE,
  };
  return { env, extraArgs: [], files: [] };
}

// ---------------------------------------------------------------------------------------------------

/** Qwen Code's user settings for a test run: OpenAI-compatible auth, the shell and agent tools allowed
 * headless, no retries of its OpenAI client, no telemetry, usage statistics or memory side requests. */
export function qwenSettings(): Record<string, unknown> {
  return {
    security: { auth: { selectedType: 'openai' } },
    permissions: { allow: ['run_shell_command', 'agent'] },
    model: { generationConfig: { maxRetries: 0 } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false },
  };
}

/** Qwen Code → fake chat completions server. `<home>/.qwen/settings.json` (qwenSettings()) and the
 * OpenAI variables; sessions and sub-agent transcripts go to `<home>/.qwen/projects/`. */
export function qwenSetup(opts: SetupOptions): CliSetup {
  const qwenDir = homeDir(opts, '.qwen');
  const settingsFile = path.join(qwenDir, 'settings.json');
  fs.writeFileSync(settingsFile, JSON.stringify(qwenSettings(), null, 2) + '\n');
  const env: Env = {
    ...startEnv('qwen', opts),
    OPENAI_BASE_URL: opts.baseUrl.replace(/\/+$/, '') + '/v1',
    OPENAI_API_KEY: 'sk-fake-key-for-tests',
    OPENAI_MODEL: opts.model ?? 'fake-model',
  };
  return { env, extraArgs: [], files: [settingsFile] };
}

// ---------------------------------------------------------------------------------------------------

/** The settings.json that points the Gemini CLI at the fake Gemini API, offline: API-key auth, the model,
 * no update check, no usage statistics or telemetry, one attempt per request (default 10, with back-off). */
export function geminiSettings(model = 'fake-model'): Record<string, unknown> {
  return {
    security: { auth: { selectedType: 'gemini-api-key' } },
    model: { name: model },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, maxAttempts: 1 },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
  };
}

/** A policy that allows the shell tool, which a headless run does not offer otherwise (the Policy
 * Engine's way; `tools.allowed` in settings.json does the same with a deprecation warning). */
export const GEMINI_SHELL_POLICY = '[[rule]]\ntoolName = "run_shell_command"\ndecision = "allow"\npriority = 100\n';

/** Gemini CLI → fake Gemini API. Settings in `<home>/.gemini/settings.json` and the shell tool allowed
 * by `<home>/.gemini/policies/shell.toml` (sessions go below `<home>/.gemini/tmp/`); `GEMINI_API_KEY`,
 * `GOOGLE_GEMINI_BASE_URL`, the workspace trusted, and `TMPDIR` in the sandbox (the CLI writes its
 * shell tool's files and error reports there). */
export function geminiSetup(opts: SetupOptions): CliSetup {
  const dir = path.join(opts.home, '.gemini');
  const tmp = path.join(opts.home, 'tmp');
  mkdirs(opts.home, path.join(dir, 'policies'), tmp);
  const settingsFile = path.join(dir, 'settings.json');
  fs.writeFileSync(settingsFile, JSON.stringify(geminiSettings(opts.model), null, 2) + '\n');
  const policyFile = path.join(dir, 'policies', 'shell.toml');
  fs.writeFileSync(policyFile, GEMINI_SHELL_POLICY);
  const env: Env = {
    ...startEnv('gemini', opts),
    GEMINI_API_KEY: 'fake-gemini-key-for-tests',
    GOOGLE_GEMINI_BASE_URL: opts.baseUrl,
    // An untrusted folder makes a headless run exit 55.
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
    TMPDIR: tmp,
  };
  return { env, extraArgs: [], files: [settingsFile, policyFile] };
}

/** The setup function for a CLI by name. */
export function cliSetup(name: CliName, opts: SetupOptions): CliSetup {
  if (name === 'claude') return claudeSetup(opts);
  if (name === 'codex') return codexSetup(opts);
  if (name === 'copilot') return copilotSetup(opts);
  if (name === 'qwen') return qwenSetup(opts);
  if (name === 'gemini') return geminiSetup(opts);
  return opencodeSetup(opts);
}
