// Debian's SystemC 2.3.4 announces its QuickThreads coroutine switches to AddressSanitizer through
// weak references to __sanitizer_start_switch_fiber / __sanitizer_finish_switch_fiber, but
//  * a switch back to the main coroutine passes a null stack (SystemC never learnt the main
//    stack's bounds), and
//  * the last switch back to the main coroutine when sc_start() returns is not announced at all.
// ASan then believes the main thread runs on a coroutine's (or a null) stack, ignores the stack
// cleanup it does when an exception is thrown ("ASan is ignoring requested
// __asan_handle_no_return") and reports stale poison as stack-use-after-scope or
// stack-buffer-overflow. In ASan builds this file interposes the start hook (the executable's
// definition comes before libasan's in symbol lookup) to substitute the thread's real stack for a
// null one, and re-announces that stack after every sc_start(). docs/reliability.md.
#include "sc_modules/sim/sanitizer_stack_switch.hpp"

// GCC defines __SANITIZE_ADDRESS__ under -fsanitize=address; older Clang only has the feature test.
#if defined(__SANITIZE_ADDRESS__)
#define KS_ASAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KS_ASAN_BUILD 1
#endif
#endif

#if defined(KS_ASAN_BUILD)

#include <dlfcn.h>
#include <pthread.h>

#include <cstddef>

namespace {

using StartSwitch = void (*)(void**, const void*, std::size_t);
using FinishSwitch = void (*)(void*, const void**, std::size_t*);

struct ThreadStack {
  const void* bottom = nullptr;
  std::size_t size = 0;
};

// The simulating thread's own stack, read once: the first switch always starts from it.
const ThreadStack& simulating_thread_stack() {
  static const ThreadStack stack = [] {
    ThreadStack s;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      void* bottom = nullptr;
      pthread_attr_getstack(&attr, &bottom, &s.size);
      s.bottom = bottom;
      pthread_attr_destroy(&attr);
    }
    return s;
  }();
  return stack;
}

StartSwitch asan_start_switch() {
  static const auto real = reinterpret_cast<StartSwitch>(dlsym(RTLD_NEXT, "__sanitizer_start_switch_fiber"));
  return real;
}

FinishSwitch asan_finish_switch() {
  static const auto real = reinterpret_cast<FinishSwitch>(dlsym(RTLD_NEXT, "__sanitizer_finish_switch_fiber"));
  return real;
}

}  // namespace

extern "C" void __sanitizer_start_switch_fiber(void** fake_stack, const void* bottom, std::size_t size) {
  const ThreadStack& own = simulating_thread_stack();
  if (bottom == nullptr) {  // SystemC's main coroutine: the thread's own stack
    bottom = own.bottom;
    size = own.size;
  }
  if (StartSwitch real = asan_start_switch()) real(fake_stack, bottom, size);
}

namespace ks::sim {

void resync_sanitizer_stack_after_simulation() {
  const ThreadStack& own = simulating_thread_stack();
  StartSwitch start = asan_start_switch();
  FinishSwitch finish = asan_finish_switch();
  if (start == nullptr || finish == nullptr || own.bottom == nullptr) return;
  start(nullptr, own.bottom, own.size);
  finish(nullptr, nullptr, nullptr);
}

}  // namespace ks::sim

#else

namespace ks::sim {
void resync_sanitizer_stack_after_simulation() {}
}  // namespace ks::sim

#endif
