// TEMPORARY (wip-store): a minimal implementation of message.hpp so the store can be built and tested. The llm
// branch's version replaces this file at merge time.
#include <switchboard/llm/message.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace switchboard::llm {

namespace json = boost::json;

namespace {

std::string describe_media(const MessagePart& p) {
    return fmt::format("[{}, {} bytes]", p.mime_type.empty() ? "binary" : p.mime_type,
                       mcp::base64_decoded_size(p.data));
}

bool all_text(const std::vector<MessagePart>& parts) {
    return std::all_of(parts.begin(), parts.end(), [](const MessagePart& p) { return p.kind == MessagePart::Kind::text; });
}

std::int64_t int_field(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (!v) return 0;
    if (v->is_int64()) return v->get_int64();
    if (v->is_uint64()) return static_cast<std::int64_t>(v->get_uint64());
    if (v->is_double()) return static_cast<std::int64_t>(v->get_double());
    return 0;
}

std::optional<MessagePart> part_from_json(const json::value& v) {
    const auto* o = v.if_object();
    if (!o) return std::nullopt;
    const auto type = mcp::string_field(*o, "type");
    if (type == "text") return MessagePart::make_text(mcp::string_field(*o, "text"));
    if (type == "image_url") {
        const auto* iu = o->if_contains("image_url");
        std::string url = iu && iu->is_object() ? mcp::string_field(iu->get_object(), "url")
                                                : (iu && iu->is_string() ? std::string(iu->get_string()) : "");
        // data:<mime>;base64,<data>
        if (url.rfind("data:", 0) == 0) {
            auto semi = url.find(";base64,");
            if (semi != std::string::npos)
                return MessagePart{MessagePart::Kind::image, {}, url.substr(5, semi - 5), url.substr(semi + 8)};
        }
        return MessagePart::make_text("[image: " + url + "]");
    }
    if (type == "input_audio") {
        const auto* ia = o->if_contains("input_audio");
        if (!ia || !ia->is_object()) return std::nullopt;
        auto format = mcp::string_field(ia->get_object(), "format");
        std::string mime = format == "mp3" ? "audio/mpeg" : "audio/" + format;
        return MessagePart{MessagePart::Kind::audio, {}, std::move(mime), mcp::string_field(ia->get_object(), "data")};
    }
    return std::nullopt;
}

}  // namespace

std::string_view to_string(Role r) {
    switch (r) {
    case Role::system: return "system";
    case Role::user: return "user";
    case Role::assistant: return "assistant";
    case Role::tool: return "tool";
    }
    return "user";
}

std::optional<Role> role_from_string(std::string_view s) {
    if (s == "system") return Role::system;
    if (s == "user") return Role::user;
    if (s == "assistant") return Role::assistant;
    if (s == "tool") return Role::tool;
    return std::nullopt;
}

Message Message::system(std::string text) {
    Message m;
    m.role = Role::system;
    m.content.push_back(MessagePart::make_text(std::move(text)));
    return m;
}

Message Message::user(std::string text) {
    Message m;
    m.role = Role::user;
    m.content.push_back(MessagePart::make_text(std::move(text)));
    return m;
}

Message Message::assistant(std::string text) {
    Message m;
    m.role = Role::assistant;
    if (!text.empty()) m.content.push_back(MessagePart::make_text(std::move(text)));
    return m;
}

Message Message::tool(const ToolExecutionResult& result) {
    Message m;
    m.role = Role::tool;
    m.tool_call_id = result.tool_call_id;
    m.name = result.name;
    if (all_text(result.parts))
        m.content.push_back(MessagePart::make_text(result.text()));
    else
        m.content = result.parts;
    return m;
}

std::string Message::text() const {
    std::string out;
    for (const auto& p : content) {
        if (!out.empty()) out += "\n";
        out += p.kind == MessagePart::Kind::text ? p.text : describe_media(p);
    }
    return out;
}

json::object Message::to_openai() const {
    json::object o;
    o["role"] = to_string(role);
    if (content.empty() && role == Role::assistant && !tool_calls.empty()) {
        o["content"] = nullptr;
    } else if (all_text(content)) {
        o["content"] = text();
    } else {
        json::array parts;
        for (const auto& p : content) parts.push_back(p.to_openai());
        o["content"] = std::move(parts);
    }
    if (!tool_calls.empty()) {
        json::array calls;
        for (const auto& c : tool_calls) calls.push_back(c.to_json());
        o["tool_calls"] = std::move(calls);
    }
    if (role == Role::tool) o["tool_call_id"] = tool_call_id;
    return o;
}

json::object Message::to_json() const {
    auto o = to_openai();
    if (!reasoning.empty()) o["reasoning"] = reasoning;
    if (!name.empty()) o["name"] = name;
    if (usage) {
        json::object u;
        u["prompt_tokens"] = usage->prompt_tokens;
        u["completion_tokens"] = usage->completion_tokens;
        o["usage"] = std::move(u);
    }
    if (timings) {
        json::object t;
        t["first_byte_ms"] = timings->first_byte_ms;
        t["total_ms"] = timings->total_ms;
        t["attempts"] = timings->attempts;
        o["timings"] = std::move(t);
    }
    return o;
}

std::optional<Message> Message::from_json(const json::value& v) {
    const auto* o = v.if_object();
    if (!o) return std::nullopt;
    auto role = role_from_string(mcp::string_field(*o, "role"));
    if (!role) return std::nullopt;
    Message m;
    m.role = *role;
    if (const auto* c = o->if_contains("content")) {
        if (c->is_string()) {
            if (!c->get_string().empty()) m.content.push_back(MessagePart::make_text(std::string(c->get_string())));
        } else if (c->is_array()) {
            for (const auto& p : c->get_array())
                if (auto part = part_from_json(p)) m.content.push_back(std::move(*part));
        }
    }
    if (const auto* calls = o->if_contains("tool_calls"); calls && calls->is_array())
        for (const auto& c : calls->get_array())
            if (auto call = ToolCall::from_json(c)) m.tool_calls.push_back(std::move(*call));
    m.tool_call_id = mcp::string_field(*o, "tool_call_id");
    m.name = mcp::string_field(*o, "name");
    m.reasoning = mcp::string_field(*o, "reasoning");
    if (m.reasoning.empty()) m.reasoning = mcp::string_field(*o, "reasoning_content");
    if (const auto* u = o->if_contains("usage"); u && u->is_object())
        m.usage = Usage{int_field(u->get_object(), "prompt_tokens"), int_field(u->get_object(), "completion_tokens")};
    if (const auto* t = o->if_contains("timings"); t && t->is_object()) {
        const auto& to = t->get_object();
        m.timings = Timings{int_field(to, "first_byte_ms"), int_field(to, "total_ms"),
                            to.contains("attempts") ? static_cast<int>(int_field(to, "attempts")) : 1};
    }
    return m;
}

bool Message::operator==(const Message& o) const {
    auto same_calls = [](const std::vector<ToolCall>& a, const std::vector<ToolCall>& b) {
        return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const ToolCall& x, const ToolCall& y) {
            return x.id == y.id && x.type == y.type && x.name == y.name && x.arguments == y.arguments;
        });
    };
    return role == o.role && content == o.content && reasoning == o.reasoning && same_calls(tool_calls, o.tool_calls) &&
           tool_call_id == o.tool_call_id && name == o.name && usage == o.usage && timings == o.timings;
}

}  // namespace switchboard::llm
