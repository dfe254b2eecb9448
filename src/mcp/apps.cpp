#include <switchboard/mcp/apps.hpp>

#include <switchboard/core/text.hpp>

#include <boost/json/array.hpp>

namespace switchboard::mcp {

namespace json = boost::json;

json::object ui_extension_capability() {
    json::array types;
    types.emplace_back(app_mime_type);
    return json::object{{"mimeTypes", std::move(types)}};
}

bool declares_ui(const json::object& client_capabilities) {
    const auto* e = client_capabilities.if_contains("extensions");
    const auto* ext = e && e->is_object() ? e->get_object().if_contains(ui_extension) : nullptr;
    if (!ext || !ext->is_object()) return false;
    const auto* types = ext->get_object().if_contains("mimeTypes");
    if (!types || !types->is_array()) return true;
    for (const auto& t : types->get_array())
        if (t.is_string() && t.get_string() == app_mime_type) return true;
    return false;
}

std::optional<ToolUi> tool_ui(const json::object& tool) {
    const auto* meta = tool.if_contains("_meta");
    if (!meta || !meta->is_object()) return std::nullopt;
    const auto& m = meta->get_object();
    const auto* ui = m.if_contains("ui");
    const auto* legacy = m.if_contains(legacy_resource_uri_key);
    const bool has_ui = ui && ui->is_object();
    const bool has_legacy = legacy && legacy->is_string() && !legacy->get_string().empty();
    if (!has_ui && !has_legacy) return std::nullopt;
    ToolUi out;
    if (has_ui) {
        const auto& u = ui->get_object();
        if (const auto* uri = u.if_contains("resourceUri"); uri && uri->is_string())
            out.resource_uri = std::string(uri->get_string());
        if (const auto* v = u.if_contains("visibility"); v && v->is_array()) {
            out.model = out.app = false;
            for (const auto& e : v->get_array()) {
                if (!e.is_string()) continue;
                if (e.get_string() == "model") out.model = true;
                if (e.get_string() == "app") out.app = true;
            }
        }
    }
    if (out.resource_uri.empty() && has_legacy) out.resource_uri = std::string(legacy->get_string());
    return out;
}

std::optional<ToolUi> tool_ui(const Tool& tool) { return tool_ui(tool.raw); }

bool model_visible(const Tool& tool) {
    auto ui = tool_ui(tool);
    return !ui || ui->model;
}

std::string app_resource_uri(const Tool& tool) {
    auto ui = tool_ui(tool);
    return ui ? ui->resource_uri : std::string();
}

json::object view_ui_meta(const json::object& content_item, const json::object* listing) {
    for (const auto* o : {&content_item, listing}) {
        if (!o) continue;
        const auto* meta = o->if_contains("_meta");
        if (!meta || !meta->is_object()) continue;
        if (const auto* ui = meta->get_object().if_contains("ui"); ui && ui->is_object()) return ui->get_object();
    }
    return {};
}

std::string prefixed_ui_uri(std::string_view server, std::string_view uri) {
    constexpr std::string_view scheme = "ui://";
    const auto rest = uri.starts_with(scheme) ? uri.substr(scheme.size()) : uri;
    return std::string(scheme) + std::string(server) + "__" + std::string(rest);
}

void UiUriMap::add(std::string_view server, std::string_view uri) {
    if (!uri.starts_with("ui://")) return;
    auto it = users_.find(uri);
    if (it == users_.end()) it = users_.emplace(std::string(uri), std::set<std::string>{}).first;
    it->second.emplace(server);
}

std::string UiUriMap::exposed(std::string_view server, std::string_view uri) const {
    auto it = users_.find(uri);
    if (it == users_.end() || it->second.size() < 2) return std::string(uri);
    return prefixed_ui_uri(server, uri);
}

std::string UiUriMap::shared_uris() const {
    std::string out;
    for (const auto& [uri, servers] : users_)
        if (servers.size() >= 2) core::append_sized(out, uri);
    return out;
}

std::optional<UiUriMap::Target> UiUriMap::resolve(std::string_view exposed) const {
    if (auto it = users_.find(exposed); it != users_.end() && it->second.size() == 1)
        return Target{*it->second.begin(), it->first};
    for (const auto& [uri, servers] : users_) {
        if (servers.size() < 2) continue;
        for (const auto& s : servers)
            if (prefixed_ui_uri(s, uri) == exposed) return Target{s, uri};
    }
    return std::nullopt;
}

}  // namespace switchboard::mcp
