// jsonrpc::Connection: requests and replies correlated, handlers and their errors, the peer closing, input that is not
// JSON, notifications, the writing paths. Timeouts and cancellation are in connection_timeout_test.cpp.
#include "connection_fixture.hpp"

#include <switchboard/jsonrpc/message.hpp>

#include <optional>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace {

// Server handler: "sleep" waits params.ms then answers {"v": params.v}.
awaitable<rpc::Outcome<json::value>> sleep_handler(std::string method, json::value params, rpc::IncomingRequest) {
    if (method != "sleep") co_return rpc::Error{rpc::code::method_not_found, "no"};
    const auto& p = params.as_object();
    co_await sleep_for(std::chrono::milliseconds(p.at("ms").to_number<int>()));
    co_return json::value(json::object{{"v", p.at("v")}});
}

awaitable<rpc::Outcome<json::value>> call_sleep(std::shared_ptr<rpc::Connection> c, int ms, int v) {
    json::value params = json::object{{"ms", ms}, {"v", v}};
    co_return co_await c->request("sleep", std::move(params));
}

}  // namespace

TEST_F(ConnectionTest, ConcurrentRequestsAnsweredOutOfOrderAreCorrelated) {
    auto client = make_client();
    auto server = make_server();
    std::vector<int> answered_order;
    server->on_request(
        [&](std::string method, json::value params, rpc::IncomingRequest req) -> awaitable<rpc::Outcome<json::value>> {
            auto r = co_await sleep_handler(std::move(method), std::move(params), std::move(req));
            answered_order.push_back(static_cast<int>(r->as_object().at("v").as_int64()));
            co_return r;
        });
    server->start();
    client->start();
    const std::vector<int> delays{300, 50, 150, 0};
    std::vector<std::optional<rpc::Outcome<json::value>>> results(4);
    run(ctx, [&]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        std::vector<std::shared_ptr<Task>> tasks;
        for (int i = 0; i < 4; ++i)
            tasks.push_back(
                spawn(ex, [&, i]() -> awaitable<void> { results[i] = co_await call_sleep(client, delays[i], i); }));
        for (auto& t : tasks) co_await join(t);
        for (int i = 0; i < 4; ++i) {
            CO_ASSERT_TRUE(results[i].has_value());
            CO_ASSERT_TRUE(results[i]->has_value()) << results[i]->error().message;
            EXPECT_EQ((*results[i])->as_object().at("v"), json::value(i)) << "request " << i;
        }
        EXPECT_EQ(answered_order, (std::vector<int>{3, 1, 2, 0}));
        EXPECT_EQ(client->pending_requests(), 0u);
        co_await client->close();
    });
}

TEST_F(ConnectionTest, RequestWithoutHandlerGetsMethodNotFound) {
    auto client = make_client();
    auto server = make_server();
    server->start();
    client->start();
    run(ctx, [&]() -> awaitable<void> {
        json::value params = json::object{};
        auto r = co_await client->request("nothing/here", std::move(params));
        CO_ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, rpc::code::method_not_found);
        EXPECT_FALSE(r.error().local);
        co_await client->close();
    });
}

TEST_F(ConnectionTest, ThrowingHandlerGivesInternalError) {
    auto client = make_client();
    auto server = make_server();
    server->on_request([](std::string, json::value, rpc::IncomingRequest) -> awaitable<rpc::Outcome<json::value>> {
        co_await sleep_for(1ms);
        throw std::runtime_error("boom");
    });
    server->start();
    client->start();
    run(ctx, [&]() -> awaitable<void> {
        json::value params = json::object{};
        auto r = co_await client->request("explode", std::move(params));
        CO_ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, rpc::code::internal_error);
        EXPECT_FALSE(r.error().local);
        EXPECT_NE(r.error().message.find("boom"), std::string::npos) << r.error().message;
        EXPECT_TRUE(client->is_open());
        co_await client->close();
    });
}

