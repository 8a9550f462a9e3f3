// oneDNN is loaded on first use (dnnl_loader.cc says why): whether it
// could be, and if not, why.
#pragma once

#include <string>

namespace tfrun {
namespace cpu {

bool DnnlAvailable(std::string* why);

}  // namespace cpu
}  // namespace tfrun
