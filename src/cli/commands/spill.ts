// `spillway spill`: any shell-capable agent pipes a tool output through it and
// prints what the model should see. Exit 0 whenever a result was printed,
// including when the spill failed and the original text was printed.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createReadStream, rmSync } from 'node:fs';
import { LocalSpillStore, StageError, type StagedText } from '../../spill/local-store';
import { isMirrored, openSpillStore } from '../../spill/open-store';
import { createSpillPolicy, DEFAULT_DIGEST_BYTES, DEFAULT_MAX_INLINE_BYTES, type SpillPolicy, type StagedSpillRequest } from '../../spill/policy';
import { uploadQueuedInBackground } from '../../spill/remote/configured';
import { looksLikeText } from '../../spill/text';
import type { SpillRef } from '../../spill/types';
import { noInput, readAll, UsageError, type CliCommand, type CliIO } from '../io';

const HELP = `usage: spillway spill --session ID --tool NAME [options] < output

Reads a tool output on stdin and prints what the model should see: the text
unchanged (at or below the threshold, read-like tools, any failure), or a
digest that names the file holding the full text.

options:
  --session ID        session the spill belongs to (required)
  --tool NAME         tool that produced the output, e.g. Bash (required)
  --call-id ID        tool call id (default: a generated one)
  --args TEXT         the call's arguments, recorded in the manifest
  --turn N            the turn number, recorded in the manifest
  --root DIR          store root (default: $XDG_STATE_HOME/spillway/spills)
  --store s3://BUCKET/PREFIX
                      also keep a durable copy there (default: $SPILLWAY_STORE);
                      uploaded in the background, see \`spillway upload\`
  --max-inline N      spill above N bytes (default ${DEFAULT_MAX_INLINE_BYTES})
  --digest-bytes N    size of the digest (default ${DEFAULT_DIGEST_BYTES})
  --json-input        stdin is a JSON value (e.g. {"stdout":...}); its shape is kept
  --json              print {"spilled", "text", "ref"?, "reason"?} instead
`;

function integerFlag(name: string, raw: string | undefined, min: number): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min) {
    throw new UsageError(`--${name} must be ${min > 0 ? 'a positive' : 'a non-negative'} integer, got '${raw}'`);
  }
  return Number(raw);
}

