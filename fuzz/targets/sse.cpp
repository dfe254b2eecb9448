// The SSE parser (Streamable HTTP and HTTP+SSE replies): any byte stream in any chunking; events never exceed the
// limit, the memory held stays near it, and an oversize event is reported once instead of being buffered.
#include "fuzz_input.hpp"

#include <switchboard/http/sse_parser.hpp>

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    switchboard::fuzz::Input in(data, size);
    const std::size_t limit = 1 + in.byte() % 128;
    switchboard::http::SseParser parser(limit);
    switchboard::http::SseEvent event;
    while (!in.empty()) {
        parser.feed(in.take(1 + in.byte() % 64));
        while (parser.next(event)) {
            if (event.kind == switchboard::http::SseEvent::Kind::event && event.data.size() > limit) std::abort();
            if (event.kind == switchboard::http::SseEvent::Kind::oversize && event.length <= limit) std::abort();
        }
    }
    (void)parser.retry();
    return 0;
}
