// What the commands print: tool results, resource contents, the status table and its JSON form.
#include "cli.hpp"

#include <switchboard/core/text.hpp>
#include <switchboard/host/status_json.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/json/serialize.hpp>

namespace switchboard::cli {

namespace json = boost::json;
using host::Phase;
using host::ServerStatus;

namespace {

// "connected", "disabled"; a lazy server's lifecycle: "dormant", "loading", "active(2)", "warm".
std::string phase_name(const ServerStatus& s) {
    if (!s.enabled) return "disabled";
    if (!s.lazy) return std::string(host::to_string(s.phase));
    auto name = s.lifecycle();
    if (name == "active") name += fmt::format("({})", s.leases);
    return name;
}

// "850ms", "12.3s", "4m05s".
std::string short_duration(std::chrono::milliseconds d) {
    const auto n = d.count();
    if (n < 1000) return fmt::format("{}ms", n);
    if (n < 60'000) return fmt::format("{:.1f}s", static_cast<double>(n) / 1000.0);
    return fmt::format("{}m{:02}s", n / 60'000, (n / 1000) % 60);
}

}  // namespace

namespace {}  // namespace

void print_json(json::value v) {
    core::make_valid_utf8(v);
    fmt::print("{}\n", json::serialize(v));
}

json::value status_json(const std::vector<ServerStatus>& servers) {
    json::array arr;
    for (const auto& s : servers) arr.push_back(host::to_json(s));
    return arr;
}

std::string render_content(const std::vector<mcp::Content>& content) {
    std::vector<std::string> parts;
    for (const auto& c : content) {
        if (c.type == "text") {
            parts.push_back(c.text());
        } else if (c.type == "image" || c.type == "audio") {
            parts.push_back(fmt::format("[{}, {} bytes]", c.mime_type().empty() ? c.type : c.mime_type(),
                                        mcp::base64_decoded_size(c.data())));
        } else if (c.type == "resource_link") {
            parts.push_back(fmt::format("[resource link: {}]", mcp::string_field(c.raw, "uri")));
        } else if (c.type == "resource") {
            const auto* r = c.raw.if_contains("resource");
            std::vector<mcp::ResourceContents> one;
            if (r) one.push_back(mcp::ResourceContents::from_json(*r));
            parts.push_back(render_contents(one));
        } else {
            parts.push_back(json::serialize(c.raw));
        }
    }
    return fmt::format("{}", fmt::join(parts, "\n"));
}

std::string render_contents(const std::vector<mcp::ResourceContents>& contents) {
    std::vector<std::string> parts;
    for (const auto& c : contents) {
        if (c.text)
            parts.push_back(*c.text);
        else if (c.has_blob())
            parts.push_back(fmt::format("[{}, {} bytes] {}", c.mime_type.empty() ? "binary" : c.mime_type,
                                        c.blob_size(), c.uri));
        else
            parts.push_back(fmt::format("[empty] {}", c.uri));
    }
    return fmt::format("{}", fmt::join(parts, "\n"));
}

// A stdio server's confinement, under its row: "unconfined", or the layer with what it may write and reach, and
// what it was refused lately.
std::string render_sandbox(const ServerStatus& s) {
    if (!s.sandbox_error.empty()) return fmt::format("  sandbox: cannot be confined: {}\n", s.sandbox_error);
    if (s.sandbox_layer.empty()) return "";
    if (!s.sandbox) return fmt::format("  sandbox: {}\n", s.sandbox_layer);
    const auto& p = *s.sandbox;
    if (p.layer == host::SandboxLayer::container)
        return "  sandbox: container (the container is its sandbox; not confined by Switchboard)\n";
    std::string out = fmt::format(
        "  sandbox: {}{} · state {} · writable {} · domains {}\n", s.sandbox_layer,
        p.profile.empty() ? "" : " (" + p.profile + " profile)", p.state_dir,
        p.writable.size() <= 1 ? "state and /tmp only"
                               : fmt::format("{}", fmt::join(p.writable.begin() + 1, p.writable.end(), ", ")),
        p.allowed_domains.empty() ? "none" : fmt::format("{}", fmt::join(p.allowed_domains, ", ")));
    for (const auto& r : s.sandbox_refusals)
        out += fmt::format("  refused {}: {} (switchboard sandbox check {})\n", r.kind, r.target, s.name);
    return out;
}

std::string render_status(const std::vector<ServerStatus>& servers) {
    std::string out = fmt::format("{:<20} {:<9} {:<12} {:>8} {:<11} {:>5} {:>9} {:>7} {:>8}\n", "SERVER", "TRANSPORT",
                                  "PHASE", "FOR", "PROTOCOL", "TOOLS", "RESOURCES", "PROMPTS", "MS");
    for (const auto& s : servers) {
        out +=
            fmt::format("{:<20} {:<9} {:<12} {:>8} {:<11} {:>5} {:>9} {:>7} {:>8}\n", s.name,
                        host::to_string(s.transport), phase_name(s), s.enabled ? short_duration(s.time_in_phase) : "-",
                        s.protocol_version.empty() ? "-" : s.protocol_version, s.tools, s.resources, s.prompts,
                        s.connect_time.count());
        if (!s.last_error.empty() && (s.phase == Phase::error || s.phase == Phase::reconnecting))
            out += fmt::format("  error: {}\n", s.last_error);
        else if (!s.last_error.empty() && s.phase == Phase::needs_auth)
            out += fmt::format("  {}\n", s.last_error);
        if (s.held > 0)
            out += fmt::format("  held: {} definition{} changed or new since approved (switchboard pins diff {})\n",
                               s.held, s.held == 1 ? "" : "s", s.name);
        out += render_sandbox(s);
    }
    return out;
}

}  // namespace switchboard::cli
