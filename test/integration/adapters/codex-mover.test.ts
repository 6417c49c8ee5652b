// The mover of Codex captures on a real file system: what the sandboxed
// command could plant in its temporary folder (a symlink in the capture's
// place, a symlinked or open folder) or at the final path is never followed
// or used, and a capture moved once is not moved again.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { finalCapturePath } from '../../../src/adapters/codex-final-path';
import { moveCodexCaptures, placeFile } from '../../../src/adapters/codex-mover';
import { DONE_SUFFIX, makeStagingFolder, sessionStagingFolders } from '../../../src/adapters/codex-staging';

const SESSION = '0190aaaa-bbbb-7ccc-8ddd-eeeeffff0001';
let tmp: string;
let codexHome: string;
let env: NodeJS.ProcessEnv;
let warnings: string[];

beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-codex-mover-'));
  codexHome = path.join(tmp, 'codex-home');
  env = { TMPDIR: path.join(tmp, 'staging') };
  fs.mkdirSync(env.TMPDIR!);
  warnings = [];
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

const move = (callId?: string) => moveCodexCaptures({ env, codexHome, sessionId: SESSION, ...(callId ? { callId } : {}), logger: { warn: (m) => warnings.push(m) } });

/** A finished capture, as the wrapper and the finish step leave it. */
async function staged(callId: string, content = `output of ${callId}\n`.repeat(500)): Promise<{ folder: string; file: string; final: string }> {
  const folder = await makeStagingFolder(env, SESSION, callId);
  const file = path.join(folder, `bash-${callId}.txt`);
  fs.writeFileSync(file, content, { mode: 0o600 });
  fs.writeFileSync(`${file}${DONE_SUFFIX}`, JSON.stringify({ command: `build ${callId}`, status: '2' }), { mode: 0o600 });
  return { folder, file, final: finalCapturePath(codexHome, SESSION, callId) };
}

function manifest(): Array<Record<string, unknown>> {
  const file = path.join(codexHome, 'spillway', SESSION, 'spillway.jsonl');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) : [];
}

