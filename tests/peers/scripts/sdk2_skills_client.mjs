// The official TypeScript SDK v2 client (@modelcontextprotocol/client, its Skills extension client) against a
// Streamable HTTP server: lists every skill, gets each one, reads and verifies every file of each (size, digest and,
// for SKILL.md, the frontmatter against the entry), and prints what it saw as one JSON line.
//
//   node sdk2_skills_client.mjs URL legacy|modern
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';

const [url, era = 'legacy'] = process.argv.slice(2);
const versionNegotiation = era === 'modern' ? { mode: { pin: '2026-07-28' } } : { mode: 'legacy' };
const client = new Client({ name: 'sdk2-skills-client', version: '1.0.0' }, { versionNegotiation });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const skills = new SkillsClient(client);
const out = { supported: skills.supported, skills: [] };
const listing = await skills.list();
for (const entry of listing.skills) {
  const { skill } = await skills.get(entry.uri);
  const files = [];
  for (const file of entry.resources === 'dynamic' ? [{ uri: entry.uri }] : entry.resources) {
    const read = await skills.read(skill, file.uri);
    files.push({ uri: file.uri, verified: read.verified, bytes: (read.text ?? '').length || read.bytes?.length || 0 });
  }
  out.skills.push({ uri: entry.uri, name: entry.frontmatter.name, files });
}
console.log(JSON.stringify(out));
await client.close();
