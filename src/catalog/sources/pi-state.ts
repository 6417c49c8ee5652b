// What the pi source keeps while it reads a session file (shared with the
// module that reads the extensions' records).
import type { AddedContent, ApiCall, DropKind, MentionsState } from '../transcripts/calls';

export interface ToolCall {
  name: string;
  /** Compact args (the raw arguments are not kept). */
  args?: string;
  timestamp: string;
  entryId?: string;
}

export interface IndexRecord {
  toolCallId: string;
  toolName?: string;
  args?: unknown;
}

export interface PiState extends MentionsState {
  sessionId?: string;
  cwd?: string;
  title?: string;
  firstPrompt?: string;
  toolCalls: Map<string, ToolCall>;
  digestChars: Map<string, number>;
  /** details.fullOutputPath -> tool call id. */
  fullOutputs: Map<string, string>;
  /** pi-condense index: spill file name -> record. */
  index: Map<string, IndexRecord>;
  /** toolResult entry id -> tool call id (context_edit targets entries). */
  resultEntries: Map<string, string>;
  calls: ApiCall[];
  callById: Map<string, number>;
  pendingCompaction: boolean;
  /** Tool results and prompts since the last call (the next call's growth). */
  pendingAdded: AddedContent[];
  /** A compaction, or a context_edit rewrite (pi-condense's prune, Spillway's flush) since the last call. */
  pendingDrop?: DropKind;
  /** Whose index entry came last: a context_edit right after it is that extension's. */
  lastIndex?: 'spillway' | 'pi-condense';
  /** A record since the last call that announces a smaller context (ApiCall.explains). */
  pendingExplains?: DropKind;
  /** pi-condense's short refs (`t3`) -> tool call id: what context_tree_query is given. */
  shortRefs: Map<string, string>;
  /** Tool call id -> lines of the output whose result Spillway replaced (its `spillway-spill` entry). */
  spillwayReplaced: Map<string, number | undefined>;
}
