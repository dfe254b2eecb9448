// The one URL -> transport rule (see http_client.hpp).
#include <switchboard/transport/http_client.hpp>

#include <switchboard/core/text.hpp>

namespace switchboard::transport {

RemoteKind infer_remote_kind(std::string_view url) {
    const auto scheme = core::ascii_lower(url.substr(0, 6));
    if (scheme.starts_with("ws://") || scheme.starts_with("wss://")) return RemoteKind::websocket;
    auto path = url.substr(0, url.find_first_of("?#"));
    while (path.ends_with("/") && path.size() > 1 && !path.ends_with("//")) path.remove_suffix(1);
    return core::ascii_lower(path).ends_with("/sse") ? RemoteKind::sse : RemoteKind::streamable_http;
}

}  // namespace switchboard::transport
