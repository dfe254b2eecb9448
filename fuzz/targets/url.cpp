// URLs a user or a server gives: parsing, resolving a reference (a redirect's Location, an SSE `endpoint` event),
// redaction for logs, and the transport a config URL implies.
#include "fuzz_input.hpp"

#include <switchboard/http/url.hpp>
#include <switchboard/transport/http_client.hpp>

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    switchboard::fuzz::Input in(data, size);
    const auto split = in.byte();
    const auto base_text = in.take(split);
    const auto reference = in.rest();
    std::string error;
    (void)switchboard::transport::infer_remote_kind(base_text);
    auto base = switchboard::http::parse_url(base_text, error);
    if (!base) return 0;
    if (base->port.empty() || base->target.empty() || base->target.front() != '/') std::abort();
    (void)base->origin();
    (void)base->host_header();
    (void)switchboard::http::redact_url(*base);
    auto resolved = switchboard::http::resolve_reference(*base, reference, error);
    if (resolved) (void)switchboard::http::parse_url(resolved->text(), error);
    return 0;
}
