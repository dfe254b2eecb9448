// The CORS proxy's (and every user-given URL's) address checks: allow-list CIDRs as typed, and the verdict on any
// IPv4 or IPv6 address, mapped and NAT64 forms included.
#include "fuzz_input.hpp"

#include <switchboard/http/address_policy.hpp>
#include <switchboard/http/origin.hpp>

#include <boost/asio/ip/address_v6.hpp>

#include <array>
#include <cstdlib>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    switchboard::fuzz::Input in(data, size);
    std::array<unsigned char, 16> bytes{};
    const auto raw = in.take(16);
    std::memcpy(bytes.data(), raw.data(), raw.size());
    const boost::asio::ip::address a = boost::asio::ip::make_address_v6(bytes);
    switchboard::http::AddressPolicy policy;
    const auto allow_text = in.take(in.byte() % 64);
    std::string error;
    if (auto cidr = switchboard::http::parse_cidr(allow_text, error)) {
        policy.allow.push_back(*cidr);
        (void)cidr->text();
        if (cidr->prefix > 128) std::abort();
    }
    const auto why = switchboard::http::special_purpose(a);
    const auto verdict = policy.check(a);
    // Public unicast addresses always pass; a refusal names a reason.
    if (why.empty() && !verdict.empty()) std::abort();
    (void)switchboard::http::unmapped(a);
    std::vector<std::string> origins{"http://localhost:3333", "https://app.example"};
    (void)switchboard::http::origin_allowed(in.rest(), origins);
    return 0;
}
