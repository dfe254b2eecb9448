// JSON-RPC message parsing: whatever a peer sends is either a message or an error, never a crash (nesting is bounded:
// a hostile 100,000-level document is an error, not a stack overflow); a parsed message serializes to text that
// parses again to the same kind of message.
#include <switchboard/jsonrpc/message.hpp>

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    namespace rpc = switchboard::jsonrpc;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto m = rpc::parse_message(text);
    (void)rpc::preview(text, 40);
    if (!m) return 0;
    std::string again;
    switch (m->kind) {
    case rpc::Message::Kind::request: again = rpc::serialize_request(m->id, m->method, m->params); break;
    case rpc::Message::Kind::notification: again = rpc::serialize_notification(m->method, m->params); break;
    case rpc::Message::Kind::response:
        again = m->error ? rpc::serialize_error(m->id, *m->error) : rpc::serialize_result(m->id, m->result);
        break;
    }
    auto back = rpc::parse_message(again);
    if (!back || back->kind != m->kind || back->method != m->method) std::abort();
    return 0;
}
