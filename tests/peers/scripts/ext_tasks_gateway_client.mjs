// Two clients of the Tasks extension's official requester (@modelcontextprotocol/ext-tasks/client over the TS SDK v2
// client) against `switchboard serve` (2026-07-28, stateless HTTP), whose upstream answers `report` with tasks
// (ext_tasks_server.mjs). Prints one JSON line with what it saw; tests/integration/gateway_tasks_test.cpp checks it.
//
//   node ext_tasks_gateway_client.mjs URL
//
// Client A: report {seconds: 5} followed to completion; report {seconds: 30} cancelled after a second; report
// {seconds: 2, ask: true}, whose input_required round the input handler answers. Client B (another clientInfo) asks
// for A's first task by its id: it must not find it.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient } from '@modelcontextprotocol/ext-tasks/client';

const [url] = process.argv.slice(2);
const version = '2026-07-28';
let nextId = 1;

// The raw path the package needs for 2026-07-28 task traffic: one POST per request, the routing headers set.
function rawDispatch(request) {
    const body = { jsonrpc: '2.0', id: nextId++, ...request };
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
                      'MCP-Protocol-Version': version, 'Mcp-Method': request.method };
    const p = request.params ?? {};
    if (request.method === 'tools/call') headers['Mcp-Name'] = p.name;
    if (request.method.startsWith('tasks/')) headers['Mcp-Name'] = p.taskId;
    return fetch(url, { method: 'POST', headers, body: JSON.stringify(body) }).then(async (res) => {
        const text = await res.text();
        // A JSON body, or an SSE stream whose last data line is the answer.
        const json = text.trimStart().startsWith('{')
            ? JSON.parse(text)
            : JSON.parse(text.split('\n').filter((l) => l.startsWith('data:')).pop().slice(5));
        return json.error ? { kind: 'error', error: json.error } : { kind: 'result', result: json.result };
    });
}

async function session(name, asked) {
    const client = new Client({ name, version: '1.0.0' },
                              { versionNegotiation: { mode: { pin: version } }, capabilities: { elicitation: {} } });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const s = createTaskSessionFromClient(client, {
        endpointId: `switchboard-gateway-${name}`,
        rawDispatch,
        v2RequestFraming: { protocolVersion: version, clientInfo: { name, version: '1.0.0' },
                            clientCapabilities: { elicitation: {} } },
        onInputRequest: async (request) => {
            asked.push(request.kind);
            return { action: 'accept', content: { appendix: true } };
        },
    });
    return { client, s };
}

const text = (r) => (r?.content ?? []).map((c) => c.text ?? '').join('');
const out = { asked: [] };
const a = await session('ext-tasks-a', out.asked);

// A 5 s task, polled to its end.
let began = Date.now();
const first = await a.s.callTool('report', { seconds: 5 });
out.firstKind = first.kind;
out.firstId = first.handle?.taskId ?? null;
const statuses = new Set();
const settled = await first.settle({ onEvent: (e) => { if (e.type === 'task') statuses.add(e.task.status); } });
out.firstStatus = settled.outcome.status;
out.firstText = text(settled.outcome.result);
 if (settled.outcome.error) out.firstError = String(settled.outcome.error?.message) + JSON.stringify(settled.outcome.error);
out.firstSeconds = (Date.now() - began) / 1000;
out.firstStatuses = [...statuses];

// A 30 s task, cancelled after a second.
began = Date.now();
const second = await a.s.callTool('report', { seconds: 30 });
out.secondId = second.handle?.taskId ?? null;
await new Promise((r) => setTimeout(r, 1000));
await second.cancel();
const cancelled = await a.s.task(out.secondId).snapshot();
out.secondStatus = cancelled.status;
out.secondSeconds = (Date.now() - began) / 1000;

// A task that asks for input once (answered through tasks/update).
const third = await a.s.callTool('report', { seconds: 2, ask: true });
const thirdSettled = await third.settle();
out.thirdStatus = thirdSettled.outcome.status;
out.thirdText = text(thirdSettled.outcome.result);
if (thirdSettled.outcome.error) out.thirdError = String(thirdSettled.outcome.error?.message);

// Another client with A's id: not found.
const b = await session('ext-tasks-b', []);
try {
    const seen = await b.s.task(out.firstId).snapshot();
    out.otherClient = { found: true, status: seen.status };
} catch (e) {
    out.otherClient = { found: false, error: String(e?.message ?? e), code: e?.code ?? e?.error?.code ?? null };
}
// A itself still finds it (kept for its ttl).
out.ownerAgain = (await a.s.task(out.firstId).snapshot()).status;

console.log(JSON.stringify(out));
await a.s.close();
await b.s.close();
process.exit(0);
