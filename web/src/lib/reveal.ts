import { tick } from 'svelte';

/** Scrolls a detail pane to the top once updated, when it is stacked below the list that was clicked. */
export async function reveal(el: HTMLElement | undefined): Promise<void> {
  await tick();
  // The same breakpoint as `.split` in app.css: side by side above it, the pane is already in view.
  if (el && matchMedia('(max-width: 800px)').matches) el.scrollIntoView({ block: 'start', behavior: 'smooth' });
}
