#pragma once
// The SimPy-style environment on SystemC.
//
// Processes are SystemC threads (stackful coroutines), so a process body is ordinary sequential
// code: `env.hold(dt)`, `event.wait()`, `store.get()`. Ordering is made deterministic by one
// dispatcher thread that owns an agenda ordered by (time, priority, sequence): it resumes one
// process at a time and waits until that process blocks again on an environment primitive, so
// same-time ties never depend on SystemC's unspecified process order.
//
// A process that blocks in plain SystemC (a foreign module's b_transport calling wait()) is
// detached when the next agenda item falls due and rejoins at its next environment call.
#include <cstdint>
#include <exception>
#include <functional>
#include <queue>
#include <string>
#include <vector>

#include <systemc>

#include "sc_modules/sim/event.hpp"
#include "sc_modules/sim/time.hpp"

namespace ks::sim {

class Environment;

namespace detail {
struct ProcessCore {
  Environment* env = nullptr;
  std::string name;
  std::function<void()> body;
  sc_core::sc_event resume;
  sc_core::sc_process_handle handle;
  bool has_baton = false;  // the dispatcher is waiting for this process to block
  bool finished = false;
  std::shared_ptr<EventCore> done;
};
}  // namespace detail

// A running process; it is also an event that is processed when the body returns (or fails).
class Process : public Event<void> {
 public:
  Process() = default;
  explicit Process(std::shared_ptr<detail::ProcessCore> core)
      : Event<void>(core->done), process_(std::move(core)) {}
  const std::string& name() const { return process_->name; }
  bool finished() const { return process_->finished; }

 private:
  std::shared_ptr<detail::ProcessCore> process_;
};

struct ProcessOptions {
  std::size_t stack_bytes = 0;  // 0: SystemC's default (256 KiB with QuickThreads)
};

class Environment : public sc_core::sc_module {
 public:
  explicit Environment(const sc_core::sc_module_name& name = "env");
  ~Environment() override;

  // The environment of this simulation (one per process: SystemC elaborates once).
  static Environment& current();

  Time now() const { return sc_core::sc_time_stamp(); }
  double now_seconds() const { return to_seconds(now()); }

  // Starts body as a process at the current time (after already scheduled same-time items).
  Process process(std::function<void()> body, const std::string& name = "",
                  const ProcessOptions& options = {});

  // An event processed `delay` from now.
  Event<void> timeout(const Time& delay, int priority = kNormal);
  // A new pending event.
  template <class T = void>
  Event<T> event() { return Event<T>(*this); }
  // The calling process sleeps for `delay`: timeout(delay).wait() without allocating an event.
  // Called from a plain SystemC thread (not an environment process) it is a SystemC wait. When
  // nothing else is due first, the process sleeps in SystemC without going through the agenda
  // and the dispatcher (same order, two thread switches fewer; see the .cpp).
  void hold(const Time& delay);

  // Runs until nothing is scheduled.
  void run();
  // Runs until simulated time `until` (items at exactly `until` are not executed) or until
  // nothing is scheduled, whichever comes first.
  void run(const Time& until);
  // Stops the current run() after the running item; run() may be called again later.
  void stop();
  // Whether anything is still scheduled (false once a run has drained the agenda).
  bool pending() const { return !agenda_.empty(); }

  std::uint64_t items_executed() const { return items_executed_; }

  // ---- used by the primitives (events, resources, stores) ----
  void schedule(const Time& at, int priority, std::function<void()> action);
  void schedule_event(const Time& at, int priority, std::shared_ptr<detail::EventCore> event);
  // The process calling into the environment, or nullptr for a plain SystemC thread.
  detail::ProcessCore* active_process();
  // Blocks the calling process until the dispatcher resumes it.
  void suspend(detail::ProcessCore* process);
  // Resumes a suspended process (called from agenda items; returns once it blocks again).
  void resume(detail::ProcessCore* process);

 private:
  struct Item {
    Time at;
    int priority;
    std::uint64_t seq;
    enum class Kind { Resume, Event, Action, Stop } kind;
    detail::ProcessCore* process = nullptr;
    std::shared_ptr<detail::EventCore> event;
    std::function<void()> action;
  };
  struct Later {
    bool operator()(const Item& a, const Item& b) const {
      if (a.at != b.at) return a.at > b.at;
      if (a.priority != b.priority) return a.priority > b.priority;
      return a.seq > b.seq;
    }
  };

  // A process sleeping in hold() without an agenda item (see hold()).
  struct Sleeper {
    const Item* wake;  // the item it would have had
    bool interrupted;
  };

  void push(Item item);     // assigns the next sequence number
  void insert(Item item);   // keeps item.seq
  void dispatcher();
  void execute(Item& item);
  void run_process(detail::ProcessCore* process);
  void rethrow_failure();

  std::priority_queue<Item, std::vector<Item>, Later> agenda_;
  std::uint64_t next_seq_ = 0;
  std::uint64_t items_executed_ = 0;
  sc_core::sc_event wakeup_;    // something was scheduled while the dispatcher idled
  sc_core::sc_event yielded_;   // the running process blocked or finished
  bool idle_ = false;
  bool stop_requested_ = false;
  detail::ProcessCore* running_ = nullptr;
  Sleeper* sleeper_ = nullptr;
  std::exception_ptr failure_;
  std::string failed_process_;
};

}  // namespace ks::sim
