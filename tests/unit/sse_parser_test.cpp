#include <switchboard/http/sse_parser.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace switchboard::http;

namespace {

struct Collected {
    std::string kind, type, data, id;
    std::size_t length = 0;
};

std::vector<Collected> drain(SseParser& p) {
    std::vector<Collected> out;
    SseEvent ev;
    while (p.next(ev))
        out.push_back({ev.kind == SseEvent::Kind::oversize ? "oversize" : "event", std::string(ev.type),
                       std::string(ev.data), std::string(ev.id), ev.length});
    return out;
}

// Feeds `text` in pieces of `step` bytes and collects every event.
std::vector<Collected> parse_in_steps(const std::string& text, std::size_t step, std::size_t limit = 1024) {
    SseParser p(limit);
    std::vector<Collected> all;
    for (std::size_t i = 0; i < text.size(); i += step) {
        p.feed(std::string_view(text).substr(i, step));
        for (auto& e : drain(p)) all.push_back(e);
    }
    return all;
}

}  // namespace

TEST(SseParser, MultiLineDataEventTypeIdAndComments) {
    const std::string text =
        ": comment\n"
        "event: endpoint\n"
        "data: /messages?sessionId=1\n"
        "\n"
        "id: 7\n"
        "data: {\"a\":\n"
        "data: 1}\n"
        "\n";
    for (std::size_t step : {1u, 2u, 5u, 1000u}) {
        auto ev = parse_in_steps(text, step);
        ASSERT_EQ(ev.size(), 2u) << "step " << step;
        EXPECT_EQ(ev[0].type, "endpoint");
        EXPECT_EQ(ev[0].data, "/messages?sessionId=1");
        EXPECT_EQ(ev[1].type, "message");
        EXPECT_EQ(ev[1].data, "{\"a\":\n1}");
        EXPECT_EQ(ev[1].id, "7");
    }
}

TEST(SseParser, CrLfAndLoneCrLineEnds) {
    for (const std::string& text :
         {std::string("data: x\r\n\r\ndata: y\r\n\r\n"), std::string("data: x\r\rdata: y\r\r")}) {
        for (std::size_t step : {1u, 3u, 100u}) {
            auto ev = parse_in_steps(text, step);
            ASSERT_EQ(ev.size(), 2u) << "step " << step;
            EXPECT_EQ(ev[0].data, "x");
            EXPECT_EQ(ev[1].data, "y");
        }
    }
}

TEST(SseParser, PrimingEventWithEmptyDataIsNotDispatchedButItsIdCounts) {
    SseParser p(1024);
    p.feed("id: abc_1\ndata:\n\n");
    EXPECT_TRUE(drain(p).empty());
    EXPECT_EQ(p.last_event_id(), "abc_1");
    p.feed("data: {\"x\":1}\n\n");
    auto ev = drain(p);
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_EQ(ev[0].id, "abc_1");  // the id stays in effect
}

TEST(SseParser, RetryFieldAndNoSpaceAfterColon) {
    SseParser p(1024);
    p.feed("retry: 250\nretry: bogus\ndata:x\n\n");
    auto ev = drain(p);
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_EQ(ev[0].data, "x");
    ASSERT_TRUE(p.retry());
    EXPECT_EQ(p.retry()->count(), 250);
}

TEST(SseParser, LeadingBomIsSkipped) {
    SseParser p(1024);
    p.feed(
        "\xEF\xBB\xBF"
        "data: a\n\n");
    auto ev = drain(p);
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_EQ(ev[0].data, "a");
}

TEST(SseParser, OversizeEventIsDroppedAndReportedThenParsingContinues) {
    std::string big(5000, 'x');
    const std::string text = "data: " + big + "\n\ndata: small\n\n";
    for (std::size_t step : {7u, 64u, 100000u}) {
        SseParser p(1000);
        std::vector<Collected> ev;
        std::size_t max_buffered = 0;
        for (std::size_t i = 0; i < text.size(); i += step) {
            p.feed(std::string_view(text).substr(i, step));
            max_buffered = std::max(max_buffered, p.buffered());
            for (auto& e : drain(p)) ev.push_back(e);
        }
        ASSERT_EQ(ev.size(), 2u) << "step " << step;
        EXPECT_EQ(ev[0].kind, "oversize");
        EXPECT_EQ(ev[0].length, 5000u);
        EXPECT_EQ(ev[1].kind, "event");
        EXPECT_EQ(ev[1].data, "small");
        if (step < 1000) {
            EXPECT_LE(max_buffered, 1000u + 16 + step) << "step " << step;
        }
    }
}

TEST(SseParser, OversizeAcrossManyDataLines) {
    SseParser p(100);
    std::string text;
    for (int i = 0; i < 50; ++i) text += "data: 0123456789\n";
    text += "\ndata: ok\n\n";
    p.feed(text);
    auto ev = drain(p);
    ASSERT_EQ(ev.size(), 2u);
    EXPECT_EQ(ev[0].kind, "oversize");
    EXPECT_EQ(ev[1].data, "ok");
}

namespace {

TEST(SseParser, ALargeEventArrivingInManyPiecesIsParsedOnceAndIntact) {
    // 4 MiB of data in one line, fed 1 KiB at a time (each piece used to rescan everything unparsed), with CR LF
    // endings that fall on piece boundaries.
    std::string payload(4u << 20, 'x');
    for (std::size_t i = 0; i < payload.size(); i += 4099) payload[i] = static_cast<char>('a' + i % 26);
    const std::string text = "id: 7\r\ndata: " + payload + "\r\n\r\ndata: after\r\n\r\n";
    for (std::size_t step : {1024u, 1023u, 4099u}) {
        auto events = parse_in_steps(text, step, 8u << 20);
        ASSERT_EQ(events.size(), 2u) << "step " << step;
        EXPECT_EQ(events[0].kind, "event");
        EXPECT_EQ(events[0].id, "7");
        EXPECT_TRUE(events[0].data == payload) << "step " << step << ": " << events[0].data.size() << " bytes";
        EXPECT_EQ(events[1].data, "after");
    }
}

}  // namespace
