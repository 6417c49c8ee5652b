// The library API: the spill engine and the agent adapters.
export * from './spill/types';
export * from './spill/manifest';
export * from './spill/local-store';
export * from './spill/digest';
export * from './spill/policy';
export * from './spill/budget';
export { classifyOutput, parseValueBlob, renderValueBlob, planValueDigest, formatJsonPath, type OutputClass, type StringLeaf, type ValuePlan, type JsonPath } from './spill/value';
export { countLines, utf8Bytes } from './spill/text';
// The catalog (reader side): sessions -> blobs, slice, grep, clean, turns.
export * from './catalog/types';
export { Catalog, type ScanOptions, type ScanStats } from './catalog/catalog';
export type { SessionListing } from './catalog/scan/settled';
export { defaultCacheDir } from './catalog/index/index-file';
export { readSlice, countLines as countFileLines } from './catalog/read/slice';
export { findRipgrep } from './catalog/grep/grep';
export { CHARS_PER_TOKEN } from './catalog/turns/turns';
// Agent adapters: Claude Code command hook + settings installer, Agent SDK hook, pi extension.
export { spillHook, spillwayHooks, spillwayEnv, type SpillHookOptions, type SpillwayEnvOptions } from './adapters/agent-sdk';
export { handleClaudeCodeHookInput, hookOutputFor, replacementFor, type ClaudeCodeSpillOptions, type PostToolUseReplacement } from './adapters/claude-code-hook';
export { parseHookInput, claudeSessionDir, claudeSpillDir, type PostToolUseEvent, type PreToolUseEvent, type PostToolUseFailureEvent } from './adapters/claude-code-event';
export { installClaudeCodeHook, uninstallClaudeCodeHook, claudeSettingsPath, defaultHookCommand, CLAUDE_CODE_HOOK_MATCHER, CLAUDE_CODE_HOOK_EVENTS, type InstallResult } from './adapters/settings-install';
export { createPiSpillExtension, renderStub as renderPiSpillStub, resolveSpill as resolvePiSpill, PI_INDEX_ENTRY_TYPE, type PiSpillRecord, type PiSpillExtensionOptions } from './adapters/pi-extension';
export { PI_SPILL_DEFAULTS, readPiSpillConfig, type PiSpillConfig } from './adapters/pi-config';
export { isSpillwayPrefix, shellPrefixValue } from './adapters/claude-code-prefix-install';
