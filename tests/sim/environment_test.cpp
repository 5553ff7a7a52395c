// The SimPy-style environment: time, processes, events with values, conditions, ordering.
// Each test runs in its own process (SystemC elaborates once per process).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "sc_modules/sim/sim.hpp"

using namespace ks::sim;

TEST(Environment, HoldAdvancesTime) {
  Environment env;
  std::vector<double> seen;
  env.process([&] {
    seen.push_back(env.now_seconds());
    env.hold(seconds(1.5));
    seen.push_back(env.now_seconds());
    env.timeout(milliseconds(250)).wait();
    seen.push_back(env.now_seconds());
  });
  env.run();
  EXPECT_EQ(seen, (std::vector<double>{0.0, 1.5, 1.75}));
  EXPECT_DOUBLE_EQ(env.now_seconds(), 1.75);
}

TEST(Environment, RunUntilStopsBeforeItemsAtThatTimeAndCanContinue) {
  Environment env;
  std::vector<int> ticks;
  env.process([&] {
    for (int i = 1; i <= 5; ++i) {
      env.hold(seconds(1));
      ticks.push_back(i);
    }
  });
  env.run(seconds(3));
  EXPECT_EQ(ticks, (std::vector<int>{1, 2}));
  EXPECT_DOUBLE_EQ(env.now_seconds(), 3.0);
  env.run();
  EXPECT_EQ(ticks, (std::vector<int>{1, 2, 3, 4, 5}));
}

TEST(Environment, EventsCarryValuesToEveryWaiterInWaitingOrder) {
  Environment env;
  Event<std::string> signal = env.event<std::string>();
  std::vector<std::string> log;
  for (int i = 0; i < 3; ++i) {
    env.process([&, i] { log.push_back(std::to_string(i) + ":" + signal.wait()); });
  }
  env.process([&] {
    env.hold(seconds(2));
    signal.succeed("go");
  });
  env.run();
  EXPECT_EQ(log, (std::vector<std::string>{"0:go", "1:go", "2:go"}));
  EXPECT_EQ(signal.value(), "go");
  EXPECT_THROW(signal.succeed("again"), std::logic_error);
}

TEST(Environment, WaitingOnAProcessedEventReturnsAtOnce) {
  Environment env;
  Event<int> e = env.event<int>();
  double when = -1;
  env.process([&] { e.succeed(7); });
  env.process([&] {
    env.hold(seconds(1));
    EXPECT_EQ(e.wait(), 7);
    when = env.now_seconds();
  });
  env.run();
  EXPECT_DOUBLE_EQ(when, 1.0);
}

TEST(Environment, SameTimeTiesFollowPriorityThenSchedulingOrder) {
  Environment env;
  std::vector<std::string> order;
  // Timeouts at the same instant: urgent before normal, then in the order they were scheduled.
  env.process([&] {
    Event<void> a = env.timeout(seconds(1), kNormal);
    Event<void> b = env.timeout(seconds(1), kUrgent);
    Event<void> c = env.timeout(seconds(1), kNormal);
    a.on_processed([&](auto&) { order.push_back("a"); });
    b.on_processed([&](auto&) { order.push_back("b"); });
    c.on_processed([&](auto&) { order.push_back("c"); });
  });
  // Processes woken at the same time resume in the order they went to sleep.
  for (int i = 0; i < 4; ++i) {
    env.process([&, i] {
      env.hold(seconds(2));
      order.push_back("p" + std::to_string(i));
    });
  }
  env.run();
  EXPECT_EQ(order, (std::vector<std::string>{"b", "a", "c", "p0", "p1", "p2", "p3"}));
}

TEST(Environment, AProcessIsAnEventAndFailuresReachTheWaiter) {
  Environment env;
  bool joined = false;
  Process worker = env.process([&] { env.hold(seconds(3)); }, "worker");
  env.process([&] {
    worker.wait();
    joined = true;
    EXPECT_DOUBLE_EQ(env.now_seconds(), 3.0);
  });
  env.run();
  EXPECT_TRUE(joined);
  EXPECT_TRUE(worker.finished());
  EXPECT_EQ(worker.name(), "worker");
}

TEST(Environment, AnUnhandledProcessFailureStopsTheRun) {
  Environment env;
  int later = 0;
  env.process([&] {
    env.hold(seconds(1));
    throw std::runtime_error("boom");
  }, "faulty");
  env.process([&] {
    env.hold(seconds(5));
    later = 1;
  });
  try {
    env.run();
    FAIL() << "expected the failure to propagate";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("faulty"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("boom"), std::string::npos) << e.what();
  }
  EXPECT_EQ(later, 0);
  EXPECT_DOUBLE_EQ(env.now_seconds(), 1.0);
}

TEST(Environment, AllOfWaitsForEveryEvent) {
  Environment env;
  double done_at = -1;
  env.process([&] {
    all_of(env, {env.timeout(seconds(1)), env.timeout(seconds(4)), env.timeout(seconds(2))}).wait();
    done_at = env.now_seconds();
  });
  env.run();
  EXPECT_DOUBLE_EQ(done_at, 4.0);
}