export const spillCommand: CliCommand = async (argv, io) => {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        session: { type: 'string' },
        tool: { type: 'string' },
        'call-id': { type: 'string' },
        args: { type: 'string' },
        turn: { type: 'string' },
        root: { type: 'string' },
        store: { type: 'string' },
        'max-inline': { type: 'string' },
        'digest-bytes': { type: 'string' },
        'json-input': { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const v = parsed.values;
  if (v.help) {
    io.stdout(HELP);
    return 0;
  }
  if (!v.session) throw new UsageError('--session ID is required');
  if (!v.tool) throw new UsageError('--tool NAME is required');
  const maxInlineBytes = integerFlag('max-inline', v['max-inline'], 1);
  const digestBytes = integerFlag('digest-bytes', v['digest-bytes'], 1);
  const turn = integerFlag('turn', v.turn, 0);
  const callId = v['call-id'] || `cli-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;

  const warnings: string[] = [];
  const logger = { warn: (m: string) => warnings.push(m) };
  let store: LocalSpillStore;
  try {
    store = openSpillStore({ ...(v.root ? { root: v.root } : {}), logger, env: io.env, agent: 'spillway', ...(v.store !== undefined ? { store: v.store } : {}) });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const policy = createSpillPolicy({
    store,
    logger,
    ...(maxInlineBytes !== undefined ? { maxInlineBytes } : {}),
    ...(digestBytes !== undefined ? { digestBytes } : {}),
  });
  const request = {
    sessionId: v.session,
    toolName: v.tool,
    toolCallId: callId,
    ...(v.args !== undefined ? { args: v.args } : {}),
    ...(turn !== undefined ? { turn } : {}),
  };
  const json = v.json === true;
  try {
    return await spillAndPrint();
  } finally {
    // After the result is out: the copies (this run's, and any an earlier run left) go up in a process of their own.
    if (isMirrored(store)) await uploadQueuedInBackground(io.env, true);
  }

  async function spillAndPrint(): Promise<number> {
    const flushWarnings = () => warnings.forEach((w) => io.stderr(w + '\n'));

    // An output bigger than it is worth holding goes to a file as it arrives (a JSON input is parsed whole).
    // A pipe that fails midway ends the output there: what arrived is used, and said so.
    const stdin = endsOnError(io.stdin()[Symbol.asyncIterator](), (err) => io.stderr(`spillway spill: reading stdin failed (${err.message}); using what arrived\n`));
    const head = await readUpTo(stdin, Math.max(IN_MEMORY_BYTES, maxInlineBytes ?? DEFAULT_MAX_INLINE_BYTES));
    if (head.more && !v['json-input']) {
      await spillStaged(io, store, policy, request, json, continued(head.chunks, stdin), flushWarnings);
      return 0;
    }
    const bytes = Buffer.concat([...head.chunks, ...(head.more ? [await readAll(stdin)] : [])]);
    const text = decodeUtf8(bytes);
    if (text === undefined) {
      // A log with a stray byte that is not UTF-8 is still text: spilled from its exact bytes (the digest shows
      // such bytes as `?`). Anything else (an image, a binary dump) is non-text: printed back unchanged.
      if (!v['json-input'] && looksLikeText(bytes)) await spillStaged(io, store, policy, request, json, continued([bytes], noInput()), flushWarnings);
      else await printKept(io, json, bytes, 'non-text output (not UTF-8)');
      return 0;
    }
    let output: unknown = text;
    if (v['json-input']) {
      try {
        output = JSON.parse(text.replace(/^\uFEFF/, ''));
      } catch (err) {
        // The output is the agent's, whatever its shape: printed back unchanged, never lost.
        const reason = `--json-input: stdin is not JSON (${(err as Error).message})`;
        io.stderr(`spillway spill: ${reason}; printed unchanged\n`);
        await printKept(io, json, bytes, reason);
        return 0;
      }
    }

    const decision = await policy.apply({ ...request, output });
    flushWarnings();
    if (!decision.spilled) {
      await printKept(io, json, bytes, decision.reason);
      return 0;
    }
    // With --json-input the output is JSON whatever the value (a JSON string included).
    printSpilled(io, json, v['json-input'] ? JSON.stringify(decision.output) : (decision.output as string), decision);
    return 0;
  }
};

/** Outputs over this size (or over the threshold, when that is larger) are written to a file as they arrive, not held. */
const IN_MEMORY_BYTES = 16 << 20;

/**
 * A big output: staged to a private file as it arrives, then spilled from it
 * (its digest read from the blob), or printed back from it unchanged. When it
 * cannot be written down, what was taken and the rest of stdin are printed.
 */
async function spillStaged(
  io: CliIO,
  store: Pick<LocalSpillStore, 'stage' | 'discardStaged'>,
  policy: SpillPolicy,
  request: Omit<StagedSpillRequest, 'staged'>,
  json: boolean,
  stdin: AsyncIterator<Buffer>,
  flushWarnings: () => void,
): Promise<void> {
  let staged: StagedText;
  try {
    staged = await store.stage(stdin);
  } catch (err) {
    const reason = `could not write the output to a file (${(err as Error).message})`;
    io.stderr(`spillway spill: ${reason}; printed unchanged\n`);
    const taken = err instanceof StageError ? err : undefined;
    const forget = taken && removeOnExit(taken.tempPath);
    try {
      if (json) await printKept(io, json, Buffer.concat([...(taken ? [await readFile(taken.tempPath, taken.writtenBytes), taken.pending] : []), await readAll(stdin)]), reason);
      else {
        if (taken) {
          await pipeOut(io, fileChunks(taken.tempPath, taken.writtenBytes));
          io.stdout(taken.pending);
        }
        await pipeOut(io, { [Symbol.asyncIterator]: () => stdin });
      }
    } finally {
      forget?.();
      await taken?.release();
    }
    return;
  }
  const forget = removeOnExit(staged.path);
  try {
    const decision = await policy.applyStaged({ ...request, staged });
    flushWarnings();
    if (decision.spilled) printSpilled(io, json, decision.output, decision);
    else if (json && staged.bytes > JSON_TEXT_BYTES) await printKeptBase64(io, fileChunks(decision.from ?? staged.path, staged.bytes), decision.reason);
    else if (json) await printKept(io, json, await readFile(decision.from ?? staged.path, staged.bytes), decision.reason);
    else await pipeOut(io, fileChunks(decision.from ?? staged.path, staged.bytes));
  } finally {
    forget();
    await store.discardStaged(staged);
  }
}

/**
 * Remove `file` if the process exits before the returned function is called: a reader that goes away
 * ends the command at once (processIO), and a temp of the output must not stay behind.
 */
function removeOnExit(file: string): () => void {
  const remove = (): void => rmSync(file, { force: true });
  process.once('exit', remove);
  return () => process.off('exit', remove);
}

/** `chunks`, ending quietly (after `onError`) where reading them fails. */
function endsOnError(chunks: AsyncIterator<Buffer>, onError: (err: Error) => void): AsyncIterator<Buffer> {
  return {
    next: async () => {
      try {
        return await chunks.next();
      } catch (err) {
        onError(err as Error);
        return { done: true, value: undefined };
      }
    },
  };
}

/** The output as it came (text, or base64 with --json when it is not UTF-8 or too big for one JSON string). */
async function printKept(io: CliIO, json: boolean, bytes: Buffer, reason: string): Promise<void> {
  if (!json) {
    io.stdout(bytes);
    return;
  }
  const text = bytes.length > JSON_TEXT_BYTES ? undefined : decodeUtf8(bytes);
  if (text === undefined) await printKeptBase64(io, slices(bytes, 3 << 20), reason);
  else io.stdout(JSON.stringify({ spilled: false, text, reason }) + '\n');
}

/**
 * Over this, a kept output printed as JSON is base64, streamed: no JavaScript string holds 512 MiB, and
 * JSON escapes a control character in six (`\u0001`).
 */
const JSON_TEXT_BYTES = 64 << 20;

function* slices(bytes: Buffer, size: number): Generator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

/** `{"spilled":false,"text":<base64>,"encoding":"base64","reason"}`, written as `chunks` arrive. */
async function printKeptBase64(io: CliIO, chunks: AsyncIterable<Buffer> | Iterable<Buffer>, reason: string): Promise<void> {
  io.stdout('{"spilled":false,"text":"');
  let carry = Buffer.alloc(0);
  for await (const chunk of chunks) {
    const all = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    const whole = all.length - (all.length % 3); // base64 of whole 3-byte groups joins up with no padding
    io.stdout(all.toString('base64', 0, whole));
    carry = Buffer.from(all.subarray(whole));
    await io.caughtUp?.();
  }
  io.stdout(`${carry.toString('base64')}","encoding":"base64","reason":${JSON.stringify(reason)}}\n`);
}

function printSpilled(io: CliIO, json: boolean, text: string, decision: { ref: SpillRef; aliased: boolean }): void {
  io.stdout(json ? JSON.stringify({ spilled: true, text, ref: decision.ref, aliased: decision.aliased }) + '\n' : text);
}

/** The first pieces of `chunks`, up to a little over `limit` bytes; `more` when it did not end there. */
async function readUpTo(chunks: AsyncIterator<Buffer>, limit: number): Promise<{ chunks: Buffer[]; more: boolean }> {
  const taken: Buffer[] = [];
  let bytes = 0;
  while (bytes <= limit) {
    const next = await chunks.next();
    if (next.done) return { chunks: taken, more: false };
    taken.push(next.value);
    bytes += next.value.length;
  }
  return { chunks: taken, more: true };
}

/** `head` and then what `rest` yields. */
async function* continued(head: Buffer[], rest: AsyncIterator<Buffer>): AsyncGenerator<Buffer> {
  yield* head;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
}

function fileChunks(file: string, bytes: number): AsyncIterable<Buffer> {
  return bytes === 0 ? noInput() : createReadStream(file, { start: 0, end: bytes - 1 });
}

async function readFile(file: string, bytes: number): Promise<Buffer> {
  return bytes === 0 ? Buffer.alloc(0) : readAll(fileChunks(file, bytes));
}

/** Print what `chunks` yields, waiting for a slow reader rather than queueing it all in memory. */
async function pipeOut(io: CliIO, chunks: AsyncIterable<Buffer>): Promise<void> {
  for await (const chunk of chunks) {
    io.stdout(chunk);
    await io.caughtUp?.();
  }
}

/** The text when `bytes` is valid UTF-8, else undefined. A byte order mark is kept: the text must print back byte for byte. */
function decodeUtf8(bytes: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