describe('moveCodexCaptures', () => {
  it('moves a finished capture to its final path (0600 in a 0700 folder), records it, removes the folder; a second move does nothing', async () => {
    const { folder, file, final } = await staged('call_1');
    const content = fs.readFileSync(file, 'utf8');
    expect(await move('call_1')).toEqual([final]);
    expect(fs.readFileSync(final, 'utf8')).toBe(content);
    expect((fs.statSync(final).mode & 0o777).toString(8)).toBe('600');
    expect((fs.statSync(path.dirname(final)).mode & 0o777).toString(8)).toBe('700');
    expect(fs.existsSync(folder)).toBe(false);
    expect(manifest()).toMatchObject([{ toolCallId: 'call_1', tool: 'Bash' }]);
    expect(await move('call_1')).toEqual([]);
    expect(await move()).toEqual([]);
    expect(fs.readFileSync(final, 'utf8')).toBe(content);
    expect(manifest()).toHaveLength(1);
    expect(warnings).toEqual([]);
  });

  it('leaves a capture whose command still runs (no done marker), and an empty folder of another call that is young', async () => {
    const running = await makeStagingFolder(env, SESSION, 'call_run');
    fs.writeFileSync(path.join(running, 'bash-call_run.txt'), 'partial\n', { mode: 0o600 });
    const other = await makeStagingFolder(env, SESSION, 'call_other');
    const own = await makeStagingFolder(env, SESSION, 'call_own');
    expect(await move('call_own')).toEqual([]);
    expect(fs.existsSync(path.join(running, 'bash-call_run.txt'))).toBe(true);
    expect(fs.existsSync(other)).toBe(true);
    // The call's own empty folder (a small output, or a command refused) goes.
    expect(fs.existsSync(own)).toBe(false);
  });

  it('never follows a symlink planted at the final path', async () => {
    const { file, final } = await staged('call_2');
    const target = path.join(tmp, 'target.txt');
    fs.writeFileSync(target, 'keep\n');
    fs.mkdirSync(path.dirname(final), { recursive: true, mode: 0o700 });
    fs.symlinkSync(target, final);
    expect(await move('call_2')).toEqual([]);
    expect(fs.readFileSync(target, 'utf8')).toBe('keep\n');
    expect(fs.lstatSync(final).isSymbolicLink()).toBe(true);
    // Not lost: the capture stays where it was.
    expect(fs.existsSync(file)).toBe(true);
    expect(warnings.join('\n')).toMatch(/EEXIST/);
  });

  it('never moves a symlink planted in the capture\'s place', async () => {
    const { file, final } = await staged('call_3');
    const secret = path.join(tmp, 'secret.txt');
    fs.writeFileSync(secret, 'secret\n');
    fs.rmSync(file);
    fs.symlinkSync(secret, file);
    expect(await move('call_3')).toEqual([]);
    expect(fs.existsSync(final)).toBe(false);
    expect(fs.lstatSync(file).isSymbolicLink()).toBe(true);
    expect(warnings.join('\n')).toMatch(/ELOOP|not a regular file/);
  });

  it('refuses a capture folder that is a symlink', async () => {
    const real = await staged('call_4');
    const link = path.join(env.TMPDIR!, `spillway-codex-${SESSION}--call_5--abcdef`);
    fs.symlinkSync(real.folder, link);
    fs.renameSync(path.join(real.folder, 'bash-call_4.txt'), path.join(real.folder, 'bash-call_5.txt'));
    fs.renameSync(path.join(real.folder, `bash-call_4.txt${DONE_SUFFIX}`), path.join(real.folder, `bash-call_5.txt${DONE_SUFFIX}`));
    // The real folder is named for call_4 and holds no call_4 capture now; the link must not be used for call_5.
    expect(await move()).toEqual([]);
    expect(fs.existsSync(finalCapturePath(codexHome, SESSION, 'call_5'))).toBe(false);
    expect(fs.existsSync(path.join(real.folder, 'bash-call_5.txt'))).toBe(true);
    expect(warnings.join('\n')).toContain('a symlink');
  });

  it('refuses a capture folder open to others (0755)', async () => {
    const { folder, file, final } = await staged('call_6');
    fs.chmodSync(folder, 0o755);
    expect(await move('call_6')).toEqual([]);
    expect(fs.existsSync(final)).toBe(false);
    expect(fs.existsSync(file)).toBe(true);
    expect(warnings.join('\n')).toContain('mode 755, not 700');
  });

  it('refuses a final session folder reached through a symlink', async () => {
    const { file, final } = await staged('call_7');
    const elsewhere = path.join(tmp, 'elsewhere');
    fs.mkdirSync(elsewhere, { mode: 0o700 });
    fs.mkdirSync(path.join(codexHome, 'spillway'), { recursive: true, mode: 0o700 });
    fs.symlinkSync(elsewhere, path.dirname(final));
    expect(await move('call_7')).toEqual([]);
    expect(fs.readdirSync(elsewhere)).toEqual([]);
    expect(fs.existsSync(file)).toBe(true);
  });

  it('drops a done marker whose capture the wrapper removed (printed whole), and the folder with it', async () => {
    const { folder, file, final } = await staged('call_9');
    fs.rmSync(file);
    expect(await move()).toEqual([]);
    expect(fs.existsSync(final)).toBe(false);
    expect(fs.existsSync(folder)).toBe(false);
    expect(warnings).toEqual([]);
  });

  it('only looks at folders of its own session', async () => {
    await staged('call_8');
    expect(await sessionStagingFolders(env, `${SESSION}x`)).toEqual([]);
    expect(await moveCodexCaptures({ env, codexHome, sessionId: `${SESSION}x` })).toEqual([]);
  });
});

describe('placeFile', () => {
  it('a file already placed (same inode at the final path) only loses its source', async () => {
    const source = path.join(tmp, 'a.txt');
    const final = path.join(tmp, 'b.txt');
    fs.writeFileSync(source, 'x\n', { mode: 0o600 });
    fs.linkSync(source, final);
    await placeFile(source, final);
    expect(fs.existsSync(source)).toBe(false);
    expect(fs.readFileSync(final, 'utf8')).toBe('x\n');
  });

  it('refuses a source with another link (it could be any file of the user)', async () => {
    const source = path.join(tmp, 'a.txt');
    fs.writeFileSync(source, 'x\n', { mode: 0o600 });
    fs.linkSync(source, path.join(tmp, 'elsewhere.txt'));
    await expect(placeFile(source, path.join(tmp, 'b.txt'))).rejects.toThrow(/other links/);
    expect(fs.existsSync(path.join(tmp, 'b.txt'))).toBe(false);
  });
});
