// The file opencode loads (dist/opencode-plugin.js, plain ESM for opencode's
// Bun; `spillway hook install opencode` lists it in opencode.json). opencode
// calls every function this module exports as a plugin: it exports one.
import { createSpillwayOpencodePlugin } from './opencode-plugin';

export const SpillwayOpencode = createSpillwayOpencodePlugin();
