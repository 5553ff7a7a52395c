#pragma once
// Simulations in child processes: SystemC allows one elaboration per process, so `sweep`,
// `capacity` and their validation re-execute this binary once per scenario. Pure POSIX (no SystemC).
#include <cstddef>
#include <functional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace ks::app {

// The running executable (/proc/self/exe), so children run the very same build.
std::string self_executable();

// Starts `binary args...` with stdout and stderr written to `log_path` (truncated).
// Throws std::runtime_error when the process cannot be started.
pid_t spawn_logged(const std::string& binary, const std::vector<std::string>& args, const std::string& log_path);

// Runs tasks 0..n-1 with at most `jobs` processes at a time, in index order: start(i) spawns task
// i, done(i, wait_status) is called as each exits (in completion order).
void run_parallel(std::size_t n, int jobs, const std::function<pid_t(std::size_t)>& start,
                  const std::function<void(std::size_t, int)>& done);

// Waits for one child; returns its raw wait status.
int wait_child(pid_t pid);

bool exited_ok(int wait_status);
// Exit code, or 128+signal for a killed child.
int exit_code(int wait_status);

// The line that explains a failure: the first "error: ..." line of the log (prefix removed), else
// its last non-empty line, else "exit status N" / "killed by signal N".
std::string first_error_line(const std::string& log_path, int wait_status);

// The number of processors available to this process (at least 1).
int available_cores();

}  // namespace ks::app
