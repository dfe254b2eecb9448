#include <switchboard/host/attachments.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace switchboard::host {

const Attachment& AttachmentList::add(std::string server, std::string uri) {
    Attachment a;
    a.id = next_++;
    a.server = std::move(server);
    a.uri = std::move(uri);
    items_.push_back(std::move(a));
    return items_.back();
}

bool AttachmentList::set_content(std::uint64_t id, mcp::ReadResourceResult content) {
    for (auto& a : items_)
        if (a.id == id) {
            a.loading = false;
            a.content = std::move(content);
            a.error.clear();
            return true;
        }
    return false;
}

bool AttachmentList::set_error(std::uint64_t id, std::string error) {
    for (auto& a : items_)
        if (a.id == id) {
            a.loading = false;
            a.content.reset();
            a.error = std::move(error);
            return true;
        }
    return false;
}

bool AttachmentList::remove(std::uint64_t id) {
    auto it = std::find_if(items_.begin(), items_.end(), [id](const Attachment& a) { return a.id == id; });
    if (it == items_.end()) return false;
    items_.erase(it);
    return true;
}

const Attachment* AttachmentList::find(std::uint64_t id) const {
    for (const auto& a : items_)
        if (a.id == id) return &a;
    return nullptr;
}

bool AttachmentList::any_loading() const {
    return std::any_of(items_.begin(), items_.end(), [](const Attachment& a) { return a.loading; });
}

std::vector<MessagePart> AttachmentList::to_message_parts() const {
    std::vector<MessagePart> out;
    for (const auto& a : items_) {
        if (a.loading) continue;
        if (a.content) {
            auto parts = format_resource_contents(a.content->contents);
            out.insert(out.end(), parts.begin(), parts.end());
        } else {
            out.push_back(MessagePart::make_text(
                fmt::format("Resource {} (server \"{}\") could not be read: {}", a.uri, a.server, a.error)));
        }
    }
    return out;
}

std::vector<MessagePart> AttachmentList::consume() {
    auto parts = to_message_parts();
    items_.erase(std::remove_if(items_.begin(), items_.end(), [](const Attachment& a) { return !a.loading; }),
                 items_.end());
    return parts;
}

}  // namespace switchboard::host
