// gateway::page_of: long lists in pages whose cursors survive a list that changes between two pages.
#include <switchboard/gateway/pages.hpp>

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

}  // namespace
}  // namespace switchboard::gateway
