import { describe, expect, it } from 'vitest';
import { PI_SPILL_DEFAULTS, readPiSpillConfig } from '../../../src/adapters/pi-config';
import { renderStub, type PiSpillRecord } from '../../../src/adapters/pi-extension';

describe('readPiSpillConfig', () => {
  it("uses the engine's measured defaults when pi's settings say nothing (delta flush off)", () => {
    expect(readPiSpillConfig({})).toEqual({ spillThreshold: 4_096, spillPreviewBytes: 2_048, budgetTurnDelta: null, budgetFlushFloor: 3_072, protectedTools: ['read'] });
    expect(readPiSpillConfig(undefined)).toEqual(readPiSpillConfig({}));
  });

  it('reads the spillway key', () => {
    const c = readPiSpillConfig({ spillway: { spillThreshold: 1000, spillPreviewBytes: 512, budgetTurnDelta: 0.15, budgetFlushFloor: 100, protectedTools: ['read', 'grep'] } });
    expect(c).toEqual({ spillThreshold: 1000, spillPreviewBytes: 512, budgetTurnDelta: 0.15, budgetFlushFloor: 100, protectedTools: ['read', 'grep'] });
  });

  it('falls back per key on bad values and says which', () => {
    const warnings: string[] = [];
    const c = readPiSpillConfig({ spillway: { spillThreshold: -5, budgetTurnDelta: 3, protectedTools: 'read', spillPreviewBytes: 1.5 } }, (m) => warnings.push(m));
    expect(c).toEqual({ ...PI_SPILL_DEFAULTS });
    expect(warnings).toHaveLength(4);
    expect(warnings.join('\n')).toMatch(/spillThreshold[\s\S]*spillPreviewBytes[\s\S]*budgetTurnDelta[\s\S]*protectedTools/);
    expect(readPiSpillConfig({ spillway: 'on' }, (m) => warnings.push(m))).toEqual({ ...PI_SPILL_DEFAULTS });
  });
});

describe('renderStub', () => {
  const record: PiSpillRecord = {
    v: 1, toolCallId: 'c1', toolName: 'bash', args: { command: 'npm test' }, spillPath: '/s/x-blobs/ab-bash-c1.txt',
    spillBytes: 1_288_916, spillLines: 200_001, resultPreview: 'head\n[... spillway: ...]\ntail', contentHash: 'f'.repeat(64), aliased: false, trigger: 'eager',
  };
  it('names the tool, args, size, lines, path and how to read it, then the preview', () => {
    const stub = renderStub(record);
    expect(stub.split('\n')[0]).toBe('[spillway] bash (npm test) returned 1,288,916 bytes, 200,001 lines.');
    expect(stub).toContain('Full output saved to /s/x-blobs/ab-bash-c1.txt.');
    expect(stub).toContain('offset/limit');
    expect(stub.endsWith('head\n[... spillway: ...]\ntail')).toBe(true);
    expect(stub).not.toContain('identical');
  });
  it('says when the blob is shared with an identical earlier result', () => {
    expect(renderStub({ ...record, aliased: true })).toContain('identical to an earlier result');
  });
});
