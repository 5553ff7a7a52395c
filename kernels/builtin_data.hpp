#pragma once
// The model configs and GPU specs shipped in data/, compiled into the library (the generated
// builtin_data.cpp, see kernels/embed_data.cmake) so the binary needs no data directory.
#include <vector>

namespace ks::kernels {

struct EmbeddedFile {
  const char* name;  // file name without extension: "llama-3-8b", "h100_sxm"
  const char* text;  // file contents
};

const std::vector<EmbeddedFile>& builtin_model_files();  // data/models/*.json
const std::vector<EmbeddedFile>& builtin_gpu_files();    // data/gpus/*.yaml

}  // namespace ks::kernels
