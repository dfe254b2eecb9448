#include <switchboard/mcp/types.hpp>

#include <switchboard/core/base64.hpp>
#include <switchboard/core/json_number.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <initializer_list>
#include <type_traits>

namespace switchboard::mcp {

namespace json = boost::json;

namespace {

const json::object& as_object(const json::value& v) {
    static const json::object empty;
    const auto* o = v.if_object();
    return o ? *o : empty;
}

// `o` without the members named in `skip`, in the default storage: nothing then keeps the storage `o` was parsed into
// (an arena holding a large blob).
// An empty name in `skip` skips nothing. Reserves only what is kept: nothing at all when nothing is.
json::object without(const json::object& o, std::initializer_list<std::string_view> skip) {
    auto kept = [&](std::string_view key) {
        return std::none_of(skip.begin(), skip.end(), [&](std::string_view s) { return !s.empty() && s == key; });
    };
    const auto n =
        static_cast<std::size_t>(std::count_if(o.begin(), o.end(), [&](const auto& kv) { return kept(kv.key()); }));
    json::object r;
    if (n == 0) return r;
    r.reserve(n);
    for (const auto& kv : o)
        if (kept(kv.key())) r.emplace(kv.key(), kv.value());
    return r;
}

}  // namespace

std::string string_field(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

int log_severity(std::string_view level) {
    // RFC 5424 severities, the order of MCP log levels.
    static constexpr std::array<std::string_view, 8> levels{"debug", "info",     "notice", "warning",
                                                            "error", "critical", "alert",  "emergency"};
    auto it = std::find(levels.begin(), levels.end(), level);
    return it == levels.end() ? -1 : static_cast<int>(it - levels.begin());
}

std::size_t base64_decoded_size(std::string_view b64) {
    std::size_t n = 0, pad = 0;
    for (char c : b64) {
        if (c == '=')
            ++pad;
        else if (c != '\n' && c != '\r' && c != ' ')
            ++n;
    }
    return (n + pad) / 4 * 3 - std::min<std::size_t>(pad, 2) + (n + pad) % 4 * 3 / 4;
}

Implementation Implementation::from_json(const json::value& v) {
    const auto& o = as_object(v);
    return {string_field(o, "name"), string_field(o, "version"), string_field(o, "title")};
}

json::object Implementation::to_json() const {
    json::object o{{"name", name}, {"version", version}};
    if (!title.empty()) o["title"] = title;
    return o;
}

Tool Tool::from_json(const json::value& v) {
    const auto& o = as_object(v);
    Tool t;
    // Taken into the typed fields (and left out of `raw`) only when to_json() can put them back as they were.
    auto take_string = [&](std::string_view key, std::string& out) -> std::string_view {
        const auto* s = o.if_contains(key);
        if (!s || !s->is_string() || s->get_string().empty()) return {};
        out = std::string(s->get_string());
        return key;
    };
    const auto name = take_string("name", t.name);
    const auto title = take_string("title", t.title);
    const auto description = take_string("description", t.description);
    std::string_view input, output;
    if (const auto* s = o.if_contains("inputSchema"); s && s->is_object() && !s->get_object().empty()) {
        t.input_schema = s->get_object();  // assigned: the default storage, not `v`'s
        input = "inputSchema";
    } else {
        t.input_schema = json::object{{"type", "object"}};
    }
    // emplace() copy-constructs: in the default storage, or the optional would keep `v`'s storage (an arena, say)
    if (const auto* s = o.if_contains("outputSchema"); s && s->is_object()) {
        t.output_schema.emplace(s->get_object(), json::storage_ptr());
        output = "outputSchema";
    }
    t.raw = without(o, {name, title, description, input, output});
    return t;
}

json::object Tool::to_json() const {
    json::object o;
    o.reserve(raw.size() + 5);
    if (!name.empty()) o["name"] = name;
    if (!title.empty()) o["title"] = title;
    if (!description.empty()) o["description"] = description;
    if (!raw.contains("inputSchema")) o["inputSchema"] = input_schema;
    if (output_schema) o["outputSchema"] = *output_schema;
    for (const auto& kv : raw) o.emplace(kv.key(), kv.value());
    return o;
}

Resource Resource::from_json(const json::value& v) {
    const auto& o = as_object(v);
    Resource r;
    r.uri = string_field(o, "uri");
    r.name = string_field(o, "name");
    r.title = string_field(o, "title");
    r.description = string_field(o, "description");
    r.mime_type = string_field(o, "mimeType");
    // A size that is no size (-1, 1.5e300, "big") is left out rather than failing the whole listing.
    if (const auto* s = o.if_contains("size"); s && s->is_number())
        if (auto n = core::json_exact_integer(*s); n && *n >= 0) r.size = static_cast<std::uint64_t>(*n);
    r.raw = o;
    return r;
}

ResourceTemplate ResourceTemplate::from_json(const json::value& v) {
    const auto& o = as_object(v);
    ResourceTemplate t;
    t.uri_template = string_field(o, "uriTemplate");
    t.name = string_field(o, "name");
    t.title = string_field(o, "title");
    t.description = string_field(o, "description");
    t.mime_type = string_field(o, "mimeType");
    t.raw = o;
    return t;
}

Prompt Prompt::from_json(const json::value& v) {
    const auto& o = as_object(v);
    Prompt p;
    p.name = string_field(o, "name");
    p.title = string_field(o, "title");
    p.description = string_field(o, "description");
    if (const auto* args = o.if_contains("arguments"); args && args->is_array()) {
        for (const auto& a : args->get_array()) {
            const auto& ao = as_object(a);
            PromptArgument pa{string_field(ao, "name"), string_field(ao, "description"), false};
            if (const auto* r = ao.if_contains("required"); r && r->is_bool()) pa.required = r->get_bool();
            p.arguments.push_back(std::move(pa));
        }
    }
    p.raw = o;
    return p;
}

std::string Content::text() const { return string_field(raw, "text"); }
std::string Content::data() const { return string_field(raw, "data"); }
std::string Content::mime_type() const { return string_field(raw, "mimeType"); }

Content Content::from_json(const json::value& v) {
    const auto& o = as_object(v);
    return {string_field(o, "type"), json::object(o, json::storage_ptr())};
}

namespace {

// Whether `content` is held in CallToolResult::content alone: an array of objects. Anything else also stays in raw as
// it was sent (to_json() gives it back unchanged).
bool content_taken(const json::value* c) {
    return c && c->is_array() && std::all_of(c->get_array().begin(), c->get_array().end(), [](const json::value& v) {
               return v.is_object();
           });
}

}  // namespace

CallToolResult CallToolResult::from_json(const json::value& v) {
    const auto& o = as_object(v);
    CallToolResult r;
    const auto* c = o.if_contains("content");
    if (c && c->is_array())
        for (const auto& item : c->get_array()) r.content.push_back(Content::from_json(item));
    const auto* s = o.if_contains("structuredContent");
    if (s) r.structured_content.emplace(*s, json::storage_ptr());
    if (const auto* e = o.if_contains("isError"); e && e->is_bool()) r.is_error = e->get_bool();
    r.raw = without(o, {content_taken(c) ? "content" : "", s ? "structuredContent" : ""});
    return r;
}

CallToolResult CallToolResult::from_json(json::value&& v) {
    if (!v.is_object()) return from_json(static_cast<const json::value&>(v));
    if (const auto* c = v.get_object().if_contains("content"); c && !content_taken(c))
        return from_json(static_cast<const json::value&>(v));  // an odd one, kept as sent
    // Nothing is copied: raw takes the object over (keeping its storage), the blocks and the structured content are
    // moved out of it.
    CallToolResult r{{}, std::nullopt, false, json::object(std::move(v.get_object()))};
    auto& o = r.raw;
    if (auto* c = o.if_contains("content")) {
        auto& items = c->get_array();
        r.content.reserve(items.size());
        for (auto& item : items) {
            auto& block = item.get_object();
            r.content.push_back(Content{string_field(block, "type"), std::move(block)});
        }
        o.stable_erase("content");  // the rest keeps its order
    }
    if (auto* s = o.if_contains("structuredContent")) {
        r.structured_content.emplace(std::move(*s));
        o.stable_erase("structuredContent");
    }
    if (const auto* e = o.if_contains("isError"); e && e->is_bool()) r.is_error = e->get_bool();
    return r;
}

namespace {

// The result object of `r` in `sp`: `r`'s blocks and structured content copied in (a const `r`) or moved in.
template <class Result>
json::object assemble_call_tool_result(Result& r, json::storage_ptr sp) {
    constexpr bool take = !std::is_const_v<Result>;
    json::object o(sp);
    o.reserve(r.raw.size() + 3);
    if (!r.raw.contains("content")) {  // one that was not an array of objects stayed in raw
        json::array items(sp);
        items.reserve(r.content.size());
        for (auto& c : r.content) {
            if constexpr (take)
                items.push_back(std::move(c.raw));
            else
                items.emplace_back(c.raw);
        }
        o.emplace("content", std::move(items));
    }
    if (r.structured_content) {
        if constexpr (take)
            o.emplace("structuredContent", std::move(*r.structured_content));
        else
            o.emplace("structuredContent", *r.structured_content);
    }
    for (auto& kv : r.raw) {
        if constexpr (take)
            o.emplace(kv.key(), std::move(kv.value()));  // in o's storage: moved when it is the same one
        else
            o.emplace(kv.key(), kv.value());
    }
    if (r.is_error && !o.contains("isError")) o.emplace("isError", true);
    return o;
}

}  // namespace

json::object CallToolResult::to_json() const& {
    // In the default storage: a copy in the blocks' storage (an arena, say) would grow it.
    return assemble_call_tool_result(*this, json::storage_ptr());
}

CallToolResult CallToolResult::whole(json::value&& v) {
    if (!v.is_object()) return from_json(static_cast<const json::value&>(v));
    CallToolResult r{{}, std::nullopt, false, json::object(std::move(v.get_object()))};
    if (const auto* e = r.raw.if_contains("isError"); e && e->is_bool()) r.is_error = e->get_bool();
    return r;
}

json::object CallToolResult::to_json() && {
    // Nothing split out (whole(), or content that was not an array of objects and no structured content): raw is the
    // result as it came.
    if (content.empty() && !structured_content && raw.contains("content")) {
        if (is_error && !raw.contains("isError")) raw.emplace("isError", true);
        return std::move(raw);
    }
    // Built in the blocks' storage, so that moving them in moves them (into another storage it would copy them).
    return assemble_call_tool_result(*this, content.empty() ? json::storage_ptr() : content.front().raw.storage());
}

ResourceContents ResourceContents::from_json(const json::value& v) {
    const auto& o = as_object(v);
    ResourceContents c;
    c.uri = string_field(o, "uri");
    c.mime_type = string_field(o, "mimeType");
    const auto* t = o.if_contains("text");
    const auto* b = o.if_contains("blob");
    if (t && t->is_string()) c.text = std::string(t->get_string());
    if (b && b->is_string()) c.blob = std::string(b->get_string());
    // Only what the typed fields hold is left out: a `text` that is not a string stays in `raw`.
    c.raw = without(o, {c.text ? "text" : "", c.blob ? "blob" : ""});
    return c;
}

json::object ResourceContents::to_json() const {
    json::object o = raw;
    if (text) o["text"] = *text;
    if (blob) {
        o["blob"] = *blob;
    } else if (blob_bytes) {
        json::string b64(o.storage());
        b64.resize(core::base64_size(blob_bytes->size()));
        core::base64_write(b64.data(), *blob_bytes);
        o["blob"] = std::move(b64);
    }
    return o;
}

std::size_t ResourceContents::blob_size() const {
    if (blob_bytes) return blob_bytes->size();
    return blob ? base64_decoded_size(*blob) : 0;
}

std::string ResourceContents::blob_base64() const {
    if (blob_bytes) return core::base64_encode(*blob_bytes);
    return blob ? *blob : std::string();
}

std::optional<std::string> ResourceContents::decoded_blob() const {
    if (blob_bytes) return *blob_bytes;
    if (!blob) return std::nullopt;
    // Lenient about what some servers send: line breaks (MIME style) and missing padding.
    std::string text;
    text.reserve(blob->size());
    for (char ch : *blob)
        if (ch != '\n' && ch != '\r' && ch != ' ') text.push_back(ch);
    while (text.size() % 4 != 0) text.push_back('=');
    return core::base64_decode(text);
}

ReadResourceResult ReadResourceResult::from_json(const json::value& v) {
    const auto& o = as_object(v);
    ReadResourceResult r;
    const auto* c = o.if_contains("contents");
    if (c && c->is_array())
        for (const auto& item : c->get_array()) r.contents.push_back(ResourceContents::from_json(item));
    r.raw = without(o, {c && c->is_array() ? "contents" : ""});
    return r;
}

ReadResourceResult ReadResourceResult::from_json(json::value&& v, jsonrpc::DecodedBlobs blobs) {
    // A blob at /contents/N/blob goes to that item; any other (in _meta, say) is put back as base64.
    std::vector<std::pair<std::size_t, std::string>> items;
    jsonrpc::DecodedBlobs elsewhere;
    for (auto& b : blobs) {
        std::size_t index = 0;
        const std::string_view p = b.pointer;
        constexpr std::string_view prefix = "/contents/", suffix = "/blob";
        const bool ends = p.size() > prefix.size() + suffix.size() && p.starts_with(prefix) && p.ends_with(suffix);
        const auto digits = ends ? p.substr(prefix.size(), p.size() - prefix.size() - suffix.size()) : p.substr(0, 0);
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
        if (ends && ec == std::errc() && end == digits.data() + digits.size())
            items.emplace_back(index, std::move(b.bytes));
        else
            elsewhere.push_back(std::move(b));
    }
    if (!elsewhere.empty()) jsonrpc::restore_blobs(v, std::move(elsewhere));
    ReadResourceResult r = from_json(std::move(v));
    for (auto& [index, bytes] : items) {
        if (index >= r.contents.size()) continue;
        auto& c = r.contents[index];
        if (!c.blob || !c.blob->empty()) continue;  // not the empty string left in its place (a key given twice)
        c.blob.reset();
        c.blob_bytes = std::move(bytes);
    }
    return r;
}

ReadResourceResult ReadResourceResult::from_json(json::value&& v) {
    if (!v.is_object()) return from_json(static_cast<const json::value&>(v));
    auto& o = v.get_object();
    ReadResourceResult r;
    auto* c = o.if_contains("contents");
    if (c && c->is_array()) {
        auto& items = c->get_array();
        r.contents.reserve(items.size());
        for (auto& item : items) {
            r.contents.push_back(ResourceContents::from_json(item));
            item = nullptr;  // frees the item's text or blob, unless its storage is an arena
        }
    }
    r.raw = without(o, {c && c->is_array() ? "contents" : ""});
    return r;
}

json::object ReadResourceResult::to_json() const {
    json::object o = raw;
    json::array items;
    items.reserve(contents.size());
    for (const auto& c : contents) items.push_back(c.to_json());
    o["contents"] = std::move(items);
    return o;
}

GetPromptResult GetPromptResult::from_json(const json::value& v) {
    const auto& o = as_object(v);
    GetPromptResult r;
    r.description = string_field(o, "description");
    if (const auto* m = o.if_contains("messages"); m && m->is_array()) r.messages = m->get_array();
    r.raw = o;
    return r;
}

CompleteResult CompleteResult::from_json(const json::value& v) {
    const auto& o = as_object(as_object(v).contains("completion") ? as_object(v).at("completion") : v);
    CompleteResult r;
    if (const auto* vals = o.if_contains("values"); vals && vals->is_array())
        for (const auto& s : vals->get_array())
            if (s.is_string()) r.values.emplace_back(s.get_string());
    if (const auto* t = o.if_contains("total"); t && t->is_number()) r.total = core::json_integer(*t);
    if (const auto* h = o.if_contains("hasMore"); h && h->is_bool()) r.has_more = h->get_bool();
    return r;
}

json::value apply_elicitation_defaults(const json::value& requested_schema, json::value result) {
    auto* r = result.if_object();
    const auto* schema = requested_schema.if_object();
    if (!r || !schema || string_field(*r, "action") != "accept") return result;
    const auto* props = schema->if_contains("properties");
    if (!props || !props->is_object()) return result;
    auto* content = r->if_contains("content");
    if (!content) content = &((*r)["content"] = json::object{});
    auto* fields = content->if_object();
    if (!fields) return result;
    for (const auto& [name, prop] : props->get_object())
        if (const auto* p = prop.if_object())
            if (const auto* d = p->if_contains("default"); d && !fields->contains(name)) (*fields)[name] = *d;
    return result;
}

}  // namespace switchboard::mcp
