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

/** Whether an app may call the tool: its `_meta.ui.visibility` includes "app" (no such list: it does). */
export function appCallable(tool: Pick<Tool, '_meta'> | undefined): boolean {
  const visibility = ((tool?._meta as Record<string, unknown> | undefined)?.ui as { visibility?: unknown } | undefined)?.visibility;
  return !Array.isArray(visibility) || visibility.includes('app');
}

/** Whether an app's ui/open-link URL may be opened: http(s) only (a javascript: or data: URL would run as the UI). */
export function isWebLink(url: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(url).protocol);
  } catch {
    return false;
  }
}

/** The frame's `allow` attribute for a view's declared `_meta.ui.permissions`. */
export function allowOf(permissions: Record<string, unknown> | undefined): string {
  const features: Record<string, string> = { camera: 'camera', microphone: 'microphone', geolocation: 'geolocation', clipboardWrite: 'clipboard-write' };
  return Object.entries(features).filter(([key]) => permissions?.[key]).map(([, feature]) => feature).join('; ');
}
