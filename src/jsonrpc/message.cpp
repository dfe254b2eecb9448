#include <switchboard/jsonrpc/message.hpp>

#include <fmt/format.h>

#include <boost/json/monotonic_resource.hpp>
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
    // Each message gets its own arena: parsing is then one allocation or two instead of one per key and value, and
    // freeing it is one too. The parts taken out below keep the arena alive (and keep their storage: a value moved
    // into a value of another storage would be copied).
    json::error_code ec;
    // Real tool schemas nest deeper than Boost.JSON's default limit of 32; a hostile document of 100,000 levels is
    // still refused (the parser itself does not recurse, and nothing built from a message nests deeper than this).
    json::parse_options options;
    options.max_depth = max_message_depth;
    json::value v = json::parse(text, ec, json::make_shared_resource<json::monotonic_resource>(), options);
    if (ec == json::error::too_deep)
        return Error{
            code::parse_error, fmt::format("Parse error: nested deeper than {} levels", max_message_depth), {}, false};
    if (ec) return Error{code::parse_error, "Parse error: " + ec.message(), {}, false};
    auto* o = v.if_object();
    if (!o) {
        if (v.is_array()) return invalid("batches are not supported");
        return invalid("not an object");
    }
    const auto* version = o->if_contains("jsonrpc");
    if (!version || !version->is_string() || version->as_string() != "2.0")
        return invalid("\"jsonrpc\" must be \"2.0\"");

    // Members are initialized from the parsed parts (not assigned), so that they keep the arena.
    const auto* id = o->if_contains("id");
    if (const auto* method = o->if_contains("method")) {
        if (!method->is_string()) return invalid("\"method\" must be a string");
        auto* p = o->if_contains("params");
        if (p && !p->is_object() && !p->is_array()) return invalid("\"params\" must be an object");
        if (id && !valid_id(*id)) return invalid("\"id\" must be a string or an integer");
        return Message{id ? Message::Kind::request : Message::Kind::notification,
                       id ? json::value(*id, json::storage_ptr()) : json::value(),
                       std::string(method->get_string()),
                       p ? json::value(std::move(*p)) : json::value(),
                       json::value(),
                       std::nullopt};
    }
    json::value response_id = id ? json::value(*id, json::storage_ptr()) : json::value();
    if (auto* r = o->if_contains("result")) {
        if (!id || !valid_id(*id)) return invalid("response without a valid \"id\"");
        return Message{Message::Kind::response, std::move(response_id),     {},
                       json::value(),           json::value(std::move(*r)), std::nullopt};
    }
    if (const auto* e = o->if_contains("error")) {
        Message m;
        m.kind = Message::Kind::response;
        m.id = std::move(response_id);
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

MetaMembers::MetaMembers(const json::object& members) {
    for (const auto& kv : members) {
        if (!json.empty()) json.push_back(',');
        append_json(json, std::string_view(kv.key()));
        json.push_back(':');
        append_json(json, kv.value());
        keys.emplace_back(kv.key());
    }
}

std::string serialize_request(const Id& id, std::string_view method, const json::value& params,
                              const MetaMembers& meta) {
    const auto* o = params.if_object();
    if (!o && !params.is_null()) return serialize_request(id, method, params);  // MCP params are objects
    std::string out = start(&id);
    out.append(R"(,"method":)");
    append_json(out, method);
    out.append(R"(,"params":{)");
    bool first = true;
    auto member = [&](std::string_view key, const json::value& value) {
        if (!first) out.push_back(',');
        first = false;
        append_json(out, key);
        out.push_back(':');
        append_json(out, value);
    };
    const json::object* own_meta = nullptr;
    if (o)
        for (const auto& kv : *o) {
            if (kv.key() == "_meta" && kv.value().is_object())
                own_meta = &kv.value().get_object();
            else if (kv.key() != "_meta")  // a _meta that is no object is replaced, as assigning ours would
                member(std::string_view(kv.key()), kv.value());
        }
    if (!first) out.push_back(',');
    out.append(R"("_meta":{)");
    first = true;
    if (own_meta)
        for (const auto& kv : *own_meta)
            if (std::find(meta.keys.begin(), meta.keys.end(), kv.key()) == meta.keys.end())
                member(std::string_view(kv.key()), kv.value());
    if (!first) out.push_back(',');
    out.append(meta.json);
    out.append("}}");
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
