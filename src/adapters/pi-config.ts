// The pi extension's settings: the `spillway` key of pi's settings.json
// (global ~/.pi/agent/settings.json or project .pi/settings.json). Bad values
// fall back to the default and are reported, never thrown.
import { isFraction } from '../spill/checked-options';

export interface PiSpillConfig {
  /** A single result of at least this many chars is spilled as it arrives. */
  spillThreshold: number;
  /** Size of the preview (digest) the model sees in the stub, in UTF-8 bytes. */
  spillPreviewBytes: number;
  /** Fraction of the window one turn may add before its results are spilled too; null = off. */
  budgetTurnDelta: number | null;
  /** When the delta flush fires, results of at least this many chars are spilled. */
  budgetFlushFloor: number;
  /** Tools never spilled (reading a spill back must not spill again). */
  protectedTools: string[];
}

/**
 * The engine's measured defaults, not a 65,536-char threshold such as
 * pi-condense's (which leaves medium results to a summarizer Spillway does
 * not have): on the measured size distribution a 64 KB threshold touches
 * under 0.1% of calls and recovers ~0% of the mass, while 4,096 with a
 * 2,048-byte preview is the knee (8% of calls, 35% of the mass; docs/engine.md).
 * The delta flush goes one step further down that curve (3,072: 12.7% of
 * calls, 40% of the mass) only for a turn that ate a large share of the window.
 */
export const PI_SPILL_DEFAULTS: Readonly<PiSpillConfig> = Object.freeze({
  spillThreshold: 4_096,
  spillPreviewBytes: 2_048,
  budgetTurnDelta: null,
  budgetFlushFloor: 3_072,
  protectedTools: ['read'],
});

/** The settings key the extension reads. */
export const PI_SETTINGS_KEY = 'spillway';

export function readPiSpillConfig(settings: unknown, warn: (message: string) => void = () => {}): PiSpillConfig {
  const config: PiSpillConfig = { ...PI_SPILL_DEFAULTS, protectedTools: [...PI_SPILL_DEFAULTS.protectedTools] };
  const raw = typeof settings === 'object' && settings !== null ? (settings as Record<string, unknown>)[PI_SETTINGS_KEY] : undefined;
  if (raw === undefined) return config;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    warn(`settings "${PI_SETTINGS_KEY}" is not an object; using the defaults`);
    return config;
  }
  const r = raw as Record<string, unknown>;
  const positiveInt = (key: 'spillThreshold' | 'spillPreviewBytes' | 'budgetFlushFloor') => {
    if (r[key] === undefined) return;
    const v = r[key];
    if (typeof v === 'number' && Number.isInteger(v) && v > 0) config[key] = v;
    else warn(`settings ${PI_SETTINGS_KEY}.${key} must be a positive integer; using ${config[key]}`);
  };
  positiveInt('spillThreshold');
  positiveInt('spillPreviewBytes');
  positiveInt('budgetFlushFloor');
  if (r.budgetTurnDelta !== undefined) {
    const v = r.budgetTurnDelta;
    if (v === null || isFraction(v)) config.budgetTurnDelta = v;
    else warn(`settings ${PI_SETTINGS_KEY}.budgetTurnDelta must be null or a fraction in (0, 1]; flush stays off`);
  }
  if (r.protectedTools !== undefined) {
    const v = r.protectedTools;
    if (Array.isArray(v) && v.every((x) => typeof x === 'string')) config.protectedTools = v as string[];
    else warn(`settings ${PI_SETTINGS_KEY}.protectedTools must be a list of tool names; using ${config.protectedTools.join(', ')}`);
  }
  return config;
}
