// A server built on the official TypeScript SDK v2 (@modelcontextprotocol/server), served over stdio by serveStdio,
// which speaks both eras (2026-07-28 and the legacy handshake). Tools: `greet` and `add` (text), `stamp`, whose
// result carries a _meta member of its own, and `half` (structured: {ratio: 0.5}, a number JSON.stringify writes as
// 0.5, where Boost.JSON would write 5E-1).
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

serveStdio(() => {
    const server = new McpServer({ name: 'sdk2-peer', version: '1.0.0' });
    server.registerTool(
        'greet',
        { description: 'Says hello', inputSchema: z.object({ name: z.string() }) },
        async ({ name }) => ({ content: [{ type: 'text', text: `Hello, ${name}!` }] })
    );
    server.registerTool(
        'add',
        { description: 'Adds two numbers', inputSchema: z.object({ a: z.number(), b: z.number() }) },
        async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] })
    );
    server.registerTool('stamp', { description: 'Answers with a _meta member of its own' }, async () => ({
        content: [{ type: 'text', text: 'stamped' }],
        _meta: { 'example.com/stamp': 'kept' }
    }));
    server.registerTool(
        'half',
        { description: 'One half, structured', outputSchema: z.object({ ratio: z.number() }) },
        async () => ({ content: [{ type: 'text', text: 'one half' }], structuredContent: { ratio: 0.5 } })
    );
    server.registerResource('note', 'note://hello', { mimeType: 'text/plain' }, async (uri) => ({
        contents: [{ uri: uri.href, text: 'a note' }]
    }));
    return server;
});
