// Classic queueing models against their closed forms: the layer's timing, FIFO and resource
// semantics are right if long runs reproduce the analytical mean waiting time.
#include <gtest/gtest.h>

#include <cmath>

#include "sc_modules/sim/sim.hpp"
#include "base/util/rng.hpp"

using namespace ks::sim;

namespace {

// Erlang C: probability that an arrival waits in an M/M/c queue, offered load a = lambda/mu.
double erlang_c(int c, double a) {
  double term = 1.0, sum = 1.0;  // k = 0
  for (int k = 1; k < c; ++k) {
    term *= a / k;
    sum += term;
  }
  const double last = term * a / c;  // a^c / c!
  const double rho = a / c;
  const double top = last / (1.0 - rho);
  return top / (sum + top);
}

// Mean waiting time in queue of an M/M/c system, simulated with a Resource of c servers.
// Customers are data handed through a Store, served by c server processes (no thread per
// customer, as the product's own components do).
double simulate_mmc_wait(int servers, double lambda, double mu, int customers, std::uint64_t seed) {
  Environment env;
  Store<double> line(env);  // arrival times
  ks::util::Rng arrivals(seed), service(seed + 1);
  double total_wait = 0;
  int served = 0;
  env.process([&] {
    for (int i = 0; i < customers; ++i) {
      env.hold(seconds(arrivals.exponential(lambda)));
      line.put(env.now_seconds());
    }
  });
  Resource desk(env, static_cast<std::size_t>(servers));
  for (int s = 0; s < servers; ++s) {
    env.process([&] {
      for (;;) {
        const double arrived = line.get();
        auto slot = desk.acquire();
        total_wait += env.now_seconds() - arrived;
        ++served;
        env.hold(seconds(service.exponential(mu)));
      }
    });
  }
  env.run();
  EXPECT_EQ(served, customers);
  return total_wait / served;
}

}  // namespace

// M/M/1 at rho = 0.5: Wq = rho / (mu - lambda) = 1.0. With 200k customers the standard error of
// the mean wait is about 1%; the 5% tolerance is ~4 standard errors.
TEST(Queueing, MM1MeanWaitMatchesTheory) {
  const double lambda = 0.5, mu = 1.0;
  const double expected = (lambda / mu) / (mu - lambda);
  const double measured = simulate_mmc_wait(1, lambda, mu, 200000, 2024);
  EXPECT_NEAR(measured, expected, 0.05 * expected) << "measured " << measured;
}

// M/M/3 at rho = 0.7 (a bank with three tellers): Wq = C(3, a) / (c mu - lambda).
TEST(Queueing, MM3MeanWaitMatchesErlangC) {
  const int c = 3;
  const double lambda = 2.1, mu = 1.0;
  const double expected = erlang_c(c, lambda / mu) / (c * mu - lambda);
  const double measured = simulate_mmc_wait(c, lambda, mu, 200000, 7);
  EXPECT_NEAR(measured, expected, 0.06 * expected) << "measured " << measured << " expected " << expected;
}
