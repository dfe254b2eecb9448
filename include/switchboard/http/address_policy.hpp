// Which network addresses a user-given URL may reach (the gateway's CORS proxy; later other URLs a user types in).
// Refused unless an allow-list CIDR names them:
//
//   loopback     127.0.0.0/8, ::1
//   private      10/8, 172.16/12, 192.168/16, fc00::/7 (unique local), fec0::/10 (old site-local)
//   link-local   169.254/16, fe80::/10
//   CGNAT        100.64/10
//   unspecified  0.0.0.0/8, ::
//   multicast    224/4, ff00::/8
//   reserved     240/4 (255.255.255.255 included)
//   metadata     169.254.169.254, fd00:ec2::254 (cloud instance metadata)
//
// IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) IPv6 addresses are judged
// as the IPv4 address they carry. Check the address actually connected to (http::ClientOptions::address_filter), not
// a name: a name can resolve to another address between a check and a connect.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <boost/asio/ip/address.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::http {

/// An address block: "10.0.0.0/8", "::1/128"; a bare address is a block of one.
struct Cidr {
    boost::asio::ip::address network;  ///< the host bits cleared; IPv4-mapped IPv6 stored as IPv4
    unsigned prefix = 0;
    bool contains(const boost::asio::ip::address& a) const;
    std::string text() const;
};

/// Parses "ADDRESS/PREFIX" or "ADDRESS"; nullopt with `error` set otherwise.
std::optional<Cidr> parse_cidr(std::string_view text, std::string& error);

/// The IPv4 address carried by an IPv4-mapped, IPv4-compatible or NAT64 IPv6 address; the address itself otherwise.
boost::asio::ip::address unmapped(const boost::asio::ip::address& a);

/// Why `a` is not a public unicast address ("loopback", "private", "link-local", "CGNAT", "unspecified",
/// "multicast", "reserved", "cloud metadata"), or empty when it is one.
std::string_view special_purpose(const boost::asio::ip::address& a);

/// The rule: special-purpose addresses are refused unless an `allow` block contains them.
struct AddressPolicy {
    std::vector<Cidr> allow;
    /// Empty when `a` may be connected to; else why not, naming the address ("127.0.0.1 is a loopback address").
    std::string check(const boost::asio::ip::address& a) const;
};

}  // namespace switchboard::http
