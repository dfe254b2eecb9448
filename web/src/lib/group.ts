/** Items grouped by their `server`, groups in config order (servers the order does not know last). */
export function groupByServer<T extends { server: string }>(items: T[], order: string[]): [string, T[]][] {
  const groups = new Map<string, T[]>();
  for (const name of order) groups.set(name, []);
  for (const item of items) {
    if (!groups.has(item.server)) groups.set(item.server, []);
    groups.get(item.server)!.push(item);
  }
  return [...groups].filter(([, list]) => list.length > 0);
}
