// The byte-bounded LRU content cache, listing freshness, and reconnect backoff.
#include <switchboard/core/backoff.hpp>
#include <switchboard/host/resource_cache.hpp>

#include <gtest/gtest.h>

namespace switchboard::host {
using core::backoff_delay;
using core::BackoffPolicy;
namespace {

using namespace std::chrono_literals;

mcp::ReadResourceResult content(std::string uri, std::size_t bytes) {
    mcp::ReadResourceResult r;
    mcp::ResourceContents c;
    c.uri = std::move(uri);
    c.text = std::string(bytes, 'x');
    r.contents.push_back(std::move(c));
    return r;
}

TEST(ResourceContentCache, EvictsLeastRecentlyUsedToStayWithinItsBudget) {
    const auto one = ResourceContentCache::cost(content("u1", 1000));
    ResourceContentCache cache(3 * one);
    cache.put("s", "u1", content("u1", 1000));
    cache.put("s", "u2", content("u2", 1000));
    cache.put("s", "u3", content("u3", 1000));
    EXPECT_EQ(cache.size(), 3u);
    EXPECT_TRUE(cache.get("s", "u1"));  // u1 is now the most recently used; u2 the least
    cache.put("s", "u4", content("u4", 1000));
    EXPECT_LE(cache.bytes(), cache.max_bytes());
    EXPECT_FALSE(cache.get("s", "u2"));
    EXPECT_TRUE(cache.get("s", "u1"));
    EXPECT_TRUE(cache.get("s", "u3"));
    EXPECT_TRUE(cache.get("s", "u4"));
    EXPECT_EQ(cache.evictions(), 1u);
    // Too big for the whole budget: not stored, nothing evicted for it.
    cache.put("s", "huge", content("huge", 10 * 1000));
    EXPECT_FALSE(cache.get("s", "huge"));
    EXPECT_EQ(cache.size(), 3u);
}

TEST(ResourceContentCache, ReplacesEntriesKeysByServerAndExpires) {
    ResourceContentCache cache(1 << 20);
    cache.put("a", "u", content("u", 10));
    cache.put("b", "u", content("u", 20));
    cache.put("a", "u", content("u", 30));  // replaces, does not add
    EXPECT_EQ(cache.size(), 2u);
    EXPECT_EQ(cache.get("a", "u")->contents[0].text->size(), 30u);
    EXPECT_EQ(cache.bytes(),
              ResourceContentCache::cost(content("u", 30)) + ResourceContentCache::cost(content("u", 20)));
    cache.erase_server("a");
    EXPECT_FALSE(cache.get("a", "u"));
    EXPECT_TRUE(cache.get("b", "u"));

    const auto t0 = ResourceContentCache::clock::now();
    cache.put("a", "ttl", content("ttl", 1), 100ms, t0);
    EXPECT_TRUE(cache.get("a", "ttl", t0 + 99ms));
    EXPECT_FALSE(cache.get("a", "ttl", t0 + 100ms));
    cache.put("a", "zero", content("zero", 1), 0ms, t0);  // ttlMs 0: immediately stale
    EXPECT_FALSE(cache.get("a", "zero", t0));
    cache.clear();
    EXPECT_EQ(cache.bytes(), 0u);
    EXPECT_EQ(cache.size(), 0u);
}

TEST(ResourceListing, FreshOnlyWithinItsTtl) {
    ResourceListing l;
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_FALSE(l.fresh(t0));
    l.valid = true;
    l.fetched = t0;
    l.ttl = 500ms;
    EXPECT_TRUE(l.fresh(t0 + 499ms));
    EXPECT_FALSE(l.fresh(t0 + 500ms));
}

TEST(Backoff, DoublesFromTheBaseUpToTheCapWithEqualJitter) {
    BackoffPolicy p;  // defaults: 1 s base, 30 s cap
    p.jitter = false;
    EXPECT_EQ(backoff_delay(p, 0), 1000ms);
    EXPECT_EQ(backoff_delay(p, 1), 2000ms);
    EXPECT_EQ(backoff_delay(p, 4), 16000ms);
    EXPECT_EQ(backoff_delay(p, 5), 30000ms);
    EXPECT_EQ(backoff_delay(p, 1000), 30000ms);  // no overflow
    p.jitter = true;
    EXPECT_EQ(backoff_delay(p, 3, 0.0), 4000ms);       // half fixed...
    EXPECT_EQ(backoff_delay(p, 3, 0.999999), 7999ms);  // ...half random
    EXPECT_EQ(backoff_delay(p, 10, 0.5), 22500ms);
    for (int i = 0; i < 100; ++i) {
        auto d = backoff_delay(p, 2);
        EXPECT_GE(d, 2000ms);
        EXPECT_LE(d, 4000ms);
    }
    BackoffPolicy fast;
    fast.base = 10ms;
    fast.max = 40ms;
    fast.jitter = false;
    EXPECT_EQ(backoff_delay(fast, 0), 10ms);
    EXPECT_EQ(backoff_delay(fast, 3), 40ms);
}

}  // namespace
}  // namespace switchboard::host
