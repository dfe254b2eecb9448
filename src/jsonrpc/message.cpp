#include <switchboard/jsonrpc/message.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/serializer.hpp>

#include <algorithm>

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

// Messages are written straight into one string in the order {"jsonrpc","id","method"|"result"|"error","params"}, the
// same bytes as serializing a json::object built that way, without copying params or result into such an object
// first (a 64 MiB result used to be copied whole before being serialized). One spare byte is reserved for the
// newline the stdio framing appends.
void append_json(std::string& out, const json::value& v) {
    json::serializer sr;
    sr.reset(&v);
    std::size_t len = out.size();
    while (!sr.done()) {
        if (out.capacity() - len < 64) out.reserve(std::max<std::size_t>(out.capacity() * 2, len + 256));
        out.resize(out.capacity());
        len += sr.read(out.data() + len, out.size() - len).size();
    }
    out.resize(len);
}

void append_json(std::string& out, std::string_view s) {
    json::serializer sr;
    sr.reset(s);
    std::size_t len = out.size();
    while (!sr.done()) {
        if (out.capacity() - len < 64) out.reserve(std::max<std::size_t>(out.capacity() * 2, len + 256));
        out.resize(out.capacity());
        len += sr.read(out.data() + len, out.size() - len).size();
    }
    out.resize(len);
}

std::string start(const Id* id) {
    std::string out;
    out.reserve(256);
    out.append(R"({"jsonrpc":"2.0")");
    if (id) {
        out.append(R"(,"id":)");
        append_json(out, *id);
    }
    return out;
}

void finish(std::string& out) {
    out.push_back('}');
    if (out.size() == out.capacity()) out.reserve(out.size() + 1);  // room for the framing's newline
}

}  // namespace

std::string serialize_request(const Id& id, std::string_view method, const json::value& params) {
    std::string out = start(&id);
    out.append(R"(,"method":)");
    append_json(out, method);
    if (!params.is_null()) {
        out.append(R"(,"params":)");
        append_json(out, params);
    }
    finish(out);
    return out;
}

std::string serialize_notification(std::string_view method, const json::value& params) {
    std::string out = start(nullptr);
    out.append(R"(,"method":)");
    append_json(out, method);
    if (!params.is_null()) {
        out.append(R"(,"params":)");
        append_json(out, params);
    }
    finish(out);
    return out;
}

std::string serialize_result(const Id& id, const json::value& result) {
    std::string out = start(&id);
    out.append(R"(,"result":)");
    if (result.is_null())
        out.append("{}");
    else
        append_json(out, result);
    finish(out);
    return out;
}

std::string serialize_error(const Id& id, const Error& error) {
    std::string out = start(&id);  // a null id when the request's id could not be read
    out.append(R"(,"error":)");
    append_json(out, error.to_json());
    finish(out);
    return out;
}

std::string preview(std::string_view text, std::size_t max) {
    if (text.size() <= max) return std::string(text);
    // Do not cut inside a UTF-8 sequence.
    std::size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    return std::string(text.substr(0, cut)) + "…";
}

}  // namespace switchboard::jsonrpc
