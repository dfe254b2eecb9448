// Resource attachments for the next user message: added while loading, then given content or an error, taken by the
// message that is sent next.
//
// Thread-safety: single owner.
#pragma once

#include <switchboard/mcp/types.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace switchboard::host {

struct Attachment {
    std::uint64_t id = 0;
    std::string server;
    std::string uri;
    bool loading = true;
    std::optional<mcp::ReadResourceResult> content;
    std::string error;
};

class AttachmentList {
public:
    /// A new attachment in the loading state.
    const Attachment& add(std::string server, std::string uri);
    bool set_content(std::uint64_t id, mcp::ReadResourceResult content);
    bool set_error(std::uint64_t id, std::string error);
    bool remove(std::uint64_t id);
    const Attachment* find(std::uint64_t id) const;
    const std::vector<Attachment>& items() const { return items_; }
    bool any_loading() const;

    /// Removes and returns every attachment that finished loading (content or error), in the order added; loading
    /// ones stay. The LLM layer turns them into message parts.
    std::vector<Attachment> consume();
    void clear() { items_.clear(); }

private:
    std::uint64_t next_ = 1;
    std::vector<Attachment> items_;
};

}  // namespace switchboard::host
