#include <switchboard/gateway/task_ids.hpp>

#include <switchboard/auth/crypto.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace switchboard::gateway {

namespace json = boost::json;

namespace {

// Truncated to 128 bits: unforgeable, and the id stays short enough for a header.
constexpr std::size_t mac_bytes = 16;

std::string owner_digest(std::string_view owner) { return auth::base64url_encode(auth::sha256(owner)).substr(0, 16); }

}  // namespace

TaskIds::TaskIds(std::string instance_id, std::string key)
    : instance_(instance_id.empty() ? std::string("g") : std::move(instance_id)),
      key_(key.empty() ? auth::random_token(32) : std::move(key)) {}

std::string TaskIds::mac(std::string_view text) const {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()), reinterpret_cast<const unsigned char*>(text.data()),
         text.size(), out, &len);
    return auth::base64url_encode(std::string_view(reinterpret_cast<const char*>(out), std::min<std::size_t>(len, mac_bytes)));
}

std::string TaskIds::encode(const TaskRef& ref) const {
    // The owner is kept as a digest: an id a client hands around does not show who started it.
    json::array fields{json::value(ref.server), json::value(ref.upstream_id),
                       json::value(owner_digest(ref.owner))};
    std::string head = instance_ + "." + auth::base64url_encode(json::serialize(fields));
    return head + "." + mac(head);
}

std::optional<TaskRef> TaskIds::decode(std::string_view id, std::string_view owner) const {
    const auto last = id.rfind('.');
    if (last == std::string_view::npos) return std::nullopt;
    const auto head = id.substr(0, last);
    const auto first = head.find('.');
    if (first == std::string_view::npos) return std::nullopt;
    const auto expected = mac(head);
    const auto given = id.substr(last + 1);
    if (given.size() != expected.size() || CRYPTO_memcmp(given.data(), expected.data(), given.size()) != 0)
        return std::nullopt;
    auto payload = auth::base64url_decode(head.substr(first + 1));
    if (!payload) return std::nullopt;
    boost::system::error_code ec;
    auto v = json::parse(*payload, ec);
    const auto* a = ec ? nullptr : v.if_array();
    if (!a || a->size() != 3 || !(*a)[0].is_string() || !(*a)[1].is_string() || !(*a)[2].is_string())
        return std::nullopt;
    if ((*a)[2].get_string() != owner_digest(owner)) return std::nullopt;
    return TaskRef{std::string((*a)[0].get_string()), std::string((*a)[1].get_string()), std::string(owner)};
}

}  // namespace switchboard::gateway
