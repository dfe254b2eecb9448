// The host's event bus: every subscriber sees each event; callbacks may unsubscribe while being called.
#include <switchboard/host/events.hpp>

#include <gtest/gtest.h>

namespace switchboard::host {
namespace {

TEST(EventBus, DeliversToEverySubscriberAndAllowsUnsubscribingDuringEmit) {
    EventBus bus;
    std::vector<std::string> seen;
    EventBus::Id second = 0;
    const auto first = bus.subscribe([&](const Event& e) {
        seen.push_back("1:" + e.server);
        bus.unsubscribe(second);  // removes a later subscriber before it is called
    });
    second = bus.subscribe([&](const Event& e) { seen.push_back("2:" + e.server); });
    EventBus::Id self = 0;
    self = bus.subscribe([&](const Event& e) {
        seen.push_back("3:" + e.server);
        bus.unsubscribe(self);  // one-shot
    });
    Event e{Event::Kind::phase_changed, "a", Phase::connected, {}, {}, {}, nullptr};
    bus.emit(e);
    e.server = "b";
    bus.emit(e);
    EXPECT_EQ(seen, (std::vector<std::string>{"1:a", "3:a", "1:b"}));
    bus.unsubscribe(first);
    EXPECT_EQ(bus.size(), 0u);
    EXPECT_EQ(to_string(Phase::reconnecting), "reconnecting");
    EXPECT_EQ(to_string(Event::Kind::resource_updated), "resource_updated");
}

}  // namespace
}  // namespace switchboard::host
