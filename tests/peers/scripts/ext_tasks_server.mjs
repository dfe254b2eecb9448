// A 2026-07-28 MCP server that answers `report` with a task of the Tasks extension (io.modelcontextprotocol/tasks),
// over stdio (default) or stateless Streamable HTTP (--http PORT, 0 for any; it prints "listening on URL"). Every
// task message it receives or sends is checked against the extension's official schemas
// (@modelcontextprotocol/ext-tasks/core/v2); a message that fails is answered with an error and logged as INVALID.
//
//   report {seconds, ask}  a task that works `seconds` seconds (status message "step i/N"); with ask, it needs an
//                          elicitation answer (input_required, answered by tasks/update) after the first second
//   echo {text}            an ordinary result
//
// --log FILE: one line per event (tools/call, tasks/get|update|cancel with the task id, mcp-name checks, INVALID).
// --ttl MS: the tasks' ttlMs (default 60000); --poll MS: pollIntervalMs (default 200).
// --notify (stdio): subscriptions/listen with notifications.taskIds is acknowledged and each state of those tasks is
// pushed as notifications/tasks on that stream (logged "listen TASK", "notified TASK STATUS").
import {
    TASKS_EXTENSION_ID_V2,
    CreateTaskResultV2Schema,
    GetTaskResultV2Schema,
    TaskStatusNotificationV2Schema,
    isCancelTaskRequestV2,
    isGetTaskRequestV2,
    isUpdateTaskRequestV2
} from '@modelcontextprotocol/ext-tasks/core/v2';
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : dflt;
};
const logFile = opt('--log', '');
const ttlMs = Number(opt('--ttl', '60000'));
const pollIntervalMs = Number(opt('--poll', '200'));
const log = (line) => {
    if (logFile) appendFileSync(logFile, line + '\n');
};

const tasks = new Map();  // taskId -> task state
const notify = args.includes('--notify');
const listeners = new Map();  // taskId -> listen request ids (stdio)
const send = (message) => process.stdout.write(JSON.stringify(message) + '\n');

const now = () => new Date().toISOString();
const wire = (t) => {
    const w = { taskId: t.taskId, status: t.status, createdAt: t.createdAt, lastUpdatedAt: t.lastUpdatedAt, ttlMs,
                pollIntervalMs };
    if (t.statusMessage) w.statusMessage = t.statusMessage;
    if (t.status === 'input_required') w.inputRequests = t.inputRequests;
    if (t.status === 'completed') w.result = t.result;
    return w;
};
const set = (t, fields) => {
    if (['completed', 'cancelled', 'failed'].includes(t.status)) return;
    Object.assign(t, fields, { lastUpdatedAt: now() });
    for (const id of listeners.get(t.taskId) ?? []) {
        const params = { ...wire(t), _meta: { 'io.modelcontextprotocol/subscriptionId': id } };
        if (!TaskStatusNotificationV2Schema.safeParse({ jsonrpc: '2.0', method: 'notifications/tasks', params }).success)
            log('INVALID own notifications/tasks');
        send({ jsonrpc: '2.0', method: 'notifications/tasks', params });
        log(`notified ${t.taskId} ${t.status}`);
    }
};

function startReport(seconds, ask) {
    const t = { taskId: 'task-' + randomUUID(), status: 'working', createdAt: now(), lastUpdatedAt: now(),
                statusMessage: `step 0/${seconds}`, answer: null };
    tasks.set(t.taskId, t);
    let step = 0;
    const tick = () => {
        if (t.status === 'cancelled') return;
        if (t.status === 'input_required') return void setTimeout(tick, 100);
        if (ask && step === 1 && t.answer === null) {
            set(t, { status: 'input_required', statusMessage: 'waiting for confirmation',
                     inputRequests: { 'confirm-1': { method: 'elicitation/create', params: {
                         mode: 'form', message: 'Include the appendix?',
                         requestedSchema: { type: 'object', properties: { appendix: { type: 'boolean' } },
                                            required: ['appendix'] } } } } });
            return void setTimeout(tick, 100);
        }
        if (step >= seconds) {
            const extra = t.answer === null ? '' : ` (appendix: ${t.answer})`;
            set(t, { status: 'completed', statusMessage: 'done',
                     result: { content: [{ type: 'text', text: `report ready after ${seconds} s${extra}` }],
                               isError: false } });
            log(`completed ${t.taskId}`);
            return;
        }
        step += 1;
        set(t, { statusMessage: `step ${step}/${seconds}` });
        setTimeout(tick, 1000);
    };
    setTimeout(tick, 0);
    return t;
}

const error = (code, message, data) => ({ error: data ? { code, message, data } : { code, message } });
const declaresTasks = (params) => {
    const caps = params?._meta?.['io.modelcontextprotocol/clientCapabilities'];
    return caps?.extensions?.[TASKS_EXTENSION_ID_V2] !== undefined;
};
const tools = [
    { name: 'report', description: 'Writes a report; takes a while (a task)',
      inputSchema: { type: 'object', properties: { seconds: { type: 'number' }, ask: { type: 'boolean' } } } },
    { name: 'echo', description: 'Echoes text', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }
];

