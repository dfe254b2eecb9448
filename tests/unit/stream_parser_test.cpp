// StreamParser and the LineFramer's long lines: a message parsed from pieces is the message parsed whole, but for the
// big `blob` strings it takes out decoded, which restore_blobs puts back as the same text.
#include <switchboard/core/base64.hpp>
#include <switchboard/jsonrpc/framing.hpp>
#include <switchboard/jsonrpc/stream_parser.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

namespace {

namespace json = boost::json;
using namespace switchboard;
using jsonrpc::LineFramer;
using jsonrpc::StreamParser;

std::string pattern_bytes(std::size_t n) {
    std::string out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) out.push_back(static_cast<char>((i * 7) % 251));
    return out;
}

// Feeds `text` in pieces of random sizes (1 to `max_piece` bytes).
jsonrpc::StreamedMessage parse_in_pieces(std::string_view text, std::size_t max_piece, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::size_t> size(1, max_piece);
    StreamParser p;
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t n = std::min(size(rng), text.size() - at);
        p.feed(text.substr(at, n));
        at += n;
    }
    return p.finish();
}

std::string read_result(std::string_view blob_text) {
    return R"({"jsonrpc":"2.0","id":7,"result":{"contents":[{"uri":"demo://x","text":"t"},)"
           R"({"uri":"demo://b","mimeType":"application/octet-stream","blob":")" +
           std::string(blob_text) + R"("}],"_meta":{"k":[1,2.5,true,null]}}})";
}

TEST(Base64, EncodesAndDecodesEverySizeInAnyPieces) {
    for (std::size_t n : {0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u, 100u, 1000u, 4099u}) {
        const auto bytes = pattern_bytes(n);
        const auto text = core::base64_encode(bytes);
        EXPECT_EQ(text.size(), core::base64_size(n));
        EXPECT_EQ(core::base64_decode(text), bytes) << n;
        for (std::size_t piece : {1u, 2u, 3u, 5u, 7u, 64u}) {
            std::string out;
            core::Base64Decoder d(out);
            for (std::size_t at = 0; at < text.size(); at += piece)
                ASSERT_TRUE(d.feed(std::string_view(text).substr(at, piece))) << n << " in pieces of " << piece;
            EXPECT_TRUE(d.finish());
            EXPECT_EQ(out, bytes) << n << " in pieces of " << piece;
        }
    }
    EXPECT_EQ(core::base64_encode("hi"), "aGk=");
    EXPECT_EQ(core::base64_encode("hello\n"), "aGVsbG8K");
}

TEST(Base64, RefusesWhatItWouldNotWrite) {
    for (std::string_view bad : {"aGk", "aGk==", "aGl=", "aQ=", "aR==", "a===", "aGk=aGk=", "aG k", "aGk\n", "!!!!"})
        EXPECT_FALSE(core::base64_decode(bad)) << bad;
    // A refused piece changes nothing: the text so far is the output encoded again, then what is pending.
    std::string out;
    core::Base64Decoder d(out);
    ASSERT_TRUE(d.feed("aGVsbG8Ka"));
    EXPECT_FALSE(d.feed("G!x"));
    EXPECT_EQ(core::base64_encode(out) + std::string(d.pending()), "aGVsbG8Ka");
}

