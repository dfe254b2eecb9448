#include <switchboard/gateway/tool_list_cache.hpp>

namespace switchboard::gateway {

namespace {
bool same(const std::weak_ptr<const host::ToolIndex>& kept, const std::shared_ptr<const host::ToolIndex>& index) {
    return index && !kept.owner_before(index) && !index.owner_before(kept) && !kept.expired();
}
}  // namespace

std::shared_ptr<const std::string> ToolListCache::find(const std::shared_ptr<const host::ToolIndex>& index,
                                                       const std::string& key) const {
    if (!same(index_, index)) return nullptr;
    const auto it = by_key_.find(key);
    return it == by_key_.end() ? nullptr : it->second;
}

void ToolListCache::keep(const std::shared_ptr<const host::ToolIndex>& index, std::string key,
                         std::shared_ptr<const std::string> members) {
    if (!index) return;
    if (!same(index_, index)) {
        by_key_.clear();
        index_ = index;
    }
    if (by_key_.size() >= max_entries) return;
    by_key_.insert_or_assign(std::move(key), std::move(members));
}

}  // namespace switchboard::gateway
