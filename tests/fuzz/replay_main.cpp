// Replays fuzz inputs through a target compiled with the normal compiler (no libFuzzer): every
// file under the folders given is fed to LLVMFuzzerTestOneInput. A crash fails the ctest.
// KS_REPLAY_VERBOSE=1 prints each file name before feeding it (to find a crashing or hanging one).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  int files = 0;
  const bool verbose = std::getenv("KS_REPLAY_VERBOSE") != nullptr;
  for (int i = 1; i < argc; ++i) {
    std::vector<fs::path> inputs;
    if (fs::is_directory(argv[i])) {
      for (const auto& e : fs::recursive_directory_iterator(argv[i]))
        if (e.is_regular_file() && e.path().filename() != "README.md") inputs.push_back(e.path());
    } else if (fs::is_regular_file(argv[i])) {
      inputs.emplace_back(argv[i]);
    }
    std::sort(inputs.begin(), inputs.end());
    for (const auto& path : inputs) {
      if (verbose) std::fprintf(stderr, "%s\n", path.c_str());  // the last name printed is the culprit
      std::ifstream in(path, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
      ++files;
    }
  }
  std::printf("replayed %d inputs\n", files);
  return files > 0 ? 0 : 1;
}
