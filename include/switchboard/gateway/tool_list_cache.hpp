// The gateway's tools/list answers kept as JSON text. A page of tools/list is the tool index turned into JSON: the
// same bytes for every client that sees the same index and asks for the same page, and with a thousand tools building
// them is most of the request (2 ms of CPU a request, 244 KB). They are kept per index: a new index (a server came,
// went or changed its tools) starts the cache again, so an answer is never older than the index it came from.
//
// Thread-safety: single-threaded (the gateway's io_context).
#pragma once

#include <switchboard/host/tool_index.hpp>

#include <cstddef>
#include <map>
#include <memory>
#include <string>

namespace switchboard::gateway {

class ToolListCache {
public:
    /// How many pages are kept per index (a cursor is the client's to send: past this, pages are built every time).
    static constexpr std::size_t max_entries = 256;

    /// The members kept for `key` under `index`, or null.
    std::shared_ptr<const std::string> find(const std::shared_ptr<const host::ToolIndex>& index,
                                            const std::string& key) const;
    /// Keeps `members` for `key` under `index`; one of another index is forgotten with everything kept for it.
    void keep(const std::shared_ptr<const host::ToolIndex>& index, std::string key,
              std::shared_ptr<const std::string> members);
    std::size_t size() const { return by_key_.size(); }

private:
    // Not owning: a replaced index is freed as usual; an expired one matches nothing, even if a new one takes its
    // address.
    std::weak_ptr<const host::ToolIndex> index_;
    std::map<std::string, std::shared_ptr<const std::string>, std::less<>> by_key_;
};

}  // namespace switchboard::gateway
