// gateway::page_of: long lists in pages whose cursors survive a list that changes between two pages; and
// gateway::ToolListCache, where the gateway keeps tools/list pages as text.
#include <switchboard/gateway/pages.hpp>
#include <switchboard/gateway/tool_list_cache.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace switchboard::gateway {
namespace {

namespace json = boost::json;

json::array tool_list(const std::vector<std::string>& names) {
    json::array out;
    for (const auto& n : names) out.push_back(json::object{{"name", n}, {"description", "tool " + n}});
    return out;
}

std::vector<std::string> page_names(const json::object& page) {
    std::vector<std::string> out;
    for (const auto& t : page.at("tools").as_array()) out.emplace_back(t.at("name").as_string());
    return out;
}

std::string page_next(const json::object& page) {
    const auto* c = page.if_contains("nextCursor");
    return c ? std::string(c->as_string()) : std::string();
}

TEST(GatewayPages, AShortListIsOnePageWithoutACursor) {
    auto r = page_of(tool_list({"a", "b"}), "tools", "name", "", 5);
    ASSERT_TRUE(r);
    EXPECT_EQ(page_names(*r), (std::vector<std::string>{"a", "b"}));
    EXPECT_FALSE(r->contains("nextCursor"));
    auto all = page_of(tool_list({"a", "b", "c"}), "tools", "name", "", 0);  // 0: never paginate
    ASSERT_TRUE(all);
    EXPECT_EQ(page_names(*all).size(), 3u);
    EXPECT_FALSE(all->contains("nextCursor"));
}

TEST(GatewayPages, FollowingTheCursorsGivesEveryItemOnce) {
    const std::vector<std::string> list{"a", "b", "c", "d", "e"};
    std::vector<std::string> seen;
    std::string cursor;
    int pages = 0;
    do {
        auto r = page_of(tool_list(list), "tools", "name", cursor, 2);
        ASSERT_TRUE(r);
        EXPECT_LE(page_names(*r).size(), 2u);
        for (auto& n : page_names(*r)) seen.push_back(n);
        cursor = page_next(*r);
        ++pages;
    } while (!cursor.empty() && pages < 10);
    EXPECT_EQ(seen, list);
    EXPECT_EQ(pages, 3);
}

TEST(GatewayPages, AListThatChangesBetweenPagesGoesOnAfterTheLastItemGiven) {
    auto first = page_of(tool_list({"a", "b", "c", "d", "e"}), "tools", "name", "", 2);
    ASSERT_TRUE(first);
    const auto cursor = page_next(*first);  // after "b"
    // "a" removed and "z" added before the cursor: the next page still starts right after "b".
    auto moved = page_of(tool_list({"z", "b", "c", "d", "e"}), "tools", "name", cursor, 2);
    ASSERT_TRUE(moved);
    EXPECT_EQ(page_names(*moved), (std::vector<std::string>{"c", "d"}));
    // "b" itself gone: the page starts at its old place, so "c" is neither skipped nor repeated.
    auto gone = page_of(tool_list({"a", "c", "d", "e"}), "tools", "name", cursor, 2);
    ASSERT_TRUE(gone);
    EXPECT_EQ(page_names(*gone), (std::vector<std::string>{"c", "d"}));
}

TEST(GatewayPages, ACursorThisDidNotMakeIsInvalidParams) {
    for (const std::string bad : {"nope", "cDE6eDpi" /* "p1:x:b" */, "!!!"}) {
        auto r = page_of(tool_list({"a", "b", "c"}), "tools", "name", bad, 2);
        ASSERT_FALSE(r) << bad;
        EXPECT_EQ(r.error().code, jsonrpc::code::invalid_params);
    }
}

std::shared_ptr<const host::ToolIndex> index_of(const std::vector<std::string>& names) {
    host::ServerTools st;
    st.server = "s";
    for (const auto& n : names) {
        mcp::Tool t;
        t.name = n;
        st.tools.push_back(std::move(t));
    }
    return std::make_shared<const host::ToolIndex>(host::ToolIndex::build({st}));
}

std::shared_ptr<const std::string> text(std::string s) { return std::make_shared<const std::string>(std::move(s)); }

// Kept per index and key: another index forgets the pages of the one before (even at the same address); a page is
// kept for the first page and for a cursor a kept page gave, never for one the client made up.
TEST(ToolListCache, KeepsTheFirstPageAndThoseItLeadsToPerIndex) {
    ToolListCache cache;
    auto one = index_of({"a", "b"});
    cache.keep(one, "k", "", text("first"), "c2");
    ASSERT_TRUE(cache.find(one, "k", ""));
    EXPECT_EQ(*cache.find(one, "k", ""), "first");
    EXPECT_FALSE(cache.find(one, "other key", ""));
    cache.keep(one, "k", "made-up", text("forged"), "");
    EXPECT_FALSE(cache.find(one, "k", "made-up"));
    cache.keep(one, "k", "c2", text("second"), "");
    ASSERT_TRUE(cache.find(one, "k", "c2"));
    EXPECT_EQ(*cache.find(one, "k", "c2"), "second");
    EXPECT_EQ(cache.size(), 2u);

    auto two = index_of({"a", "b", "c"});
    EXPECT_FALSE(cache.find(two, "k", ""));
    cache.keep(two, "k", "", text("new"), "");
    EXPECT_EQ(cache.size(), 1u);
    EXPECT_FALSE(cache.find(one, "k", ""));
    EXPECT_FALSE(cache.find(two, "k", "c2"));  // the old index's cursor is forgotten with it

    // A replaced index freed, and a new one maybe at its address: nothing matches it.
    two.reset();
    auto three = index_of({"x"});
    EXPECT_FALSE(cache.find(three, "k", ""));
}

TEST(ToolListCache, StaysWithinItsBounds) {
    ToolListCache cache;
    auto index = index_of({"a"});
    cache.keep(index, "big", "", text(std::string(ToolListCache::max_bytes + 1, 'x')), "");
    EXPECT_EQ(cache.size(), 0u);
    for (std::size_t i = 0; i < ToolListCache::max_entries + 10; ++i)
        cache.keep(index, "k" + std::to_string(i), "", text("p"), "");
    EXPECT_EQ(cache.size(), ToolListCache::max_entries);
    EXPECT_EQ(cache.bytes(), ToolListCache::max_entries);
}

}  // namespace
}  // namespace switchboard::gateway
