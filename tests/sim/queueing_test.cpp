// Classic queueing models against their closed forms: the layer's timing, FIFO and resource
// semantics are right if long runs reproduce the analytical mean waiting time.
#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <list>
#include <vector>

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

namespace {

// A customer as data: when it came, its class and its request for the server. Customers never
// get a process of their own; callbacks on their events move them along.
struct Customer {
  int cls;
  double arrived;
  Request slot;
};

}  // namespace

// Non-preemptive priority M/M/1 with two classes (PriorityResource): Cobham's formula gives the
// mean wait of class k as W0 / ((1 - sigma_{k-1}) (1 - sigma_k)), with W0 = sum_i lambda_i E[S^2] / 2
// and sigma_k the load of classes 1..k. At lambda = 0.3 + 0.4, mu = 1: W0 = 0.7, Wq1 = 1.0,
// Wq2 = 3.33 (FIFO would give both 2.33).
TEST(Queueing, PriorityMM1MeanWaitsMatchCobham) {
  const double lambda[2] = {0.3, 0.4}, mu = 1.0;
  const double w0 = (lambda[0] + lambda[1]) / (mu * mu);
  const double sigma1 = lambda[0] / mu, sigma2 = (lambda[0] + lambda[1]) / mu;
  const double expected[2] = {w0 / (1.0 - sigma1), w0 / ((1.0 - sigma1) * (1.0 - sigma2))};

  Environment env;
  PriorityResource server(env, 1);
  ks::util::Rng arrivals(31), classes(32), service(33);
  std::list<Customer> in_system;
  double total_wait[2] = {0, 0};
  int served[2] = {0, 0};
  const int customers = 200000;
  env.process([&] {
    for (int i = 0; i < customers; ++i) {
      env.hold(seconds(arrivals.exponential(lambda[0] + lambda[1])));
      const int cls = classes.uniform() < lambda[0] / (lambda[0] + lambda[1]) ? 0 : 1;
      in_system.push_back({cls, env.now_seconds(), server.request(cls)});
      const auto it = std::prev(in_system.end());
      it->slot.event().on_processed([&, it](auto&) {
        total_wait[it->cls] += env.now_seconds() - it->arrived;
        ++served[it->cls];
        env.schedule(env.now() + seconds(service.exponential(mu)), kNormal, [&, it] { in_system.erase(it); });
      });
    }
  });
  env.run();
  ASSERT_EQ(served[0] + served[1], customers);
  EXPECT_TRUE(in_system.empty());
  for (int k = 0; k < 2; ++k) {
    const double measured = total_wait[k] / served[k];
    EXPECT_NEAR(measured, expected[k], 0.06 * expected[k]) << "class " << k + 1 << " measured " << measured;
  }
}

// M/M/1 with impatient customers (M/M/1+M, Erlang-A with one server): a waiting customer leaves
// after an exponential patience (rate theta), raced with any_of against its grant. The number in
// system is a birth-death chain (births lambda, deaths mu + (n - 1) theta), so the fraction that
// abandons is sum_n pi_n (n - 1) theta / lambda. At lambda = mu = 1 (a load that only abandonment
// keeps stable), theta = 0.5.
TEST(Queueing, ImpatientCustomersAbandonAsErlangA) {
  const double lambda = 1.0, mu = 1.0, theta = 0.5;
  std::vector<double> pi{1.0};
  for (int n = 1; n < 200; ++n) pi.push_back(pi.back() * lambda / (mu + (n - 1) * theta));
  double total = 0, abandon_rate = 0;
  for (std::size_t n = 0; n < pi.size(); ++n) {
    total += pi[n];
    if (n >= 1) abandon_rate += pi[n] * static_cast<double>(n - 1) * theta;
  }
  const double expected = abandon_rate / total / lambda;

  Environment env;
  Resource server(env, 1);
  ks::util::Rng arrivals(41), patience(42), service(43);
  std::list<Customer> in_system;
  int served = 0, abandoned = 0;
  const int customers = 200000;
  env.process([&] {
    for (int i = 0; i < customers; ++i) {
      env.hold(seconds(arrivals.exponential(lambda)));
      in_system.push_back({0, env.now_seconds(), server.request()});
      const auto it = std::prev(in_system.end());
      any_of(env, {it->slot.event(), env.timeout(seconds(patience.exponential(theta)))})
          .on_processed([&, it](auto&) {
            if (!it->slot.granted()) {  // out of patience: withdraw the request and leave
              ++abandoned;
              in_system.erase(it);
              return;
            }
            ++served;
            env.schedule(env.now() + seconds(service.exponential(mu)), kNormal, [&, it] { in_system.erase(it); });
          });
    }
  });
  env.run();
  ASSERT_EQ(served + abandoned, customers);
  EXPECT_TRUE(in_system.empty());
  const double measured = static_cast<double>(abandoned) / customers;
  EXPECT_NEAR(measured, expected, 0.03 * expected) << "measured " << measured << " expected " << expected;
}
