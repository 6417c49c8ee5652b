// Runs real pi (its SDK + faux provider) with Spillway's pi extension loaded
// the way a user gets it: from this package's `"pi": {"extensions"}` entry.
// Needs Node >= 22.19 (pi's floor), so the vitest test runs it as a child
// process: `node22 pi-driver.mjs <scenario> <tmpDir> <repoRoot>`. Prints one
// JSON report as the last stdout line.
import * as fs from 'node:fs';
import * as path from 'node:path';

const [scenario, tmp, repoRoot] = process.argv.slice(2);
if (!scenario || !tmp || !repoRoot) {
  console.error('usage: pi-driver.mjs <eager|delta|null-token|parallel|commands|tokens> <tmpDir> <repoRoot>');
  process.exit(2);
}
// pi is installed apart from the repo's dependencies (scripts/ensure-pi.mjs): resolve it there.
function resolveEsm(name) {
  const pkgDir = path.join(repoRoot, '.cache', 'pi', 'node_modules', ...name.split('/'));
  const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
  const entry = pkg.exports?.['.']?.import ?? pkg.exports?.['.']?.default ?? pkg.main;
  return path.join(pkgDir, entry);
}
const piAi = await import(resolveEsm('@earendil-works/pi-ai'));
const pi = await import(resolveEsm('@earendil-works/pi-coding-agent'));
const { Type } = await import(resolveEsm('typebox'));
const { resolveSpill } = await import(path.join(repoRoot, 'dist', 'pi-extension.mjs'));
const { fauxProvider, fauxAssistantMessage, fauxToolCall } = piAi;
const { createAgentSession, SessionManager, SettingsManager, DefaultResourceLoader, ModelRuntime } = pi;

const cwd = path.join(tmp, 'work');
const agentDir = path.join(tmp, 'agent');
const sessionDir = path.join(tmp, 'sessions');
fs.mkdirSync(cwd, { recursive: true });

/** Deterministic big text: numbered lines, one failure line near the end. */
function bigText(n, tag) {
  const lines = [];
  let size = 0;
  for (let i = 1; size < n; i++) {
    const line = `${tag} line ${i} of the big tool output`;
    lines.push(line);
    size += line.length + 1;
  }
  lines.splice(lines.length - 3, 0, `FATAL: ${tag} exploded near the end`);
  return lines.join('\n');
}

const report = { scenario, requests: [], sessions: [], resolved: [], errors: [] };

function toolResultTexts(context) {
  return context.messages
    .filter((m) => m.role === 'toolResult')
    .map((m) => ({ toolCallId: m.toolCallId, toolName: m.toolName, text: m.content.map((c) => c.text ?? '').join('') }));
}

/** A faux step that records what the model was sent, then answers. */
const seeing = (answer) => (context) => {
  report.requests.push(toolResultTexts(context));
  return answer;
};

/**
 * A pi-condense-style extension, as the seed describes it: a turn's big results are written to
 * `<sessionId>-blobs/` and, at the end of the next turn, indexed (`context-prune-index`, with short refs),
 * summarized (`context-prune-summary` message) and counted (`flush-metrics`, outcome "summarized"), every
 * other flush with its summary message left out; from then on each request carries a stub in their place
 * (pruned in `context`, one request at a time: the session keeps the results). `context_tree_query` gives a
 * result back by its short ref.
 */