// set_result_meta: the members go into the result's _meta as it is written, a small result's and a streamed one's.
TEST_F(ConnectionTest, ResultMetaSetByTheHandlerIsInTheReply) {
    auto client = make_client();
    auto server = make_server();
    auto meta = std::make_shared<rpc::MetaMembers>(json::object{{"io.mcp/serverInfo", json::object{{"name", "t"}}}});
    server->on_request(
        [meta](std::string method, json::value, rpc::IncomingRequest req) -> awaitable<rpc::Outcome<json::value>> {
            req.set_result_meta(meta);
            json::object r;
            r["_meta"] = json::object{{"k", 1}};
            if (method == "big") r["text"] = std::string(3u << 20, 'b');  // over the 1 MiB a reply is serialized whole
            co_return json::value(std::move(r));
        });
    server->start();
    client->start();
    run(ctx, [&]() -> awaitable<void> {
        for (std::string method : {"small", "big"}) {
            json::value params = json::object{};
            auto r = co_await client->request(method, std::move(params));
            CO_ASSERT_TRUE(r.has_value());
            const auto& m = r->at("_meta");
            EXPECT_EQ(m.at("k"), json::value(1)) << method;
            EXPECT_EQ(m.at("io.mcp/serverInfo").at("name"), json::value("t")) << method;
            if (method == "big") {
                EXPECT_EQ(r->at("text").as_string().size(), 3u << 20);
            }
        }
        co_await client->close();
    });
}

TEST_F(ConnectionTest, LocalErrorFromHandlerIsSentAsInternalError) {
    auto client = make_client();
    auto server = make_server();
    server->on_request([](std::string, json::value, rpc::IncomingRequest) -> awaitable<rpc::Outcome<json::value>> {
        co_return rpc::Error::make_local(rpc::code::timeout, "upstream timed out");
    });
    server->start();
    client->start();
    run(ctx, [&]() -> awaitable<void> {
        json::value params = json::object{};
        auto r = co_await client->request("x", std::move(params));
        CO_ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, rpc::code::internal_error);
        EXPECT_FALSE(r.error().local);
        co_await client->close();
    });
}

TEST_F(ConnectionTest, PeerClosingFailsPendingRequestsPromptly) {
    auto client = make_client(30'000ms);
    std::optional<rpc::Error> close_reason;
    client->on_close([&](const rpc::Error& e) { close_reason = e; });
    client->start();
    run(ctx, [&]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        auto peer = spawn(ex, [&]() -> awaitable<void> {
            (void)read_message(co_await server_channel->read());
            (void)read_message(co_await server_channel->read());
            co_await server_channel->close();
        });
        std::vector<std::optional<rpc::Outcome<json::value>>> results(2);
        auto a = spawn(ex, [&]() -> awaitable<void> {
            json::value params = json::object{};
            results[0] = co_await client->request("one", std::move(params));
        });
        auto b = spawn(ex, [&]() -> awaitable<void> {
            json::value params = json::object{};
            results[1] = co_await client->request("two", std::move(params));
        });
        const auto start = clock_type::now();
        co_await join(peer);
        co_await join(a, 2s);
        co_await join(b, 2s);
        EXPECT_LT(clock_type::now() - start, 2s);
        for (auto& r : results) {
            CO_ASSERT_TRUE(r.has_value());
            CO_ASSERT_FALSE(r->has_value());
            EXPECT_EQ(r->error().code, rpc::code::connection_closed);
            EXPECT_TRUE(r->error().local);
        }
        EXPECT_FALSE(client->is_open());
        CO_ASSERT_TRUE(close_reason.has_value());
        EXPECT_EQ(close_reason->code, rpc::code::connection_closed);

        // Later requests fail at once.
        json::value params = json::object{};
        auto late = co_await client->request("three", std::move(params));
        CO_ASSERT_FALSE(late.has_value());
        EXPECT_EQ(late.error().code, rpc::code::connection_closed);
        co_await client->close();
    });
}

TEST_F(ConnectionTest, NonJsonLineIsRecordedAndConnectionStaysUsable) {
    auto client = make_client();
    client->start();
    run(ctx, [&]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        co_await server_channel->write("Starting server... not JSON");
        auto peer = spawn(ex, [&]() -> awaitable<void> {
            auto m = read_message(co_await server_channel->read());
            const auto reply = rpc::serialize_result(m.id, json::object{{"pong", true}});
            co_await server_channel->write(reply);
        });
        json::value params = json::object{};
        auto r = co_await client->request("ping", std::move(params));
        co_await join(peer);
        CO_ASSERT_TRUE(r.has_value()) << r.error().message;
        EXPECT_EQ(r->as_object().at("pong"), json::value(true));
        EXPECT_NE(client->last_protocol_error().find("Starting server... not JSON"), std::string::npos)
            << client->last_protocol_error();
        EXPECT_NE(client->last_protocol_error().find("non-JSON"), std::string::npos) << client->last_protocol_error();
        EXPECT_TRUE(client->is_open());
        co_await client->close();
    });
}

