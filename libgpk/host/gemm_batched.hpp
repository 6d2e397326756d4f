// Host reference of the strided batched gemm: batch_count CBLAS gemms of one shape,
// matrix i of A at A + i * stride_a elements (likewise B and C), stride 0 sharing one
// matrix across the batch. Arguments arrive checked and normalised to column-major
// as for gemm (GemmArgs; a row-major call arrives with A and B, their transposes,
// leading dimensions and strides swapped, and m and n exchanged).
#pragma once

#include "../ops.hpp"

namespace gpk::host {

struct GemmBatchedArgs {
    GemmArgs gemm;  // the first product: A, B, C of product 0
    int64_t stride_a, stride_b, stride_c;
    int64_t batch_count;
};

gpk_status gemm_strided_batched(gpk_context &ctx, const GemmBatchedArgs &args);

}  // namespace gpk::host
