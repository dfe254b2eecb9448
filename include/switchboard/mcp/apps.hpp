// MCP Apps (the io.modelcontextprotocol/ui extension, spec 2026-01-26): a tool names a `ui://` resource in
// `_meta.ui.resourceUri`, the host reads it (text/html;profile=mcp-app) and renders it. What the host side needs of the
// wire: the extension's capability, a tool's UI metadata, and a view resource's `_meta.ui` (csp, permissions, ...).
#pragma once

#include <switchboard/mcp/types.hpp>

#include <boost/json/object.hpp>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace switchboard::mcp {

inline constexpr std::string_view ui_extension = "io.modelcontextprotocol/ui";
inline constexpr std::string_view app_mime_type = "text/html;profile=mcp-app";
/// The flat key of the spec's first drafts (`_meta["ui/resourceUri"]`), still read when `_meta.ui` names no URI.
inline constexpr std::string_view legacy_resource_uri_key = "ui/resourceUri";

/// `{"mimeTypes": ["text/html;profile=mcp-app"]}`: what a client declares under extensions[ui_extension].
boost::json::object ui_extension_capability();
/// Whether a client declared the extension (extensions[ui_extension] an object whose `mimeTypes`, when present,
/// include app_mime_type): only such a client can render a view, so only it is shown app-only tools.
bool declares_ui(const boost::json::object& client_capabilities);

/// A tool's `_meta.ui`. visibility defaults to both "model" and "app" (an absent or malformed list).
struct ToolUi {
    std::string resource_uri;  ///< empty: the tool has no view (it may still be app-only)
    bool model = true;         ///< offered to the model
    bool app = true;           ///< callable by an app of its server
};

/// The UI metadata of a tool object (`raw` or `to_json()`), or nullopt if it has none.
std::optional<ToolUi> tool_ui(const boost::json::object& tool);
std::optional<ToolUi> tool_ui(const Tool& tool);
/// False only for a tool whose `_meta.ui.visibility` lists no "model": never offered to an LLM or tool search.
bool model_visible(const Tool& tool);
/// The tool's ui:// view, or "" when it has none.
std::string app_resource_uri(const Tool& tool);

/// The `_meta.ui` a host applies to a view: the `resources/read` content item's, falling back to the listing's
/// (`listing` may be null). An empty object when neither has one.
boost::json::object view_ui_meta(const boost::json::object& content_item, const boost::json::object* listing);

/// Replaces the ui:// URI in a tool object's `_meta.ui.resourceUri` and legacy key by `map(uri)`.
template <class Map>
void rewrite_tool_ui_uri(boost::json::object& tool, Map&& map) {
    auto* meta = tool.if_contains("_meta");
    if (!meta || !meta->is_object()) return;
    auto& m = meta->get_object();
    if (auto* ui = m.if_contains("ui"); ui && ui->is_object())
        if (auto* uri = ui->get_object().if_contains("resourceUri"); uri && uri->is_string())
            *uri = map(std::string_view(uri->get_string()));
    if (auto* uri = m.if_contains(legacy_resource_uri_key); uri && uri->is_string())
        *uri = map(std::string_view(uri->get_string()));
}

/// ui://<server>__<authority><path>: `uri` of `server` as a gateway exposes it when another server uses it too.
std::string prefixed_ui_uri(std::string_view server, std::string_view uri);

/// The ui:// URIs of several servers behind one endpoint (the gateway). A URI only one server uses passes unchanged;
/// one that two or more use (in a tool's _meta or their resources/list) is exposed as prefixed_ui_uri for each, so
/// every server's view keeps routing to that server and stays a valid ui:// URI.
class UiUriMap {
public:
    void add(std::string_view server, std::string_view uri);
    std::string exposed(std::string_view server, std::string_view uri) const;
    struct Target {
        std::string server;
        std::string uri;  ///< the server's own
    };
    /// The server and URI behind an exposed ui:// URI, or nullopt when no server uses it.
    std::optional<Target> resolve(std::string_view exposed) const;
    /// The URIs that two servers or more share, each after its length: all that exposed() depends on (a key for what
    /// was built with it).
    std::string shared_uris() const;

private:
    std::map<std::string, std::set<std::string>, std::less<>> users_;  // uri -> servers
};

}  // namespace switchboard::mcp