TEST_F(ConnectionTest, ServerRepliesToUnparseableInputWhenAsked) {
    auto server = make_server();
    server->start();
    run(ctx, [&]() -> awaitable<void> {
        co_await client_channel->write("{not json");
        auto m = read_message(co_await client_channel->read());
        EXPECT_EQ(m.kind, rpc::Message::Kind::response);
        EXPECT_TRUE(m.id.is_null());
        CO_ASSERT_TRUE(m.error.has_value());
        EXPECT_EQ(m.error->code, rpc::code::parse_error);
        EXPECT_NE(server->last_protocol_error().find("{not json"), std::string::npos);
        co_await client_channel->close();
    });
}

// RequestOptions::result_text: a result object comes as the text the peer wrote (any member order, spacing, an id
// echoed as a string), never as a value; an error, a result that is not an object, an envelope with more members, a
// line break in the result's whitespace, and a text that is not valid JSON (refused as before: the request is never
// answered) do not.
TEST_F(ConnectionTest, ResultTextIsTheReplysResultAsThePeerWroteIt) {
    auto client = make_client();
    client->start();
    struct Sent {
        rpc::Outcome<json::value> outcome;
        std::string text;
    };
    // The reply's text with ID for the request's id (string_view: no literal made a std::string in a co_await).
    const auto ask = [&](std::string_view reply_template) -> awaitable<Sent> {
        auto ex = co_await asio::this_coro::executor;
        auto peer = spawn(ex, [&, reply_template = std::string(reply_template)]() -> awaitable<void> {
            auto m = read_message(co_await server_channel->read());
            auto reply = reply_template;
            reply.replace(reply.find("ID"), 2, std::to_string(m.id.as_int64()));
            co_await server_channel->write(reply);
        });
        rpc::RequestOptions o;
        o.timeout = 500ms;
        o.cancellable = false;  // a request that times out sends no notifications/cancelled to the next peer
        auto text = std::make_shared<rpc::ResultText>();
        o.result_text = text;
        json::value params = json::object{};
        auto r = co_await client->request("tools/call", std::move(params), std::move(o));
        co_await join(peer);
        EXPECT_FALSE(text->members.has_value());  // nobody looked for them yet
        Sent sent{std::move(r), text->text};
        co_return sent;
    };
    run(ctx, [&]() -> awaitable<void> {
        auto plain = co_await ask(R"( { "result" : {"content": [{"type":"text","text":"} \"]"}], "n": 1} ,"id":ID,)"
                                  R"("jsonrpc":"2.0"})");
        CO_ASSERT_TRUE(plain.outcome.has_value()) << plain.outcome.error().message;
        EXPECT_TRUE(plain.outcome->is_null());
        EXPECT_EQ(plain.text, R"({"content": [{"type":"text","text":"} \"]"}], "n": 1})");

        auto string_id = co_await ask(R"({"jsonrpc":"2.0","id":"ID","result":{}})");
        CO_ASSERT_TRUE(string_id.outcome.has_value()) << string_id.outcome.error().message;
        EXPECT_EQ(string_id.text, "{}");

        auto error = co_await ask(R"({"jsonrpc":"2.0","id":ID,"error":{"code":-32602,"message":"no"}})");
        CO_ASSERT_FALSE(error.outcome.has_value());
        EXPECT_EQ(error.outcome.error().code, -32602);
        EXPECT_TRUE(error.text.empty());

        auto array = co_await ask(R"({"jsonrpc":"2.0","id":ID,"result":[1]})");
        CO_ASSERT_TRUE(array.outcome.has_value()) << array.outcome.error().message;
        EXPECT_EQ(*array.outcome, json::parse("[1]"));
        EXPECT_TRUE(array.text.empty());

        auto trailing = co_await ask(R"({"jsonrpc":"2.0","id":ID,"result":{"a":1},"extra":2})");
        CO_ASSERT_TRUE(trailing.outcome.has_value()) << trailing.outcome.error().message;
        EXPECT_EQ(*trailing.outcome, json::parse(R"({"a":1})"));
        EXPECT_TRUE(trailing.text.empty());

        auto huge = co_await ask(R"({"jsonrpc":"2.0","id":ID,"result":{"n":1e400}})");
        CO_ASSERT_FALSE(huge.outcome.has_value());
        EXPECT_EQ(huge.outcome.error().code, rpc::code::timeout);
        EXPECT_TRUE(huge.text.empty());
        EXPECT_NE(client->last_protocol_error().find("1e400"), std::string::npos) << client->last_protocol_error();

        auto broken = co_await ask(R"({"jsonrpc":"2.0","id":ID,"result":{"a":[1,}})");
        CO_ASSERT_FALSE(broken.outcome.has_value());
        EXPECT_TRUE(broken.text.empty());
        EXPECT_NE(client->last_protocol_error().find("[1,}"), std::string::npos) << client->last_protocol_error();

        // A line break between members (a pretty-printed reply over HTTP, an SSE event of several data lines) would
        // end the line the text is forwarded in. A carriage return here: a line feed would split the line on stdio.
        auto pretty = co_await ask("{\"jsonrpc\":\"2.0\",\"id\":ID,\"result\":{\"a\":1,\r\"b\":2}}");
        CO_ASSERT_TRUE(pretty.outcome.has_value()) << pretty.outcome.error().message;
        EXPECT_EQ(*pretty.outcome, json::parse(R"({"a":1,"b":2})"));
        EXPECT_TRUE(pretty.text.empty());
        EXPECT_TRUE(client->is_open());
        co_await client->close();
    });
}

