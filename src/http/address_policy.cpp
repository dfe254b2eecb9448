#include <switchboard/http/address_policy.hpp>

#include <fmt/format.h>

#include <array>
#include <charconv>

namespace switchboard::http {

namespace ip = boost::asio::ip;

namespace {

// The first `prefix` bits of `a` and `b` are equal.
template <std::size_t N>
bool same_prefix(const std::array<unsigned char, N>& a, const std::array<unsigned char, N>& b, unsigned prefix) {
    for (std::size_t i = 0; i < N && prefix > 0; ++i) {
        const unsigned bits = prefix >= 8 ? 8 : prefix;
        const auto mask = static_cast<unsigned char>(0xff00u >> bits);
        if ((a[i] & mask) != (b[i] & mask)) return false;
        prefix -= bits;
    }
    return true;
}

template <std::size_t N>
std::array<unsigned char, N> cleared(std::array<unsigned char, N> a, unsigned prefix) {
    for (std::size_t i = 0; i < N; ++i) {
        const unsigned keep = prefix >= 8 ? 8 : prefix;
        a[i] &= static_cast<unsigned char>(0xff00u >> keep);
        prefix -= keep;
    }
    return a;
}

Cidr block(std::string_view text) {
    std::string error;
    return *parse_cidr(text, error);
}

struct Rule {
    Cidr cidr;
    std::string_view why;
};

const std::vector<Rule>& rules() {
    // Most specific first: the metadata addresses sit inside link-local and unique-local blocks.
    static const std::vector<Rule> r{
        {block("169.254.169.254/32"), "cloud metadata"},
        {block("fd00:ec2::254/128"), "cloud metadata"},
        {block("0.0.0.0/8"), "unspecified"},
        {block("127.0.0.0/8"), "loopback"},
        {block("10.0.0.0/8"), "private"},
        {block("172.16.0.0/12"), "private"},
        {block("192.168.0.0/16"), "private"},
        {block("100.64.0.0/10"), "CGNAT"},
        {block("169.254.0.0/16"), "link-local"},
        {block("224.0.0.0/4"), "multicast"},
        {block("240.0.0.0/4"), "reserved"},
        {block("::/128"), "unspecified"},
        {block("::1/128"), "loopback"},
        {block("fc00::/7"), "private"},
        {block("fec0::/10"), "private"},
        {block("fe80::/10"), "link-local"},
        {block("ff00::/8"), "multicast"},
    };
    return r;
}

}  // namespace

ip::address unmapped(const ip::address& a) {
    if (!a.is_v6()) return a;
    const auto v6 = a.to_v6();
    if (v6.is_v4_mapped()) return ip::make_address_v4(ip::v4_mapped, v6);
    const auto b = v6.to_bytes();
    auto tail = [&b] { return ip::address_v4(ip::address_v4::bytes_type{b[12], b[13], b[14], b[15]}); };
    // NAT64 well-known prefix 64:ff9b::/96.
    static const std::array<unsigned char, 12> nat64{0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
    if (std::equal(nat64.begin(), nat64.end(), b.begin())) return tail();
    // IPv4-compatible ::a.b.c.d (deprecated), but not :: and ::1 themselves.
    bool zeros = true;
    for (int i = 0; i < 12; ++i) zeros = zeros && b[i] == 0;
    if (zeros && (b[12] | b[13] | b[14]) != 0) return tail();
    return a;
}

bool Cidr::contains(const ip::address& raw) const {
    const auto a = unmapped(raw);
    if (a.is_v4() != network.is_v4()) return false;
    if (a.is_v4()) return same_prefix(a.to_v4().to_bytes(), network.to_v4().to_bytes(), prefix);
    return same_prefix(a.to_v6().to_bytes(), network.to_v6().to_bytes(), prefix);
}

std::string Cidr::text() const { return fmt::format("{}/{}", network.to_string(), prefix); }

std::optional<Cidr> parse_cidr(std::string_view text, std::string& error) {
    const auto slash = text.find('/');
    const auto addr_text = std::string(text.substr(0, slash));
    boost::system::error_code ec;
    auto a = ip::make_address(addr_text, ec);
    if (ec) {
        error = fmt::format("\"{}\" is not an IP address or CIDR block (e.g. 10.0.0.0/8, fd00::/8)", text);
        return std::nullopt;
    }
    // A mapped address is an IPv4 one; its prefix counts from the IPv4 part when given as ::ffff:a.b.c.d/N (N>=96).
    unsigned max = a.is_v4() ? 32 : 128;
    unsigned prefix = max;
    if (slash != std::string_view::npos) {
        const auto p = text.substr(slash + 1);
        unsigned v = 0;
        auto [ptr, perr] = std::from_chars(p.data(), p.data() + p.size(), v);
        if (p.empty() || perr != std::errc() || ptr != p.data() + p.size() || v > max) {
            error = fmt::format("\"{}\": the prefix length must be 0-{}", text, max);
            return std::nullopt;
        }
        prefix = v;
    }
    if (a.is_v6() && a.to_v6().is_v4_mapped() && prefix >= 96) {
        a = ip::make_address_v4(ip::v4_mapped, a.to_v6());
        prefix -= 96;
    }
    Cidr c;
    c.prefix = prefix;
    if (a.is_v4())
        c.network = ip::address_v4(cleared(a.to_v4().to_bytes(), prefix));
    else
        c.network = ip::address_v6(cleared(a.to_v6().to_bytes(), prefix));
    return c;
}

std::string_view special_purpose(const ip::address& a) {
    for (const auto& r : rules())
        if (r.cidr.contains(a)) return r.why;
    return {};
}

std::string AddressPolicy::check(const ip::address& a) const {
    const auto why = special_purpose(a);
    if (why.empty()) return {};
    for (const auto& c : allow)
        if (c.contains(a)) return {};
    const auto u = unmapped(a);
    const auto shown = u == a ? a.to_string() : fmt::format("{} ({})", a.to_string(), u.to_string());
    return fmt::format("{} is a{} {} address", shown, why == "unspecified" ? "n" : "", why);
}

}  // namespace switchboard::http
