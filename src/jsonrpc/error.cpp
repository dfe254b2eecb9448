#include <switchboard/jsonrpc/error.hpp>

#include <fmt/format.h>

namespace switchboard::jsonrpc {

namespace {

class Category : public std::error_category {
public:
    const char* name() const noexcept override { return "jsonrpc"; }
    std::string message(int c) const override {
        switch (static_cast<Code>(c)) {
        case Code::parse_error: return "parse error";
        case Code::invalid_request: return "invalid request";
        case Code::method_not_found: return "method not found";
        case Code::invalid_params: return "invalid params";
        case Code::internal_error: return "internal error";
        case Code::resource_not_found_legacy: return "resource not found";
        case Code::header_mismatch: return "header mismatch";
        case Code::missing_required_client_capability: return "missing required client capability";
        case Code::unsupported_protocol_version: return "unsupported protocol version";
        case Code::url_elicitation_required: return "URL elicitation required";
        case Code::timeout: return "timed out";
        case Code::cancelled: return "cancelled";
        case Code::connection_closed: return "connection closed";
        case Code::protocol_violation: return "protocol violation";
        case Code::transport_error: return "transport error";
        case Code::unavailable: return "peer unavailable";
        }
        return fmt::format("JSON-RPC error {}", c);
    }
};

}  // namespace

const std::error_category& error_category() noexcept {
    static const Category category;
    return category;
}

std::string Error::describe() const {
    if (local) return message;
    return fmt::format("{} ({})", message, code);
}

boost::json::object Error::to_json() const {
    boost::json::object o;
    o["code"] = code;
    o["message"] = message;
    if (!data.is_null()) o["data"] = data;
    return o;
}

Error Error::from_json(const boost::json::value& v) {
    Error e;
    const auto* o = v.if_object();
    if (!o) return Error{code::internal_error, "malformed error object", v, false};
    if (const auto* c = o->if_contains("code"); c && c->is_int64()) e.code = static_cast<int>(c->as_int64());
    if (const auto* m = o->if_contains("message"); m && m->is_string()) e.message = m->as_string().c_str();
    if (const auto* d = o->if_contains("data")) e.data = *d;
    return e;
}

void throw_exception_from_error(const Error& e, const boost::source_location&) { throw ErrorException(e); }

}  // namespace switchboard::jsonrpc