TEST_F(ConnectionTest, NotificationsReachTheHandler) {
    auto client = make_client();
    auto server = make_server();
    std::vector<std::string> seen;
    switchboard::core::OneShotEvent got;
    server->on_notification([&](const std::string& method, const json::value& params) {
        seen.push_back(method + " " + json::serialize(params));
        got.set();
    });
    server->start();
    client->start();
    run(ctx, [&]() -> awaitable<void> {
        client->notify("notifications/initialized", json::object{{"a", 1}});
        const bool got_in_time = co_await got.wait_for(2s);
        EXPECT_TRUE(got_in_time);
        EXPECT_EQ(seen, (std::vector<std::string>{"notifications/initialized {\"a\":1}"}));
        co_await client->close();
    });
}

// ---- Writing paths: batches, immediate writes -------------------------------------------------------------------

TEST_F(ConnectionTest, WriteBatchSendsEveryMessageInOrder) {
    std::vector<std::string> small{"{\"a\":1}", "{\"b\":2}", "{\"c\":3}"};
    std::vector<std::string> large;  // over the join threshold: gathered, not copied
    for (char c : std::string("xyz")) large.push_back("\"" + std::string(200 * 1024, c) + "\"");
    run(ctx, [&]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        boost::system::error_code ec1, ec2;
        // The writer runs beside the reader: 600 KiB do not fit in a socket buffer.
        auto writer = spawn(ex, [&]() -> awaitable<void> {
            ec1 = co_await client_channel->write_batch(small);
            ec2 = co_await client_channel->write_batch(large);
        });
        std::vector<std::string> all = small;
        all.insert(all.end(), large.begin(), large.end());
        for (const auto& want : all) {
            auto r = co_await server_channel->read();
            CO_ASSERT_EQ(r.kind, rpc::Received::Kind::message);
            EXPECT_EQ(r.text.size(), want.size());
            EXPECT_TRUE(r.text == want);
        }
        co_await join(writer);
        EXPECT_FALSE(ec1);
        EXPECT_FALSE(ec2);
    });
}

TEST_F(ConnectionTest, TryWriteSendsAWholeMessage) {
    run(ctx, [&]() -> awaitable<void> {
        std::string m = "{\"now\":true}";
        CO_ASSERT_TRUE(client_channel->try_write(m));
        auto r = co_await server_channel->read();
        CO_ASSERT_EQ(r.kind, rpc::Received::Kind::message);
        EXPECT_EQ(r.text, "{\"now\":true}");
    });
}

TEST_F(ConnectionTest, TryWriteToAClosedPeerFailsAndTheNextWriteReportsIt) {
    run(ctx, [&]() -> awaitable<void> {
        co_await server_channel->close();
        std::string m = "{\"late\":true}";
        EXPECT_FALSE(client_channel->try_write(m));  // EPIPE, without SIGPIPE killing the test
        auto ec = co_await client_channel->write("{\"later\":true}");
        EXPECT_TRUE(ec);
    });
}

