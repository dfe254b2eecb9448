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

std::vector<Attachment> AttachmentList::consume() {
    std::vector<Attachment> taken;
    std::vector<Attachment> kept;
    for (auto& a : items_) (a.loading ? kept : taken).push_back(std::move(a));
    items_ = std::move(kept);
    return taken;
}

}  // namespace switchboard::host
