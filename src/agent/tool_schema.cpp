#include <switchboard/agent/tool_schema.hpp>
#include <switchboard/mcp/apps.hpp>

namespace switchboard::agent {

namespace json = boost::json;

json::object normalise_schema(const json::object& schema) {
    json::object out;
    for (const auto& kv : schema) {
        // Annotations for validators, not for the model; llama-server and OpenAI strict mode refuse some of them.
        if (kv.key() == "$schema" || kv.key() == "$id") continue;
        out.emplace(kv.key(), kv.value());
    }
    // The top level must be an object schema with properties, whatever the server sent (a bare {} or a schema
    // without "type" is common; OpenAI answers 400 to both).
    out["type"] = "object";
    if (const auto* p = out.if_contains("properties"); !p || !p->is_object()) out["properties"] = json::object{};
    if (const auto* r = out.if_contains("required"); r && !r->is_array()) out.erase("required");
    return out;
}

json::array openai_tools(const host::ToolIndex& index) {
    json::array tools;
    tools.reserve(index.size());
    for (const auto& t : index.tools()) {
        if (!mcp::model_visible(*t.tool)) continue;  // an MCP App's own tool (visibility ["app"])
        json::object f{{"name", t.name}};
        const auto& description = t.tool->description.empty() ? t.tool->title : t.tool->description;
        if (!description.empty()) f["description"] = description;
        f["parameters"] = normalise_schema(t.tool->input_schema);
        tools.push_back(json::object{{"type", "function"}, {"function", std::move(f)}});
    }
    return tools;
}

}  // namespace switchboard::agent
