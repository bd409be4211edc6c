// SPDX-License-Identifier: MIT OR Apache-2.0
// What docs/KERNEL_ABI.md 1 asks of a product module's cubins, as one text of problems ("" when
// there are none): only family kernels (a probe or any other w8a16_* name is a stray), the ones a
// cubin of its architecture must hold, and each kernel's parameters (1.1).
#pragma once
#include <string>
#include <vector>

#include "module_image.hpp"

namespace w8a16::image {

// `architectures` is the build's CMAKE_CUDA_ARCHITECTURES ("90a", "80;90;120;121"): an sm_90 cubin
// built for 90a must hold the Hopper tier's three kernels too.
std::string product_module_problems(const std::vector<Cubin>& cubins, const std::string& architectures);

}  // namespace w8a16::image
