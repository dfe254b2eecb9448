// JSON-RPC 2.0 messages: parse one text into a Message, serialize requests, notifications and responses.
//
// Thread-safety: plain values and free functions.
#pragma once

#include <switchboard/jsonrpc/error.hpp>

#include <boost/container/small_vector.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::jsonrpc {

/// The `_meta` member of a request in which a transport that authenticated it names who sent it (an HTTP server with
/// an OAuth resource server: "<issuer> <subject>"). Such a transport removes it from whatever a client sends.
inline constexpr std::string_view meta_principal = "io.switchboard/principal";

/// A request id: an integer or a string (never null in MCP).
using Id = boost::json::value;

/// A base64 `blob` taken out of a message as it was read and decoded (see StreamParser): its place in the message
/// holds an empty string.
struct DecodedBlob {
    std::string pointer;  ///< a JSON Pointer (RFC 6901) to the member, from the message's root or, in
                          ///< Message::blobs, from its result: "/contents/0/blob"
    std::string bytes;
};
using DecodedBlobs = std::vector<DecodedBlob>;

/// Puts every blob back into `root` as base64 at its pointer: the value is then the one that was sent.
void restore_blobs(boost::json::value& root, DecodedBlobs blobs);

struct Message {
    enum class Kind { request, notification, response };
    Kind kind = Kind::notification;
    Id id;                       ///< request, response
    std::string method;          ///< request, notification
    boost::json::value params;   ///< request, notification (null when absent)
    boost::json::value result;   ///< response on success
    std::optional<Error> error;  ///< response on failure
    DecodedBlobs blobs;          ///< response: blobs taken out of `result` (pointers from the result)
};

/// Parses one JSON-RPC message. Batches are not part of MCP since 2025-06-18 and are rejected.
/// On failure returns an Error with code parse_error or invalid_request.
/// How deep a message may nest (objects and arrays): hundreds of levels for real schemas, bounded for hostile input.
inline constexpr std::size_t max_message_depth = 1000;

Outcome<Message> parse_message(std::string_view text);
/// The error parse_message reports for a text that is not JSON (`ec` from Boost.JSON's parser).
Error parse_error(const boost::system::error_code& ec);
/// The same checks on a message already parsed (from pieces, by StreamParser): the blobs of a response stay apart,
/// those of a request or notification are put back into its params.
Outcome<Message> parse_message(boost::json::value value, DecodedBlobs blobs);

std::string serialize_request(const Id& id, std::string_view method, const boost::json::value& params);

/// Members a request's params._meta gets when it is written, serialized once and reused: the 2026-07-28 `_meta` a
/// client sends with every request would otherwise be copied into each request's params and serialized again.
struct MetaMembers {
    explicit MetaMembers(const boost::json::object& members);
    std::string json;               ///< `"k":v,"k2":v2`, no braces
    std::vector<std::string> keys;  ///< where params._meta has one of these keys, ours wins
};

/// An object's members as JSON text, `"k":v,"k2":v2` without the braces (MetaMembers, serialize_result's `members`).
std::string serialize_members(const boost::json::object& o);

/// serialize_request with `meta` added to params._meta (params must be an object or null). The same JSON as merging
/// `meta` into a copy of params and serializing that; `_meta` comes last among the params.
std::string serialize_request(const Id& id, std::string_view method, const boost::json::value& params,
                              const MetaMembers& meta);
/// The same with `meta` optional and, when given, params._meta.progressToken set to `progress_token` (params must be
/// an object or null; other params go out as they are): the JSON of setting the token in a copy of params, without
/// the copy a request that asks for progress would otherwise make.
std::string serialize_request(const Id& id, std::string_view method, const boost::json::value& params,
                              const MetaMembers* meta, std::optional<std::int64_t> progress_token);
std::string serialize_notification(std::string_view method, const boost::json::value& params);
std::string serialize_result(const Id& id, const boost::json::value& result);
/// serialize_result, or nullopt once the result's text is over about `max` bytes (it stops there): a small result is
/// serialized once, and a big one is not held whole as text (see ResultStream). With `meta`, its members are added to
/// result._meta as serialize_request adds them to params._meta (a result that is not an object gets none). With
/// `members` (an object's members as JSON text, `"k":v,…` without braces, none of them a key of `result`), the result
/// object is written with them first: a list kept serialized is not rebuilt into values for every request.
std::optional<std::string> serialize_result(const Id& id, const boost::json::value& result, std::size_t max,
                                            const MetaMembers* meta = nullptr, std::string_view members = {});
