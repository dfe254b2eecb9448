#include <switchboard/host/resource_cache.hpp>

namespace switchboard::host {

std::size_t ResourceContentCache::cost(const mcp::ReadResourceResult& value) {
    std::size_t n = 64;
    for (const auto& c : value.contents) {
        n += 64 + c.uri.size() + c.mime_type.size();
        if (c.text) n += c.text->size();
        if (c.blob) n += c.blob->size();
        if (c.blob_bytes) n += c.blob_bytes->size();
    }
    return n;
}

std::optional<mcp::ReadResourceResult> ResourceContentCache::get(const std::string& server, const std::string& uri,
                                                                 clock::time_point now) {
    auto hit = lookup(server, uri, now);
    if (!hit) return std::nullopt;
    return std::move(hit->value);
}

std::optional<ResourceContentCache::Hit> ResourceContentCache::lookup(const std::string& server,
                                                                      const std::string& uri, clock::time_point now) {
    auto it = entries_.find(key(server, uri));
    if (it == entries_.end()) return std::nullopt;
    if (it->second->expires && now >= *it->second->expires) {
        bytes_ -= it->second->bytes;
        lru_.erase(it->second);
        entries_.erase(it);
        return std::nullopt;
    }
    lru_.splice(lru_.begin(), lru_, it->second);
    return Hit{it->second->value, it->second->stored};
}

void ResourceContentCache::put(const std::string& server, const std::string& uri, mcp::ReadResourceResult value,
                               std::optional<std::chrono::milliseconds> ttl, clock::time_point now) {
    erase(server, uri);
    const auto bytes = cost(value);
    if (bytes > max_bytes_) return;
    if (ttl && ttl->count() <= 0) return;  // ttlMs 0: immediately stale
    evict_to(max_bytes_ - bytes);
    Entry e{key(server, uri), std::move(value), bytes, now, std::nullopt};
    if (ttl) e.expires = now + *ttl;
    lru_.push_front(std::move(e));
    entries_[lru_.front().key] = lru_.begin();
    bytes_ += bytes;
}

void ResourceContentCache::evict_to(std::size_t budget) {
    while (bytes_ > budget && !lru_.empty()) {
        auto& last = lru_.back();
        bytes_ -= last.bytes;
        entries_.erase(last.key);
        lru_.pop_back();
        ++evictions_;
    }
}

bool ResourceContentCache::erase(const std::string& server, const std::string& uri) {
    auto it = entries_.find(key(server, uri));
    if (it == entries_.end()) return false;
    bytes_ -= it->second->bytes;
    lru_.erase(it->second);
    entries_.erase(it);
    return true;
}

void ResourceContentCache::erase_server(const std::string& server) {
    const auto prefix = server + '\n';
    for (auto it = lru_.begin(); it != lru_.end();) {
        if (it->key.compare(0, prefix.size(), prefix) == 0) {
            bytes_ -= it->bytes;
            entries_.erase(it->key);
            it = lru_.erase(it);
        } else {
            ++it;
        }
    }
}

void ResourceContentCache::clear() {
    lru_.clear();
    entries_.clear();
    bytes_ = 0;
}

}  // namespace switchboard::host
