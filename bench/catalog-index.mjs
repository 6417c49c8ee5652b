// Cold index of 10,000 blobs in 500 Claude Code sessions (with transcripts)
// vs a bare readdir+stat walk of the same tree. Target: <= 3x the walk.
import { bareWalk, claudeCorpus, fmt, lib, ms, now } from './catalog-common.mjs';

const root = await claudeCorpus('index-500x20', 500, 20);
const runs = 5;
const walkTimes = [];
const indexTimes = [];
let blobs = 0;
let named = 0;
for (let i = 0; i < runs; i++) {
  let t = now();
  const walk = await bareWalk(root);
  walkTimes.push(ms(now() - t));
  t = now();
  const catalog = new lib.Catalog({ roots: [root], useDefaultRoots: false });
  await catalog.scan();
  indexTimes.push(ms(now() - t));
  const all = catalog.sessions().flatMap((s) => s.blobs);
  blobs = all.length;
  named = all.filter((b) => b.tool === 'Bash' && b.turn !== undefined).length;
  if (walk.files !== blobs + 500 + 1) console.log(`note: walk saw ${walk.files} files`);
  await catalog.dispose();
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const w = median(walkTimes);
const c = median(indexTimes);
console.log(`corpus: 500 sessions, ${blobs} blobs (${named} named with tool + turn from 500 transcripts)`);
console.log(`bare readdir+stat walk: ${fmt(w)} ms (median of ${runs})`);
console.log(`catalog cold scan:      ${fmt(c)} ms (median of ${runs}; new Catalog each run: transcripts parsed, every blob described)`);
console.log(`ratio: ${fmt(c / w, 2)}x (target <= 3x) ${c / w <= 3 ? 'PASS' : 'FAIL'}`);
