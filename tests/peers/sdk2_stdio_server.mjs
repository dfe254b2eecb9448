// A server built on the official TypeScript SDK v2 (@modelcontextprotocol/server), served over stdio by serveStdio,
// which speaks both eras (2026-07-28 and the legacy handshake). Tools: `greet` (text) and `add` (structured).
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
    server.registerResource('note', 'note://hello', { mimeType: 'text/plain' }, async (uri) => ({
        contents: [{ uri: uri.href, text: 'a note' }]
    }));
    return server;
});
