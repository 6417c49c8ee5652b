// A hook group as Claude Code's settings.json and Codex's hooks.json both hold it, `{ matcher?, hooks }`: an event
// that takes no matcher (Stop) gets a group with no matcher key at all, as the agents write it and hash it.

/** The group of `hooks` under `matcher` (undefined: no matcher key). */
export function hookGroup<H>(matcher: string | undefined, hooks: H[]): { matcher?: string; hooks: H[] } {
  return matcher !== undefined ? { matcher, hooks } : { hooks };
}

/** Whether `group` is under exactly `matcher` (undefined: it has no matcher key). */
export function underMatcher(group: { matcher?: string }, matcher: string | undefined): boolean {
  return group.matcher === matcher && 'matcher' in group === (matcher !== undefined);
}

/** How an install reports a group's matcher. */
export function matcherLabel(matcher: string | undefined): string {
  return matcher !== undefined ? `matcher "${matcher}"` : 'no matcher';
}
