#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sc_modules/sim/sim.hpp"

using namespace ks::sim;

TEST(Resource, GrantsAtMostCapacityInFifoOrder) {
  Environment env;
  Resource teller(env, 2);
  std::vector<std::pair<int, double>> starts;
  for (int i = 0; i < 5; ++i) {
    env.process([&, i] {
      auto slot = teller.acquire();
      starts.emplace_back(i, env.now_seconds());
      EXPECT_LE(teller.count(), 2u);
      env.hold(seconds(10));
    });  // the slot is released when `slot` leaves scope
  }
  env.run();
  std::vector<std::pair<int, double>> expected{{0, 0}, {1, 0}, {2, 10}, {3, 10}, {4, 20}};
  EXPECT_EQ(starts, expected);
  EXPECT_EQ(teller.count(), 0u);
}

TEST(Resource, AWithdrawnRequestNeverGetsTheSlot) {
  Environment env;
  Resource res(env, 1);
  std::vector<std::string> log;
  env.process([&] {
    auto r = res.acquire();
    env.hold(seconds(5));
  });
  env.process([&] {
    auto r = res.request();
    // Give up after 1 s.
    const auto idx = any_of(env, {r.event(), env.timeout(seconds(1))}).wait();
    EXPECT_EQ(idx, 1u);
    log.push_back("gave up");
  });  // r withdrawn here
  env.process([&] {
    env.hold(seconds(2));
    auto r = res.acquire();
    log.push_back("third at " + std::to_string(static_cast<int>(env.now_seconds())));
  });
  env.run();
  EXPECT_EQ(log, (std::vector<std::string>{"gave up", "third at 5"}));
}

TEST(PriorityResource, LowerPriorityValuesGoFirstTiesFifo) {
  Environment env;
  PriorityResource res(env, 1);
  std::vector<std::string> order;
  env.process([&] {
    auto r = res.acquire(0);
    env.hold(seconds(1));
  });
  auto user = [&](const std::string& name, int prio) {
    env.process([&, name, prio] {
      auto r = res.acquire(prio);
      order.push_back(name);
      env.hold(seconds(1));
    });
  };
  user("low-a", 5);
  user("high", 1);
  user("low-b", 5);
  user("mid", 3);
  env.run();
  EXPECT_EQ(order, (std::vector<std::string>{"high", "mid", "low-a", "low-b"}));
}
