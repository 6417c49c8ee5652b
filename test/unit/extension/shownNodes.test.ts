// The nodes the tree hands VS Code, on a real catalog of the fixture home: a scan that finds nothing new announces
// nothing; a blob added to one session announces that session and its agent only, on the objects handed out before.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';
import { ShownNodes } from '../../../src/extension/shownNodes';
import { buildTree, nodeId, type AgentNode, type SpillNode } from '../../../src/extension/treeModel';
import { buildFixtureHome, type FixtureHome } from '../../fixtures/build-home';

let tmp: string;
let fixture: FixtureHome;
let catalog: Catalog;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-shown-'));
  fixture = await buildFixtureHome(path.join(tmp, 'home'));
  catalog = new Catalog({ env: fixture.env, roots: fixture.userRoots });
  await catalog.scan();
});

afterAll(async () => {
  await catalog.dispose();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const tree = (): AgentNode[] => buildTree(catalog.sessions(), {}, 'time');
const ids = (nodes: SpillNode[] | 'all'): string[] | 'all' => (nodes === 'all' ? 'all' : nodes.map(nodeId).sort());

describe('ShownNodes', () => {
  it('hands out the same objects for the same rows, brought up to date in place', async () => {
    const shown = new ShownNodes();
    const first = shown.adopt(tree());
    expect(first.length).toBeGreaterThan(1);
    const sessionsBefore = first.flatMap((a) => a.sessions);
    // A scan describes nothing again but installs every session anew (new SessionInfo objects): nothing to announce.
    await catalog.scan();
    expect(catalog.sessions()[0]).not.toBe(sessionsBefore.find((n) => n.session.key === catalog.sessions()[0]!.key)!.session);
    expect(shown.update(tree())).toEqual([]);
    const again = shown.adopt(tree());
    expect(again).toEqual(first);
    again.forEach((agent, i) => expect(agent).toBe(first[i]));
    expect(again.flatMap((a) => a.sessions)).toEqual(sessionsBefore);
    again.flatMap((a) => a.sessions).forEach((node, i) => expect(node).toBe(sessionsBefore[i]));
  });

  it('announces only a changed session and its agent, on the objects VS Code holds', async () => {
    const shown = new ShownNodes();
    const agents = shown.adopt(tree());
    const claude = agents.find((a) => a.source === 'claude-code')!;
    const target = claude.sessions.find((n) => n.session.dir === fixture.claude.sessionDir)!;
    const count = target.shown.count;
    const added = path.join(fixture.claude.toolResults, 'toolu_shown_nodes_added.txt');
    fs.writeFileSync(added, 'added while the view was closed\n'.repeat(50), { mode: 0o600 });
    // Older than the session's newest blob: its row keeps its place.
    const old = new Date(Date.parse(target.session.updatedAt) - 60_000);
    fs.utimesSync(added, old, old);
    try {
      await catalog.scan();
      const change = shown.update(tree());
      expect(ids(change)).toEqual([nodeId(claude), nodeId(target)].sort());
      const fired = change as SpillNode[];
      expect(fired.find((n) => n.kind === 'session')).toBe(target);
      expect(fired.find((n) => n.kind === 'agent')).toBe(claude);
      // In place: VS Code asks these very objects for their rows again.
      expect(target.shown.count).toBe(count + 1);
      expect(target.session.blobs.some((b) => b.path === added)).toBe(true);
    } finally {
      fs.rmSync(added);
    }
    await catalog.scan();
    expect(ids(shown.update(tree()))).toEqual([nodeId(claude), nodeId(target)].sort());
    expect(target.shown.count).toBe(count);
  });

  it('announces the whole tree when an agent comes or goes', () => {
    const shown = new ShownNodes();
    const agents = shown.adopt(tree());
    expect(shown.update(agents.slice(1).map((a) => ({ ...a, sessions: [...a.sessions] })))).toBe('all');
    expect(shown.update(tree())).toBe('all');
  });

  it("announces a session whose row reads differently for what its SessionInfo does not hold (its label's short id)", () => {
    let twin = '';
    const shown = new ShownNodes(() => twin);
    shown.adopt(tree());
    twin = 'twin';
    const change = shown.update(tree());
    expect(change).not.toBe('all');
    expect((change as SpillNode[]).filter((n) => n.kind === 'session').length).toBe(catalog.sessions().filter((s) => tree().some((a) => a.sessions.some((n) => n.session.key === s.key))).length);
  });
});