function condenseExtension(api) {
  const pending = [];
  const pruned = new Map(); // toolCallId -> short ref
  let flushes = 0;
  let dir = '';
  api.registerTool({
    name: 'context_tree_query',
    label: 'context_tree_query',
    description: 'fetch a pruned tool result back by its short ref',
    parameters: Type.Object({ ids: Type.Array(Type.String()) }),
    async execute(_id, p) {
      const ids = [...pruned].filter(([, ref]) => p.ids.includes(ref)).map(([id]) => id);
      return { content: [{ type: 'text', text: ids.map((id) => fs.readFileSync(path.join(dir, `${id.replace(/[^A-Za-z0-9_-]/g, '_')}.txt`), 'utf8').slice(0, 40_000)).join('\n') }], details: {} };
    },
  });
  api.on('turn_end', (event, ctx) => {
    const ready = pending.splice(0);
    for (const r of event.toolResults) {
      const text = r.content.map((c) => c.text ?? '').join('');
      if (r.toolName === 'big' && text.length > 20_000) pending.push({ toolCallId: r.toolCallId, toolName: r.toolName, text });
    }
    if (ready.length === 0) return undefined;
    dir = path.join(ctx.sessionManager.getSessionDir(), `${ctx.sessionManager.getSessionId()}-blobs`);
    fs.mkdirSync(dir, { recursive: true });
    const records = ready.map((r) => {
      const shortId = `t${pruned.size + 1}`;
      pruned.set(r.toolCallId, shortId);
      const spillPath = path.join(dir, `${r.toolCallId.replace(/[^A-Za-z0-9_-]/g, '_')}.txt`);
      fs.writeFileSync(spillPath, r.text);
      return { toolCallId: r.toolCallId, toolName: r.toolName, args: {}, spillPath, spillBytes: r.text.length, resultPreview: r.text.slice(0, 200), shortId };
    });
    const refs = records.map((r) => ({ shortId: r.shortId, toolCallId: r.toolCallId }));
    const summary = { type: 'custom_message', customType: 'context-prune-summary', content: `<context-prune-summary>${records.map((r) => `- ${r.toolName}: big output [${r.shortId}]`).join('\n')}</context-prune-summary>`, display: false, details: { toolCallRefs: refs } };
    const withSummary = flushes++ % 2 === 0;
    report.condense = report.condense ?? [];
    report.condense.push({ ids: records.map((r) => r.toolCallId), withSummary });
    return {
      entries: [
        ...event.entries,
        { type: 'custom', customType: 'context-prune-index', data: { toolCalls: records } },
        ...(withSummary ? [summary] : []),
        { type: 'custom', customType: 'flush-metrics', data: { outcome: 'summarized', calls: records.length } },
      ],
    };
  });
  api.on('context', (event) => ({
    messages: event.messages.map((m) => (m.role === 'toolResult' && pruned.has(m.toolCallId) ? { ...m, content: [{ type: 'text', text: `[Summarized ${m.toolName} ref ${pruned.get(m.toolCallId)}]` }] } : m)),
  }));
}

async function runSession({ settings, sessionManager, steps, contextWindow = 50_000, zeroUsageTurns = new Set(), compactBefore = -1, extraExtensions = [], extraTools = [], compactSummaries = 1 }) {
  const faux = fauxProvider({ models: [{ id: 'faux-1', contextWindow }] });
  const modelRuntime = await ModelRuntime.create({ authPath: path.join(agentDir, 'auth.json'), modelsPath: null, refreshOnCreate: false });
  modelRuntime.registerNativeProvider(faux.provider);
  const settingsManager = SettingsManager.inMemory({ ...settings, compaction: { enabled: false, keepRecentTokens: 100 } });
  let assistantCount = 0;
  const testExtension = (api) => {
    api.registerTool({
      name: 'big',
      label: 'big',
      description: 'returns a large text',
      parameters: Type.Object({ n: Type.Number(), tag: Type.String() }),
      async execute(_id, p) {
        return { content: [{ type: 'text', text: bigText(p.n, p.tag) }], details: { generated: p.n } };
      },
    });
    api.on('session_start', (_e, ctx) => {
      for (const entry of ctx.sessionManager.getBranch()) {
        if (entry.type !== 'custom' || entry.customType !== 'spillway-spill') continue;
        const r = resolveSpill(ctx, entry.data.toolCallId);
        report.resolved.push({ toolCallId: entry.data.toolCallId, spillPath: r?.spillPath, exists: !!r && fs.existsSync(r.spillPath) });
      }
    });
    // Simulates a provider that reported no usage for this response: with a
    // compaction before it, pi's getContextUsage() then says tokens: null.
    api.on('message_end', (e) => {
      if (e.message.role !== 'assistant') return;
      const n = assistantCount++;
      if (!zeroUsageTurns.has(n)) return;
      const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
      return { message: { ...e.message, usage: zero } };
    });
    api.on('turn_end', (_e, ctx) => {
      report.usage = report.usage ?? [];
      report.usage.push(ctx.getContextUsage()?.tokens ?? null);
    });
  };
  const resourceLoader = new DefaultResourceLoader({
    cwd,
    agentDir,
    settingsManager,
    // The package itself, as pi finds it after `pi install`: package.json "pi.extensions"
    // (left out to measure pi alone).
    additionalExtensionPaths: process.env.PI_DRIVER_WITHOUT_SPILLWAY === '1' ? [] : [repoRoot],
    extensionFactories: [testExtension, ...extraExtensions],
    noSkills: true,
    noPromptTemplates: true,
    noThemes: true,
    noContextFiles: true,
  });
  await resourceLoader.reload();
  const loaded = resourceLoader.getExtensions();
  report.extensionErrors = loaded.errors.map((e) => String(e.error ?? e.message ?? e));
  report.extensionPaths = loaded.extensions.map((e) => e.path ?? e.resolvedPath ?? '?');
  const { session } = await createAgentSession({
    cwd, agentDir, model: faux.getModel(), modelRuntime, resourceLoader, sessionManager, settingsManager, tools: ['read', 'bash', 'big', ...extraTools],
  });
  await session.bindExtensions({});
  try {
    for (let i = 0; i < steps.length; i++) {
      if (i === compactBefore) {
        // One summary, and one more for the split turn's prefix when the cut falls inside a turn.
        faux.setResponses(Array.from({ length: compactSummaries }, () => fauxAssistantMessage('summary of the earlier work')));
        await session.compact();
      }
      faux.setResponses(steps[i]);
      await session.prompt(`step ${i}`);
    }
  } finally {
    session.dispose();
  }
  report.sessions.push({ file: sessionManager.getSessionFile(), dir: sessionManager.getSessionDir(), id: sessionManager.getSessionId() });
  return sessionManager.getSessionFile();
}

