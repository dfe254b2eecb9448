// `switchboard conversations [--json] [--search TEXT]`, `conversations show ID [--json|--markdown]`,
// `conversations delete ID`, `conversations rename ID TITLE`. Plain synchronous commands on the store: no host.
#include "cli.hpp"

#include <switchboard/core/text.hpp>
#include <switchboard/store/conversation_store.hpp>

#include <fmt/format.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <vector>

namespace switchboard::cli {

namespace json = boost::json;
using store::ConversationInfo;
using store::ConversationStore;
using store::StoredMessage;

namespace {

std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

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

/// "2024-05-01T14:03:12.345Z".
std::string iso_time(std::int64_t ms) {
    return format_time(ms, "%Y-%m-%dT%H:%M:%S", true) + fmt::format(".{:03}Z", ms % 1000);
}

/// "just now", "5 min ago", "3 h ago" within a day; the local date and time after that.
std::string human_time(std::int64_t ms) {
    const auto ago = (now_ms() - ms) / 1000;
    if (ago >= 0 && ago < 60) return "just now";
    if (ago >= 0 && ago < 3600) return fmt::format("{} min ago", ago / 60);
    if (ago >= 0 && ago < 86400) return fmt::format("{} h ago", ago / 3600);
    return format_time(ms, "%Y-%m-%d %H:%M", false);
}

json::object info_json(const ConversationInfo& c) {
    json::object o;
    o["id"] = c.id;
    o["title"] = c.title;
    o["model"] = c.model;
    o["messages"] = c.message_count;
    o["created"] = iso_time(c.created_ms);
    o["updated"] = iso_time(c.updated_ms);
    return o;
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

// `switchboard tasks`: the tool calls of stored conversations that a server answered with a task and whose result
// is not stored yet (`chat --resume ID` follows them again).
int list_tasks(const ConversationStore& db, bool as_json) {
    auto tasks = db.running_tasks(0);
    if (as_json) {
        json::array arr;
        for (const auto& t : tasks) {
            json::object o;
            o["conversation"] = t.conversation;
            o["taskId"] = t.task_id;
            o["server"] = t.server;
            o["tool"] = t.tool;
            o["toolCallId"] = t.tool_call_id;
            o["status"] = t.status;
            o["statusMessage"] = t.status_message;
            o["started"] = iso_time(t.created_ms);
            o["updated"] = iso_time(t.updated_ms);
            arr.push_back(std::move(o));
        }
        print_json(std::move(arr));
        return 0;
    }
    if (tasks.empty()) {
        fmt::print("No running tasks in {}.\n", db.path().string());
        return 0;
    }
    fmt::print("{:>5}  {:<24}  {:<14}  {:<40}  {}\n", "CONV", "TOOL", "STATUS", "TASK", "STARTED");
    for (const auto& t : tasks)
        fmt::print("{:>5}  {:<24}  {:<14}  {:<40}  {}{}\n", t.conversation, core::shorten(t.tool, 24), t.status,
                   t.task_id, human_time(t.created_ms), t.status_message.empty() ? "" : "  " + t.status_message);
    return 0;
}

}  // namespace

std::string render_transcript(const ConversationInfo& info, const std::vector<StoredMessage>& messages) {
    std::string out = fmt::format("# {}\n\n", info.title.empty() ? "(untitled)" : info.title);
    out += fmt::format("*{}{} messages, started {}, last updated {}*\n", info.model.empty() ? "" : info.model + " · ",
                       info.message_count, format_time(info.created_ms, "%Y-%m-%d %H:%M", false),
                       format_time(info.updated_ms, "%Y-%m-%d %H:%M", false));
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

int conversations(const ConversationsCommand& c) {
    const std::filesystem::path file = c.db.empty() ? ConversationStore::default_path() : std::filesystem::path(c.db);
    auto no_such = [&] {
        fmt::print(stderr, "switchboard: no conversation {} in {}\n", c.id, file.string());
        return 1;
    };
    try {
        // Looking does not create a database that is not there.
        std::error_code ec;
        if (!std::filesystem::exists(file, ec)) {
            if (c.action != ConversationsCommand::Action::list && c.action != ConversationsCommand::Action::tasks)
                return no_such();
            if (c.json)
                print_json(json::array{});
            else
                fmt::print("No {} in {}.\n", c.action == ConversationsCommand::Action::tasks ? "running tasks" :
                           "conversations", file.string());
            return 0;
        }
        ConversationStore db(file);
        switch (c.action) {
        case ConversationsCommand::Action::list: {
            auto all = db.list(c.search);
            if (c.json) {
                json::array arr;
                for (const auto& info : all) arr.push_back(info_json(info));
                print_json(std::move(arr));
                return 0;
            }
            if (all.empty()) {
                if (c.search.empty())
                    fmt::print("No conversations in {}.\n", file.string());
                else
                    fmt::print("No conversation title contains \"{}\".\n", c.search);
                return 0;
            }
            fmt::print("{:>5}  {:<40}  {:<20}  {:>8}  {}\n", "ID", "TITLE", "MODEL", "MESSAGES", "UPDATED");
            for (const auto& info : all)
                fmt::print("{:>5}  {:<40}  {:<20}  {:>8}  {}\n", info.id, core::shorten(info.title, 40),
                           core::shorten(info.model, 20), info.message_count, human_time(info.updated_ms));
            return 0;
        }
        case ConversationsCommand::Action::show: {
            auto info = db.find(c.id);
            if (!info) return no_such();
            auto messages = db.messages(c.id);
            if (c.markdown) {
                fmt::print("{}", render_transcript(*info, messages));
                return 0;
            }
            if (c.json) {
                auto o = info_json(*info);
                o.erase("messages");
                o["settings"] = db.settings(c.id).to_json();
                json::array arr;
                for (const auto& m : messages) {
                    auto record = m.message.to_json();
                    record["meta"] = m.meta;
                    record["created"] = iso_time(m.created_ms);
                    arr.push_back(std::move(record));
                }
                o["messages"] = std::move(arr);
                print_json(std::move(o));
                return 0;
            }
            // Plain text: the transcript is readable as it is.
            fmt::print("{}", render_transcript(*info, messages));
            return 0;
        }
        case ConversationsCommand::Action::tasks: return list_tasks(db, c.json);
        case ConversationsCommand::Action::remove:
            if (!db.remove(c.id)) return no_such();
            fmt::print("Deleted conversation {}.\n", c.id);
            return 0;
        case ConversationsCommand::Action::rename:
            if (!db.rename(c.id, c.title)) return no_such();
            fmt::print("Renamed conversation {} to \"{}\".\n", c.id, c.title);
            return 0;
        }
    } catch (const store::StoreError& e) {
        fmt::print(stderr, "switchboard: {}\n", e.what());
        return 1;
    }
    return 2;
}

}  // namespace switchboard::cli
