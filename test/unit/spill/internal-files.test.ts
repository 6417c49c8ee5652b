// Whose temp or lock a file is: `<pid>-at<place>` in a temp's name, `<pid>@<place>` in a lock, where the place (host and PID
// namespace) says whether the pid can be asked here at all.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { isStaleTemp, PID_OWNER, PID_PLACE, STALE_AFTER_MS, tempName, writerState } from '../../../src/spill/internal-files';

/** A pid no process has any more. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '0']);
  return child.pid!;
}

const otherPlace = PID_PLACE === '00000000' ? '00000001' : '00000000';

describe('writerState', () => {
  it('asks the pid only when it is of this place', () => {
    expect(PID_OWNER).toBe(`${process.pid}@${PID_PLACE}`);
    expect(writerState(PID_OWNER)).toBe('running');
    expect(writerState(`${deadPid()}@${PID_PLACE}`)).toBe('gone');
    // Written before places were: the pid is asked, as it was then.
    expect(writerState(String(process.pid))).toBe('running');
    expect(writerState(String(deadPid()))).toBe('gone');
    // Another host or PID namespace: its pid means nothing here, alive or not.
    expect(writerState(`${process.pid}@${otherPlace}`)).toBe('unknown');
    expect(writerState(`${deadPid()}@${otherPlace}`)).toBe('unknown');
    for (const odd of ['', 'abc', '12@xyz', '12@0000000', ' 12', '12\n']) expect(writerState(odd), JSON.stringify(odd)).toBe('unknown');
  });
});

describe('isStaleTemp', () => {
  const now = Date.now();
  it("is a temp of this place's dead writer, or any temp older than a day", () => {
    expect(tempName()).toMatch(new RegExp(`^\\.spillway-tmp-${process.pid}-at${PID_PLACE}-[0-9a-f]{12}$`));
    // A Spillway of before places reads the pid from it the way it always did.
    expect(Number(/^\.spillway-tmp-(\d+)-/.exec(tempName())?.[1])).toBe(process.pid);
    expect(isStaleTemp(tempName(), now, now)).toBe(false);
    expect(isStaleTemp(`.spillway-tmp-${deadPid()}-at${PID_PLACE}-abc`, now, now)).toBe(true);
    expect(isStaleTemp(`.spillway-tmp-${deadPid()}-abc`, now, now)).toBe(true);
    // Another place's writer is left alone until the temp is a day old.
    expect(isStaleTemp(`.spillway-tmp-${deadPid()}-at${otherPlace}-abc`, now, now)).toBe(false);
    expect(isStaleTemp(`.spillway-tmp-${deadPid()}-at${otherPlace}-abc`, now - STALE_AFTER_MS - 1, now)).toBe(true);
    expect(isStaleTemp('not-a-temp', now - STALE_AFTER_MS - 1, now)).toBe(false);
  });
});
