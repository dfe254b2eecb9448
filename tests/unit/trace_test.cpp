// core/trace: W3C traceparent parsing and writing, what a span records (or passes on) with and without a tracer, the
// samplers, and the duration histograms.
#include <switchboard/core/trace.hpp>

#include <gtest/gtest.h>

#include <algorithm>

namespace switchboard::trace {
namespace {

namespace json = boost::json;

constexpr const char* w3c_example = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(TraceContext, ParsesAndWritesTheW3CExample) {
    auto c = SpanContext::parse(w3c_example, "congo=t61rcWkgMzE", "k=v");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
    EXPECT_EQ(c->span_id_hex(), "00f067aa0ba902b7");
    EXPECT_TRUE(c->sampled);
    EXPECT_TRUE(c->recorded);
    EXPECT_EQ(c->traceparent(), w3c_example);
    json::object meta;
    c->to_meta(meta);
    EXPECT_EQ(meta.at("traceparent"), w3c_example);
    EXPECT_EQ(meta.at("tracestate"), "congo=t61rcWkgMzE");
    EXPECT_EQ(meta.at("baggage"), "k=v");
    auto back = SpanContext::from_meta(meta);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->trace_id, c->trace_id);
    EXPECT_EQ(back->tracestate, "congo=t61rcWkgMzE");
}

TEST(TraceContext, RefusesWhatTheSpecCallsInvalid) {
    for (const char* bad : {"", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",  // no flags
                            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",   // zero trace id
                            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",   // zero span id
                            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",   // version ff
                            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",   // uppercase
                            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", // v00 with more
                            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01"})  // not hex
        EXPECT_FALSE(SpanContext::parse(bad)) << bad;
    // A later version's first four fields are read.
    auto later = SpanContext::parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-whatever");
    ASSERT_TRUE(later);
    EXPECT_FALSE(later->sampled);
    json::object meta{{"traceparent", 5}};
    EXPECT_FALSE(SpanContext::from_meta(meta));
}

TEST(TraceSpan, WithoutATracerNothingIsRecordedAndTheParentPassesOn) {
    ASSERT_EQ(tracer(), nullptr);
    auto parent = *SpanContext::parse(w3c_example);
    auto s = Span::start("tools/call", "echo", SpanKind::client, parent);
    EXPECT_FALSE(s.recording());
    EXPECT_EQ(s.context().traceparent(), w3c_example);
    auto root = Span::start_local_root("call", "x", SpanKind::internal);
    EXPECT_FALSE(root.recording());
    EXPECT_FALSE(root.context().valid());
}

TEST(TraceSpan, ALocalRootAndItsChildrenAreRecordedInTheRing) {
    Tracer t(TracerOptions{});
    InstallTracer installed(&t);
    std::string root_id, child_parent;
    {
        auto root = Span::start_local_root("invoke_agent", "switchboard", SpanKind::internal);
        ASSERT_TRUE(root.recording());
        // No exporter: kept in the ring, and the next hop is told it is not sampled (a server that exports its part
        // would make a trace whose root no collector has).
        EXPECT_FALSE(root.context().sampled);
        auto child = Span::start("tools/call", "echo", SpanKind::client, root.context());
        ASSERT_TRUE(child.recording());
        EXPECT_EQ(child.context().trace_id, root.context().trace_id);
        child.set("gen_ai.tool.name", "echo");
        child.set("gen_ai.tool.name", "echo2");  // a key once: the later value wins
        child.add_event("retry", {{"attempt", std::int64_t{1}}});
        child.set_error("tool_error", "the tool answered with isError");
        root_id = root.context().span_id_hex();
    }
    auto spans = t.take_unsaved();
    ASSERT_EQ(spans.size(), 2u);  // the child ended first
    EXPECT_EQ(spans[0]->name, "tools/call echo");
    EXPECT_EQ(to_hex(spans[0]->parent_span_id), root_id);
    EXPECT_EQ(spans[0]->status, SpanStatus::error);
    EXPECT_EQ(std::get<std::string>(*spans[0]->attribute("error.type")), "tool_error");
    EXPECT_EQ(std::get<std::string>(*spans[0]->attribute("gen_ai.tool.name")), "echo2");
    EXPECT_EQ(spans[0]->attributes.size(), 2u);
    ASSERT_EQ(spans[0]->events.size(), 1u);
    EXPECT_GE(spans[0]->end_ns, spans[0]->start_ns);
    EXPECT_EQ(spans[1]->name, "invoke_agent switchboard");
    EXPECT_TRUE(t.take_unsaved().empty());
    EXPECT_EQ(t.spans_of(spans[0]->trace_id).size(), 2u);
}

TEST(TraceSpan, RequestsFromOutsideAreRecordedOnlyWhenExporting) {
    {
        Tracer local(TracerOptions{});
        InstallTracer installed(&local);
        // A gateway request with no traceparent, no exporter: nothing, at the cost of a branch.
        auto none = Span::start_remote("tools/call", "echo", SpanKind::server, std::nullopt);
        EXPECT_FALSE(none.recording());
        EXPECT_FALSE(none.context().valid());
        // Sampled by the client but no exporter: passed on as it came, not recorded.
        auto passed = Span::start_remote("tools/call", "echo", SpanKind::server, SpanContext::parse(w3c_example));
        EXPECT_FALSE(passed.recording());
        EXPECT_EQ(passed.context().traceparent(), w3c_example);
    }
    TracerOptions o;
    o.exporting = true;
    Tracer exporting(o);
    InstallTracer installed(&exporting);
    // The client sampled it: continued (parent-based).
    auto sampled = Span::start_remote("tools/call", "echo", SpanKind::server, SpanContext::parse(w3c_example));
    EXPECT_TRUE(sampled.recording());
    EXPECT_EQ(sampled.context().trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
    // Not sampled by the client: passed on unrecorded, its flag kept.
    auto unsampled = Span::start_remote("tools/call", "echo", SpanKind::server,
                                        SpanContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"));
    EXPECT_FALSE(unsampled.recording());
    EXPECT_EQ(unsampled.context().traceparent(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
    auto below = Span::start("tools/call", "echo", SpanKind::client, unsampled.context());
    EXPECT_FALSE(below.recording());
}

TEST(TraceSpan, TheSamplersDecideRootsAndRemoteParents) {
    TracerOptions o;
    o.exporting = true;
    o.sampler = Sampler::always_off;
    {
        Tracer t(o);
        InstallTracer installed(&t);
        auto rejected = Span::start_remote("x", "", SpanKind::server, std::nullopt);
        EXPECT_FALSE(rejected.recording());
        // The sampler's "no" goes on (flags 00), so the servers behind do not each decide afresh.
        EXPECT_TRUE(rejected.context().valid());
        EXPECT_FALSE(rejected.context().sampled);
        EXPECT_FALSE(Span::start_remote("x", "", SpanKind::server, SpanContext::parse(w3c_example)).recording());
        // A person's run is kept in the ring, unsampled: not exported, and the next hop is told so.
        auto local = Span::start_local_root("call", "x", SpanKind::internal);
        EXPECT_TRUE(local.recording());
        EXPECT_FALSE(local.context().sampled);
    }
    o.sampler = Sampler::parent_ratio;
    o.ratio = 0.5;
    Tracer t(o);
    int kept = 0;
    for (int i = 0; i < 2000; ++i) kept += t.sample_root(random_trace_id()) ? 1 : 0;
    EXPECT_GT(kept, 800);
    EXPECT_LT(kept, 1200);
    EXPECT_TRUE(t.sample_remote(*SpanContext::parse(w3c_example)));  // parent-based: the client's flag
    EXPECT_EQ(parse_sampler("parentbased_traceidratio"), Sampler::parent_ratio);
    EXPECT_FALSE(parse_sampler("sometimes"));
}

TEST(TraceSpan, OnlySampledSpansReachTheExportSink) {
    TracerOptions o;
    o.exporting = true;
    o.sampler = Sampler::always_off;
    Tracer t(o);
    InstallTracer installed(&t);
    int sunk = 0;
    t.set_sink([&](std::shared_ptr<const SpanData>) { ++sunk; });
    { auto local = Span::start_local_root("call", "x", SpanKind::internal); }
    EXPECT_EQ(sunk, 0);
    EXPECT_EQ(t.take_unsaved().size(), 1u);  // still in the ring
}

TEST(TraceMetrics, OperationsAreCountedByMethodAndErrorType) {
    {
        Tracer quiet(TracerOptions{});  // nobody reads them (a `call`): nothing recorded
        InstallTracer installed(&quiet);
        { OperationTimer ok(false, "tools/call"); }
        EXPECT_TRUE(quiet.operations().empty());
    }
    TracerOptions o;
    o.operation_metrics = true;
    Tracer t(o);
    InstallTracer installed(&t);
    {
        OperationTimer ok(false, "tools/call");
    }
    {
        OperationTimer failed(false, "tools/call");
        failed.set_error("tool_error");
    }
    t.record_operation(true, "tools/call", "", 0.3);
    t.record_operation(true, "tools/call", "", 500);
    const auto ops = t.operations();
    ASSERT_EQ(ops.size(), 3u);
    EXPECT_EQ(ops[0].count, 1u);
    EXPECT_EQ(ops[0].counts[0], 1u);  // well under 10 ms
    EXPECT_EQ(ops[1].error_type, "tool_error");
    EXPECT_TRUE(ops[2].server);
    EXPECT_EQ(ops[2].count, 2u);
    EXPECT_EQ(ops[2].counts[5], 1u);                                   // 0.3 s: the 0.5 s bucket
    EXPECT_EQ(ops[2].counts[OperationHistogram::bounds.size()], 1u);  // past 300 s
    // A client's made-up methods and a peer's error codes cannot grow the table without bound.
    for (int i = 0; i < 1000; ++i) t.record_operation(true, "x/" + std::to_string(i), std::to_string(i), 0.001);
    const auto after = t.operations();
    EXPECT_LE(after.size(), 256u + 1u);
    EXPECT_TRUE(std::any_of(after.begin(), after.end(), [](const auto& h) { return h.method == "_OTHER"; }));
}

TEST(TraceContext, TracestateAndBaggageThatCouldSplitAHeaderAreDropped) {
    auto c = SpanContext::parse(w3c_example, "a=b\r\nX-Injected: 1", std::string(9000, 'k'));
    ASSERT_TRUE(c);  // the traceparent itself is fine
    EXPECT_EQ(c->tracestate, "");
    EXPECT_EQ(c->baggage, "");
    std::string many;
    for (int i = 0; i < 40; ++i) many += (i ? "," : "") + std::string("k") + std::to_string(i) + "=v";
    EXPECT_EQ(SpanContext::parse(w3c_example, many)->tracestate, "");  // more than 32 members
}

}  // namespace
}  // namespace switchboard::trace
