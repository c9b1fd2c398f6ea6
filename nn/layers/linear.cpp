#include "nn/layers/linear.hpp"

#include "nn/layers/init.hpp"

namespace attn::nn {

Linear::Linear(int64_t in_features, int64_t out_features, bool with_bias, LinearInit init, double xavier_gain) {
  if (init == LinearInit::Xavier) {
    weight = register_parameter("weight", init::xavier_uniform({out_features, in_features}, xavier_gain));
    if (with_bias) bias = register_parameter("bias", zeros({out_features}));
  } else {
    weight = register_parameter("weight", init::kaiming_uniform_default({out_features, in_features}));
    if (with_bias) bias = register_parameter("bias", init::linear_bias_default(out_features, in_features));
  }
}

}  // namespace attn::nn
