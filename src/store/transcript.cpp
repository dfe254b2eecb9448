#include <switchboard/store/transcript.hpp>

#include <fmt/format.h>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <ctime>

namespace switchboard::store {

namespace json = boost::json;

namespace {

std::string format_time(std::int64_t ms, const char* format, bool utc) {
    std::time_t t = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    if (utc)
        ::gmtime_r(&t, &tm);
    else
        ::localtime_r(&t, &tm);
    char buf[64];
    std::strftime(buf, sizeof buf, format, &tm);
    return buf;
}

// A fence longer than any run of backticks in `text`, so the block cannot be closed from inside.
std::string fence_for(std::string_view text) {
    std::size_t longest = 0, run = 0;
    for (char ch : text) {
        run = ch == '`' ? run + 1 : 0;
        longest = std::max(longest, run);
    }
    return std::string(std::max<std::size_t>(3, longest + 1), '`');
}

std::string fenced(std::string_view text) {
    auto fence = fence_for(text);
    return fmt::format("{}\n{}\n{}", fence, text, fence);
}

// Inline code that survives backticks inside.
std::string inline_code(std::string_view text) {
    std::string ticks = text.find('`') == std::string_view::npos ? "`" : "``";
    return fmt::format("{0}{1}{2}{1}{0}", ticks, text.find('`') == std::string_view::npos ? "" : " ", text);
}

std::string role_heading(llm::Role r) {
    switch (r) {
    case llm::Role::system: return "System";
    case llm::Role::user: return "User";
    case llm::Role::assistant: return "Assistant";
    case llm::Role::tool: return "Tool";
    }
    return "Message";
}

bool meta_flag(const json::object& meta, std::string_view key) {
    const auto* v = meta.if_contains(key);
    return v && v->is_bool() && v->get_bool();
}

// "(demo, 42 ms, error)" from a tool result's meta.
std::string result_note(const json::object& meta) {
    std::vector<std::string> notes;
    if (auto server = mcp::string_field(meta, "server"); !server.empty()) notes.push_back(server);
    if (const auto* d = meta.if_contains("durationMs"); d && d->is_int64())
        notes.push_back(fmt::format("{} ms", d->get_int64()));
    if (meta_flag(meta, "denied")) notes.push_back("denied");
    if (meta_flag(meta, "isError")) notes.push_back("error");
    return notes.empty() ? "" : fmt::format(" ({})", fmt::join(notes, ", "));
}

std::string tool_result_block(const StoredMessage& r) {
    return fmt::format("Result{}:\n\n{}", result_note(r.meta), fenced(r.message.text()));
}

}  // namespace

std::string iso_time(std::int64_t ms) {
    return format_time(ms, "%Y-%m-%dT%H:%M:%S", true) + fmt::format(".{:03}Z", ms % 1000);
}

std::string local_time(std::int64_t ms) { return format_time(ms, "%Y-%m-%d %H:%M", false); }

std::string markdown_transcript(const ConversationInfo& info, const std::vector<StoredMessage>& messages) {
    std::string out = fmt::format("# {}\n\n", info.title.empty() ? "(untitled)" : info.title);
    out += fmt::format("*{}{} messages, started {}, last updated {}*\n", info.model.empty() ? "" : info.model + " · ",
                       info.message_count, local_time(info.created_ms), local_time(info.updated_ms));
    std::vector<bool> shown(messages.size(), false);  // tool results already folded under their call
    for (std::size_t i = 0; i < messages.size(); ++i) {
        if (shown[i]) continue;
        const auto& m = messages[i];
        const auto& msg = m.message;
        std::vector<std::string> blocks;  // joined by blank lines
        if (!msg.reasoning.empty())
            blocks.push_back(fmt::format("<details><summary>Reasoning</summary>\n\n{}\n\n</details>", msg.reasoning));
        if (msg.role == llm::Role::tool) {
            blocks.push_back(tool_result_block(m));
        } else if (auto text = msg.text(); !text.empty()) {
            blocks.push_back(std::move(text));
        }
        if (const auto* att = m.meta.if_contains("attachments"); att && att->is_array() && !att->get_array().empty()) {
            std::vector<std::string> names;
            for (const auto& a : att->get_array())
                names.push_back(a.is_object() ? mcp::string_field(a.get_object(), "uri") : json::serialize(a));
            blocks.push_back(fmt::format("*Attached: {}*", fmt::join(names, ", ")));
        }
        for (const auto& call : msg.tool_calls) {
            blocks.push_back("→ " + inline_code(call.name + " " + (call.arguments.empty() ? "{}" : call.arguments)));
            // Its result: the first tool message after this one that answers the call.
            std::size_t j = i + 1;
            while (j < messages.size() && (shown[j] || messages[j].message.role != llm::Role::tool ||
                                           messages[j].message.tool_call_id != call.id))
                ++j;
            if (j < messages.size()) {
                blocks.push_back(tool_result_block(messages[j]));
                shown[j] = true;
            } else {
                blocks.push_back("*(no result)*");
            }
        }
        if (msg.usage)
            blocks.push_back(fmt::format("*{} prompt + {} completion tokens*", msg.usage->prompt_tokens,
                                         msg.usage->completion_tokens));
        out += fmt::format("\n## {}{}\n\n", role_heading(msg.role),
                           msg.role == llm::Role::tool && !msg.name.empty() ? " (" + msg.name + ")" : "");
        if (!blocks.empty()) out += fmt::format("{}\n", fmt::join(blocks, "\n\n"));
    }
    return out;
}

json::object transcript_json(const ConversationInfo& info, const ConversationSettings& settings,
                             const std::vector<StoredMessage>& messages) {
    json::object o{{"id", info.id},
                   {"title", info.title},
                   {"model", info.model},
                   {"created", iso_time(info.created_ms)},
                   {"updated", iso_time(info.updated_ms)},
                   {"settings", settings.to_json()}};
    json::array arr;
    for (const auto& m : messages) {
        auto record = m.message.to_json();
        record["meta"] = m.meta;
        record["created"] = iso_time(m.created_ms);
        arr.push_back(std::move(record));
    }
    o["messages"] = std::move(arr);
    return o;
}

}  // namespace switchboard::store
