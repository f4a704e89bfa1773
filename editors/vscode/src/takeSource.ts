// Whose change "Take This Change" takes. In Show Diff (the base on the left,
// one agent's version on the right) it is that agent's, from either side. In
// Compare Agents both sides are agents' versions, so the side the cursor is
// in decides, and the take names its agent ("Take careful's change") before
// it takes anything. A compared agent that left the file alone is shown by
// the base's version, which stands for that agent (`owner`): there is no
// change of its to take. No VS Code imports: the unit tests run it under plain Node.

/** What a `hydra:` document shows (diff.ts' parseContentUri). */
export interface ShownDocument {
  raceId: string;
  agentId: string;
  path: string;
  side: 'base' | 'agent';
  /** In a comparison, the agent a base version stands for: one that did not change the file. */
  owner?: string;
}

export type TakeSource =
  /** `agentId`'s change; `comparedWith` names the other agent of a comparison. */
  | { agentId: string; comparedWith?: string }
  /** The cursor is in the version of `unchanged`, an agent that left the file alone; `other` changed it. */
  | { unchanged: string; other: string };

/** The agent a document of a diff shows the version of. */
function agentOf(doc: ShownDocument): string {
  return doc.side === 'agent' ? doc.agentId : doc.owner ?? doc.agentId;
}

/**
 * Whose change the cursor's document (`focused`) offers, given the other side
 * of its diff (`other`, when it is a `hydra:` document too).
 */
export function takeSource(focused: ShownDocument, other: ShownDocument | undefined): TakeSource {
  if (focused.side === 'base' && focused.owner !== undefined) return { unchanged: focused.owner, other: focused.agentId };
  const agentId = focused.agentId;
  const comparedWith = other && other.raceId === focused.raceId ? agentOf(other) : undefined;
  return comparedWith !== undefined && comparedWith !== agentId ? { agentId, comparedWith } : { agentId };
}

/** The button that takes it: "Take careful's change". */
export function takeLabel(agentId: string): string {
  return `Take ${agentId}'s change`;
}
