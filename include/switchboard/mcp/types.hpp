// The MCP protocol model used above the mcp layer: typed views of tools, resources, prompts and results. Each keeps
// the object it was read from (`raw`), so `_meta` and fields of newer revisions survive a round trip. Tools and
// resource contents are the exception: their `raw` leaves out what the typed fields hold (a tool's names and schemas,
// the text or blob, the contents list), so that it is held once, not twice (a host keeps every server's tools);
// to_json() puts the object back together.
//
// Thread-safety: plain values.
#pragma once

#include <switchboard/jsonrpc/message.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace switchboard::mcp {

struct Implementation {
    std::string name;
    std::string version;
    std::string title;
    static Implementation from_json(const boost::json::value& v);
    boost::json::object to_json() const;
};

struct Tool {
    std::string name;
    std::string title;
    std::string description;
    boost::json::object input_schema;
    std::optional<boost::json::object> output_schema;
    /// The object it was read from without what the fields above hold: annotations, icons, _meta, newer fields.
    /// A field of the wrong type, an empty title or description, an empty inputSchema stay here.
    boost::json::object raw;
    static Tool from_json(const boost::json::value& v);
    /// The object again: `raw` with the fields above put back (`inputSchema` always: `{"type":"object"}` when the
    /// server sent none).
    boost::json::object to_json() const;
};

struct Resource {
    std::string uri;
    std::string name;
    std::string title;
    std::string description;
    std::string mime_type;
    std::optional<std::uint64_t> size;
    boost::json::object raw;
    static Resource from_json(const boost::json::value& v);
};

struct ResourceTemplate {
    std::string uri_template;
    std::string name;
    std::string title;
    std::string description;
    std::string mime_type;
    boost::json::object raw;
    static ResourceTemplate from_json(const boost::json::value& v);
};

struct PromptArgument {
    std::string name;
    std::string description;
    bool required = false;
};

struct Prompt {
    std::string name;
    std::string title;
    std::string description;
    std::vector<PromptArgument> arguments;
    boost::json::object raw;
    static Prompt from_json(const boost::json::value& v);
};

/// One content block of a tool result or prompt message: text, image, audio, resource_link, resource.
struct Content {
    std::string type;
    boost::json::object raw;
    std::string text() const;       ///< text blocks
    std::string data() const;       ///< image/audio: base64
    std::string mime_type() const;  ///< image/audio/resource_link
    static Content from_json(const boost::json::value& v);
};

struct CallToolResult {
    std::vector<Content> content;
    std::optional<boost::json::value> structured_content;
    bool is_error = false;
    /// The result object without `content` (when an array of objects) and `structuredContent` (held above, once):
    /// isError, _meta and fields of newer revisions.
    boost::json::object raw;
    static CallToolResult from_json(const boost::json::value& v);
    /// The same, taking the value over instead of copying any of it (a 64 MiB text block is held once): everything
    /// keeps its storage (an arena it was parsed into, say).
    static CallToolResult from_json(boost::json::value&& v);
    /// The result object taken over whole, nothing split out of it (`raw` holds all of it, `content` stays empty):
    /// for a caller that only forwards it (a gateway), to_json() && then gives it back without a rebuild.
    static CallToolResult whole(boost::json::value&& v);
    /// The result object again: `raw` with `content` (always: the spec requires it), `structuredContent` and `isError`
    /// put back; in the default storage.
    boost::json::object to_json() const&;
    /// The same, moving the content blocks in (in their storage) instead of copying them.
    boost::json::object to_json() &&;
};

struct ResourceContents {
    std::string uri;
    std::string mime_type;
    std::optional<std::string> text;
    std::optional<std::string> blob;  ///< base64
    /// The blob decoded, as a big one arrives (read from the stream straight into it; `blob` is then empty).
    std::optional<std::string> blob_bytes;
    /// The object it was read from without `text` and `blob` (held above, once): uri, mimeType, _meta, newer fields.
    boost::json::object raw;

    bool has_blob() const { return blob || blob_bytes; }
    /// The blob's size in bytes, decoded.
    std::size_t blob_size() const;
    /// The blob as base64, however it is held (empty without one).
    std::string blob_base64() const;
    /// The blob's bytes (nullopt without one, or when its base64 is not valid).
    std::optional<std::string> decoded_blob() const;
    static ResourceContents from_json(const boost::json::value& v);
    /// The object again: `raw` with `text` / `blob` put back.
    boost::json::object to_json() const;
};

struct ReadResourceResult {
    std::vector<ResourceContents> contents;
    /// The result object without `contents` (held above): _meta and fields of newer revisions.
    boost::json::object raw;
    static ReadResourceResult from_json(const boost::json::value& v);
    /// With the blobs the read took out of the result as it arrived (jsonrpc::RequestOptions::blobs).
    static ReadResourceResult from_json(boost::json::value&& v, jsonrpc::DecodedBlobs blobs);
    /// The same, freeing each item of `v`'s contents once it is converted, so that a result of several large blobs
    /// peaks at one blob over its own size. Nothing of the result keeps `v`'s storage (e.g. an arena).
    static ReadResourceResult from_json(boost::json::value&& v);
    /// The object again: `raw` with `contents` put back.
    boost::json::object to_json() const;
};

struct GetPromptResult {
    std::string description;
    boost::json::array messages;  ///< [{role, content}]
    boost::json::object raw;
    static GetPromptResult from_json(const boost::json::value& v);
};

struct CompleteResult {
    std::vector<std::string> values;
    std::optional<std::int64_t> total;
    bool has_more = false;
    static CompleteResult from_json(const boost::json::value& v);
};

/// A field of an object as a string ("" when absent or not a string).
std::string string_field(const boost::json::object& o, std::string_view key);

/// An MCP log level's rank (RFC 5424 order: "debug" 0 ... "emergency" 7), -1 for anything else.
int log_severity(std::string_view level);
inline bool is_log_level(std::string_view level) { return log_severity(level) >= 0; }

/// Decoded length of a base64 text, without decoding it.
std::size_t base64_decoded_size(std::string_view b64);

/// SEP-1034: an accepted elicitation result gets the `default` of every field of `requested_schema` that the answer
/// left out, so a user who accepts without touching a field sends what the server offered. Other actions and results
/// without `content` are returned unchanged.
boost::json::value apply_elicitation_defaults(const boost::json::value& requested_schema, boost::json::value result);

}  // namespace switchboard::mcp
