// Resource attachments: loading, then content or error, then taken by the next message.
#include <switchboard/host/attachments.hpp>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

namespace switchboard::host {
namespace {

namespace json = boost::json;

TEST(Attachments, LoadingThenContentOrErrorThenTakenByTheNextMessage) {
    AttachmentList list;
    const auto a = list.add("s", "demo://a").id;
    const auto b = list.add("s", "demo://b").id;
    const auto c = list.add("s", "demo://c").id;
    EXPECT_TRUE(list.any_loading());
    list.set_content(a, mcp::ReadResourceResult::from_json(
                            json::parse(R"({"contents":[{"uri":"demo://a","mimeType":"text/plain","text":"A"}]})")));
    list.set_error(b, "not found");
    auto taken = list.consume();
    ASSERT_EQ(taken.size(), 2u);
    EXPECT_EQ(taken[0].id, a);
    ASSERT_TRUE(taken[0].content);
    EXPECT_EQ(taken[0].content->contents.at(0).text.value_or(""), "A");
    EXPECT_EQ(taken[1].id, b);
    EXPECT_EQ(taken[1].error, "not found");
    ASSERT_EQ(list.items().size(), 1u);  // the one still loading stays for the next message
    EXPECT_EQ(list.items()[0].id, c);
    EXPECT_TRUE(list.remove(c));
    EXPECT_TRUE(list.items().empty());
    EXPECT_TRUE(list.consume().empty());
}

}  // namespace
}  // namespace switchboard::host
