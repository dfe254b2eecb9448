#include <switchboard/jsonrpc/framing.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

using switchboard::jsonrpc::LineFramer;
using Kind = LineFramer::Frame::Kind;

namespace {

std::vector<LineFramer::Frame> drain(LineFramer& f) {
    std::vector<LineFramer::Frame> out;
    while (auto fr = f.next()) out.push_back(std::move(*fr));
    return out;
}

std::vector<std::string> texts(const std::vector<LineFramer::Frame>& frames) {
    std::vector<std::string> out;
    for (const auto& f : frames) {
        EXPECT_EQ(f.kind, Kind::message);
        out.push_back(f.text);
    }
    return out;
}

}  // namespace

TEST(LineFramer, SplitsLinesFedByteByByte) {
    LineFramer f(1024);
    const std::string input = "{\"a\":1}\n{\"b\":2}\r\n\n   \n\r\n{\"c\":3}\n";
    std::vector<LineFramer::Frame> frames;
    for (char c : input) {
        f.feed(std::string_view(&c, 1));
        for (auto& fr : drain(f)) frames.push_back(std::move(fr));
    }
    EXPECT_EQ(texts(frames), (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "{\"c\":3}"}));
    EXPECT_EQ(f.buffered(), 0u);
}

TEST(LineFramer, SplitsSeveralLinesInOneChunkAndKeepsPartialLine) {
    LineFramer f(1024);
    f.feed("one\r\ntwo\nthr");
    EXPECT_EQ(texts(drain(f)), (std::vector<std::string>{"one", "two"}));
    EXPECT_EQ(f.buffered(), 3u);
    EXPECT_FALSE(f.next().has_value());
    f.feed("ee\n");
    EXPECT_EQ(texts(drain(f)), (std::vector<std::string>{"three"}));
    EXPECT_EQ(f.buffered(), 0u);
}

TEST(LineFramer, BlankAndWhitespaceOnlyLinesAreSkipped) {
    LineFramer f(1024);
    f.feed("\n\r\n \t \n\nx\n");
    auto frames = drain(f);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].text, "x");
}

TEST(LineFramer, LineAtExactlyTheLimitIsAMessage) {
    LineFramer f(10);
    f.feed("0123456789\n");
    auto frames = drain(f);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].kind, Kind::message);
    EXPECT_EQ(frames[0].text, "0123456789");
}

TEST(LineFramer, OversizeLineStreamedInSmallChunksGivesOneFrame) {
    constexpr std::size_t limit = 100;
    LineFramer f(limit);
    std::string line;
    for (std::size_t i = 0; i < 10'000; ++i) line.push_back(static_cast<char>('a' + (i * 7 + i / 26) % 26));
    line.replace(0, 8, "HEADHEAD");
    line.replace(line.size() - 8, 8, "TAILTAIL");
    const std::string input = line + "\n{\"ok\":true}\n";

    std::vector<LineFramer::Frame> frames;
    for (std::size_t off = 0; off < input.size(); off += 7) {
        f.feed(std::string_view(input).substr(off, 7));
        EXPECT_LE(f.buffered(), limit) << "at offset " << off;
        for (auto& fr : drain(f)) frames.push_back(std::move(fr));
    }
    ASSERT_EQ(frames.size(), 2u);
    const auto& big = frames[0];
    EXPECT_EQ(big.kind, Kind::oversize);
    EXPECT_EQ(big.length, line.size());
    EXPECT_FALSE(big.head.empty());
    EXPECT_LE(big.head.size(), 256u);
    EXPECT_LE(big.tail.size(), 256u);
    EXPECT_EQ(big.head, line.substr(0, big.head.size()));
    EXPECT_EQ(big.tail, line.substr(line.size() - big.tail.size()));
    EXPECT_GE(big.tail.size(), 8u);
    EXPECT_TRUE(big.text.empty());

    EXPECT_EQ(frames[1].kind, Kind::message);
    EXPECT_EQ(frames[1].text, "{\"ok\":true}");
    EXPECT_EQ(f.buffered(), 0u);
}

TEST(LineFramer, OversizeLineInOneChunkGivesHeadAndTail) {
    LineFramer f(100);
    std::string line(5000, 'x');
    line.replace(0, 4, "BEGN");
    line.replace(line.size() - 4, 4, "ENDS");
    f.feed(line + "\r\nnext\n");
    auto frames = drain(f);
    ASSERT_EQ(frames.size(), 2u);
    EXPECT_EQ(frames[0].kind, Kind::oversize);
    EXPECT_EQ(frames[0].head.substr(0, 4), "BEGN");
    ASSERT_GE(frames[0].tail.size(), 4u);
    EXPECT_EQ(frames[0].tail.substr(frames[0].tail.size() - 4), "ENDS");
    EXPECT_EQ(frames[1].kind, Kind::message);
    EXPECT_EQ(frames[1].text, "next");
}

TEST(LineFramer, OversizeWithoutNewlineIsReportedOnlyWhenLineEnds) {
    LineFramer f(16);
    f.feed(std::string(100, 'y'));
    EXPECT_FALSE(f.next().has_value());
    EXPECT_LE(f.buffered(), 16u);
    f.feed(std::string(50, 'y'));
    EXPECT_FALSE(f.next().has_value());
    f.feed("\n");
    auto frames = drain(f);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].kind, Kind::oversize);
    EXPECT_EQ(frames[0].length, 150u);
}