TEST(Environment, AnyOfReturnsTheFirstEventsIndex) {
  Environment env;
  std::size_t first = 99;
  double at = -1;
  env.process([&] {
    first = any_of(env, {env.timeout(seconds(3)), env.timeout(seconds(1)), env.timeout(seconds(2))}).wait();
    at = env.now_seconds();
  });
  env.run();
  EXPECT_EQ(first, 1u);
  EXPECT_DOUBLE_EQ(at, 1.0);
}

TEST(Environment, AllOfFailsWithTheFirstFailure) {
  Environment env;
  Event<void> bad = env.event();
  std::string caught;
  env.process([&] {
    try {
      all_of(env, {env.timeout(seconds(2)), bad}).wait();
    } catch (const std::exception& e) {
      caught = e.what();
    }
  });
  env.process([&] {
    env.hold(seconds(1));
    bad.fail(std::make_exception_ptr(std::runtime_error("link down")));
  });
  env.run();
  EXPECT_EQ(caught, "link down");
}

TEST(Environment, ManyShortProcessesDoNotAccumulate) {
  // Per-component threads are the rule, but short-lived processes must still be reclaimed.
  Environment env;
  int finished = 0;
  env.process([&] {
    for (int i = 0; i < 20000; ++i) {
      env.process([&] {
        env.hold(microseconds(1));
        ++finished;
      }).wait();
    }
  });
  env.run();
  EXPECT_EQ(finished, 20000);
}

TEST(Environment, PlainSystemCThreadsCanUseEnvironmentEvents) {
  // A co-simulated SystemC module (not an environment process) waits on our events.
  struct Foreign : sc_core::sc_module {
    Event<int> in;
    int got = 0;
    double at = -1;
    SC_HAS_PROCESS(Foreign);
    Foreign(sc_core::sc_module_name n, Event<int> e) : sc_core::sc_module(n), in(e) { SC_THREAD(body); }
    void body() {
      got = in.wait();
      at = sc_core::sc_time_stamp().to_seconds();
    }
  };
  Environment env;
  Event<int> e = env.event<int>();
  Foreign foreign("foreign", e);
  env.process([&] {
    env.hold(seconds(2));
    e.succeed(11);
  });
  env.run();
  EXPECT_EQ(foreign.got, 11);
  EXPECT_DOUBLE_EQ(foreign.at, 2.0);
}

// A process that holds while nothing else is due sleeps without an agenda item (the fast path of
// hold). Work that a plain SystemC thread schedules meanwhile must still run at its own time.
struct ForeignAtOneSecond : sc_core::sc_module {
  std::function<void()> at_one_second;
  SC_HAS_PROCESS(ForeignAtOneSecond);
  ForeignAtOneSecond(sc_core::sc_module_name n, std::function<void()> fn) : sc_core::sc_module(n), at_one_second(std::move(fn)) {
    SC_THREAD(body);
  }
  void body() {
    sc_core::wait(1, sc_core::SC_SEC);
    at_one_second();
  }
};

TEST(Environment, AHoldingProcessLetsEarlierWorkFromAPlainSystemCThreadRunFirst) {
  Environment env;
  std::vector<std::string> log;
  auto stamp = [&](const std::string& what) { log.push_back(what + "@" + std::to_string(env.now_seconds())); };
  Event<int> e = env.event<int>();
  ForeignAtOneSecond foreign("foreign", [&] { e.succeed(1); });  // at 1 s, from outside any process
  env.process([&] {
    e.wait();
    stamp("woken");
    env.hold(seconds(2));
    stamp("woken+2");
  });
  env.process([&] {
    env.hold(seconds(10));  // the only thing due: sleeps on its own
    stamp("holder");
  });
  env.run();
  EXPECT_EQ(log, (std::vector<std::string>{"woken@1.000000", "woken+2@3.000000", "holder@10.000000"}));
}

TEST(Environment, AHoldingProcessKeepsItsPlaceAmongSameTimeItemsScheduledWhileItSleeps) {
  Environment env;
  std::vector<std::string> order;
  ForeignAtOneSecond foreign("foreign", [&] {
    // Due when the holder wakes: urgent goes first, normal after the holder (scheduled later).
    env.timeout(seconds(4), kNormal).on_processed([&](auto&) { order.push_back("normal"); });
    env.timeout(seconds(4), kUrgent).on_processed([&](auto&) { order.push_back("urgent"); });
  });
  env.process([&] {
    env.hold(seconds(5));
    order.push_back("holder");
    env.hold(seconds(1));
    order.push_back("holder again");
  });
  env.run();
  EXPECT_EQ(order, (std::vector<std::string>{"urgent", "holder", "normal", "holder again"}));
  EXPECT_DOUBLE_EQ(env.now_seconds(), 6.0);
}
