// One Python module for Sarathi-Serve's elementwise kernels (the .cu files beside this one, copied
// unchanged from microsoft/sarathi-serve, Apache-2.0: README.md): the declarations of its
// activation.cpp, layernorm.cpp and pos_encoding.cpp, bound together.
#include <torch/extension.h>

void silu_and_mul(torch::Tensor& out, torch::Tensor& input);
void rms_norm(torch::Tensor& out, torch::Tensor& input, torch::Tensor& weight, float epsilon);
void rotary_embedding(torch::Tensor& positions, torch::Tensor& query, torch::Tensor& key, int head_size,
                      torch::Tensor& cos_sin_cache, bool is_neox);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("silu_and_mul", &silu_and_mul, "SwiGLU activation (Sarathi-Serve)");
  m.def("rms_norm", &rms_norm, "RMS normalisation (Sarathi-Serve)");
  m.def("rotary_embedding", &rotary_embedding, "rotary embedding, in place (Sarathi-Serve)");
}
