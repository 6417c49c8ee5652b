// Failure-looking lines rendered for a digest: clipped to a line's budget, chosen to fit the share allowed.

import { Candidate, FAILURE_STEM } from './line-scanner';
import { utf8Bytes, utf8CeilBoundary, utf8FloorBoundary } from './text';

/** Largest share of the digest that failure lines may take. */
export const SALIENCE_SHARE = 1 / 4;
/** A failure line is shown up to this many bytes. */
const SALIENT_LINE_MAX = 240;
const SALIENT_HEADER = '[spillway: failure-like lines from the elided part]\n';
function renderSalient(c: Candidate, max?: number): string {
  return renderLine(c.repeats > 1 ? `[line ${c.lineNo}, ${c.repeats} alike] ` : `[line ${c.lineNo}] `, c.text, max);
}

/** A verdict's next line (Candidate.next), numbered as the verdict is. */
function renderNext(c: Candidate): string {
  return c.next ? renderLine(`[line ${c.lineNo + 1}] `, c.next.text) : '';
}

/** What a cut line keeps before its failure word, and the least of its text it shows (bytes). */
const BEFORE_WORD = 8;
const CUT_TEXT_MIN = 32;
const ELLIPSIS_BYTES = 3;

/**
 * `prefix + text` and a newline in at most `max` bytes. A longer line is cut: from a little before its failure
 * word (past an error's long preamble: a progress meter it is glued to, a log line's time and thread) to where
 * the room ends; `…`s mark what is left out. Empty when the room is too small to show much of the failure.
 */
function renderLine(prefix: string, text: string, max = SALIENT_LINE_MAX): string {
  const full = prefix + text;
  if (utf8Bytes(full) + 1 <= max) return full + '\n';
  const room = max - utf8Bytes(prefix) - 1; // for the text and its ellipses
  const bytes = Buffer.from(text, 'utf8');
  FAILURE_STEM.lastIndex = 0;
  const word = utf8Bytes(text.slice(0, FAILURE_STEM.exec(text)?.index ?? 0));
  const from = word <= BEFORE_WORD + ELLIPSIS_BYTES ? 0 : utf8CeilBoundary(bytes, word - BEFORE_WORD);
  const end = utf8FloorBoundary(bytes, Math.min(bytes.length, from + room - ELLIPSIS_BYTES * (from > 0 ? 2 : 1)));
  if (end < bytes.length && end - from < CUT_TEXT_MIN) return '';
  return `${prefix}${from > 0 ? '…' : ''}${bytes.toString('utf8', from, end)}${end < bytes.length ? '…' : ''}\n`;
}

/**
 * Which failure lines to show: one per shape, verdicts before mere mentions
 * and passing tests' lines last (failureRank). Within a rank, lines whose
 * shape occurs once come first (a root cause is rarely repeated, progress
 * noise is), among them the first and the last (root cause, final verdict),
 * then the others in order; repeated shapes follow, rarest first. Shown in
 * line order. What budget is left then goes to the chosen verdicts' next
 * lines, in the same order: a location never displaces a failure line.
 */
export function selectSalient(cands: Candidate[], budget: number): string {
  const headerBytes = utf8Bytes(SALIENT_HEADER);
  if (cands.length === 0 || budget <= headerBytes) return '';
  const seen = new Set<string>();
  const unique: Candidate[] = [];
  const repeated: Candidate[] = [];
  for (const c of cands) {
    if (seen.has(c.shape)) continue;
    seen.add(c.shape);
    (c.repeats > 1 ? repeated : unique).push(c);
  }
  // By rank (verdicts, mentions, passing tests' lines); within one, as said above.
  const order: Candidate[] = [];
  for (const rank of [0, 1, 2]) {
    const once = unique.filter((c) => c.rank === rank);
    const ends = once.length > 1 ? [once[0]!, once[once.length - 1]!, ...once.slice(1, -1)] : once;
    order.push(...ends, ...repeated.filter((c) => c.rank === rank).sort((a, b) => a.repeats - b.repeats || a.lineNo - b.lineNo));
  }
  let left = budget - headerBytes;
  // Each chosen line as it is shown (with its next line once that is chosen too).
  const shown = new Map<Candidate, string>();
  let skipped: Candidate | undefined;
  for (const c of order) {
    const text = renderSalient(c);
    const cost = utf8Bytes(text);
    if (cost <= left) {
      shown.set(c, text);
      left -= cost;
    } else skipped ??= c;
  }
  // What is left shows the first line that did not fit whole, cut, when that is enough to show its failure.
  const cut = skipped ? renderSalient(skipped, left) : '';
  if (skipped && cut) {
    shown.set(skipped, cut);
    left -= utf8Bytes(cut);
  }
  if (shown.size === 0) return '';
  const chosen = [...shown.keys()];
  const shownLines = new Set(chosen.map((c) => c.lineNo));
  for (const c of chosen) {
    const next = renderNext(c);
    const cost = utf8Bytes(next);
    if (next && cost <= left && !shownLines.has(c.lineNo + 1)) {
      shown.set(c, shown.get(c)! + next);
      left -= cost;
    }
  }
  chosen.sort((a, b) => a.lineNo - b.lineNo);
  return SALIENT_HEADER + chosen.map((c) => shown.get(c)!).join('');
}

