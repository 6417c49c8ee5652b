// A store that keeps every blob where the local store puts it (the model reads
// it there with its own tools) and owes an object store a durable copy: each
// new blob is queued (upload-queue.ts) before the save returns, and uploaded
// later by a detached process, so a slow or absent bucket never delays the agent.
import * as path from 'node:path';
import { boundedArgs, type AliasSpill, type LocalSpillStore, type StagedText } from '../local-store';
import type { SaveTextSpill, SpillOwner, SpillRef, SpillStore } from '../types';
import { blobKeys, s3Url, type S3Location } from './s3-location';
import { enqueueUpload } from './upload-queue';

export interface MirrorOptions {
  local: LocalSpillStore;
  location: S3Location;
  /** The agent the key layout files blobs under (`claude-code`, `spillway`). */
  agent: string;
  queueDir: string;
  /** Told of a queued copy that could not be queued: the spill itself stands. */
  warn?: (message: string) => void;
}

export class MirroredSpillStore implements SpillStore {
  /** Whether a save queued anything (the caller starts an uploader then). */
  queued = 0;

  constructor(private readonly opts: MirrorOptions) {}

  async saveText(input: SaveTextSpill): Promise<SpillRef> {
    return this.mirror(await this.opts.local.saveText(input), input);
  }

  async saveStaged(staged: StagedText, input: Omit<SaveTextSpill, 'content'>): Promise<SpillRef> {
    return this.mirror(await this.opts.local.saveStaged(staged, input), input);
  }

  async findBySha256(owner: SpillOwner, sha256: string): Promise<SpillRef | undefined> {
    const found = await this.opts.local.findBySha256(owner, sha256);
    return found && { ...found, retrievalHint: this.hint(owner.sessionId, sha256, found.retrievalHint) };
  }

  recordAlias(input: AliasSpill): Promise<SpillRef> {
    return this.opts.local.recordAlias(input);
  }

  withContentLock<T>(owner: SpillOwner, sha256: string, fn: () => Promise<T>): Promise<T> {
    return this.opts.local.withContentLock(owner, sha256, fn);
  }

  stage(chunks: AsyncIterator<Buffer>): Promise<StagedText> {
    return this.opts.local.stage(chunks);
  }

  discardStaged(staged: StagedText): Promise<void> {
    return this.opts.local.discardStaged(staged);
  }

  /** The saved blob queued for its copy; the ref's hint names the remote copy too. */
  private async mirror(ref: SpillRef, input: Omit<SaveTextSpill, 'content'>): Promise<SpillRef> {
    if (!ref.sha256) return ref;
    const { sessionId } = input.owner;
    const record = {
      file: path.basename(ref.locator),
      tool: input.source.toolName,
      toolCallId: input.source.callId,
      ...(input.args !== undefined ? { args: boundedArgs(input.args) } : {}),
      bytes: ref.bytes,
      lines: ref.lines,
      sha256: ref.sha256,
      createdAt: new Date().toISOString(),
      sessionId,
      ...(input.turn !== undefined ? { turn: input.turn } : {}),
    };
    try {
      await enqueueUpload(this.opts.queueDir, { v: 1, store: s3Url(this.opts.location), file: ref.locator, bytes: ref.bytes, sha256: ref.sha256, agent: this.opts.agent, sessionId, record });
      this.queued++;
    } catch (err) {
      // The local blob is whole and the model gets its digest; only the copy is missing, and said so.
      this.opts.warn?.(`could not queue the copy to ${s3Url(this.opts.location)}: ${(err as Error).message}`);
      return ref;
    }
    return { ...ref, retrievalHint: this.hint(sessionId, ref.sha256, ref.retrievalHint) };
  }

  private hint(sessionId: string, sha256: string, local: string): string {
    const url = s3Url(this.opts.location, blobKeys(this.opts.location, this.opts.agent, sessionId, sha256).blob);
    return `${local} A durable copy: \`spillway show ${url} --lines A:B\`.`;
  }
}
