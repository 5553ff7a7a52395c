#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sc_modules/sim/sim.hpp"

using namespace ks::sim;

TEST(Store, GetBlocksUntilAnItemArrivesAndKeepsFifoOrder) {
  Environment env;
  Store<int> box(env);
  std::vector<std::pair<int, double>> got;
  env.process([&] {
    for (int i = 0; i < 3; ++i) {
      const int item = box.get();
      got.emplace_back(item, env.now_seconds());
    }
  });
  env.process([&] {
    env.hold(seconds(1));
    box.put(10);
    box.put(20);
    env.hold(seconds(1));
    box.put(30);
  });
  env.run();
  std::vector<std::pair<int, double>> expected{{10, 1}, {20, 1}, {30, 2}};
  EXPECT_EQ(got, expected);
}

TEST(Store, PutBlocksWhileFull) {
  Environment env;
  Store<std::string> box(env, 2);
  std::vector<double> put_times;
  env.process([&] {
    for (int i = 0; i < 4; ++i) {
      box.put("item" + std::to_string(i));
      put_times.push_back(env.now_seconds());
    }
  });
  env.process([&] {
    env.hold(seconds(5));
    EXPECT_EQ(box.size(), 2u);
    EXPECT_EQ(box.get(), "item0");
    env.hold(seconds(1));
    EXPECT_EQ(box.get(), "item1");
  });
  env.run();
  EXPECT_EQ(put_times, (std::vector<double>{0, 0, 5, 6}));
}

TEST(Store, CancelledGetDoesNotSwallowAnItem) {
  Environment env;
  Store<int> box(env);
  int later = -1;
  env.process([&] {
    Event<int> get = box.get_event();
    const auto idx = any_of(env, {get, env.timeout(seconds(1))}).wait();
    EXPECT_EQ(idx, 1u);
    box.cancel(get);
    env.hold(seconds(2));
    later = box.get();
  });
  env.process([&] {
    env.hold(seconds(2));
    box.put(5);
  });
  env.run();
  EXPECT_EQ(later, 5);
  EXPECT_TRUE(box.empty());
}

TEST(Container, LevelsAndBlockingAmounts) {
  Environment env;
  Container tank(env, 100.0, 30.0);
  std::vector<std::string> log;
  env.process([&] {
    tank.get(50.0);  // waits for the refill at t=2
    log.push_back("got 50 at " + std::to_string(static_cast<int>(env.now_seconds())));
  });
  env.process([&] {
    env.hold(seconds(2));
    tank.put(40.0);
    log.push_back("put 40, level " + std::to_string(static_cast<int>(tank.level())));
    tank.put(90.0);  // needs room: waits until someone takes
    log.push_back("put 90 at " + std::to_string(static_cast<int>(env.now_seconds())));
  });
  env.process([&] {
    env.hold(seconds(4));
    tank.get(20.0);
  });
  env.run();
  // 30 + 40 = 70 serves the pending get of 50 at once (level 20); 20 + 90 > 100 until the get
  // of 20 at t=4 empties the tank.
  EXPECT_EQ(log, (std::vector<std::string>{"put 40, level 20", "got 50 at 2", "put 90 at 4"}));
  EXPECT_DOUBLE_EQ(tank.level(), 90.0);
  EXPECT_THROW(tank.get(101.0), std::invalid_argument);
  EXPECT_THROW(tank.put(-1.0), std::invalid_argument);
}

// try_get takes at once or not at all, and never jumps a get that waits before it.
TEST(Container, TryGetTakesOnlyWhatIsThereAndNeverJumpsTheQueue) {
  Environment env;
  Container slots(env, 2.0, 2.0);
  std::vector<std::string> log;
  env.process([&] {
    EXPECT_TRUE(slots.try_get(1.0));
    EXPECT_TRUE(slots.try_get(1.0));
    EXPECT_FALSE(slots.try_get(1.0));  // empty: nothing taken
    EXPECT_DOUBLE_EQ(slots.level(), 0.0);
    slots.get(2.0);  // waits for both to come back
    log.push_back("got 2 at " + std::to_string(static_cast<int>(env.now_seconds())));
  });
  env.process([&] {
    env.hold(seconds(1));
    slots.put(1.0);
    EXPECT_FALSE(slots.try_get(1.0)) << "the get of 2 waits first";
    EXPECT_DOUBLE_EQ(slots.level(), 1.0);
    env.hold(seconds(1));
    slots.put(1.0);
  });
  env.run();
  EXPECT_EQ(log, (std::vector<std::string>{"got 2 at 2"}));
  EXPECT_THROW(slots.try_get(3.0), std::invalid_argument);
}

// A try_get that makes room lets a waiting put in.
TEST(Container, TryGetAdmitsAWaitingPut) {
  Environment env;
  Container tank(env, 10.0, 10.0);
  double put_at = -1;
  env.process([&] {
    tank.put(4.0);  // full: waits
    put_at = env.now_seconds();
  });
  env.process([&] {
    env.hold(seconds(3));
    EXPECT_TRUE(tank.try_get(5.0));
  });
  env.run();
  EXPECT_DOUBLE_EQ(put_at, 3.0);
  EXPECT_DOUBLE_EQ(tank.level(), 9.0);
}
