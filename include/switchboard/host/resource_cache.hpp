// Caches of resources: a byte-bounded least-recently-used cache of read contents (keyed by server and URI, optionally
// expiring per the 2026-07-28 `ttlMs`) and per-server listings with a time to live.
//
// Thread-safety: single owner.
#pragma once

#include <switchboard/mcp/types.hpp>

#include <chrono>
#include <cstddef>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace switchboard::host {

class ResourceContentCache {
public:
    using clock = std::chrono::steady_clock;
    explicit ResourceContentCache(std::size_t max_bytes = 64u * 1024 * 1024) : max_bytes_(max_bytes) {}

    /// The cached contents, marking them most recently used; nullopt when absent or expired.
    std::optional<mcp::ReadResourceResult> get(const std::string& server, const std::string& uri,
                                               clock::time_point now = clock::now());
    struct Hit {
        mcp::ReadResourceResult value;
        clock::time_point stored;  ///< when the server's answer was put here
    };
    /// get() with the time the contents were stored.
    std::optional<Hit> lookup(const std::string& server, const std::string& uri, clock::time_point now = clock::now());
    /// Stores `value` (replacing any earlier entry) and evicts least recently used entries until the total fits.
    /// A value larger than the whole budget is not stored. `ttl` nullopt: no expiry.
    void put(const std::string& server, const std::string& uri, mcp::ReadResourceResult value,
             std::optional<std::chrono::milliseconds> ttl = std::nullopt, clock::time_point now = clock::now());
    bool erase(const std::string& server, const std::string& uri);
    void erase_server(const std::string& server);
    void clear();

    std::size_t bytes() const { return bytes_; }
    std::size_t size() const { return entries_.size(); }
    std::size_t max_bytes() const { return max_bytes_; }
    std::size_t evictions() const { return evictions_; }

    /// The bytes an entry is charged: the sizes of its texts and blobs plus URIs.
    static std::size_t cost(const mcp::ReadResourceResult& value);

private:
    struct Entry {
        std::string key;
        mcp::ReadResourceResult value;
        std::size_t bytes = 0;
        clock::time_point stored;
        std::optional<clock::time_point> expires;
    };
    static std::string key(const std::string& server, const std::string& uri) { return server + '\n' + uri; }
    void evict_to(std::size_t budget);

    std::size_t max_bytes_;
    std::size_t bytes_ = 0;
    std::size_t evictions_ = 0;
    std::list<Entry> lru_;  // front: most recently used
    std::unordered_map<std::string, std::list<Entry>::iterator> entries_;
};

/// One server's resource listing with the time it stays fresh.
struct ResourceListing {
    std::vector<mcp::Resource> resources;
    std::vector<mcp::ResourceTemplate> templates;
    std::chrono::steady_clock::time_point fetched{};
    std::chrono::milliseconds ttl{0};
    bool valid = false;

    bool fresh(std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now()) const {
        return valid && now < fetched + ttl;
    }
};

}  // namespace switchboard::host