TEST(StreamParser, ABigBlobIsDecodedAndTheRestIsWhatAWholeParseGives) {
    const auto bytes = pattern_bytes(300'001);
    const auto text = read_result(core::base64_encode(bytes));
    for (std::size_t max_piece : {1u << 16, 4099u, 7u}) {
        auto m = parse_in_pieces(text, max_piece, static_cast<unsigned>(max_piece));
        ASSERT_FALSE(m.error) << m.error->message;
        ASSERT_EQ(m.blobs.size(), 1u);
        EXPECT_EQ(m.blobs[0].pointer, "/result/contents/1/blob");
        EXPECT_TRUE(m.blobs[0].bytes == bytes) << "pieces up to " << max_piece;
        EXPECT_EQ(m.value.at_pointer("/result/contents/1/blob"), "");
        jsonrpc::restore_blobs(m.value, std::move(m.blobs));
        EXPECT_TRUE(m.value == json::parse(text)) << "pieces up to " << max_piece;
    }
}

TEST(StreamParser, WhatIsNotABigCanonicalBlobStaysTheTextItWas) {
    const auto big = core::base64_encode(pattern_bytes(200'000));
    std::vector<std::string> blobs{
        "aGVsbG8K",                                            // small: not worth holding apart
        big.substr(0, big.size() - 4) + "!!!!",                // a stray character at the end
        big.substr(0, 1000) + "!" + big.substr(1000),          // one before the decoding starts
        big.substr(0, 100'000) + "\\n" + big.substr(100'000),  // an escaped line break (MIME style)
        big + "aGk=",                                          // data after padding... the last group
        big.substr(0, big.size() - 1),                         // not a multiple of four
        big.substr(0, 150'000) + fmt::format("\\u{:04x}", big[150'000]) + big.substr(150'001),  // an escaped letter
    };
    for (std::size_t i = 0; i < blobs.size(); ++i) {
        const auto text = read_result(blobs[i]);
        auto m = parse_in_pieces(text, 5000, static_cast<unsigned>(i));
        ASSERT_FALSE(m.error) << i << ": " << m.error->message;
        const auto whole = json::parse(text);
        if (i == 6) {  // canonical base64 once unescaped: decoded, and put back unescaped
            ASSERT_EQ(m.blobs.size(), 1u);
            jsonrpc::restore_blobs(m.value, std::move(m.blobs));
        } else {
            EXPECT_TRUE(m.blobs.empty()) << i;
        }
        EXPECT_TRUE(m.value == whole) << i;
    }
}

TEST(StreamParser, PointersEscapeKeysAndCountArrayItems) {
    const auto b64 = core::base64_encode(pattern_bytes(100'000));
    const std::string text = R"({"a/b":[0,{"x~y":[{},{"blob":")" + b64 + R"("}]}],"blob":")" + b64 + R"("})";
    auto m = parse_in_pieces(text, 1000, 1);
    ASSERT_FALSE(m.error);
    ASSERT_EQ(m.blobs.size(), 2u);
    EXPECT_EQ(m.blobs[0].pointer, "/a~1b/1/x~0y/1/blob");
    EXPECT_EQ(m.blobs[1].pointer, "/blob");
    jsonrpc::restore_blobs(m.value, std::move(m.blobs));
    EXPECT_TRUE(m.value == json::parse(text));
}

TEST(StreamParser, TextThatIsNotJsonIsAParseErrorWithItsHead) {
    for (std::string_view bad : {R"({"jsonrpc":"2.0","id":1,"result":{"x":)", "not json at all", "{} {}"}) {
        auto m = parse_in_pieces(bad, 3, 1);
        ASSERT_TRUE(m.error) << bad;
        EXPECT_EQ(m.error->code, jsonrpc::code::parse_error);
        EXPECT_EQ(m.head, bad);
    }
    std::string deep(5000, '[');
    auto m = parse_in_pieces(deep, 100, 2);
    ASSERT_TRUE(m.error);
    EXPECT_NE(m.error->message.find("nested deeper"), std::string::npos) << m.error->message;
    EXPECT_EQ(m.head.size(), 256u);
}

// Whether a blob is decoded is the requester's call (BlobPolicy), asked with the reply's id when it came first; a
// request's blobs and any big string that is not decoded are built straight into their place. The value is the same.
TEST(StreamParser, TheRequesterDecidesWhetherABlobIsDecodedAndTheValueIsTheSame) {
    const auto bytes = pattern_bytes(200'000);
    const auto b64 = core::base64_encode(bytes);
    const std::string big_text(150'000, 'x');
    struct Case {
        std::string text;
        bool wanted;        // what the policy answers
        std::size_t blobs;  // blobs taken out
        bool asked;         // whether the policy was asked
    };
    const std::vector<Case> cases{
        {read_result(b64), true, 1, true},
        {read_result(b64), false, 0, true},
        {R"({"jsonrpc":"2.0","result":{"blob":")" + b64 + R"("},"id":7})", false, 1, false},  // id after: decoded
        {R"({"jsonrpc":"2.0","id":8,"method":"x","params":{"blob":")" + b64 + R"("}})", true, 0, false},
        {R"({"jsonrpc":"2.0","id":9,"result":{"text":")" + big_text + R"(","n":[1,2]}})", true, 0, false},
    };
    for (std::size_t i = 0; i < cases.size(); ++i) {
        bool asked = false;
        json::value seen_id;
        StreamParser p(8u << 20, [&](const json::value& id) {
            asked = true;
            seen_id = id;
            return cases[i].wanted;
        });
        for (std::size_t at = 0; at < cases[i].text.size(); at += 4096)
            p.feed(std::string_view(cases[i].text).substr(at, 4096));
        auto m = p.finish();
        ASSERT_FALSE(m.error) << i << ": " << m.error->message;
        EXPECT_EQ(m.blobs.size(), cases[i].blobs) << i;
        EXPECT_EQ(asked, cases[i].asked) << i;
        if (asked) {
            EXPECT_EQ(seen_id, 7) << i;
        }
        jsonrpc::restore_blobs(m.value, std::move(m.blobs));
        EXPECT_TRUE(m.value == json::parse(cases[i].text)) << i;
    }
}

// Big strings that are not decoded go to their place in arrays and under escaped keys; a key given twice keeps its
// last value (as a whole parse does), whatever was taken out of the earlier one.
TEST(StreamParser, BigStringsLandWhereTheyWereAndAKeyGivenTwiceKeepsItsLastValue) {
    const auto b64 = core::base64_encode(pattern_bytes(100'000));
    const std::string big(70'000, 'y');
    const std::vector<std::string> texts{
        R"({"jsonrpc":"2.0","id":7,"result":{"a/b":[1,")" + big + R"(",{"x~y":")" + big + R"(z"}],"blob":"!)" + b64 +
            R"("}})",
        R"({"jsonrpc":"2.0","id":7,"result":{"a":")" + big + R"(","a":5,"blob":")" + b64 + R"(","blob":""}})",
        R"({"jsonrpc":"2.0","id":7,"result":{"a":[")" + big + R"("],"a":[1],"c":{"blob":")" + b64 + R"("},"c":{"d":")" +
            big + R"("}}})",
    };
    for (bool wanted : {false, true}) {
        for (std::size_t i = 0; i < texts.size(); ++i) {
            StreamParser p(8u << 20, [&](const json::value&) { return wanted; });
            for (std::size_t at = 0; at < texts[i].size(); at += 3000)
                p.feed(std::string_view(texts[i]).substr(at, 3000));
            auto m = p.finish();
            ASSERT_FALSE(m.error) << i << ": " << m.error->message;
            EXPECT_TRUE(m.blobs.empty()) << i << (wanted ? ", decoded" : ", as text");
            jsonrpc::restore_blobs(m.value, std::move(m.blobs));
            EXPECT_TRUE(m.value == json::parse(texts[i])) << i << (wanted ? ", decoded" : ", as text");
        }
    }
}

TEST(StreamParser, DataAfterTheMessageIsAnErrorEvenInALaterPiece) {
    StreamParser p;
    p.feed(R"({"a":1} )");
    p.feed("X");
    p.feed(R"({"jsonrpc":"2.0","id":1,"result":{}})");
    auto m = p.finish();
    ASSERT_TRUE(m.error);
    EXPECT_EQ(m.error->code, jsonrpc::code::parse_error);
    EXPECT_EQ(m.head.substr(0, 9), R"({"a":1} X)");
}

// A big result is written as it is serialized: the same bytes as serialize_result, whatever the piece size.
TEST(ResultStream, WritesWhatSerializeResultWrites) {
    json::object result;
    result["contents"] =
        json::array{json::object{{"uri", "demo://b"}, {"blob", core::base64_encode(pattern_bytes(300'000))}}};
    result["_meta"] = json::object{{"k", "v\"\n"}};
    const json::value id = 42;
    const std::string expected = jsonrpc::serialize_result(id, result);
    for (std::size_t piece : {64u, 1000u, 1u << 18}) {
        jsonrpc::ResultStream stream(id, result);
        std::string out;
        std::string buffer(piece, '\0');
        for (int guard = 0; guard < 1'000'000 && !stream.done(); ++guard)
            out.append(buffer.data(), stream.read(buffer.data(), piece));
        EXPECT_EQ(stream.read(buffer.data(), piece), 0u);
        EXPECT_TRUE(out == expected) << "pieces of " << piece;
    }
    jsonrpc::ResultStream whole(id, result);
    EXPECT_TRUE(whole.text() == expected);
    EXPECT_FALSE(jsonrpc::serialize_result(id, result, 300'000));  // over the cap: streamed instead
    EXPECT_TRUE(jsonrpc::serialize_result(id, result, 500'000) == expected);
}

TEST(LineFramer, ALongLineIsParsedAsItArrivesAndShortOnesStayText) {
    LineFramer f(8u << 20, 64u << 10);
    const auto bytes = pattern_bytes(600'000);
    const std::string big = read_result(core::base64_encode(bytes));
    const std::string input = "{\"a\":1}\n" + big + "\r\n{\"b\":2}\n";
    std::vector<LineFramer::Frame> frames;
    for (std::size_t at = 0; at < input.size(); at += 65536) {
        f.feed(std::string_view(input).substr(at, 65536));
        while (auto fr = f.next()) frames.push_back(std::move(*fr));
    }
    ASSERT_EQ(frames.size(), 3u);
    EXPECT_EQ(frames[0].text, "{\"a\":1}");
    EXPECT_FALSE(frames[0].streamed);
    ASSERT_TRUE(frames[1].streamed);
    EXPECT_TRUE(frames[1].text.empty());
    ASSERT_FALSE(frames[1].streamed->error);
    ASSERT_EQ(frames[1].streamed->blobs.size(), 1u);
    EXPECT_TRUE(frames[1].streamed->blobs[0].bytes == bytes);
    EXPECT_EQ(frames[2].text, "{\"b\":2}");
    EXPECT_EQ(f.buffered(), 0u);
}

TEST(LineFramer, ALongLineOverTheLimitIsReportedWithItsHeadAndTail) {
    LineFramer f(1u << 20, 64u << 10);
    const std::string big = "{\"x\":\"" + std::string(3u << 20, 'a') + "\"}";
    const std::string input = big + "\n{\"b\":2}\n";
    std::vector<LineFramer::Frame> frames;
    for (std::size_t at = 0; at < input.size(); at += 50'000) {
        f.feed(std::string_view(input).substr(at, 50'000));
        while (auto fr = f.next()) frames.push_back(std::move(*fr));
    }
    ASSERT_EQ(frames.size(), 2u);
    EXPECT_EQ(frames[0].kind, LineFramer::Frame::Kind::oversize);
    EXPECT_EQ(frames[0].length, big.size());
    EXPECT_EQ(frames[0].head, big.substr(0, 256));
    EXPECT_EQ(frames[0].tail, big.substr(big.size() - 256));
    EXPECT_EQ(frames[1].text, "{\"b\":2}");
}

}  // namespace