/// Adds `meta`'s members to result._meta in the value itself (ours win; a _meta that is not an object is replaced),
/// for a result that goes out as a ResultStream: the same members as serialize_result with `meta` writes, though not
/// in the same order (it writes _meta last).
void merge_meta(boost::json::value& result, const MetaMembers& meta);
std::string serialize_error(const Id& id, const Error& error);

/// A result response serialized as it is written, for a result too big to hold as text as well (a 64 MiB blob): the
/// channel pulls its text a piece at a time. The same bytes as serialize_result.
class ResultStream {
public:
    ResultStream(const Id& id, boost::json::value result);
    ~ResultStream();
    ResultStream(const ResultStream&) = delete;
    ResultStream& operator=(const ResultStream&) = delete;

    /// Writes the next piece of the text into `buf` (at most `size` bytes, `size` >= 64); 0 once all is written.
    std::size_t read(char* buf, std::size_t size);
    bool done() const;
    /// The whole text at once, for a channel that sends a message whole (HTTP): serialize_result's bytes.
    std::string text();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// What a message written by the serializers above is, read from its first bytes without parsing it: they write
/// `{"jsonrpc":"2.0"`, then `,"id":` and the id (not for a notification), then `,"method":`, `,"result":` or
/// `,"error":`. For a router that needs only that much of each outgoing message (the HTTP server's streams).
struct EnvelopePeek {
    Message::Kind kind = Message::Kind::notification;
    std::string_view id;  ///< the id's JSON text, the same as serializing it (empty for a notification)
    bool error = false;   ///< a response with "error"
};
/// nullopt for any other text (another writer's member order, an id with escapes): parse it instead.
std::optional<EnvelopePeek> peek_envelope(std::string_view text);

/// One member of a JSON object as it is in the object's text (see object_members).
struct TextMember {
    std::string_view key;    ///< as written between its quotes (it has no escapes)
    std::string_view value;  ///< the value's JSON text, without the whitespace around it
};
using TextMembers = boost::container::small_vector<TextMember, 8>;

/// The members of the JSON object `text` is, in their order, found in its text without building anything: for a
/// caller that forwards a value as it came and needs only a few of its members. nullopt when `text` is not an object
/// with nothing but whitespace around it, or when a key has an escape (parse such an object instead). It reads the
/// structure only (strings, brackets, commas), not each value's grammar: on any text it stays within the text, but
/// what it finds is a value's members only once json_text_is_valid() accepted the text.
std::optional<TextMembers> object_members(std::string_view text);

/// A result object as its peer wrote it (RequestOptions::result_text), with its members once a reader found them: the
/// session that looks at its resultType and the gateway that forwards it read them from one scan.
struct ResultText {
    ResultText() = default;
    explicit ResultText(std::string t) : text(std::move(t)) {}
    // A copy or a move has no members: they would view the other's text (a short one is held in the string itself).
    ResultText(const ResultText& o) : text(o.text) {}
    ResultText(ResultText&& o) noexcept : text(std::move(o.text)) { o.members.reset(); }
    ResultText& operator=(const ResultText& o) {
        if (this != &o) {
            text = o.text;
            members.reset();
        }
        return *this;
    }
    ResultText& operator=(ResultText&& o) noexcept {
        if (this != &o) {
            text = std::move(o.text);
            members.reset();
            o.members.reset();
        }
        return *this;
    }

    /// Another text, with no members found yet.
    void assign(std::string t) {
        text = std::move(t);
        members.reset();
    }

    std::string text;
    /// object_members(text), kept by the first reader that asked (members_of()); whoever changes `text` resets it.
    std::optional<TextMembers> members;
    const std::optional<TextMembers>& members_of() {
        if (!members) members = object_members(text);
        return members;
    }
};

/// Whether `text` is one JSON text that parse_message's parser accepts as it does (nested at most `max_depth`
/// levels, every number finite as a double), checked without building anything. A value that sits inside a message
/// is checked with one level less (the message is an object around it).
bool json_text_is_valid(std::string_view text, std::size_t max_depth = max_message_depth);
/// A text json_text_is_valid() accepted (a RequestOptions::result_text, say) built into a value after all, with
/// parse_message's limits. Throws boost::system::system_error for a text it did not accept.
boost::json::value parse_json_text(std::string_view text);

/// For logs and error messages: a text cut to `max` bytes with "…" appended when cut.
std::string preview(std::string_view text, std::size_t max = 120);

}  // namespace switchboard::jsonrpc
