// JSON-RPC message parsing: whatever a peer sends is either a message or an error, never a crash (nesting is bounded:
// a hostile 100,000-level document is an error, not a stack overflow); a parsed message serializes to text that
// parses again to the same kind of message; and parse_message, which reads the envelope from the parser's events,
// says exactly what parsing the whole text to a value and reading that says. object_members agrees with the parser.
#include <switchboard/jsonrpc/message.hpp>

#include <boost/json/parse.hpp>

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    namespace rpc = switchboard::jsonrpc;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto m = rpc::parse_message(text);
    (void)rpc::preview(text, 40);
    {
        namespace json = boost::json;
        json::parse_options options;
        options.max_depth = rpc::max_message_depth;
        json::error_code ec;
        auto v = json::parse(text, ec, json::storage_ptr(), options);
        auto whole = ec ? rpc::Outcome<rpc::Message>(rpc::parse_error(ec)) : rpc::parse_message(std::move(v), {});
        if (m.has_value() != whole.has_value()) std::abort();
        if (!m && (m.error().code != whole.error().code || m.error().message != whole.error().message)) std::abort();
        if (m &&
            (m->kind != whole->kind || m->id != whole->id || m->method != whole->method || m->params != whole->params ||
             m->result != whole->result || m->error.has_value() != whole->error.has_value() ||
             (m->error && (m->error->code != whole->error->code || m->error->data != whole->error->data))))
            std::abort();
    }
    {
        // object_members and json_text_is_valid (a gateway's forwarded results): the first never reads past the
        // text, whatever it is; on a text the second accepts, the members are what the parser finds.
        namespace json = boost::json;
        auto members = rpc::object_members(text);
        if (rpc::json_text_is_valid(text)) {
            json::parse_options options;
            options.max_depth = rpc::max_message_depth;
            json::error_code ec;
            auto v = json::parse(text, ec, json::storage_ptr(), options);
            if (ec) std::abort();
            if (members) {
                if (!v.is_object()) std::abort();
                bool repeated = false;
                for (std::size_t i = 0; i < members->size(); ++i)
                    for (std::size_t j = 0; j < i; ++j) repeated = repeated || (*members)[i].key == (*members)[j].key;
                if (!repeated) {
                    if (members->size() != v.get_object().size()) std::abort();
                    for (const auto& member : *members) {
                        auto value = json::parse(member.value, ec, json::storage_ptr(), options);
                        const auto* in_object = v.get_object().if_contains(member.key);
                        if (ec || !in_object || value != *in_object) std::abort();
                    }
                }
            }
        }
    }
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
