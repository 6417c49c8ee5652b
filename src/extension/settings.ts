// The extension's settings as one typed object. `readSettings` takes the
// configuration getter and the home folder, so unit tests pass plain values. Pure.
import * as os from 'node:os';
import * as path from 'node:path';
import { isS3Url } from '../spill/remote/s3-location';

export const SECTION = 'spillway';

export interface SpillwaySettings {
  extraRoots: string[];
  /** `s3://BUCKET/PREFIX` roots shown in the tree beside the local ones. */
  remoteRoots: string[];
  /** Source id -> enabled; a source not listed is enabled. */
  sources: Record<string, boolean>;
  previewBytes: number;
  budgetDelta: number;
  contextWindow: number;
  useTrash: boolean;
  ripgrepPath: string;
  sortBy: 'time' | 'size';
  /** Search view: matching lines shown per blob, and in all. */
  searchMaxPerBlob: number;
  searchMaxResults: number;
  /** Automatic cleanup (opt-in): at start and daily, by the policy below. */
  cleanupAuto: boolean;
  /** "30d", "12h" or "" (no age limit). */
  cleanupMaxAge: string;
  /** "5GB" or "" (no size limit). */
  cleanupMaxTotalSize: string;
}

export type ConfigGet = <T>(key: string) => T | undefined;

function num(v: unknown, fallback: number, min: number, max: number): number {
  return typeof v === 'number' && Number.isFinite(v) ? Math.min(max, Math.max(min, v)) : fallback;
}

/** `~` and `~/...` as a shell reads them: settings.json is written by hand, and an extra root is most often in the home folder. */
function expandHome(folder: string, home: string): string {
  return folder === '~' ? home : folder.startsWith('~/') ? path.join(home, folder.slice(2)) : folder;
}

export function readSettings(get: ConfigGet, home: string = os.homedir()): SpillwaySettings {
  const roots = get<unknown>('extraRoots');
  const sources = get<unknown>('sources');
  const remote = get<unknown>('remoteRoots');
  const sort = get<unknown>('sortBy');
  return {
    extraRoots: Array.isArray(roots) ? roots.filter((r): r is string => typeof r === 'string' && r.trim() !== '').map((r) => expandHome(r, home)) : [],
    remoteRoots: Array.isArray(remote) ? remote.filter((r): r is string => typeof r === 'string' && isS3Url(r.trim())).map((r) => r.trim()) : [],
    sources:
      typeof sources === 'object' && sources !== null
        ? Object.fromEntries(Object.entries(sources).filter(([, v]) => typeof v === 'boolean'))
        : {},
    previewBytes: num(get('previewBytes'), 2048, 0, 65_536),
    budgetDelta: num(get('chart.budgetDelta'), 0.1, 0, 1),
    contextWindow: num(get('chart.contextWindow'), 200_000, 1000, 10_000_000),
    useTrash: get<unknown>('useTrash') !== false,
    ripgrepPath: typeof get('ripgrepPath') === 'string' ? (get<string>('ripgrepPath') ?? '') : '',
    sortBy: sort === 'size' ? 'size' : 'time',
    searchMaxPerBlob: Math.round(num(get('search.maxPerBlob'), 50, 1, 10_000)),
    searchMaxResults: Math.round(num(get('search.maxResults'), 2000, 1, 20_000)),
    cleanupAuto: get<unknown>('cleanup.auto') === true,
    cleanupMaxAge: typeof get('cleanup.maxAge') === 'string' ? (get<string>('cleanup.maxAge') ?? '').trim() : '',
    cleanupMaxTotalSize: typeof get('cleanup.maxTotalSize') === 'string' ? (get<string>('cleanup.maxTotalSize') ?? '').trim() : '',
  };
}

/** Whether the source with this id is on. */
export function sourceEnabled(settings: SpillwaySettings, id: string): boolean {
  return settings.sources[id] !== false;
}
