// A request read without Beast's parser when it is plain and already in the buffer. Beast reads a head a byte at a
// time (about 14 instructions a byte, 4k of a gateway call's instructions); this finds each line's end and checks its
// bytes sixteen at a time. It accepts a strict subset of what Beast accepts and builds the same message (the same
// fields inserted the same way); anything else (a folded or tab-spaced line, a byte outside printable ASCII, chunked
// transfer coding, Upgrade, a Connection that is not one plain option, a Content-Length that is not plain digits or
// comes twice, a limit reached, a request not all in the buffer) is left to Beast's parser, errors included.
#pragma once

#include <switchboard/http/router.hpp>

#include <cstddef>
#include <string_view>

namespace switchboard::http::detail {

/// Reads one request from the front of `data` when the whole of it is there and it is plain: a request line of a
/// method Beast knows by name, a target of printable ASCII, `HTTP/1.1` or `HTTP/1.0`; header fields of token names and
/// values of printable ASCII and spaces, shorter in all than `max_header`; a body of its Content-Length, smaller than
/// `max_body`. Returns the bytes read and the request in `out`, which must be as default-constructed; 0, with `out`
/// untouched, for anything else.
std::size_t read_plain_request(std::string_view data, std::size_t max_header, std::size_t max_body, ServerRequest& out);

}  // namespace switchboard::http::detail
