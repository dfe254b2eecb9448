// The stdio reader's parser of long lines, fed in pieces: it must agree with parsing the whole text at once (the same
// value once its blobs are put back, or an error for both), whatever the piece sizes.
#include "fuzz_input.hpp"

#include <switchboard/jsonrpc/stream_parser.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <cmath>
#include <cstdlib>

namespace {

namespace json = boost::json;

// The same value, but for doubles a few units in the last place apart: Boost.JSON 1.81 rounds a number of more than
// 17 significant digits differently when it arrives in pieces (its stream_parser does too, without us; precise
// parsing came in 1.83). NaN (it reads 0e400 so) equals NaN here.
bool same(const json::value& a, const json::value& b) {
    if (a.is_double() && b.is_double()) {
        const double x = a.get_double(), y = b.get_double();
        if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
        if (std::isinf(x) || std::isinf(y)) return x == y;
        return x == y || std::abs(x - y) <= 4 * std::abs(std::nextafter(x, y) - x);
    }
    if (a.kind() != b.kind()) return false;
    if (a.is_object()) {
        const auto &p = a.get_object(), &q = b.get_object();
        if (p.size() != q.size()) return false;
        for (auto i = p.begin(), j = q.begin(); i != p.end(); ++i, ++j)
            if (i->key() != j->key() || !same(i->value(), j->value())) return false;
        return true;
    }
    if (a.is_array()) {
        const auto &p = a.get_array(), &q = b.get_array();
        if (p.size() != q.size()) return false;
        for (std::size_t i = 0; i < p.size(); ++i)
            if (!same(p[i], q[i])) return false;
        return true;
    }
    return json::serialize(a) == json::serialize(b);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
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
        if (!same(streamed.value, whole)) std::abort();
    }
    return 0;
}
