// What a server asks during a web page's call goes to that page: a web conversation's tool call, or a "Try it" call
// on the Tools page (gateway::ClientRelay routes each request to whoever called; a gateway client gets its own, a
// terminal its own). The page answers through its QuestionBox:
// - elicitation/create: a form made from `requestedSchema` (or, in URL mode, the URL to open after the user says so);
//   the answer is checked against the schema;
// - sampling/createMessage: the request is shown for approval (once, always for this server, deny), runs on the
//   page's model, and the model's answer is shown for approval before it goes back;
// - roots/list: the directories of the config's `roots` (Settings), else the directory `serve` runs in; no question.
// A question left open is answered as cancelled after the bounded wait (ChatOptions::question_timeout).
//
// Thread-safety: single owner, on the pool's executor.
#pragma once

#include <switchboard/gateway/relay.hpp>
#include <switchboard/llm/client.hpp>
#include <switchboard/webapi/questions.hpp>

#include <boost/json/object.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>

namespace switchboard::host {
class ServerPool;
struct Config;
}

namespace switchboard::webapi {

/// What one page's questions are asked with.
struct PageAsker {
    std::shared_ptr<QuestionBox> box;
    std::shared_ptr<llm::Client> model;  ///< sampling runs on it; null: sampling is refused, saying why
    /// Put into each question: {"callId", "parent"?} (the chat's call), {"callId"} ("Try it").
    boost::json::object call;
    /// The servers the user let use the model without asking again ("always for this server").
    std::shared_ptr<std::set<std::string>> sampling_servers = std::make_shared<std::set<std::string>>();
};

/// roots/list's answer for a web page: the config's `roots`, else the directory `serve` runs in.
boost::json::object page_roots(const host::Config& config);

/// What is wrong with a page's `answer` to `question` ("" when nothing): an elicitation's action, a form's values
/// against the server's schema, a sampling decision.
std::string answer_problem(const boost::json::object& question, const boost::json::object& answer);

class PageAsks : public std::enable_shared_from_this<PageAsks> {
public:
    static std::shared_ptr<PageAsks> create(std::shared_ptr<gateway::ClientRelay> relay,
                                            std::weak_ptr<host::ServerPool> pool, std::chrono::milliseconds timeout);

    /// While the Registration lives, `server`'s requests go to `asker`'s page.
    gateway::ClientRelay::Registration enter(const std::string& server, PageAsker asker);
    /// roots/list's answer for a web page, and when nobody calls the server.
    boost::json::object roots() const;
    /// The answer for a relay with nobody calling the server: roots from roots(); other requests refused.
    gateway::ClientRelay::Asker fallback();
    std::chrono::milliseconds timeout() const { return timeout_; }

    // The "Try it" calls running now, by the id their stream gave the page (for its answers).
    std::string add_call(std::shared_ptr<QuestionBox> box);
    void remove_call(const std::string& id) { calls_.erase(id); }
    std::shared_ptr<QuestionBox> call(const std::string& id) const;

private:
    PageAsks(std::shared_ptr<gateway::ClientRelay> relay, std::weak_ptr<host::ServerPool> pool,
             std::chrono::milliseconds timeout)
        : relay_(std::move(relay)), pool_(std::move(pool)), timeout_(timeout) {}

    std::shared_ptr<gateway::ClientRelay> relay_;
    std::weak_ptr<host::ServerPool> pool_;
    std::chrono::milliseconds timeout_;
    std::map<std::string, std::weak_ptr<QuestionBox>> calls_;
    std::uint64_t next_call_ = 1;
};

}  // namespace switchboard::webapi
