// Switching one tool on or off is an edit of its server's allowedTools/excludedTools.
import type { ServerConfig } from './types';

export function withToolEnabled(config: ServerConfig, tool: string, on: boolean): ServerConfig {
  const c: ServerConfig = { ...config };
  const excluded = (c.excludedTools ?? []).filter((t) => t !== tool);
  if (on) {
    // With an allow-list, the tool must be on it too.
    if (c.allowedTools?.length && !c.allowedTools.includes(tool)) c.allowedTools = [...c.allowedTools, tool];
  } else {
    excluded.push(tool);
  }
  if (excluded.length) c.excludedTools = excluded;
  else delete c.excludedTools;
  return c;
}
