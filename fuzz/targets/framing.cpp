// The stdio line framer: any byte stream in any chunking; memory stays bounded by the limit and every frame is
// either a message within the limit or an oversize report.
#include "fuzz_input.hpp"

#include <switchboard/jsonrpc/framing.hpp>

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    switchboard::fuzz::Input in(data, size);
    const std::size_t limit = 1 + in.byte() % 64;  // small limits reach the oversize paths
    // ... and small streaming thresholds the parsing of long lines as they arrive
    switchboard::jsonrpc::LineFramer framer(limit, 1 + in.byte() % 64);
    while (!in.empty()) {
        framer.feed(in.take(1 + in.byte() % 32));
        if (framer.buffered() > limit) std::abort();
        while (auto f = framer.next()) {
            using Kind = switchboard::jsonrpc::LineFramer::Frame::Kind;
            if (f->kind == Kind::message && (f->text.size() > limit || f->text.find('\n') != std::string::npos))
                std::abort();
            if (f->streamed && (!f->text.empty() || f->streamed->head.size() > limit)) std::abort();
            if (f->kind == Kind::oversize && f->length <= limit) std::abort();
        }
    }
    return 0;
}
