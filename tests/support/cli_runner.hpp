#pragma once
// Runs the kernelsight binary as a user would (through the shell) and captures its exit status
// and output, for CLI tests.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ks::test_support {

struct CliResult {
  int status;       // exit status, -1 if the process did not exit normally
  std::string out;  // stdout and stderr together
};

inline CliResult run_shell(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  const int raw = pclose(pipe);
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, out};
}

// `cli` is the binary's path (the tests get it as KS_CLI from CMake).
inline CliResult run_cli(const char* cli, const std::string& args) {
  return run_shell(std::string(cli) + " " + args + " 2>&1");
}

// A file's whole text ("" when it cannot be read).
inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A path in the temporary folder unique to this test process, removed if it exists
// (`prefix_name_pid`); not created.
inline std::filesystem::path fresh_temp_path(const std::string& prefix, const std::string& name) {
  std::filesystem::path d = std::filesystem::temp_directory_path() / (prefix + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  return d;
}

}  // namespace ks::test_support
