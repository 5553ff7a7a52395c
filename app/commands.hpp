#pragma once
// The `kernelsight` subcommands. Each returns the process exit status:
// 0 success, 1 internal/runtime failure, 2 bad usage or bad input (scenario, overrides, files);
// `run` stopped by SIGINT / SIGTERM: 130 / 143 after writing partial results (app/interrupt.hpp).
#include <string>
#include <vector>

namespace ks::app {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitBadInput = 2;

int cmd_run(const std::vector<std::string>& args);
int cmd_list(const std::vector<std::string>& args);
int cmd_describe(const std::vector<std::string>& args);
int cmd_import(const std::vector<std::string>& args);
int cmd_calibrate(const std::vector<std::string>& args);
int cmd_validate(const std::vector<std::string>& args);
int cmd_kernels(const std::vector<std::string>& args);
int cmd_collective(const std::vector<std::string>& args);
int cmd_validate_collectives(const std::vector<std::string>& args);
int cmd_fit_host(const std::vector<std::string>& args);
int cmd_step(const std::vector<std::string>& args);
int cmd_check(const std::vector<std::string>& args);
int cmd_compare(const std::vector<std::string>& args);
int cmd_sweep(const std::vector<std::string>& args);
int cmd_sweep_task(const std::vector<std::string>& args);
int cmd_merge(const std::vector<std::string>& args);
int cmd_capacity(const std::vector<std::string>& args);

}  // namespace ks::app
