// The opencode plugin's hooks (the entry opencode loads is opencode-plugin-main.ts).
// `shell.env` starts a capture of each bash tool call at the source (see
// opencode-capture-script.ts); `tool.execute.after` replaces a big output with
// Spillway's digest of the whole capture, exit code and path included; `event`
// records each model API call for the per-turn chart (opencode-calls.ts), a
// record that travels with the blobs when they are copied to a bucket.
//
// opencode skips a plugin that throws while loading, without a word: nothing
// here throws at load, and each hook catches its own errors, logs them to
// opencode's log (service "spillway") and leaves the call as opencode made it.
import { OpencodeCallRecorder, type OpencodeEvent } from './opencode-calls';
import { finishCapture, opencodeCaptureDefaults, privateFolder, queueCallsRecord, startCapture, type Capture, type OpencodeCaptureOptions } from './opencode-capture';

interface PluginContext {
  client?: { app?: { log?: (arg: { body: { service: string; level: string; message: string } }) => Promise<unknown> } };
}

interface Hooks {
  event: (input: { event: OpencodeEvent }) => Promise<void>;
  'tool.execute.before': (input: { tool: string; sessionID: string; callID: string }, output: { args: unknown }) => Promise<void>;
  'shell.env': (input: { cwd: string; sessionID?: string; callID?: string }, output: { env: Record<string, string> }) => Promise<void>;
  'tool.execute.after': (
    input: { tool: string; sessionID: string; callID: string; args: unknown },
    output: { title: string; output: string; metadata: unknown },
  ) => Promise<void>;
}

export function createSpillwayOpencodePlugin(options: Partial<OpencodeCaptureOptions> = {}) {
  return async (ctx: PluginContext): Promise<Hooks> => {
    const opts = { ...opencodeCaptureDefaults(), ...options };
    /** Bash tool calls announced and not yet finished: only these are captured (a user's `!` command has a call id too). */
    const bashCalls = new Set<string>();
    const captures = new Map<string, Capture>();
    const recorder = new OpencodeCallRecorder(
      opts.root,
      async (dir) => {
        await privateFolder(opts.root);
        await privateFolder(dir);
      },
      (sessionId, file) => queueCallsRecord(opts, sessionId, file),
    );
    const warn = (message: string): void => {
      void Promise.resolve()
        .then(() => ctx.client?.app?.log?.({ body: { service: 'spillway', level: 'warn', message } }))
        .catch(() => undefined);
    };
    return {
      async event({ event }) {
        try {
          await recorder.event(event);
        } catch (err) {
          warn(`API call not recorded: ${(err as Error).message}`);
        }
      },
      async 'tool.execute.before'(input) {
        if (input.tool === 'bash') bashCalls.add(input.callID);
      },
      async 'shell.env'(input, output) {
        if (!input.sessionID || !input.callID || !bashCalls.has(input.callID)) return;
        try {
          const started = await startCapture(opts, input.sessionID, input.callID, { ...process.env, ...output.env });
          captures.set(input.callID, started.capture);
          Object.assign(output.env, started.env);
        } catch (err) {
          warn(`no capture for ${input.callID}: ${(err as Error).message}`);
        }
      },
      async 'tool.execute.after'(input, output) {
        bashCalls.delete(input.callID);
        const capture = captures.get(input.callID);
        if (!capture) return;
        captures.delete(input.callID);
        try {
          const metadata = (output.metadata ?? {}) as { exit?: unknown };
          const args = (input.args ?? {}) as { command?: unknown };
          const digest = await finishCapture(opts, capture, {
            command: typeof args.command === 'string' ? args.command : '',
            exit: typeof metadata.exit === 'number' ? metadata.exit : null,
            shown: output.output,
          });
          if (digest !== undefined) output.output = digest;
        } catch (err) {
          warn(`${input.callID}: output left as opencode made it: ${(err as Error).message}`);
        }
      },
    };
  };
}

