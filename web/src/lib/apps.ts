// MCP Apps (io.modelcontextprotocol/ui): which tools have one, and where the sandbox proxy that frames them lives.
import type { Tool } from './types';

/** The tool's `_meta.ui.resourceUri` (or the first drafts' flat `ui/resourceUri`) when it is a ui:// URI. */
export function appUri(tool: Pick<Tool, '_meta'> | undefined): string | undefined {
  const meta = tool?._meta as Record<string, unknown> | undefined;
  const ui = meta?.ui as { resourceUri?: unknown } | undefined;
  const uri = ui?.resourceUri ?? meta?.['ui/resourceUri'];
  return typeof uri === 'string' && uri.startsWith('ui://') ? uri : undefined;
}

/**
 * The sandbox proxy's URL: the same server under the other loopback name (127.0.0.1 <-> localhost), which the browser
 * treats as another origin; undefined when the UI is reached under any other name (apps are then not shown).
 */
export function sandboxUrl(): string | undefined {
  const other = location.hostname === '127.0.0.1' ? 'localhost' : location.hostname === 'localhost' ? '127.0.0.1' : '';
  return other ? `${location.protocol}//${other}${location.port ? `:${location.port}` : ''}/sandbox` : undefined;
}
