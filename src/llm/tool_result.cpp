#include <switchboard/llm/tool_result.hpp>

#include <fmt/format.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cctype>

namespace switchboard::llm {

namespace json = boost::json;

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string describe_media(const MessagePart& p) {
    return fmt::format("[{}, {} bytes]", p.mime_type.empty() ? "binary" : p.mime_type,
                       mcp::base64_decoded_size(p.data));
}

// "audio/wav" -> "wav", "audio/mpeg" -> "mp3": the formats OpenAI's input_audio names.
std::string audio_format(std::string_view mime) {
    auto slash = mime.find('/');
    std::string sub(slash == std::string_view::npos ? mime : mime.substr(slash + 1));
    if (sub == "mpeg" || sub == "mp3") return "mp3";
    if (sub == "x-wav" || sub == "wave") return "wav";
    return sub;
}

void add_resource(std::vector<MessagePart>& out, const mcp::ResourceContents& c) {
    if (c.text) {
        out.push_back(MessagePart::make_text(
            fmt::format("Resource {}{}:\n{}", c.uri, c.mime_type.empty() ? "" : " (" + c.mime_type + ")", *c.text)));
    } else if (c.has_blob() && starts_with(c.mime_type, "image/")) {
        out.push_back(MessagePart::make_text(fmt::format("Resource {}:", c.uri)));
        out.push_back(MessagePart{MessagePart::Kind::image, {}, c.mime_type, c.blob_base64()});
    } else if (c.has_blob() && starts_with(c.mime_type, "audio/")) {
        out.push_back(MessagePart::make_text(fmt::format("Resource {}:", c.uri)));
        out.push_back(MessagePart{MessagePart::Kind::audio, {}, c.mime_type, c.blob_base64()});
    } else if (c.has_blob()) {
        out.push_back(MessagePart::make_text(fmt::format("Resource {}: binary content ({}, {} bytes)", c.uri,
                                                         c.mime_type.empty() ? "unknown type" : c.mime_type,
                                                         c.blob_size())));
    } else {
        out.push_back(MessagePart::make_text(fmt::format("Resource {}: (empty)", c.uri)));
    }
}

}  // namespace

std::optional<ToolCall> ToolCall::from_json(const json::value& v) {
    const auto* o = v.if_object();
    if (!o) return std::nullopt;
    ToolCall c;
    c.id = mcp::string_field(*o, "id");
    if (auto t = mcp::string_field(*o, "type"); !t.empty()) c.type = t;
    const auto* f = o->if_contains("function");
    if (!f || !f->is_object()) return std::nullopt;
    c.name = mcp::string_field(f->get_object(), "name");
    if (c.name.empty()) return std::nullopt;
    if (const auto* a = f->get_object().if_contains("arguments")) {
        if (a->is_string())
            c.arguments = std::string(a->get_string());
        else if (!a->is_null())
            c.arguments = json::serialize(*a);  // some clients send an object: accept it
    }
    return c;
}

json::object ToolCall::to_json() const {
    json::object f{{"name", name}, {"arguments", arguments}};
    return json::object{{"id", id}, {"type", type}, {"function", std::move(f)}};
}

json::object MessagePart::to_openai() const {
    switch (kind) {
    case Kind::text: return json::object{{"type", "text"}, {"text", text}};
    case Kind::image: {
        json::object url{{"url", fmt::format("data:{};base64,{}", mime_type, data)}};
        return json::object{{"type", "image_url"}, {"image_url", std::move(url)}};
    }
    case Kind::audio: {
        json::object audio{{"data", data}, {"format", audio_format(mime_type)}};
        return json::object{{"type", "input_audio"}, {"input_audio", std::move(audio)}};
    }
    }
    return {};
}

std::string ToolExecutionResult::text() const {
    std::string out;
    for (const auto& p : parts) {
        if (!out.empty()) out += "\n";
        out += p.kind == MessagePart::Kind::text ? p.text : describe_media(p);
    }
    return out;
}

