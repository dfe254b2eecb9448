// `switchboard conversations [--json] [--search TEXT]`, `conversations show ID [--json|--markdown]`,
// `conversations delete ID`, `conversations rename ID TITLE`. Plain synchronous commands on the store: no host.
#include "cli.hpp"

#include <switchboard/core/text.hpp>
#include <switchboard/store/conversation_store.hpp>
#include <switchboard/store/transcript.hpp>

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

/// "just now", "5 min ago", "3 h ago" within a day; the local date and time after that.
std::string human_time(std::int64_t ms) {
    const auto ago = (now_ms() - ms) / 1000;
    if (ago >= 0 && ago < 60) return "just now";
    if (ago >= 0 && ago < 3600) return fmt::format("{} min ago", ago / 60);
    if (ago >= 0 && ago < 86400) return fmt::format("{} h ago", ago / 3600);
    return store::local_time(ms);
}

json::object info_json(const ConversationInfo& c) {
    json::object o;
    o["id"] = c.id;
    o["title"] = c.title;
    o["model"] = c.model;
    o["messages"] = c.message_count;
    o["created"] = store::iso_time(c.created_ms);
    o["updated"] = store::iso_time(c.updated_ms);
    return o;
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
            o["started"] = store::iso_time(t.created_ms);
            o["updated"] = store::iso_time(t.updated_ms);
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
                fmt::print("{}", store::markdown_transcript(*info, messages));
                return 0;
            }
            if (c.json) {
                print_json(store::transcript_json(*info, db.settings(c.id), messages));
                return 0;
            }
            // Plain text: the transcript is readable as it is.
            fmt::print("{}", store::markdown_transcript(*info, messages));
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
