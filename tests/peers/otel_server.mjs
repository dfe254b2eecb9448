// An MCP stdio server built on the official TypeScript SDK v2 (@modelcontextprotocol/server), instrumented
// with the OpenTelemetry JS SDK, for Switchboard's W3C trace-context / OTLP tests. Served by serveStdio, which
// speaks both eras (2026-07-28 and the legacy initialize handshake).
//
// For every tools/call it extracts the W3C trace context from the request's params._meta (traceparent,
// tracestate, baggage) and records a SERVER span `tools/call <tool>` under it, exported over OTLP/HTTP
// protobuf to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (e.g. http://127.0.0.1:PORT/v1/traces). The span is ended and
// flushed before the tool's result is returned, so the collector holds it once the call has answered.
//
// Environment: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (no exporter, hence no export, when unset),
//              OTEL_SERVICE_NAME (default "otel-peer").
// Tools: echo {text} -> text; slow {ms} -> "done" after ms; fail {message} -> isError result, span status ERROR;
//        trace_of_request {} -> JSON text of the params._meta the request carried.
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, propagation, trace } from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import * as z from 'zod';

const endpoint = process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
const serviceName = process.env.OTEL_SERVICE_NAME || 'otel-peer';

const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: endpoint ? [new SimpleSpanProcessor(new OTLPTraceExporter({ url: endpoint }))] : []
});
const tracer = provider.getTracer('switchboard-otel-peer', '1.0.0');

// traceparent/tracestate from W3CTraceContextPropagator, baggage from W3CBaggagePropagator.
const propagator = new CompositePropagator({
    propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()]
});
// A TextMapGetter over the _meta object. W3C headers are case-insensitive; _meta keys are exact, so look up the
// exact key first and fall back to a case-insensitive match.
const metaGetter = {
    keys: (carrier) => Object.keys(carrier ?? {}),
    get: (carrier, key) => {
        if (!carrier || typeof carrier !== 'object') return undefined;
        let v = carrier[key];
        if (v === undefined) {
            const k = Object.keys(carrier).find((x) => x.toLowerCase() === key);
            v = k === undefined ? undefined : carrier[k];
        }
        if (typeof v === 'string' || Array.isArray(v)) return v;
        return undefined;
    }
};

const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';

// Wraps a tool body in a SERVER span parented on the context carried by params._meta; ends and flushes the span
// before the result goes back.
function traced(server, toolName, body) {
    return async (args, ctx) => {
        const meta = ctx?.mcpReq?._meta ?? {};
        const parent = propagator.extract(ROOT_CONTEXT, meta, metaGetter);
        const attributes = { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': toolName };
        const version = ctx?.mcpReq?.envelope?.[PROTOCOL_VERSION_META_KEY] ?? server.server.getNegotiatedProtocolVersion?.();
        if (version) attributes['mcp.protocol.version'] = version;
        if (ctx?.mcpReq?.id !== undefined) attributes['jsonrpc.request.id'] = String(ctx.mcpReq.id);
        if (ctx?.sessionId) attributes['mcp.session.id'] = ctx.sessionId;
        const span = tracer.startSpan(`tools/call ${toolName}`, { kind: SpanKind.SERVER, attributes }, parent);
        const baggage = propagation.getBaggage(parent);
        if (baggage) {
            for (const [k, entry] of baggage.getAllEntries()) span.setAttribute(`baggage.${k}`, entry.value);
        }
        let result;
        try {
            result = await body(args, ctx, meta);
            if (result?.isError) {
                span.setStatus({ code: SpanStatusCode.ERROR, message: result.content?.[0]?.text ?? 'tool error' });
                span.setAttribute('error.type', 'tool_error');
            }
        } catch (err) {
            span.recordException(err);
            span.setStatus({ code: SpanStatusCode.ERROR, message: String(err?.message ?? err) });
            span.setAttribute('error.type', err?.name ?? 'Error');
            throw err;
        } finally {
            span.end();
            try {
                await provider.forceFlush();
            } catch (e) {
                process.stderr.write(`otel-peer: span export failed: ${e?.message ?? e}\n`);
            }
        }
        return result;
    };
}

const handle = serveStdio(() => {
    const server = new McpServer({ name: 'otel-peer', version: '1.0.0' });
    server.registerTool(
        'echo',
        { description: 'Returns the text it is given', inputSchema: z.object({ text: z.string() }) },
        traced(server, 'echo', async ({ text }) => ({ content: [{ type: 'text', text }] }))
    );
    server.registerTool(
        'slow',
        { description: 'Waits ms milliseconds, then returns "done"', inputSchema: z.object({ ms: z.number() }) },
        traced(server, 'slow', async ({ ms }, ctx) => {
            await new Promise((resolve, reject) => {
                const t = setTimeout(resolve, Math.max(0, ms));
                ctx?.mcpReq?.signal?.addEventListener('abort', () => {
                    clearTimeout(t);
                    reject(new Error('cancelled'));
                });
            });
            return { content: [{ type: 'text', text: 'done' }] };
        })
    );
    server.registerTool(
        'fail',
        { description: 'Returns a tool error (isError)', inputSchema: z.object({ message: z.string().optional() }) },
        traced(server, 'fail', async ({ message }) => ({
            content: [{ type: 'text', text: message ?? 'failed on purpose' }],
            isError: true
        }))
    );
    server.registerTool(
        'trace_of_request',
        { description: 'Returns, as JSON text, the params._meta the request carried', inputSchema: z.object({}) },
        traced(server, 'trace_of_request', async (_args, ctx, meta) => ({
            content: [{ type: 'text', text: JSON.stringify({ ...meta, ...(ctx?.mcpReq?.envelope ?? {}) }) }]
        }))
    );
    return server;
});

let shuttingDown = false;
async function shutdown() {
    if (shuttingDown) return;
    shuttingDown = true;
    try {
        await handle.close();
    } catch {}
    try {
        await provider.shutdown();
    } catch {}
    process.exit(0);
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
process.stdin.on('end', shutdown);
