// The Skills extension's entries (mcp/skills.hpp): parsing, the limits, digests and the check of what was read.
#include <switchboard/mcp/skills.hpp>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

namespace switchboard::mcp {
namespace {

namespace json = boost::json;

const std::string hello_digest = sha256_digest("hello\n");

json::value entry(const std::string& resources) {
    return json::parse(R"({"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a", "description": "A skill"},
                           "resources": )" + resources + "}");
}

TEST(McpSkills, Sha256DigestIsLowercaseHexWithItsPrefix) {
    EXPECT_EQ(sha256_digest(""), "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(hello_digest, "sha256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03");
}

TEST(McpSkills, ParsesAnEntryAndChecksWhatIsRead) {
    std::string error;
    auto s = parse_skill(entry(R"([{"uri": "skill://a/SKILL.md", "digest": ")" + hello_digest + R"(", "size": 6}])"),
                         error);
    ASSERT_TRUE(s) << error;
    EXPECT_EQ(s->name(), "a");
    EXPECT_EQ(s->description(), "A skill");
    ASSERT_TRUE(s->files);
    EXPECT_EQ(verify_skill_file(*s, "skill://a/SKILL.md", "hello\n"), "");
    EXPECT_NE(verify_skill_file(*s, "skill://a/SKILL.md", "hellO\n").find("digest"), std::string::npos);
    EXPECT_NE(verify_skill_file(*s, "skill://a/SKILL.md", "hello").find("5 bytes"), std::string::npos);
    EXPECT_NE(verify_skill_file(*s, "skill://a/other.md", "hello\n").find("not one of"), std::string::npos);
}

TEST(McpSkills, DynamicSkillsHaveNoFilesToCheck) {
    std::string error;
    auto s = parse_skill(entry(R"("dynamic")"), error);
    ASSERT_TRUE(s) << error;
    EXPECT_FALSE(s->files);
    EXPECT_EQ(verify_skill_file(*s, "skill://a/anything.md", "x"), "");
}

TEST(McpSkills, MalformedEntriesAreRefusedWithTheReason) {
    std::string error;
    EXPECT_FALSE(parse_skill(json::parse(R"({"uri": "skill://a/SKILL.md", "frontmatter": {}, "resources": []})"),
                             error));
    EXPECT_NE(error.find("name"), std::string::npos);
    EXPECT_FALSE(parse_skill(entry(R"([{"uri": "skill://a/SKILL.md", "digest": "md5:abc", "size": 1}])"), error));
    EXPECT_NE(error.find("digest"), std::string::npos);
    EXPECT_FALSE(parse_skill(entry(R"([{"uri": "skill://a/other.md", "digest": ")" + hello_digest + R"(", "size": 6}])"),
                             error));
    EXPECT_NE(error.find("SKILL.md is not among"), std::string::npos);
    EXPECT_FALSE(parse_skill(entry(R"([{"uri": "skill://a/SKILL.md", "digest": ")" + hello_digest +
                                   R"(", "size": 20000000}])"),
                             error));
    EXPECT_NE(error.find("limit"), std::string::npos);
}

TEST(McpSkills, ResourceBytesDecodeBlobs) {
    ReadResourceResult r;
    ResourceContents c;
    c.uri = "skill://a/x.bin";
    c.blob = "aGVsbG8K";  // "hello\n"
    r.contents.push_back(c);
    EXPECT_EQ(resource_bytes(r), std::optional<std::string>("hello\n"));
    r.contents[0].blob = "aGk=";
    EXPECT_EQ(resource_bytes(r), std::optional<std::string>("hi"));
    r.contents[0].blob = "!!";
    EXPECT_FALSE(resource_bytes(r));
}

}  // namespace
}  // namespace switchboard::mcp