// A pipe (a server's stdout, a child's stdin) is not a socket: try_write falls back from send() to write(), and a write
// over the pipe's atomic size may go out only in part. Each case ends with the reader getting the message whole,
// with one newline: the rest, and a newline not yet written, go by the asynchronous write.
TEST_F(ConnectionTest, TryWriteOnAPipeLeavesWhatDidNotFitToTheNextWrite) {
    struct Case {
        const char* name;
        std::size_t queued;   // bytes already in the pipe (a whitespace line, which the reader skips)
        std::size_t message;  // the message's size
        bool whole;           // try_write sends it all
        std::size_t left;     // else: what is left of the message to write (the newline is never counted)
    };
    // The pipe holds 4096 bytes (F_SETPIPE_SZ's smallest, one page), which is also the size written atomically.
    const Case cases[] = {
        {"fits", 0, 100, true, 0},
        {"full pipe: nothing written", 4096, 100, false, 100},
        {"over the atomic size: written in part", 0, 10000, false, 10000 - 4096},
        {"all but the newline", 0, 4096, false, 0},
    };
    // A pipe holds at least a page: with pages over 4 KiB the cases below would not fill it.
    if (::sysconf(_SC_PAGESIZE) != 4096) GTEST_SKIP() << "the cases assume 4 KiB pages";
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        int p[2];
        ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
        ASSERT_EQ(::fcntl(p[1], F_SETPIPE_SZ, 4096), 4096);
        if (c.queued > 0) {
            std::string filler(c.queued - 1, ' ');
            filler.push_back('\n');
            ASSERT_EQ(::write(p[1], filler.data(), filler.size()), static_cast<ssize_t>(filler.size()));
        }
        auto writer = std::make_shared<FdChannel>(ctx.get_executor(), ::open("/dev/null", O_RDONLY | O_CLOEXEC), p[1]);
        auto reader = std::make_shared<FdChannel>(ctx.get_executor(), p[0], ::open("/dev/null", O_WRONLY | O_CLOEXEC));
        std::string want = "{\"text\":\"" + std::string(c.message - 11, 'a') + "\"}";
        ASSERT_EQ(want.size(), c.message);
        std::string m = want;
        const bool whole = writer->try_write(m);
        EXPECT_EQ(whole, c.whole);
        if (!c.whole) {
            EXPECT_EQ(m.size(), c.left);
            EXPECT_TRUE(want.ends_with(m)) << "what is left is the message's end, without the newline";
        }
        run(ctx, [&]() -> awaitable<void> {
            auto rest = spawn(ctx.get_executor(), [&]() -> awaitable<void> {
                if (!whole) {
                    auto ec = co_await writer->write(m);
                    EXPECT_FALSE(ec) << ec.message();
                }
                co_await writer->close();
            });
            auto r = co_await reader->read();
            CO_ASSERT_EQ(r.kind, rpc::Received::Kind::message) << r.reason;
            EXPECT_EQ(r.text.size(), want.size());
            EXPECT_TRUE(r.text == want);
            r = co_await reader->read();
            EXPECT_EQ(r.kind, rpc::Received::Kind::closed) << "nothing after the message: " << r.text;
            co_await join(rest);
            co_await reader->close();
        });
        ctx.restart();
    }
}

TEST_F(ConnectionTest, ManyRequestsInFlightAreAllAnswered) {
    auto client = make_client();
    auto server = make_server();
    server->on_request(sleep_handler);
    server->start();
    client->start();
    constexpr int n = 300;
    std::vector<std::optional<rpc::Outcome<json::value>>> results(n);
    run(ctx, [&]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        std::vector<std::shared_ptr<Task>> tasks;
        for (int i = 0; i < n; ++i)
            tasks.push_back(spawn(ex, [&, i]() -> awaitable<void> { results[i] = co_await call_sleep(client, 0, i); }));
        for (auto& t : tasks) co_await join(t);
        for (int i = 0; i < n; ++i) {
            CO_ASSERT_TRUE(results[i].has_value());
            CO_ASSERT_TRUE(results[i]->has_value()) << results[i]->error().message;
            EXPECT_EQ((*results[i])->as_object().at("v"), json::value(i)) << "request " << i;
        }
        co_await client->close();
    });
}
