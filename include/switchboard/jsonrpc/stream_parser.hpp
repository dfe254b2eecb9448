// Parses one JSON-RPC message from pieces of its text as they arrive, for messages too big to hold twice: the text is
// never kept whole, a big string is built once, straight into its place, and the base64 of a big `blob` member (MCP's
// binary resource contents) is decoded as it streams in, once, into its final buffer; the parsed value holds an empty
// string in its place.
//
// Thread-safety: one owner.
#pragma once

#include <switchboard/jsonrpc/error.hpp>
#include <switchboard/jsonrpc/message.hpp>

#include <boost/json/value.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace switchboard::jsonrpc {

/// A message parsed from pieces: its value and the blobs taken out of it, or why it is not JSON.
struct StreamedMessage {
    boost::json::value value;
    /// Or the message itself, read and checked already (the HTTP server parsed it to route it): `value` is then
    /// unused, and the envelope is not built and taken apart again.
    std::optional<Message> message;
    DecodedBlobs blobs;
    std::optional<Error> error;  ///< a parse error
    std::string head;            ///< the text's first bytes, for a report of what was wrong with it
};

/// Whether the requester of the reply with this id wants its blobs' bytes (see RequestOptions::blobs); a caller that
/// wants the text gets it kept as text instead of decoded and encoded again. Null: always decode.
using BlobPolicy = std::function<bool(const boost::json::value& id)>;

class StreamParser {
public:
    /// A `blob` string shorter than this stays a string: only big ones are worth holding apart.
    static constexpr std::size_t min_decoded_size = 64 * 1024;

    /// `max_text`: the most the text can be (the channel's message size limit). A blob's buffer is reserved for the
    /// most it could decode to, which costs address space, not memory, and saves copying it as it grows.
    explicit StreamParser(std::size_t max_text = 64u << 20, BlobPolicy policy = {});
    ~StreamParser();
    StreamParser(const StreamParser&) = delete;
    StreamParser& operator=(const StreamParser&) = delete;

    /// The next piece of the text. Once it fails, the rest is ignored and finish() reports the error.
    void feed(std::string_view piece);
    /// The text has ended.
    StreamedMessage finish();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace switchboard::jsonrpc
