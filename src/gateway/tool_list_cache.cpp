#include <switchboard/gateway/tool_list_cache.hpp>

#include <switchboard/core/text.hpp>

namespace switchboard::gateway {

namespace {

bool same(const std::weak_ptr<const host::ToolIndex>& kept, const std::shared_ptr<const host::ToolIndex>& index) {
    return index && !kept.owner_before(index) && !index.owner_before(kept) && !kept.expired();
}

// The key's length first: no key and cursor read as another pair.
std::string page_key(const std::string& key, const std::string& cursor) {
    std::string out;
    core::append_sized(out, key);
    out.append(cursor);
    return out;
}

}  // namespace

std::shared_ptr<const std::string> ToolListCache::find(const std::shared_ptr<const host::ToolIndex>& index,
                                                       const std::string& key, const std::string& cursor) const {
    if (!same(index_, index)) return nullptr;
    const auto it = pages_.find(page_key(key, cursor));
    return it == pages_.end() ? nullptr : it->second;
}

void ToolListCache::keep(const std::shared_ptr<const host::ToolIndex>& index, const std::string& key,
                         const std::string& cursor, std::shared_ptr<const std::string> members,
                         const std::string& next_cursor) {
    if (!index || !members) return;
    if (!same(index_, index)) {
        pages_.clear();
        given_.clear();
        bytes_ = 0;
        index_ = index;
    }
    auto page = page_key(key, cursor);
    if (!cursor.empty() && !given_.contains(page)) return;
    if (pages_.size() >= max_entries || bytes_ + members->size() > max_bytes || pages_.contains(page)) return;
    bytes_ += members->size();
    pages_.emplace(std::move(page), std::move(members));
    if (!next_cursor.empty()) given_.insert(page_key(key, next_cursor));
}

}  // namespace switchboard::gateway
