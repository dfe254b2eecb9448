#include <switchboard/jsonrpc/error.hpp>

#include <fmt/format.h>

namespace switchboard::jsonrpc {

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
