// detail::read_plain_request against Beast's parser: what it reads, Beast reads the same way (the same message, the
// same bytes used); what it leaves, Beast reads or refuses. Typical requests, each kind it must leave to Beast, and
// 30,000 mutations of plain requests (a fixed seed) compared.
#include "../../src/http/plain_request.hpp"

#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/http/parser.hpp>
#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

namespace switchboard::http {
namespace {

namespace bhttp = boost::beast::http;

struct PlainRequestCase {
    static constexpr std::size_t max_header = 4096;
    static constexpr std::size_t max_body = 1024;

    struct Read {
        ServerRequest req;
        std::size_t used = 0;
    };

    // What Beast's parser makes of `text` with the server's settings (eager, the same limits); nullopt when it
    // refuses it or needs more.
    static std::optional<Read> by_beast(std::string_view text) {
        bhttp::request_parser<bhttp::string_body> parser;
        parser.eager(true);
        parser.header_limit(max_header);
        parser.body_limit(max_body);
        std::size_t used = 0;
        while (!parser.is_done()) {
            boost::system::error_code ec;
            const auto n = parser.put(boost::asio::buffer(text.data() + used, text.size() - used), ec);
            used += n;
            if (ec || n == 0) return std::nullopt;
        }
        return Read{parser.release(), used};
    }

    static std::optional<Read> plain(std::string_view text) {
        Read r;
        r.used = detail::read_plain_request(text, max_header, max_body, r.req);
        if (r.used == 0) return std::nullopt;
        return r;
    }

    static std::string describe(const ServerRequest& r) {
        std::string out = std::string(r.method_string()) + " " + std::string(r.target()) + " " +
                          std::to_string(r.version()) + (r.keep_alive() ? " keep-alive" : " close") + "\n";
        for (const auto& f : r) {
            out += std::string(f.name_string()) + ": " + std::string(f.value()) + " [" +
                   std::to_string(static_cast<int>(f.name())) + "]\n";
        }
        out += "body " + r.body();
        return out;
    }

    // Read plainly, then the same as Beast reads it.
    static void expect_same(std::string_view text) {
        const auto mine = plain(text);
        ASSERT_TRUE(mine.has_value()) << "left to Beast: " << text;
        const auto beast = by_beast(text);
        ASSERT_TRUE(beast.has_value()) << "Beast refuses what was read plainly: " << text;
        EXPECT_EQ(describe(mine->req), describe(beast->req)) << text;
        EXPECT_EQ(mine->used, beast->used) << text;
    }
};

TEST(PlainRequest, ReadsTypicalRequestsAsBeastDoes) {
    using C = PlainRequestCase;
    C::expect_same(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\nMcp-Session-Id: abc\r\nMCP-Protocol-Version: 2025-11-25\r\n"
        "Content-Length: 17\r\n\r\n{\"jsonrpc\":\"2.0\"}");
    C::expect_same("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    C::expect_same("GET /healthz?full=1 HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\n");
    C::expect_same("DELETE /mcp HTTP/1.1\r\nhost:x\r\nconnection: Close\r\nX-Empty:\r\nX-Spaced:   a  b   \r\n\r\n");
    C::expect_same("OPTIONS * HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
    // Two requests in the buffer: the first is read, the second stays.
    const std::string two = "POST /a HTTP/1.1\r\nContent-Length: 2\r\n\r\nhiGET /b HTTP/1.1\r\n\r\n";
    C::expect_same(two);
    EXPECT_EQ(C::plain(two)->used, two.find("GET"));
}

TEST(PlainRequest, LeavesWhatIsNotPlainToBeast) {
    using C = PlainRequestCase;
    const std::vector<std::string> left = {
        "POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n",
        "GET / HTTP/1.1\r\nX-Folded: a\r\n b\r\n\r\n",
        "GET / HTTP/1.1\r\nX-Tab:\ta\r\n\r\n",
        "GET / HTTP/1.1\r\nX-Utf8: \xc3\xa9\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nhi",
        "POST / HTTP/1.1\r\nContent-Length: 2, 2\r\n\r\nhi",
        "POST / HTTP/1.1\r\nContent-Length: +2\r\n\r\nhi",
        "GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
        "GET / HTTP/1.1\r\nConnection: keep-alive, close\r\n\r\n",
        "GET / HTTP/1.1\r\nProxy-Connection: close\r\n\r\n",
        "BREW / HTTP/1.1\r\n\r\n",
        "GET / HTTP/2.0\r\n\r\n",
        "GET / http/1.1\r\n\r\n",
        "GET  / HTTP/1.1\r\n\r\n",
        "\r\nGET / HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\nBad Name: x\r\n\r\n",
        "GET / HTTP/1.1\r\n: x\r\n\r\n",
        "GET / HTTP/1.1\r\nX\r\n\r\n",
        "GET / HTTP/1.1\nHost: x\n\n",
        "GET / HTTP/1.1\r\nHost: x\r\n",                                    // the head is not all there
        "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhi",                   // nor the body
        "POST / HTTP/1.1\r\nContent-Length: 2000\r\n\r\n",                  // over the body limit
        "GET / HTTP/1.1\r\nX-Big: " + std::string(5000, 'a') + "\r\n\r\n",  // over the header limit
    };
    for (const auto& text : left) EXPECT_FALSE(C::plain(text).has_value()) << text;
}

// Mutations of plain requests: a byte changed to one of the characters that matter to a parser, a byte dropped, a
// byte doubled, the text cut short. Whatever is read plainly must be what Beast reads.
TEST(PlainRequest, WhatItReadsBeastReadsTheSameUnderMutation) {
    using C = PlainRequestCase;
    const std::vector<std::string> seeds = {
        "POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 4\r\n\r\n{}{}",
        "GET /a?b=c HTTP/1.0\r\nConnection: close\r\nX: y\r\n\r\n",
        "PUT / HTTP/1.1\r\nA:b\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n",
    };
    static constexpr char specials_text[] =
        "\r\n :\t,\x7f\x80\x00"
        "0123456789aZ-/";
    const std::string specials(specials_text, sizeof specials_text - 1);
    std::mt19937 rng(20261128);
    int read_plainly = 0;
    for (int round = 0; round < 30000; ++round) {
        std::string text = seeds[rng() % seeds.size()];
        const int edits = 1 + static_cast<int>(rng() % 3);
        for (int e = 0; e < edits && !text.empty(); ++e) {
            const auto at = rng() % text.size();
            switch (rng() % 4) {
            case 0: text[at] = specials[rng() % specials.size()]; break;
            case 1: text.erase(at, 1); break;
            case 2: text.insert(at, 1, text[at]); break;
            default: text.resize(at); break;
            }
        }
        const auto mine = C::plain(text);
        if (!mine) continue;
        ++read_plainly;
        const auto beast = C::by_beast(text);
        ASSERT_TRUE(beast.has_value()) << "Beast refuses what was read plainly: " << ::testing::PrintToString(text);
        ASSERT_EQ(C::describe(mine->req), C::describe(beast->req)) << ::testing::PrintToString(text);
        ASSERT_EQ(mine->used, beast->used) << ::testing::PrintToString(text);
    }
    EXPECT_GT(read_plainly, 3000);  // the mutations leave enough plain requests to compare
}

}  // namespace
}  // namespace switchboard::http
