// The tree's agent and session nodes as VS Code holds them: one object per id, kept across redraws and brought up
// to date in place. VS Code finds an element to refresh by identity, so a change is announced on the very objects it
// holds, and only the rows that changed are drawn again: a check that corrects the index's rows neither redraws the
// others nor loses an expansion or a selection.

import { fingerprint } from '../catalog/scan/session-info';
import type { SessionInfo } from '../catalog/types';
import type { AgentNode, SessionNode, SpillNode } from './treeModel';

/** What a redraw must announce: the whole tree, or these nodes (each redraws its row and, when expanded, its rows). */
export type TreeChange = 'all' | SpillNode[];

export class ShownNodes {
  private agents: AgentNode[] = [];
  /** Session nodes by session key, and what each row showed when last announced. */
  private readonly sessions = new Map<string, { node: SessionNode; print: string }>();
  /** A session's fingerprint, once per SessionInfo (the catalog makes a new one when it describes a session again). */
  private readonly prints = new WeakMap<SessionInfo, string>();

  /** `extra`: what else a session's row shows that its SessionInfo does not hold (its label's short id). */
  constructor(private readonly extra: (session: SessionInfo) => string = () => '') {}

  /** The agents to hand VS Code for `fresh` (a tree just built), the objects handed before reused by id. */
  adopt(fresh: AgentNode[]): AgentNode[] {
    this.update(fresh);
    return this.agents;
  }

  /** The node handed out for a session, if any (getParent must answer with the object VS Code holds). */
  session(key: string): SessionNode | undefined {
    return this.sessions.get(key)?.node;
  }

  /** The node handed out for an agent, if any. */
  agent(source: string): AgentNode | undefined {
    return this.agents.find((a) => a.source === source);
  }

  /** Brings the kept nodes to `fresh` (updated in place) and says which to announce. */
  update(fresh: AgentNode[]): TreeChange {
    const all = fresh.length !== this.agents.length || fresh.some((a, i) => a.source !== this.agents[i]!.source);
    const changed: SpillNode[] = [];
    const seen = new Set<string>();
    const agents = fresh.map((agent): AgentNode => {
      const kept = this.agent(agent.source);
      const nodes = agent.sessions.map((fresh) => this.keep(fresh, seen, changed));
      if (!kept) return { ...agent, sessions: nodes };
      const listChanged = kept.sessions.length !== nodes.length || nodes.some((n, i) => n !== kept.sessions[i]);
      // Its row counts what its sessions show: one changed session changes it.
      const countChanged = listChanged || changed.some((n) => n.kind === 'session' && n.session.source === agent.source);
      kept.sessions = nodes;
      if (countChanged) changed.push(kept);
      return kept;
    });
    for (const key of [...this.sessions.keys()]) if (!seen.has(key)) this.sessions.delete(key);
    this.agents = agents;
    return all ? 'all' : changed;
  }

  private keep(fresh: SessionNode, seen: Set<string>, changed: SpillNode[]): SessionNode {
    const key = fresh.session.key;
    seen.add(key);
    const print = `${fresh.shown.count} ${fresh.shown.bytes} ${fresh.session.updatedAt} ${this.extra(fresh.session)} ${this.printOf(fresh.session)}`;
    const kept = this.sessions.get(key);
    if (!kept) {
      this.sessions.set(key, { node: fresh, print });
      return fresh;
    }
    kept.node.session = fresh.session;
    kept.node.shown = fresh.shown;
    if (kept.print !== print) {
      kept.print = print;
      changed.push(kept.node);
    }
    return kept.node;
  }

  private printOf(session: SessionInfo): string {
    let print = this.prints.get(session);
    if (print === undefined) this.prints.set(session, (print = fingerprint(session)));
    return print;
  }
}
