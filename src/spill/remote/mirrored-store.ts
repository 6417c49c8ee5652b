// A local store that also owes an object store a durable copy of each blob: the
// blob stays where the local store puts it (the model reads it there with its
// own tools), and each new blob, and each file the agent wrote itself and had
// recorded, is queued (upload-queue.ts) before the save returns. A detached
// process uploads it later, so a slow or absent bucket never delays the agent.
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { boundedArgs, LocalSpillStore, type ExternalSpill, type LocalSpillStoreOptions, type StagedText } from '../local-store';
import { MANIFEST_NAME } from '../manifest';
import type { SaveTextSpill, SpillOwner, SpillRef } from '../types';
import { blobKeys, s3Url, type S3Location } from './s3-location';
import { enqueueTranscript, enqueueUpload } from './upload-queue';

export interface MirrorOptions extends LocalSpillStoreOptions {
  location: S3Location;
  /** The agent the key layout files blobs under (`claude-code`, `spillway`). */
  agent: string;
  queueDir: string;
}

type RecordInput = Pick<SaveTextSpill, 'owner' | 'args' | 'turn'> & { source: { toolName: string; callId: string } };

export class MirroredSpillStore extends LocalSpillStore {
  /** How many copies this store queued (the caller starts an uploader when any). */
  queued = 0;
  readonly location: S3Location;
  readonly agent: string;
  readonly queueDir: string;
  private readonly warn: ((message: string) => void) | undefined;

  constructor(opts: MirrorOptions) {
    super(opts);
    this.location = opts.location;
    this.agent = opts.agent;
    this.queueDir = opts.queueDir;
    this.warn = opts.logger ? (m) => opts.logger!.warn(m) : undefined;
  }

  override async saveText(input: SaveTextSpill): Promise<SpillRef> {
    return this.mirror(await super.saveText(input), input);
  }

  override async saveStaged(staged: StagedText, input: Omit<SaveTextSpill, 'content'>): Promise<SpillRef> {
    return this.mirror(await super.saveStaged(staged, input), input);
  }

  override async recordExternal(input: ExternalSpill): Promise<SpillRef> {
    return this.mirror(await super.recordExternal(input), input);
  }

  override async findBySha256(owner: SpillOwner, sha256: string): Promise<SpillRef | undefined> {
    const found = await super.findBySha256(owner, sha256);
    return found && { ...found, retrievalHint: this.hint(owner.sessionId, sha256, found.retrievalHint) };
  }

  /**
   * Queues the session's transcript to travel with its blobs (for attribution and the per-turn chart), with the
   * session's `title` when the transcript does not hold it.
   */
  queueTranscript(sessionId: string, file: string, title?: string): void {
    try {
      enqueueTranscript(this.queueDir, { store: s3Url(this.location), file, agent: this.agent, sessionId, ...(title !== undefined && { title }) });
      this.queued++;
    } catch (err) {
      this.warn?.(`could not queue the transcript's copy to ${s3Url(this.location)}: ${(err as Error).message}`);
    }
  }

  /**
   * Queues the transcript of a session this store has blobs of (its manifest is in the session's blob folder, which
   * the agent may have made, or share with its own files, before any spill). True when queued: a session Spillway
   * never spilled from has nothing in the bucket to give turns to.
   */
  queueTranscriptIfSpilled(sessionId: string, file: string, title?: string): boolean {
    if (!existsSync(path.join(this.layout.dirFor({ sessionId }), MANIFEST_NAME))) return false;
    this.queueTranscript(sessionId, file, title);
    return true;
  }

  /** `s3://BUCKET/KEY` of this session's copy of the blob with these bytes. */
  remoteUrl(sessionId: string, sha256: string): string {
    return s3Url(this.location, blobKeys(this.location, this.agent, sessionId, sha256).blob);
  }

  /** The saved blob queued for its copy; the ref's hint names the remote copy too. */
  private async mirror(ref: SpillRef, input: RecordInput): Promise<SpillRef> {
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
      enqueueUpload(this.queueDir, { v: 1, store: s3Url(this.location), file: ref.locator, bytes: ref.bytes, sha256: ref.sha256, agent: this.agent, sessionId, record });
      this.queued++;
    } catch (err) {
      // The local blob is whole and the model gets its digest; only the copy is missing, and said so.
      this.warn?.(`could not queue the copy to ${s3Url(this.location)}: ${(err as Error).message}`);
      return ref;
    }
    return { ...ref, retrievalHint: this.hint(sessionId, ref.sha256, ref.retrievalHint) };
  }

  private hint(sessionId: string, sha256: string, local: string): string {
    return remoteHint(local, this.remoteUrl(sessionId, sha256));
  }
}

/** The local hint, then how to fetch the durable copy at `url`. */
export function remoteHint(local: string, url: string): string {
  return `${local} A durable copy: \`spillway show ${url} --lines A:B\`.`;
}
