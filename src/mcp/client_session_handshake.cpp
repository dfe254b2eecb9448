// ClientSession::connect and the handshake it runs: server/discover for a 2026-07-28 server (retried once with the
// version the server names), else initialize; and the version a modern server asks for in the middle of a session.
#include <switchboard/mcp/client_session.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace switchboard::mcp {

namespace json = boost::json;
using boost::asio::awaitable;

namespace {

using clock = std::chrono::steady_clock;

json::object object_or_empty(const json::value* v) { return v && v->is_object() ? v->get_object() : json::object{}; }

std::vector<std::string> string_list(const json::value* v) {
    std::vector<std::string> out;
    if (v && v->is_array())
        for (const auto& s : v->get_array())
            if (s.is_string()) out.emplace_back(s.get_string());
    return out;
}

// Rounded up: a step's timeout truncated to whole milliseconds ended up to 1 ms before the deadline it was cut from,
// so a start that ran out of time could fail before the host's own startupTimeoutMs had passed, and then not say so.
std::chrono::milliseconds remaining(clock::time_point deadline) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now());
    return std::max(left, std::chrono::milliseconds(1));
}

}  // namespace

awaitable<Outcome<std::shared_ptr<ClientSession>>> ClientSession::connect(boost::asio::any_io_executor ex,
                                                                          std::shared_ptr<jsonrpc::Channel> channel,
                                                                          ClientOptions options) {
    jsonrpc::Connection::Options copts;
    copts.peer_name = fmt::format("server \"{}\"", options.server_name);
    copts.default_timeout = options.request_timeout;
    auto conn = jsonrpc::Connection::create(ex, std::move(channel), copts);
    std::shared_ptr<ClientSession> s(new ClientSession(conn, std::move(options)));
    std::weak_ptr<ClientSession> weak = s;
    conn->on_request(
        [weak](std::string method, json::value params, jsonrpc::IncomingRequest) -> awaitable<Outcome<json::value>> {
            auto self = weak.lock();
            if (!self) co_return Error{code::internal_error, "client is shutting down", {}, false};
            co_return co_await self->handle_server_request({}, std::move(method), std::move(params));
        });
    conn->on_notification([weak](const std::string& method, const json::value& params) {
        if (auto self = weak.lock()) self->handle_notification(method, params);
    });
    conn->start();
    auto established = co_await s->establish();
    if (!established) {
        co_await conn->close();
        co_return established.error();
    }
    co_return s;
}

awaitable<Outcome<void>> ClientSession::establish() {
    const auto deadline = clock::now() + options_.connect_timeout;
    if (options_.known_era != Era::legacy) {
        const bool known_modern = options_.known_era == Era::modern;
        auto probe_timeout =
            known_modern ? options_.connect_timeout : std::min(options_.probe_timeout, options_.connect_timeout);
        auto modern = co_await probe(probe_timeout);
        if (!modern) co_return modern.error();
        if (*modern) co_return Outcome<void>{};
        if (known_modern)
            co_return Error::make_local(code::protocol_violation,
                                        fmt::format("server \"{}\" no longer answers server/discover as a {} server",
                                                    options_.server_name, modern_version));
    }
    co_return co_await initialize(remaining(deadline));
}

