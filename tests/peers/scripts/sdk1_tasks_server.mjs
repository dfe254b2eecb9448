// A 2025-11-25 server of the official TypeScript SDK v1 (@modelcontextprotocol/sdk) with the revision's experimental
// tasks: capability `tasks.requests.tools.call`, a tool whose `execution.taskSupport` is "required" (a call without
// the `task` param fails), served by the SDK's InMemoryTaskStore (tasks/get, tasks/result, tasks/cancel). Over stdio.
//   report {seconds}  a task that works `seconds` seconds (status message "step i/N")
// --log FILE: one line per tasks/* request the SDK answered (its transport's messages), for assertions.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import { appendFileSync } from 'node:fs';
import * as z from 'zod';

const args = process.argv.slice(2);
const logFile = args.includes('--log') ? args[args.indexOf('--log') + 1] : '';
const log = (line) => {
    if (logFile) appendFileSync(logFile, line + '\n');
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const taskStore = new InMemoryTaskStore();
const server = new McpServer(
    { name: 'sdk1-tasks', version: '1.0.0' },
    { capabilities: { tools: {}, tasks: { requests: { tools: { call: {} } }, cancel: {}, list: {} } }, taskStore }
);
server.experimental.tasks.registerToolTask(
    'report',
    { description: 'Writes a report (a task)', inputSchema: { seconds: z.number() }, execution: { taskSupport: 'required' } },
    {
        createTask: async ({ seconds }, extra) => {
            const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 200 });
            log(`created ${task.taskId}`);
            (async () => {
                for (let i = 1; i <= seconds; ++i) {
                    await sleep(1000);
                    const now = await taskStore.getTask(task.taskId);
                    if (!now || now.status === 'cancelled') return log(`stopped ${task.taskId}`);
                    await taskStore.updateTaskStatus(task.taskId, 'working', `step ${i}/${seconds}`);
                }
                await taskStore.storeTaskResult(task.taskId, 'completed', {
                    content: [{ type: 'text', text: `report ready after ${seconds} s` }]
                });
                log(`completed ${task.taskId}`);
            })();
            return { task };
        },
        getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
        getTaskResult: async (_args, extra) => extra.taskStore.getTaskResult(extra.taskId)
    }
);

const transport = new StdioServerTransport();
const onmessage = (message) => {
    if (typeof message?.method === 'string' && message.method.startsWith('tasks/'))
        log(`${message.method} ${message.params?.taskId ?? ''}`);
};
await server.connect(transport);
const inner = transport.onmessage;
transport.onmessage = (message, extra) => {
    onmessage(message);
    inner?.(message, extra);
};
