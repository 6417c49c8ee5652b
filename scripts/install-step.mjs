// One place for how the set-up scripts run an installer: quietly (its output
// goes to .cache/logs/<name>.log and is shown only when it fails), with a
// progress line every 30 s so a first run that takes minutes is visibly alive,
// and with an environment cleaned of the outer npm's variables.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function log(msg) {
  process.stderr.write(`[setup] ${msg}\n`);
}

/**
 * The environment for an installer that must see the Node it is given, not the
 * npm that runs us: under `npm run`, every `npm_config_*` (user agent, node
 * version, node-gyp settings...) and `npm_*` variable of the outer npm on the
 * machine's Node is inherited, and packages such as code-server read their
 * Node version from `npm_config_user_agent`. So all `npm_*` variables go, and
 * `nodeBin`'s folder comes first on PATH.
 */
export function installerEnv(nodeBin, extra = {}) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(key)) env[key] = value;
  }
  if (nodeBin) env.PATH = `${path.dirname(nodeBin)}${path.delimiter}${process.env.PATH ?? ''}`;
  return { ...env, ...extra };
}

/**
 * Runs `cmd args` with its output in .cache/logs/<name>.log; rejects with the log's tail on failure.
 * An installer that hangs (npm now and then does, with no error: one held a test run for over an
 * hour) is stopped after `limitSeconds` and, like one that fails, tried again, up to `attempts`
 * times in all. `freshDir`, the folder the step installs into, is removed before each new attempt
 * so that nothing half-written survives into it.
 */
export async function runStep(name, what, cmd, args, { env = process.env, cwd = repoRoot, limitSeconds = 300, attempts = 3, freshDir } = {}) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await runOnce(name, what, cmd, args, { env, cwd, limitSeconds });
    } catch (err) {
      if (attempt >= attempts) throw err;
      log(`${what}: ${err.reason}; trying again (attempt ${attempt + 1} of ${attempts})`);
      if (freshDir) fs.rmSync(freshDir, { recursive: true, force: true });
    }
  }
}

function runOnce(name, what, cmd, args, { env, cwd, limitSeconds }) {
  const logDir = path.join(repoRoot, '.cache', 'logs');
  fs.mkdirSync(logDir, { recursive: true });
  const logFile = path.join(logDir, `${name}.log`);
  const out = fs.openSync(logFile, 'w');
  const started = Date.now();
  const seconds = () => Math.round((Date.now() - started) / 1000);
  log(`${what}...`);
  const ticker = setInterval(() => log(`${what}: still working (${seconds()} s)`), 30_000);
  return new Promise((resolve, reject) => {
    // Its own process group, so that a hung installer is stopped with every child it started. Being
    // apart, it no longer gets the terminal's Ctrl+C: what stops us is passed on to it.
    const child = spawn(cmd, args, { env, cwd, stdio: ['ignore', out, out], detached: true });
    const passOn = (signal) => {
      signalGroup(child, signal);
      // Then as if we had not caught it: with no other handler, the default, which ends us.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    for (const signal of STOP_SIGNALS) process.once(signal, passOn);
    let overdue = false;
    let finished = false;
    let killer;
    const limit = setTimeout(() => {
      overdue = true;
      signalGroup(child, 'SIGTERM');
      killer = setTimeout(() => signalGroup(child, 'SIGKILL'), 10_000);
    }, limitSeconds * 1000);
    child.on('error', finish);
    child.on('exit', (code, signal) => {
      if (overdue) {
        signalGroup(child, 'SIGKILL'); // any child that outlived its parent's SIGTERM
        return finish(new Error(`no end after ${limitSeconds} s, stopped`));
      }
      finish(code === 0 ? undefined : new Error(`exited with ${signal ?? code}`));
    });
    function finish(err) {
      if (finished) return; // 'error' and 'exit' can both come
      finished = true;
      clearInterval(ticker);
      clearTimeout(limit);
      clearTimeout(killer);
      for (const signal of STOP_SIGNALS) process.off(signal, passOn);
      fs.closeSync(out);
      if (!err) {
        log(`${what}: done in ${seconds()} s`);
        return resolve();
      }
      const tail = fs.readFileSync(logFile, 'utf8').split('\n').slice(-40).join('\n');
      reject(Object.assign(new Error(`${what} failed (${err.message}); the last lines of ${path.relative(repoRoot, logFile)}:\n${tail}`), { reason: err.message }));
    }
  });
}

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function signalGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is already gone.
  }
}