awaitable<Outcome<bool>> ClientSession::probe(std::chrono::milliseconds timeout) {
    protocol_version_ = std::string(modern_version);
    for (int attempt = 0; attempt < 2; ++attempt) {
        jsonrpc::RequestOptions ro;
        ro.timeout = timeout;
        json::object params{{"_meta", modern_meta()}};  // GCC 12: no init-list inside a co_await expression
        auto r = co_await connection_->request("server/discover", std::move(params), ro);
        if (r && r->is_object()) {
            const auto& o = r->get_object();
            auto versions = string_list(o.if_contains("supportedVersions"));
            if (versions.empty()) co_return false;  // e.g. `{}` from a legacy server that answers anything: not ours
            auto ours = std::find_if(versions.begin(), versions.end(), [](auto& v) { return is_modern_version(v); });
            if (ours == versions.end()) {
                if (std::any_of(versions.begin(), versions.end(), [](auto& v) { return is_legacy_version(v); }))
                    co_return false;  // a dual-era server without our modern version: use the handshake
                co_return Error::make_local(code::protocol_violation,
                                            fmt::format("server \"{}\" supports protocol versions [{}]; Switchboard "
                                                        "speaks {} and {} to {}",
                                                        options_.server_name, fmt::join(versions, ", "), modern_version,
                                                        legacy_versions.back(), legacy_versions.front()));
            }
            era_ = Era::modern;
            protocol_version_ = *ours;
            apply_discover_result(o);
            co_return true;
        }
        if (r) co_return false;  // a non-object result is not a DiscoverResult
        const Error& e = r.error();
        if (e.local) {
            if (e.code == code::timeout) co_return false;  // silent legacy server
            co_return e;                                   // the server died or the channel broke
        }
        if (e.code != code::unsupported_protocol_version) co_return false;  // any other error: legacy
        // A modern server that does not support our version.
        const auto* data = e.data.if_object();
        auto supported = string_list(data ? data->if_contains("supported") : nullptr);
        auto ours = std::find_if(supported.begin(), supported.end(), [](auto& v) { return is_modern_version(v); });
        // Retry once with the version it lists, even when that is the one just sent (a server may reject a first
        // request for reasons of its own; the loop runs at most twice).
        if (ours != supported.end()) {
            protocol_version_ = *ours;
            continue;
        }
        if (std::any_of(supported.begin(), supported.end(), [](auto& v) { return is_legacy_version(v); }))
            co_return false;
        co_return Error::make_local(code::protocol_violation,
                                    fmt::format("server \"{}\" does not support protocol version {} (it supports [{}])",
                                                options_.server_name, protocol_version_, fmt::join(supported, ", ")));
    }
    co_return false;
}

void ClientSession::apply_discover_result(const json::object& o) {
    capabilities_ = object_or_empty(o.if_contains("capabilities"));
    instructions_ = string_field(o, "instructions");
    if (const auto* m = o.if_contains("_meta"); m && m->is_object())
        if (const auto* info = m->get_object().if_contains(meta::server_info))
            server_info_ = Implementation::from_json(*info);
    if (const auto* info = o.if_contains("serverInfo")) server_info_ = Implementation::from_json(*info);
}

awaitable<Outcome<void>> ClientSession::initialize(std::chrono::milliseconds timeout) {
    era_ = Era::legacy;
    json::object params{{"protocolVersion", latest_legacy_version},
                        {"capabilities", client_capabilities()},
                        {"clientInfo", options_.client_info.to_json()}};
    jsonrpc::RequestOptions ro;
    ro.timeout = timeout;
    ro.cancellable = false;  // initialize must never be cancelled
    auto r = co_await connection_->request("initialize", std::move(params), ro);
    if (!r) {
        Error e = r.error();
        if (!e.local) e.message = fmt::format("server \"{}\" rejected initialize: {}", options_.server_name, e.message);
        co_return e;
    }
    const auto* o = r->if_object();
    if (!o) co_return Error::make_local(code::protocol_violation, "initialize result is not an object");
    auto version = string_field(*o, "protocolVersion");
    if (!is_legacy_version(version))
        co_return Error::make_local(
            code::protocol_violation,
            fmt::format("server \"{}\" answered initialize with protocol version \"{}\"; Switchboard speaks {} to {} "
                        "and {}",
                        options_.server_name, version, legacy_versions.back(), legacy_versions.front(),
                        modern_version));
    protocol_version_ = version;
    capabilities_ = object_or_empty(o->if_contains("capabilities"));
    server_info_ = Implementation::from_json(o->contains("serverInfo") ? o->at("serverInfo") : json::value());
    instructions_ = string_field(*o, "instructions");
    connection_->notify("notifications/initialized", json::object{});
    co_return Outcome<void>{};
}

bool ClientSession::adopt_supported_version(const Error& e) {
    if (era_ != Era::modern || e.local || e.code != code::unsupported_protocol_version) return false;
    const auto* data = e.data.if_object();
    auto supported = string_list(data ? data->if_contains("supported") : nullptr);
    auto ours = std::find_if(supported.begin(), supported.end(), [](auto& v) { return is_modern_version(v); });
    // Retry once with the version it lists, even when that is the one just sent (a server may reject a first request
    // for reasons of its own; the caller retries at most once).
    if (ours == supported.end()) return false;
    spdlog::info("server \"{}\" asked for protocol version {} instead of {}", options_.server_name, *ours,
                 protocol_version_);
    protocol_version_ = *ours;
    return true;
}

}  // namespace switchboard::mcp
