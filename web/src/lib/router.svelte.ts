// Hash routes: #/chat (the default; #/chat/12 is conversation 12), #/servers, #/tools, #/resources, #/prompts,
// #/settings.
export const routes = ['chat', 'servers', 'tools', 'resources', 'prompts', 'settings'] as const;
export type Route = (typeof routes)[number];

function parse(): { route: Route; param: string } {
  const [name, param = ''] = location.hash.replace(/^#\/?/, '').split(/[?]/)[0].split('/');
  return (routes as readonly string[]).includes(name) ? { route: name as Route, param } : { route: 'chat', param: '' };
}

/** `param`: what follows the route (`12` in #/chat/12), or "". */
export const router = $state(parse());

window.addEventListener('hashchange', () => {
  const before = router.route;
  Object.assign(router, parse());
  // A new page starts at its top, not where the last one was scrolled to.
  if (router.route !== before) window.scrollTo(0, 0);
});
