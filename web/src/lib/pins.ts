// What the page says about a held definition (GET /api/pins): what changed, and its diff line by line.
import type { HeldDefinition, PinKind } from './types';

export type DiffLine = { change: 'removed' | 'added' | 'same'; text: string };

const kindNames: Record<PinKind, string> = { tool: 'tool', prompt: 'prompt', resourceTemplate: 'resource template' };

export const kindName = (kind: PinKind) => kindNames[kind];

/** "new", or the fields that changed: "description, inputSchema". */
export const whatChanged = (h: HeldDefinition) => (h.pinnedDigest ? h.changed.join(', ') : 'new');

/** The lines of a held definition's diff ("- " only in the pin, "+ " only now, "  " in both), marks kept: they say
 *  what colour says, to anyone who cannot see the colour. */
export function diffLines(diff: string): DiffLine[] {
  return diff
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => ({
      change: line.startsWith('- ') ? 'removed' : line.startsWith('+ ') ? 'added' : 'same',
      text: line,
    }));
}
