// nn/transformer/padding_mask.hpp: the mask marks the pads, and a host batch without pads
// gets none (the unmasked path).
#include <catch.hpp>

#include "nn/transformer/padding_mask.hpp"

using namespace attn;

TEST_CASE("padding masks mark pads, and a batch without pads has none", "[padding]") {
  const int64_t pad = 1;
  const Tensor padded = from_vector<int64_t>({1, 1, 5, 7, 9, 2, 4, 8, 6, 2}, {2, 5});
  const Tensor mask = nn::padding_mask_if_any(padded, pad);
  REQUIRE(mask.defined());
  CHECK(mask.dtype() == DType::Bool);
  CHECK(mask.to_vector() == std::vector<double>{1, 1, 0, 0, 0, 0, 0, 0, 0, 0});
  CHECK_FALSE(nn::padding_mask_if_any(padded.narrow(1, 2, 3), pad).defined());  // a strided view without pads
}
