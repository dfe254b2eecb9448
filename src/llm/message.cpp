#include <switchboard/llm/message.hpp>

#include <switchboard/core/json_number.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace switchboard::llm {

namespace json = boost::json;

namespace {

constexpr std::array<std::string_view, 4> role_names = {"system", "user", "assistant", "tool"};

bool all_text(const std::vector<MessagePart>& parts) {
    return std::all_of(parts.begin(), parts.end(),
                       [](const MessagePart& p) { return p.kind == MessagePart::Kind::text; });
}

// Text parts joined with "\n", as ToolExecutionResult::text() does, so a tool message reads the same either way.
std::string joined(const std::vector<MessagePart>& parts) {
    std::string out;
    for (const auto& p : parts) {
        if (!out.empty()) out += "\n";
        if (p.kind == MessagePart::Kind::text)
            out += p.text;
        else
            out += fmt::format("[{}, {} bytes]", p.mime_type.empty() ? "binary" : p.mime_type,
                               mcp::base64_decoded_size(p.data));
    }
    return out;
}

json::array parts_array(const std::vector<MessagePart>& parts) {
    json::array a;
    for (const auto& p : parts) a.push_back(p.to_openai());
    return a;
}

// "data:image/png;base64,AAAA" -> ("image/png", "AAAA").
std::optional<MessagePart> media_from_data_url(std::string_view url) {
    if (url.substr(0, 5) != "data:") return std::nullopt;
    const auto semi = url.find(";base64,");
    if (semi == std::string_view::npos) return std::nullopt;
    return MessagePart{
        MessagePart::Kind::image, {}, std::string(url.substr(5, semi - 5)), std::string(url.substr(semi + 8))};
}

std::optional<MessagePart> part_from_openai(const json::value& v) {
    const auto* o = v.if_object();
    if (!o) return std::nullopt;
    const auto type = mcp::string_field(*o, "type");
    if (type == "text") return MessagePart::make_text(mcp::string_field(*o, "text"));
    if (type == "image_url") {
        const auto* iu = o->if_contains("image_url");
        if (iu && iu->is_object()) return media_from_data_url(mcp::string_field(iu->get_object(), "url"));
        if (iu && iu->is_string()) return media_from_data_url(iu->get_string());
        return std::nullopt;
    }
    if (type == "input_audio") {
        const auto* ia = o->if_contains("input_audio");
        if (!ia || !ia->is_object()) return std::nullopt;
        const auto& a = ia->get_object();
        return MessagePart{
            MessagePart::Kind::audio, {}, "audio/" + mcp::string_field(a, "format"), mcp::string_field(a, "data")};
    }
    return std::nullopt;
}

std::int64_t int_field(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (!v) return 0;
    return core::json_integer(*v).value_or(0);
}

}  // namespace

std::string_view to_string(Role r) { return role_names[static_cast<std::size_t>(r)]; }

std::optional<Role> role_from_string(std::string_view s) {
    for (std::size_t i = 0; i < role_names.size(); ++i)
        if (role_names[i] == s) return static_cast<Role>(i);
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
    m.content.push_back(MessagePart::make_text(std::move(text)));
    return m;
}

Message Message::assistant(std::string text) {
    Message m;
    m.role = Role::assistant;
    m.content.push_back(MessagePart::make_text(std::move(text)));
    return m;
}

Message Message::tool(const ToolExecutionResult& result) {
    Message m;
    m.role = Role::tool;
    m.content = result.parts;
    m.tool_call_id = result.tool_call_id;
    m.name = result.name;
    return m;
}

std::string Message::text() const { return joined(content); }

json::object Message::to_openai() const {
    json::object o;
    o["role"] = to_string(role);
    if (content.empty() && role == Role::assistant && !tool_calls.empty())
        o["content"] = nullptr;
    else if (all_text(content))
        o["content"] = joined(content);
    else
        o["content"] = parts_array(content);
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
    // Stored exactly: several text parts stay apart, and no parts stays null (to_openai() joins and fills in).
    if (content.empty())
        o["content"] = nullptr;
    else if (content.size() == 1 && content[0].kind == MessagePart::Kind::text)
        o["content"] = content[0].text;
    else
        o["content"] = parts_array(content);
    if (!name.empty()) o["name"] = name;
    if (!reasoning.empty()) o["reasoning"] = reasoning;
    if (usage) o["usage"] = {{"prompt_tokens", usage->prompt_tokens}, {"completion_tokens", usage->completion_tokens}};
    if (timings)
        o["timings"] = {{"first_byte_ms", timings->first_byte_ms},
                        {"total_ms", timings->total_ms},
                        {"attempts", timings->attempts}};
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
            m.content.push_back(MessagePart::make_text(std::string(c->get_string())));
        } else if (c->is_array()) {
            for (const auto& p : c->get_array())
                if (auto part = part_from_openai(p)) m.content.push_back(std::move(*part));
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
                            static_cast<int>(int_field(to, "attempts"))};
    }
    return m;
}

bool Message::operator==(const Message& o) const {
    auto same_call = [](const ToolCall& a, const ToolCall& b) {
        return a.id == b.id && a.type == b.type && a.name == b.name && a.arguments == b.arguments;
    };
    return role == o.role && content == o.content && reasoning == o.reasoning &&
           std::equal(tool_calls.begin(), tool_calls.end(), o.tool_calls.begin(), o.tool_calls.end(), same_call) &&
           tool_call_id == o.tool_call_id && name == o.name && usage == o.usage && timings == o.timings;
}

}  // namespace switchboard::llm
