// What pi extensions record in a pi session beyond pi's own entries, read for
// the turns: pi-condense's records that announce a pruned context (its
// summary message, a flush that summarized, its index) and the short refs it
// issues, Spillway's record of a result it replaced, and the outputs a
// query fetches back by id.
import { mentionsIn, obj, own, str, type DropKind, type IssuedToolCall } from '../transcripts/calls';
import type { PiState } from './pi-state';

/** customType of Spillway's own pi index entries (src/adapters/pi-extension.ts). */
export const SPILLWAY_INDEX = 'spillway-spill';

/** Spillway's record of a result it replaced: whose, and how many lines the whole output had. */
export function readSpillwayRecord(state: PiState, data: unknown): void {
  const record = obj(data);
  const toolCallId = str(record?.toolCallId);
  if (!toolCallId) return;
  const lines = record?.spillLines;
  const known = typeof lines === 'number' && Number.isInteger(lines) && lines >= 0 ? lines : undefined;
  state.spillwayReplaced.set(own(toolCallId), known);
  // The entry may come after the result it replaced (an edit at the turn's end): the result learns its lines.
  const added = state.pendingAdded.find((a) => a.toolCallId === toolCallId);
  if (added && known !== undefined) added.lines = known;
}

/** pi-condense's records that announce a pruned context (its summary message, a flush that summarized) and Spillway's spill entry. */
const ANNOUNCES_DROP: Record<string, (data: Record<string, unknown> | undefined) => DropKind | undefined> = {
  'context-prune-summary': () => 'pi-condense-prune',
  'context-prune-index': () => 'pi-condense-prune',
  'flush-metrics': (data) => (data?.outcome === 'summarized' ? 'pi-condense-prune' : undefined),
  [SPILLWAY_INDEX]: () => 'spillway-flush',
};

/** An extension's record (a `custom` entry's data, a custom message's details): the drop it announces, the short refs it issues. */
export function readRecord(state: PiState, customType: string | undefined, data: unknown): void {
  const fields = obj(data);
  const announced = customType !== undefined && Object.hasOwn(ANNOUNCES_DROP, customType) ? ANNOUNCES_DROP[customType]!(fields) : undefined;
  if (announced) state.pendingExplains = announced;
  if (!state.mentions || !fields) return;
  const refs = [...(Array.isArray(fields.toolCallRefs) ? fields.toolCallRefs : []), ...(Array.isArray(fields.toolCalls) ? fields.toolCalls : [])];
  for (const ref of refs) {
    const r = obj(ref);
    const shortId = str(r?.shortId);
    const toolCallId = str(r?.toolCallId);
    if (shortId && toolCallId) state.shortRefs.set(own(shortId), own(toolCallId));
  }
}

/** Tools that fetch a stored output back by its id rather than its path. */
const FETCH_BY_ID = /context_tree_query/;

export function issuedCall(state: PiState, block: Record<string, unknown>): IssuedToolCall {
  const name = own(str(block.name) ?? 'unknown');
  const fetches = state.mentions && FETCH_BY_ID.test(name) ? idsIn(state, block.arguments) : [];
  return { id: own(block.id as string), name, mentions: mentionsIn(state, block.arguments), ...(fetches.length ? { fetches } : {}) };
}

/** The tool call ids a query's input names: by pi-condense's short ref (`t3`) or whole. */
function idsIn(state: PiState, input: unknown): string[] {
  const found = new Set<string>();
  const visit = (v: unknown, depth: number): void => {
    if (depth > 3 || found.size >= 64) return;
    if (typeof v === 'string') {
      for (const word of v.split(/[\s,;]+/)) {
        const id = state.shortRefs.get(word) ?? (state.toolCalls.has(word) ? word : undefined);
        if (id) found.add(own(id));
      }
    } else if (Array.isArray(v)) v.forEach((x) => visit(x, depth + 1));
    else if (v && typeof v === 'object') Object.values(v).forEach((x) => visit(x, depth + 1));
  };
  visit(input, 0);
  return [...found];
}
