#include <switchboard/jsonrpc/message.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace switchboard::jsonrpc {

namespace json = boost::json;

namespace {

Error invalid(std::string why) { return Error{code::invalid_request, "Invalid Request: " + std::move(why), {}, false}; }

bool valid_id(const json::value& id) { return id.is_int64() || id.is_uint64() || id.is_string(); }

}  // namespace

Outcome<Message> parse_message(std::string_view text) {
    json::error_code ec;
    json::value v = json::parse(text, ec);
    if (ec) return Error{code::parse_error, "Parse error: " + ec.message(), {}, false};
    auto* o = v.if_object();
    if (!o) {
        if (v.is_array()) return invalid("batches are not supported");
        return invalid("not an object");
    }
    const auto* version = o->if_contains("jsonrpc");
    if (!version || !version->is_string() || version->as_string() != "2.0")
        return invalid("\"jsonrpc\" must be \"2.0\"");

    Message m;
    const auto* id = o->if_contains("id");
    if (const auto* method = o->if_contains("method")) {
        if (!method->is_string()) return invalid("\"method\" must be a string");
        m.method = method->as_string().c_str();
        if (auto* p = o->if_contains("params")) {
            if (!p->is_object() && !p->is_array()) return invalid("\"params\" must be an object");
            m.params = std::move(*p);
        }
        if (id) {
            if (!valid_id(*id)) return invalid("\"id\" must be a string or an integer");
            m.kind = Message::Kind::request;
            m.id = *id;
        } else {
            m.kind = Message::Kind::notification;
        }
        return m;
    }
    m.kind = Message::Kind::response;
    if (id) m.id = *id;
    if (auto* r = o->if_contains("result")) {
        if (!id || !valid_id(*id)) return invalid("response without a valid \"id\"");
        m.result = std::move(*r);
        return m;
    }
    if (const auto* e = o->if_contains("error")) {
        m.error = Error::from_json(*e);
        return m;
    }
    return invalid("neither \"method\", \"result\" nor \"error\"");
}

namespace {

std::string finish(json::object& o) { return json::serialize(o); }

}  // namespace

std::string serialize_request(const Id& id, std::string_view method, const json::value& params) {
    json::object o;
    o["jsonrpc"] = "2.0";
    o["id"] = id;
    o["method"] = method;
    if (!params.is_null()) o["params"] = params;
    return finish(o);
}

std::string serialize_notification(std::string_view method, const json::value& params) {
    json::object o;
    o["jsonrpc"] = "2.0";
    o["method"] = method;
    if (!params.is_null()) o["params"] = params;
    return finish(o);
}

std::string serialize_result(const Id& id, const json::value& result) {
    json::object o;
    o["jsonrpc"] = "2.0";
    o["id"] = id;
    o["result"] = result.is_null() ? json::value(json::object{}) : result;
    return finish(o);
}

std::string serialize_error(const Id& id, const Error& error) {
    json::object o;
    o["jsonrpc"] = "2.0";
    o["id"] = id;  // null when the request's id could not be read
    o["error"] = error.to_json();
    return finish(o);
}

std::string preview(std::string_view text, std::size_t max) {
    if (text.size() <= max) return std::string(text);
    // Do not cut inside a UTF-8 sequence.
    std::size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    return std::string(text.substr(0, cut)) + "…";
}

}  // namespace switchboard::jsonrpc