function taskRequest(msg, check) {
    const t = tasks.get(msg.params?.taskId);
    log(`${msg.method} ${msg.params?.taskId}`);
    if (!check(msg)) {
        log(`INVALID ${msg.method} ${JSON.stringify(msg.params)}`);
        return error(-32602, `invalid ${msg.method} request`);
    }
    if (!declaresTasks(msg.params)) return error(-32021, 'Missing required client capability',
        { requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID_V2]: {} } } });
    if (!t) return error(-32602, 'Failed to retrieve task: Task not found');
    return t;
}

function handle(msg) {
    const p = msg.params ?? {};
    switch (msg.method) {
    case 'server/discover':
        return { result: { resultType: 'complete', supportedVersions: ['2026-07-28'],
                           capabilities: { tools: {}, extensions: { [TASKS_EXTENSION_ID_V2]: {} } },
                           _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'ext-tasks-peer', version: '1.0.0' } } } };
    case 'tools/list':
        return { result: { resultType: 'complete', tools } };
    case 'tools/call': {
        log(`tools/call ${p.name}`);
        if (p.name === 'echo') return { result: { resultType: 'complete',
                                                  content: [{ type: 'text', text: String(p.arguments?.text ?? '') }] } };
        if (p.name !== 'report') return error(-32602, `unknown tool ${p.name}`);
        if (!declaresTasks(p)) return error(-32021, 'Missing required client capability',
            { requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID_V2]: {} } } });
        const t = startReport(Number(p.arguments?.seconds ?? 5), Boolean(p.arguments?.ask));
        const result = { resultType: 'task', ...wire(t) };
        if (!CreateTaskResultV2Schema.safeParse(result).success) log('INVALID own CreateTaskResult');
        return { result };
    }
    case 'tasks/get': {
        const t = taskRequest(msg, isGetTaskRequestV2);
        if (t.error) return t;
        const result = { resultType: 'complete', ...wire(t) };
        if (!GetTaskResultV2Schema.safeParse(result).success) log('INVALID own GetTaskResult');
        return { result };
    }
    case 'tasks/update': {
        const t = taskRequest(msg, isUpdateTaskRequestV2);
        if (t.error) return t;
        const answer = p.inputResponses?.['confirm-1'];
        if (t.status === 'input_required' && answer) {
            t.answer = answer.action === 'accept' ? Boolean(answer.content?.appendix) : answer.action;
            log(`answer ${JSON.stringify(answer)}`);
            set(t, { status: 'working', statusMessage: 'confirmed', inputRequests: undefined });
        }
        return { result: { resultType: 'complete' } };
    }
    case 'tasks/cancel': {
        const t = taskRequest(msg, isCancelTaskRequestV2);
        if (t.error) return t;
        set(t, { status: 'cancelled', statusMessage: 'cancelled by the client' });
        return { result: { resultType: 'complete' } };
    }
    default:
        return error(-32601, `Method not found: ${msg.method}`);
    }
}

// subscriptions/listen for tasks (stdio, --notify): acknowledged on the stream, which stays open (no reply).
function listen(msg) {
    const ids = (msg.params?.notifications?.taskIds ?? []).filter((id) => tasks.has(id));
    for (const id of ids) {
        listeners.set(id, [...(listeners.get(id) ?? []), msg.id]);
        log(`listen ${id}`);
    }
    send({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged',
           params: { _meta: { 'io.modelcontextprotocol/subscriptionId': msg.id }, notifications: { taskIds: ids } } });
}

function reply(msg) {
    if (msg.method === 'notifications/cancelled') {
        for (const [id, subs] of listeners) listeners.set(id, subs.filter((s) => s !== msg.params?.requestId));
        return null;
    }
    if (msg.method === 'subscriptions/listen' && notify && port === null) return listen(msg), null;
    if (msg.id === undefined || msg.id === null) return null;  // a notification
    return JSON.stringify({ jsonrpc: '2.0', id: msg.id, ...handle(msg) });
}

const port = opt('--http', null);
if (port === null) {
    const rl = createInterface({ input: process.stdin });
    rl.on('line', (line) => {
        if (!line.trim()) return;
        const out = reply(JSON.parse(line));
        if (out) process.stdout.write(out + '\n');
    });
    rl.on('close', () => process.exit(0));
} else {
    const server = createServer((req, res) => {
        let body = '';
        req.on('data', (c) => { body += c; });
        req.on('end', () => {
            if (req.method !== 'POST') {
                res.writeHead(405).end();
                return;
            }
            const msg = JSON.parse(body);
            // Tasks requests carry the task id in Mcp-Name (the extension's routing header).
            if (typeof msg.method === 'string' && msg.method.startsWith('tasks/')) {
                const name = req.headers['mcp-name'];
                log(name === msg.params?.taskId ? `mcp-name ok ${msg.method}` : `mcp-name MISMATCH ${msg.method} ${name}`);
                if (name !== msg.params?.taskId) {
                    res.writeHead(400, { 'Content-Type': 'application/json' });
                    res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id,
                                             error: { code: -32020, message: 'Mcp-Name header does not match body' } }));
                    return;
                }
            }
            const out = reply(msg);
            if (!out) {
                res.writeHead(202).end();
                return;
            }
            res.writeHead(200, { 'Content-Type': 'application/json' });
            res.end(out);
        });
    });
    server.listen(Number(port), '127.0.0.1', () => {
        process.stderr.write(`listening on http://127.0.0.1:${server.address().port}/mcp\n`);
    });
}
