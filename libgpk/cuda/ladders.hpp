// Launchers of the CUDA rungs, one per file under cuda/<op>/, numbered in ladder
// order; 00_ wraps the vendor library. Each launcher runs asynchronously on the
// context's stream (gpk_pi returns with the hits on the host), checks every CUDA
// call and the last error after every launch, and reports failures through
// gpk::fail with the CUDA/cuBLAS/cuRAND error text.
#pragma once

#include "../ops.hpp"

namespace gpk::cuda {

gpk_status gemm_cublas(gpk_context &ctx, const GemmArgs &args);          // gemm/00_cublas.cu
gpk_status gemm_naive(gpk_context &ctx, const GemmArgs &args);           // gemm/01_naive.cu

gpk_status reduce_cub(gpk_context &ctx, const ReduceArgs &args);         // reduce/00_cub.cu
gpk_status reduce_interleaved(gpk_context &ctx, const ReduceArgs &args); // reduce/01_interleaved.cu

gpk_status transpose_geam(gpk_context &ctx, const TransposeArgs &args);  // transpose/00_cublas_geam.cu
gpk_status transpose_naive(gpk_context &ctx, const TransposeArgs &args); // transpose/01_naive.cu
gpk_status transpose_smem_tile(gpk_context &ctx, const TransposeArgs &args);     // transpose/02_smem_tile.cu
gpk_status transpose_padded_tile(gpk_context &ctx, const TransposeArgs &args);   // transpose/03_padded_tile.cu
gpk_status transpose_block_rows(gpk_context &ctx, const TransposeArgs &args);    // transpose/04_block_rows.cu
gpk_status transpose_tile64(gpk_context &ctx, const TransposeArgs &args);        // transpose/05_tile64.cu
gpk_status transpose_tile64_vec2(gpk_context &ctx, const TransposeArgs &args);   // transpose/06_tile64_vec2.cu
gpk_status transpose_tile64_vec16(gpk_context &ctx, const TransposeArgs &args);  // transpose/07_tile64_vec16.cu

gpk_status pi_curand(gpk_context &ctx, const PiArgs &args);              // pi/00_curand_thrust.cu
gpk_status pi_lecture(gpk_context &ctx, const PiArgs &args);             // pi/01_lecture.cu
gpk_status pi_fused(gpk_context &ctx, const PiArgs &args);               // pi/02_fused.cu
gpk_status pi_registers(gpk_context &ctx, const PiArgs &args);           // pi/03_registers.cu
gpk_status pi_ilp(gpk_context &ctx, const PiArgs &args);                 // pi/04_ilp.cu
gpk_status pi_persistent(gpk_context &ctx, const PiArgs &args);          // pi/05_persistent.cu

}  // namespace gpk::cuda
