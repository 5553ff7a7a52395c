#pragma once
// Shared Boost.Program_options plumbing for subcommands: parse, print help, map errors to exit 2.
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "app/commands.hpp"
#include "base/util/csv.hpp"
#include "base/config/error.hpp"

namespace ks::app {

// Parses `args`; returns -1 to continue, or an exit status (help printed: 0, bad usage: 2).
inline int parse_options(const std::string& command, const std::vector<std::string>& args,
                         const boost::program_options::options_description& visible,
                         boost::program_options::variables_map& vm,
                         const boost::program_options::positional_options_description* positional = nullptr,
                         const boost::program_options::options_description* hidden = nullptr) {
  namespace po = boost::program_options;
  po::options_description all;
  all.add(visible);
  if (hidden) all.add(*hidden);
  try {
    auto parser = po::command_line_parser(args).options(all);
    if (positional) parser.positional(*positional);
    po::store(parser.run(), vm);
    if (vm.count("help")) {
      std::cout << visible;
      return kExitOk;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "kernelsight " << command << ": " << e.what() << "\n\n" << visible;
    return kExitBadInput;
  }
  return -1;
}

// parse_options for a command taking one positional file (`kernelsight CMD FILE [options]`):
// FILE lands in `path` ("" when not given), named `file_name` in errors.
inline int parse_options_with_file(const std::string& command, const std::vector<std::string>& args,
                                   const boost::program_options::options_description& visible,
                                   boost::program_options::variables_map& vm, const char* file_name,
                                   std::string& path) {
  namespace po = boost::program_options;
  po::options_description hidden;
  hidden.add_options()(file_name, po::value(&path));
  po::positional_options_description positional;
  positional.add(file_name, 1);
  return parse_options(command, args, visible, vm, &positional, &hidden);
}

// Runs a command body and maps what it throws to an exit status with one "error: ..." line:
// bad input (scenario, CSV, invalid arguments) is 2, anything else 1.
template <class Body>
int run_reporting_errors(Body&& body) {
  try {
    return body();
  } catch (const config::ConfigError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const kernels::CsvError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::invalid_argument& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace ks::app
