// The stdio reader's parser of long lines, fed in pieces: it must agree with parsing the whole text at once (the same
// value once its blobs are put back, or an error for both), whatever the piece sizes.
#include "fuzz_input.hpp"

#include <switchboard/jsonrpc/stream_parser.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    namespace json = boost::json;
    using namespace switchboard;
    fuzz::Input in(data, size);
    unsigned step = in.byte();
    const std::string_view text = in.rest();
    jsonrpc::StreamParser parser(1u << 20);
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t n = std::min<std::size_t>(1 + step % 17, text.size() - at);
        step = step * 31 + 7;
        parser.feed(text.substr(at, n));
        at += n;
    }
    auto streamed = parser.finish();
    json::parse_options options;
    options.max_depth = jsonrpc::max_message_depth;
    json::error_code ec;
    const json::value whole = json::parse(text, ec, {}, options);
    if (static_cast<bool>(ec) != streamed.error.has_value()) std::abort();
    if (!ec) {
        jsonrpc::restore_blobs(streamed.value, std::move(streamed.blobs));
        // Compared as text: Boost.JSON reads 0e400 as NaN, which is never equal to itself.
        if (json::serialize(streamed.value) != json::serialize(whole)) std::abort();
    }
    return 0;
}
