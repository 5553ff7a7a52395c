#include "sc_modules/sim/environment.hpp"

#include "base/config/error.hpp"
#include "sc_modules/sim/sanitizer_stack_switch.hpp"

#include <stdexcept>

namespace ks::sim {
namespace {
Environment* g_current = nullptr;
}  // namespace

// ---------------------------------------------------------------- events
namespace detail {

void EventCore::trigger(int priority) {
  state = State::Triggered;
  env->schedule_event(env->now(), priority, shared_from_this());
}

void EventCore::process() {
  state = State::Processed;
  auto pending = std::move(callbacks);
  callbacks.clear();
  for (auto& callback : pending) callback(*this);
}

void EventCore::wait_processed() {
  if (state != State::Processed) {
    ProcessCore* self = env->active_process();
    if (self == nullptr) {
      // A plain SystemC thread: poll the agenda's progress through SystemC events.
      sc_core::sc_event done;
      callbacks.emplace_back([&done](EventCore&) { done.notify(); });
      sc_core::wait(done);
    } else {
      callbacks.emplace_back([self](EventCore& e) { e.env->resume(self); });
      env->suspend(self);
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace detail

void EventRef::on_processed(std::function<void(detail::EventCore&)> fn) const {
  if (processed())
    fn(*core_);
  else
    core_->callbacks.push_back(std::move(fn));
}

// ---------------------------------------------------------------- environment
Environment::Environment(const sc_core::sc_module_name& name) : sc_core::sc_module(name) {
  if (g_current != nullptr) throw std::logic_error("only one ks::sim::Environment per process");
  if (sc_core::sc_get_time_resolution().value() != 1 || sc_core::sc_get_time_resolution().to_seconds() > 1.5e-12)
    throw std::logic_error("SystemC time resolution must be 1 ps: call ks::sim::setup_kernel() first");
  g_current = this;
  SC_HAS_PROCESS(Environment);
  SC_THREAD(dispatcher);
}

Environment::~Environment() {
  if (g_current == this) g_current = nullptr;
}

Environment& Environment::current() {
  if (g_current == nullptr) throw std::logic_error("no ks::sim::Environment has been created");
  return *g_current;
}

void Environment::push(Item item) {
  item.seq = next_seq_++;
  insert(std::move(item));
}

void Environment::insert(Item item) {
  const bool earliest = agenda_.empty() || Later{}(agenda_.top(), item);
  // A process sleeping in hold() without an agenda item must wake before anything due earlier.
  if (sleeper_ != nullptr && !sleeper_->interrupted && Later{}(*sleeper_->wake, item)) {
    sleeper_->interrupted = true;
    sleeper_->wake->process->resume.notify();
  }
  agenda_.push(std::move(item));
  // The dispatcher sleeps until its earliest item; an earlier one must wake it.
  if (idle_ && earliest) wakeup_.notify();
}

void Environment::schedule(const Time& at, int priority, std::function<void()> action) {
  Item item{at, priority, 0, Item::Kind::Action, nullptr, nullptr, std::move(action)};
  push(std::move(item));
}

void Environment::schedule_event(const Time& at, int priority,
                                 std::shared_ptr<detail::EventCore> event) {
  Item item{at, priority, 0, Item::Kind::Event, nullptr, std::move(event), {}};
  push(std::move(item));
}

detail::ProcessCore* Environment::active_process() {
  if (running_ != nullptr && running_->handle == sc_core::sc_get_current_process_handle())
    return running_;
  return nullptr;
}

Process Environment::process(std::function<void()> body, const std::string& name,
                             const ProcessOptions& options) {
  auto core = std::make_shared<detail::ProcessCore>();
  core->env = this;
  core->name = name.empty() ? "process_" + std::to_string(next_seq_) : name;
  core->body = std::move(body);
  core->done = std::make_shared<detail::EventCore>(*this);

  sc_core::sc_spawn_options spawn;
  spawn.dont_initialize();
  spawn.set_sensitivity(&core->resume);  // first resume starts the body
  if (options.stack_bytes != 0) spawn.set_stack_size(static_cast<int>(options.stack_bytes));
  // The thread's functor keeps the core alive for as long as SystemC keeps the thread.
  // SystemC object names may not contain '.', which our hierarchical process names use.
  std::string sc_name = "ks_" + core->name;
  for (char& c : sc_name)
    if (c == '.' || c == ' ') c = '_';
  core->handle = sc_core::sc_spawn([this, core] { run_process(core.get()); },
                                   sc_core::sc_gen_unique_name(sc_name.c_str()), &spawn);
  Item item{now(), kUrgent, 0, Item::Kind::Resume, core.get(), nullptr, {}};
  push(std::move(item));
  return Process(core);
}

void Environment::run_process(detail::ProcessCore* process) {
  running_ = process;
  try {
    process->body();
  } catch (...) {
    if (!failure_) {
      failure_ = std::current_exception();
      failed_process_ = process->name;
    }
    process->done->error = std::current_exception();
    stop();
  }
  process->finished = true;
  // Drop our handle so SystemC can reclaim the finished thread (the handle would otherwise keep
  // the thread object, and with it this core, alive forever).
  process->handle = sc_core::sc_process_handle();
  process->done->trigger(kNormal);
  if (process->has_baton) {
    process->has_baton = false;
    yielded_.notify();
  }
}

Event<void> Environment::timeout(const Time& delay, int priority) {
  Event<void> event(*this);
  event.core()->state = detail::EventCore::State::Triggered;
  schedule_event(now() + delay, priority, event.core());
  return event;
}

void Environment::hold(const Time& delay) {
  detail::ProcessCore* self = active_process();
  if (self == nullptr) {
    sc_core::wait(delay);
    return;
  }
  Item wake{now() + delay, kNormal, next_seq_++, Item::Kind::Resume, self, nullptr, {}};
  // The dispatcher would resume this process next anyway (nothing is due before it, and the
  // process holds the baton, so the dispatcher is waiting for it): sleep in SystemC directly and
  // keep the baton, without an agenda item and two thread switches through the dispatcher.
  // Anything scheduled meanwhile that is due first interrupts the sleep (insert()); the process
  // then takes the ordinary path with the same sequence number, so ties order as before.
  if (self->has_baton && !stop_requested_ && (agenda_.empty() || Later{}(agenda_.top(), wake))) {
    Sleeper sleeper{&wake, false};
    sleeper_ = &sleeper;
    sc_core::wait(delay, self->resume);
    sleeper_ = nullptr;
    running_ = self;
    if (!sleeper.interrupted) {
      ++items_executed_;
      return;
    }
  }
  insert(std::move(wake));
  suspend(self);
}

void Environment::suspend(detail::ProcessCore* process) {
  if (process->has_baton) {
    process->has_baton = false;
    yielded_.notify();  // immediate: the dispatcher continues in this evaluation phase
  }
  sc_core::wait(process->resume);
  running_ = process;
}

void Environment::resume(detail::ProcessCore* process) {
  if (process->finished) return;
  running_ = process;
  process->has_baton = true;
  process->resume.notify();  // immediate
  while (process->has_baton) {
    if (agenda_.empty()) {
      sc_core::wait(yielded_);
    } else {
      // Detach a process stuck in a plain SystemC wait once other work falls due.
      const Time due = agenda_.top().at > now() ? agenda_.top().at - now() : sc_core::SC_ZERO_TIME;
      sc_core::wait(due, yielded_);
      if (process->has_baton && now() >= agenda_.top().at) process->has_baton = false;
    }
  }
  running_ = nullptr;
}

void Environment::execute(Item& item) {
  ++items_executed_;
  switch (item.kind) {
    case Item::Kind::Resume:
      resume(item.process);
      break;
    case Item::Kind::Event:
      item.event->process();
      break;
    case Item::Kind::Action:
      item.action();
      break;
    case Item::Kind::Stop:
      stop_requested_ = true;
      break;
  }
}

void Environment::dispatcher() {
  for (;;) {
    if (stop_requested_) {
      stop_requested_ = false;
      sc_core::sc_pause();
      sc_core::wait(sc_core::SC_ZERO_TIME);  // sc_start returns here; the next run continues
      continue;
    }
    if (agenda_.empty()) {
      idle_ = true;
      sc_core::wait(wakeup_);
      idle_ = false;
      continue;
    }
    if (agenda_.top().at > now()) {
      idle_ = true;
      sc_core::wait(agenda_.top().at - now(), wakeup_);
      idle_ = false;
      continue;
    }
    Item item = agenda_.top();
    agenda_.pop();
    execute(item);
  }
}

void Environment::stop() { stop_requested_ = true; }

void Environment::rethrow_failure() {
  if (!failure_) return;
  std::exception_ptr failure = failure_;
  failure_ = nullptr;
  try {
    std::rethrow_exception(failure);
  } catch (const config::ConfigError&) {
    throw;  // bad input found while running (a request too long for the KV cache): report it as such
  } catch (const std::exception& e) {
    throw std::runtime_error("process '" + failed_process_ + "' failed: " + e.what());
  }
}

void Environment::run() {
  sc_core::sc_start();
  resync_sanitizer_stack_after_simulation();
  rethrow_failure();
}

void Environment::run(const Time& until) {
  if (until < now()) throw std::invalid_argument("Environment::run: until lies in the past");
  Item item{until, kUrgent - 1, 0, Item::Kind::Stop, nullptr, nullptr, {}};
  push(std::move(item));
  sc_core::sc_start();
  resync_sanitizer_stack_after_simulation();
  rethrow_failure();
}

}  // namespace ks::sim
