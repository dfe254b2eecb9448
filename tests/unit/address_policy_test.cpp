// http::AddressPolicy: which addresses a user-given URL may reach (v4, v6, v4-mapped v6, CIDR allow-lists).
#include <switchboard/http/address_policy.hpp>

#include <gtest/gtest.h>

namespace switchboard::test {
namespace {

namespace web = switchboard::http;
namespace ip = boost::asio::ip;

std::string why(const std::string& address) { return std::string(web::special_purpose(ip::make_address(address))); }

TEST(AddressPolicy, SpecialPurposeIPv4) {
    EXPECT_EQ(why("127.0.0.1"), "loopback");
    EXPECT_EQ(why("127.255.255.254"), "loopback");
    EXPECT_EQ(why("10.0.0.1"), "private");
    EXPECT_EQ(why("172.16.0.1"), "private");
    EXPECT_EQ(why("172.31.255.255"), "private");
    EXPECT_EQ(why("172.32.0.1"), "");
    EXPECT_EQ(why("172.15.255.255"), "");
    EXPECT_EQ(why("192.168.1.1"), "private");
    EXPECT_EQ(why("192.169.0.1"), "");
    EXPECT_EQ(why("169.254.1.1"), "link-local");
    EXPECT_EQ(why("169.254.169.254"), "cloud metadata");
    EXPECT_EQ(why("100.64.0.1"), "CGNAT");
    EXPECT_EQ(why("100.127.255.255"), "CGNAT");
    EXPECT_EQ(why("100.128.0.1"), "");
    EXPECT_EQ(why("0.0.0.0"), "unspecified");
    EXPECT_EQ(why("224.0.0.1"), "multicast");
    EXPECT_EQ(why("239.255.255.250"), "multicast");
    EXPECT_EQ(why("255.255.255.255"), "reserved");
    EXPECT_EQ(why("8.8.8.8"), "");
    EXPECT_EQ(why("93.184.216.34"), "");
}

TEST(AddressPolicy, SpecialPurposeIPv6) {
    EXPECT_EQ(why("::1"), "loopback");
    EXPECT_EQ(why("::"), "unspecified");
    EXPECT_EQ(why("fc00::1"), "private");
    EXPECT_EQ(why("fdff:ffff::1"), "private");
    EXPECT_EQ(why("fd00:ec2::254"), "cloud metadata");
    EXPECT_EQ(why("fe80::1"), "link-local");
    EXPECT_EQ(why("febf::1"), "link-local");
    EXPECT_EQ(why("ff02::1"), "multicast");
    EXPECT_EQ(why("2001:4860:4860::8888"), "");
    EXPECT_EQ(why("2606:4700::1111"), "");
}

TEST(AddressPolicy, IPv4InIPv6IsJudgedAsIPv4) {
    EXPECT_EQ(why("::ffff:127.0.0.1"), "loopback");
    EXPECT_EQ(why("::ffff:10.1.2.3"), "private");
    EXPECT_EQ(why("::ffff:169.254.169.254"), "cloud metadata");
    EXPECT_EQ(why("::ffff:8.8.8.8"), "");
    EXPECT_EQ(why("64:ff9b::7f00:1"), "loopback");  // NAT64 of 127.0.0.1
    EXPECT_EQ(why("::127.0.0.1"), "loopback");      // IPv4-compatible (deprecated)
    EXPECT_EQ(web::unmapped(ip::make_address("::ffff:1.2.3.4")).to_string(), "1.2.3.4");
}

TEST(AddressPolicy, ParsesCidrBlocks) {
    std::string error;
    auto a = web::parse_cidr("10.1.2.3/8", error);
    ASSERT_TRUE(a) << error;
    EXPECT_EQ(a->text(), "10.0.0.0/8");
    EXPECT_TRUE(a->contains(ip::make_address("10.255.0.1")));
    EXPECT_TRUE(a->contains(ip::make_address("::ffff:10.255.0.1")));
    EXPECT_FALSE(a->contains(ip::make_address("11.0.0.1")));
    EXPECT_FALSE(a->contains(ip::make_address("::1")));

    auto one = web::parse_cidr("127.0.0.2", error);
    ASSERT_TRUE(one);
    EXPECT_EQ(one->text(), "127.0.0.2/32");
    EXPECT_TRUE(one->contains(ip::make_address("127.0.0.2")));
    EXPECT_FALSE(one->contains(ip::make_address("127.0.0.1")));

    auto v6 = web::parse_cidr("fd00::/8", error);
    ASSERT_TRUE(v6);
    EXPECT_TRUE(v6->contains(ip::make_address("fd12:3456::1")));
    EXPECT_FALSE(v6->contains(ip::make_address("fc00::1")));

    auto mapped = web::parse_cidr("::ffff:192.168.0.0/112", error);
    ASSERT_TRUE(mapped) << error;
    EXPECT_EQ(mapped->text(), "192.168.0.0/16");

    auto all = web::parse_cidr("0.0.0.0/0", error);
    ASSERT_TRUE(all);
    EXPECT_TRUE(all->contains(ip::make_address("1.2.3.4")));

    EXPECT_FALSE(web::parse_cidr("10.0.0.0/33", error));
    EXPECT_NE(error.find("0-32"), std::string::npos) << error;
    EXPECT_FALSE(web::parse_cidr("::/129", error));
    EXPECT_FALSE(web::parse_cidr("localhost", error));
    EXPECT_FALSE(web::parse_cidr("10.0.0.0/", error));
    EXPECT_FALSE(web::parse_cidr("10.0.0.0/8x", error));
}

TEST(AddressPolicy, AllowListOverridesTheRefusal) {
    web::AddressPolicy p;
    EXPECT_EQ(p.check(ip::make_address("127.0.0.1")), "127.0.0.1 is a loopback address");
    EXPECT_EQ(p.check(ip::make_address("169.254.169.254")), "169.254.169.254 is a cloud metadata address");
    EXPECT_EQ(p.check(ip::make_address("::")), ":: is an unspecified address");
    EXPECT_EQ(p.check(ip::make_address("::ffff:10.0.0.1")), "::ffff:10.0.0.1 (10.0.0.1) is a private address");
    EXPECT_EQ(p.check(ip::make_address("8.8.8.8")), "");
    std::string error;
    p.allow.push_back(*web::parse_cidr("127.0.0.2/32", error));
    p.allow.push_back(*web::parse_cidr("fd00::/8", error));
    EXPECT_EQ(p.check(ip::make_address("127.0.0.2")), "");
    EXPECT_EQ(p.check(ip::make_address("::ffff:127.0.0.2")), "");
    EXPECT_NE(p.check(ip::make_address("127.0.0.1")), "");
    EXPECT_EQ(p.check(ip::make_address("fd00:ec2::254")), "");  // named by the allow list
    EXPECT_NE(p.check(ip::make_address("fc00::1")), "");
}

}  // namespace
}  // namespace switchboard::test
