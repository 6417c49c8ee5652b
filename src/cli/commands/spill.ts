// `spillway spill`: any shell-capable agent pipes a tool output through it and
// prints what the model should see. Exit 0 whenever a result was printed,
// including when the spill failed and the original text was printed.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { LocalSpillStore } from '../../spill/local-store';
import { createSpillPolicy, DEFAULT_DIGEST_BYTES, DEFAULT_MAX_INLINE_BYTES } from '../../spill/policy';
import { UsageError, type CliCommand } from '../io';

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

  const bytes = await io.readStdin();
  const stdin = decodeUtf8(bytes);
  // Bytes that are not UTF-8 (an image, a binary dump) are non-text: printed back unchanged.
  if (stdin === undefined) {
    const reason = 'non-text output (not UTF-8)';
    io.stdout(v.json ? JSON.stringify({ spilled: false, text: bytes.toString('base64'), encoding: 'base64', reason }) + '\n' : bytes);
    return 0;
  }
  let output: unknown = stdin;
  if (v['json-input']) {
    try {
      output = JSON.parse(stdin.replace(/^\uFEFF/, ''));
    } catch (err) {
      // The output is the agent's, whatever its shape: printed back unchanged, never lost.
      const reason = `--json-input: stdin is not JSON (${(err as Error).message})`;
      io.stderr(`spillway spill: ${reason}; printed unchanged\n`);
      io.stdout(v.json ? JSON.stringify({ spilled: false, text: stdin, reason }) + '\n' : bytes);
      return 0;
    }
  }

  const warnings: string[] = [];
  const logger = { warn: (m: string) => warnings.push(m) };
  const store = new LocalSpillStore({ ...(v.root ? { root: v.root } : {}), logger });
  const policy = createSpillPolicy({
    store,
    logger,
    ...(maxInlineBytes !== undefined ? { maxInlineBytes } : {}),
    ...(digestBytes !== undefined ? { digestBytes } : {}),
  });
  const decision = await policy.apply({
    sessionId: v.session,
    toolName: v.tool,
    toolCallId: callId,
    ...(v.args !== undefined ? { args: v.args } : {}),
    ...(turn !== undefined ? { turn } : {}),
    output,
  });
  for (const w of warnings) io.stderr(w + '\n');

  // With --json-input the output is JSON whatever the value (a JSON string included), and a value kept prints
  // as the original stdin, byte-identically; without it the output is the text.
  const text = v['json-input'] ? (decision.spilled ? JSON.stringify(decision.output) : stdin) : (decision.output as string);
  if (v.json) {
    io.stdout(
      JSON.stringify({
        spilled: decision.spilled,
        text,
        ...(decision.spilled ? { ref: decision.ref, aliased: decision.aliased } : { reason: decision.reason }),
      }) + '\n',
    );
  } else {
    io.stdout(text);
  }
  return 0;
};

/** The text when `bytes` is valid UTF-8, else undefined. A byte order mark is kept: the text must print back byte for byte. */
function decodeUtf8(bytes: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
