#pragma once
// Results are written to a temporary file and renamed into place, so an interrupted run never
// leaves a half-written file under the final name.
#include <string>

namespace ks::util {

// Throws std::runtime_error naming the path when the file cannot be written.
void write_file_atomically(const std::string& path, const std::string& contents);

// Creates the directory (and parents) and checks it is writable; throws std::invalid_argument
// (a bad --out / output.dir: exit status 2) naming it on failure.
void ensure_directory(const std::string& path);

}  // namespace ks::util
