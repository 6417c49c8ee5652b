// A pi transcript's `details.fullOutputPath` names pi's own output file; a
// path to anything else (another session's transcript, a relative path) is
// not listed as the session's blob, so cleaning the session cannot delete it.
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';

let dir: string;
let catalog: Catalog | undefined;

beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'catalog-pi-full-output-'));
});
afterEach(async () => {
  await catalog?.dispose();
  await fsp.rm(dir, { recursive: true, force: true });
});

const toolResult = (id: string, callId: string, fullOutputPath: string) =>
  JSON.stringify({ type: 'message', id, timestamp: '2026-03-02T09:00:00.000Z', message: { role: 'toolResult', toolCallId: callId, toolName: 'bash', content: [{ type: 'text', text: 'tail' }], details: { fullOutputPath } } });

describe('pi details.fullOutputPath', () => {
  it('lists only pi output files; a transcript naming another session file or a relative path gets neither listed nor deleted', async () => {
    const agentDir = path.join(dir, 'pi-agent');
    const tmp = path.join(dir, 'tmp');
    const sessions = path.join(agentDir, 'sessions', '--work--');
    await fsp.mkdir(sessions, { recursive: true });
    await fsp.mkdir(tmp);
    const victim = path.join(sessions, '2026-03-01T09-00-00-000Z_victim.jsonl');
    const victimText = JSON.stringify({ type: 'session', id: 'victim', cwd: '/work' }) + '\n';
    await fsp.writeFile(victim, victimText);
    const log = path.join(tmp, 'pi-bash-0123456789abcdef.log');
    await fsp.writeFile(log, 'full output\n');
    const transcript = path.join(sessions, '2026-03-02T09-00-00-000Z_abc.jsonl');
    await fsp.writeFile(
      transcript,
      [
        JSON.stringify({ type: 'session', id: 'abc', cwd: '/work' }),
        toolResult('e1', 'call_1', log),
        toolResult('e2', 'call_2', victim),
        toolResult('e3', 'call_3', 'pi-bash-fedcba9876543210.log'),
      ].join('\n') + '\n',
    );
    catalog = new Catalog({ env: { HOME: path.join(dir, 'home'), PI_CODING_AGENT_DIR: agentDir, TMPDIR: tmp }, sources: ['pi'] });
    await catalog.scan();
    const session = catalog.findSessions('abc')[0]!;
    expect(session.blobs.map((b) => b.path)).toEqual([log]);
    expect(session.skipped).toBe(2);

    const result = await catalog.executeClean(await catalog.planClean({ kind: 'session', sessionKey: session.key }));
    expect(result.deleted.map((d) => d.path)).toEqual([log]);
    expect(await fsp.readFile(victim, 'utf8')).toBe(victimText);
  });

  it('neither lists nor deletes a path with `..` after a symlinked folder (checked as written, reached elsewhere)', async () => {
    const agentDir = path.join(dir, 'pi-agent');
    const tmp = path.join(dir, 'tmp');
    const outside = path.join(dir, 'outside', 'sub');
    const sessions = path.join(agentDir, 'sessions', '--work--');
    await fsp.mkdir(sessions, { recursive: true });
    await fsp.mkdir(tmp);
    await fsp.mkdir(outside, { recursive: true });
    await fsp.symlink(outside, path.join(tmp, 'lnk'));
    const name = 'pi-bash-deadbeef00000000.log';
    // Another session's log in TMPDIR, where the path reads as if it led; the kernel reaches the outside file.
    await fsp.writeFile(path.join(tmp, name), 'decoy\n');
    await fsp.writeFile(path.join(dir, 'outside', name), 'outside the roots, another size\n');
    const transcript = path.join(sessions, '2026-03-02T09-00-00-000Z_abc.jsonl');
    await fsp.writeFile(
      transcript,
      [JSON.stringify({ type: 'session', id: 'abc', cwd: '/work' }), toolResult('e1', 'call_1', path.join(tmp, 'lnk') + '/../' + name)].join('\n') + '\n',
    );
    catalog = new Catalog({ env: { HOME: path.join(dir, 'home'), PI_CODING_AGENT_DIR: agentDir, TMPDIR: tmp }, sources: ['pi'] });
    await catalog.scan();
    expect(catalog.findSessions('abc')).toEqual([]); // its one named output refused: no blob, no session
    const all = catalog.sessions().flatMap((s) => s.blobs.map((b) => [s.id, b.path, b.bytes]));
    expect(all).toEqual([['pi-unattached-outputs', path.join(tmp, name), 6]]);
  });
});