json::object ToolExecutionResult::to_openai_message() const {
    json::object m{{"role", "tool"}, {"tool_call_id", tool_call_id}};
    const bool all_text =
        std::all_of(parts.begin(), parts.end(), [](const MessagePart& p) { return p.kind == MessagePart::Kind::text; });
    if (all_text) {
        m["content"] = text();
    } else {
        json::array content;
        for (const auto& p : parts) content.push_back(p.to_openai());
        m["content"] = std::move(content);
    }
    return m;
}

std::vector<MessagePart> format_tool_content(const mcp::CallToolResult& result) {
    std::vector<MessagePart> out;
    bool has_text = false;
    for (const auto& c : result.content) {
        if (c.type == "text") {
            out.push_back(MessagePart::make_text(c.text()));
            has_text = true;
        } else if (c.type == "image") {
            out.push_back(MessagePart{MessagePart::Kind::image, {}, c.mime_type(), c.data()});
        } else if (c.type == "audio") {
            out.push_back(MessagePart{MessagePart::Kind::audio, {}, c.mime_type(), c.data()});
        } else if (c.type == "resource") {
            if (const auto* r = c.raw.if_contains("resource")) {
                add_resource(out, mcp::ResourceContents::from_json(*r));
                has_text = true;
            }
        } else if (c.type == "resource_link") {
            const auto& o = c.raw;
            std::string d = fmt::format("Resource link: {}", mcp::string_field(o, "uri"));
            if (auto n = mcp::string_field(o, "name"); !n.empty()) d += fmt::format(" (name: {})", n);
            if (auto m = mcp::string_field(o, "mimeType"); !m.empty()) d += fmt::format(" [{}]", m);
            if (auto desc = mcp::string_field(o, "description"); !desc.empty()) d += " - " + desc;
            out.push_back(MessagePart::make_text(std::move(d)));
            has_text = true;
        } else {
            out.push_back(MessagePart::make_text(json::serialize(c.raw)));
            has_text = true;
        }
    }
    if (!has_text && result.structured_content)
        out.insert(out.begin(), MessagePart::make_text(json::serialize(*result.structured_content)));
    return out;
}

ToolExecutionResult format_tool_result(const ToolCall& call, std::string server, const mcp::CallToolResult& result) {
    ToolExecutionResult r;
    r.tool_call_id = call.id;
    r.name = call.name;
    r.server = std::move(server);
    r.is_error = result.is_error;
    r.status = result.is_error ? ToolExecutionResult::Status::tool_error : ToolExecutionResult::Status::ok;
    r.parts = format_tool_content(result);
    r.structured_content = result.structured_content;
    r.raw = result.to_json();
    return r;
}

ToolExecutionResult error_result(const ToolCall& call, std::string server, std::string message,
                                 ToolExecutionResult::Status status) {
    ToolExecutionResult r;
    r.status = status;
    r.tool_call_id = call.id;
    r.name = call.name;
    r.server = std::move(server);
    r.is_error = true;
    r.parts.push_back(MessagePart::make_text(std::move(message)));
    return r;
}

std::vector<MessagePart> format_resource_contents(const std::vector<mcp::ResourceContents>& contents) {
    std::vector<MessagePart> out;
    for (const auto& c : contents) add_resource(out, c);
    return out;
}

std::optional<json::object> parse_tool_arguments(std::string_view text, std::string& error) {
    auto trimmed = text;
    while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.front()))) trimmed.remove_prefix(1);
    if (trimmed.empty()) return json::object{};
    json::error_code ec;
    auto v = json::parse(trimmed, ec);
    if (ec) {
        error = fmt::format("the arguments are not valid JSON ({}): {}", ec.message(),
                            trimmed.size() > 200 ? std::string(trimmed.substr(0, 200)) + "..." : std::string(trimmed));
        return std::nullopt;
    }
    if (v.is_null()) return json::object{};
    if (!v.is_object()) {
        error = fmt::format("the arguments must be a JSON object, got {}", json::serialize(v).substr(0, 200));
        return std::nullopt;
    }
    return std::move(v.get_object());
}

}  // namespace switchboard::llm