/**
 * With a bucket configured, the closing answer comes once the background uploader has emptied the queue, as a
 * slow last API call would: the session file's copy queued at the last spill is then already up, without it.
 */
const closing = (text) => async (context) => {
  report.requests.push(toolResultTexts(context));
  const queue = process.env.SPILLWAY_STORE && process.env.SPILLWAY_UPLOAD_QUEUE;
  for (let waited = 0; queue && waited < 30_000; waited += 50) {
    if (!fs.existsSync(queue) || !fs.readdirSync(queue).some((n) => n.endsWith('.pending.json'))) break;
    await new Promise((done) => setTimeout(done, 50));
  }
  return fauxAssistantMessage(text);
};

const call = (name, args, id) => fauxAssistantMessage(fauxToolCall(name, args, { id }), { stopReason: 'toolUse' });

try {
  if (scenario === 'eager') {
    const settings = { spillway: { spillThreshold: 20_000, spillPreviewBytes: 1_024 } };
    const file = await runSession({
      settings,
      sessionManager: SessionManager.create(cwd, sessionDir),
      steps: [
        [
          call('big', { n: 100_000, tag: 'alpha' }, 'call_big_1'),
          seeing(call('big', { n: 100_000, tag: 'alpha' }, 'call_big_2')),
          seeing(call('bash', { command: 'seq 1 200000; echo "FATAL: bash exploded"' }, 'call_bash_1')),
          // A failing build over pi's 50 KB limit: the failure line is in the middle, pi shows only the tail.
          seeing(call('bash', { command: 'seq 1 100000 | sed "s/$/ compiled ok/"; echo "error: undefined reference to main_loop"; seq 100001 150000 | sed "s/$/ compiled ok/"; echo "0 failed, retrying (attempt 2)"; exit 2' }, 'call_bash_fail')),
          // A failing command under the threshold: left exactly as pi returned it.
          seeing(call('bash', { command: 'echo "tiny failure"; exit 3' }, 'call_bash_small_fail')),
          // Over pi's 2,000-line cut but a few KB in all: pi's log is under the threshold, the result stays as pi showed it.
          seeing(call('bash', { command: 'yes "" | head -n 2100' }, 'call_bash_short_lines')),
          // Output that merely names a pi-like log outside pi's folder: no log of this call, left as it is.
          seeing(call('bash', { command: 'mkdir -p "$TMPDIR/elsewhere" && seq 1 100000 > "$TMPDIR/elsewhere/pi-bash-0123abcd.log" && echo "hit: [Showing lines 1-5 of 9. Full output: $TMPDIR/elsewhere/pi-bash-0123abcd.log]"' }, 'call_bash_echo_notice')),
          seeing(call('big', { n: 3_000, tag: 'small' }, 'call_small_1')),
          closing('done'),
        ],
      ],
    });
    // Reopen the same session file: the index resolves, the model still sees
    // stubs, and the same output again aliases the blob written before.
    await runSession({
      settings,
      sessionManager: SessionManager.open(file, sessionDir),
      steps: [[seeing(call('big', { n: 100_000, tag: 'alpha' }, 'call_big_3')), closing('done again')]],
    });
  } else if (scenario === 'parallel') {
    // One assistant message with two calls whose results are identical: pi runs
    // them in parallel, so both tool_result handlers are in flight at once.
    const twin = (id) => fauxToolCall('big', { n: 100_000, tag: 'twin' }, { id });
    await runSession({
      settings: { spillway: { spillThreshold: 20_000, spillPreviewBytes: 1_024 } },
      sessionManager: SessionManager.create(cwd, sessionDir),
      steps: [[fauxAssistantMessage([twin('call_twin_1'), twin('call_twin_2')], { stopReason: 'toolUse' }), seeing(fauxAssistantMessage('done'))]],
    });
  } else if (scenario === 'delta' || scenario === 'null-token') {
    const settings = { spillway: { spillThreshold: 1_000_000, budgetTurnDelta: 0.2, budgetFlushFloor: 1_000 } };
    const nullToken = scenario === 'null-token';
    const file = await runSession({
      settings,
      sessionManager: SessionManager.create(cwd, sessionDir),
      contextWindow: 50_000,
      // null-token: compaction before prompt 1; its first response reports no usage.
      compactBefore: nullToken ? 1 : -1,
      zeroUsageTurns: nullToken ? new Set([2]) : new Set(),
      steps: [
        [call('big', { n: 4_000, tag: 't0' }, 'call_t0'), seeing(fauxAssistantMessage('ok 0'))],
        nullToken
          ? [seeing(call('big', { n: 60_000, tag: 't1' }, 'call_t1')), seeing(call('big', { n: 4_000, tag: 't2' }, 'call_t2')), seeing(fauxAssistantMessage('ok 1'))]
          : [seeing(call('big', { n: 4_000, tag: 't1' }, 'call_t1')), seeing(call('big', { n: 60_000, tag: 't2' }, 'call_t2')), seeing(fauxAssistantMessage('ok 1'))],
      ],
    });
    if (!nullToken) {
      // Reopened: session_start resets the previous fraction, so the first
      // turn cannot fire however much it adds (the seed accepts this gap).
      await runSession({
        settings,
        sessionManager: SessionManager.open(file, sessionDir),
        contextWindow: 50_000,
        steps: [[seeing(call('big', { n: 60_000, tag: 't3' }, 'call_t3')), seeing(fauxAssistantMessage('ok 3'))]],
      });
    }
  } else if (scenario === 'commands') {
    // One bash call per command of PI_DRIVER_COMMANDS (a JSON list), default settings (benchmarks).
    const commands = JSON.parse(process.env.PI_DRIVER_COMMANDS ?? '[]');
    const steps = commands.map((command, i) => seeing(call('bash', { command }, `call_cmd_${i}`)));
    await runSession({ settings: {}, sessionManager: SessionManager.create(cwd, sessionDir), steps: [[...steps, seeing(fauxAssistantMessage('done'))]] });
  } else if (scenario === 'condense') {
    // Without Spillway (PI_DRIVER_WITHOUT_SPILLWAY=1): pi-condense's prunes, then a compaction, then a prune and a query.
    await runSession({
      settings: {},
      sessionManager: SessionManager.create(cwd, path.join(sessionDir, '--work--')),
      extraExtensions: [condenseExtension],
      extraTools: ['context_tree_query'],
      compactBefore: 1,
      compactSummaries: 2,
      steps: [
        [
          call('big', { n: 80_000, tag: 'alpha' }, 'call_big_a'),
          seeing(call('big', { n: 2_000, tag: 'small-1' }, 'call_small_1')),
          seeing(call('big', { n: 2_000, tag: 'small-2' }, 'call_small_2')),
          seeing(fauxAssistantMessage('done 0')),
        ],
        [
          seeing(call('big', { n: 60_000, tag: 'beta' }, 'call_big_b')),
          seeing(call('big', { n: 2_000, tag: 'small-3' }, 'call_small_3')),
          seeing(call('context_tree_query', { ids: ['t1'] }, 'call_query')),
          seeing(fauxAssistantMessage('done 1')),
        ],
      ],
    });
  } else if (scenario === 'tokens') {
    // As `commands`, in a session folder named as pi names them (`--<cwd>--`), where the catalog finds a session
    // that has no blobs folder of its own (its outputs are pi's logs).
    const commands = JSON.parse(process.env.PI_DRIVER_COMMANDS ?? '[]');
    const steps = commands.map((command, i) => seeing(call('bash', { command }, `call_cmd_${i}`)));
    const folder = path.join(sessionDir, '--work--');
    await runSession({ settings: {}, sessionManager: SessionManager.create(cwd, folder), steps: [[...steps, seeing(fauxAssistantMessage('done'))]] });
  } else {
    throw new Error(`unknown scenario ${scenario}`);
  }
} catch (err) {
  report.errors.push(String(err?.stack ?? err));
}
process.stdout.write('\n' + JSON.stringify(report) + '\n');
