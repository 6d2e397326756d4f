// The bench's own kernels (ceilings.cu) in a build without CUDA: there is no
// device to run them on, and each says so as the CUDA runtime would.
#include "bench.hpp"
#include "ceilings.hpp"

namespace gpk_bench {

cudaError_t launch_settle(cudaStream_t) { return cudaErrorNoDevice; }

cudaError_t launch_copy(const void *, void *, size_t, cudaStream_t) { return cudaErrorNoDevice; }

cudaError_t launch_copy_smem(const void *, void *, int64_t, int64_t, size_t, cudaStream_t) {
    return cudaErrorNoDevice;
}

cudaError_t pi_reference_shape(int, uint64_t, PiReferenceShape *shape) {
    *shape = PiReferenceShape{};
    return cudaErrorNoDevice;
}

cudaError_t launch_pi_reference(const PiReferenceShape &, uint64_t, unsigned long long *, cudaStream_t) {
    return cudaErrorNoDevice;
}

// The copy ceilings are measured on the CUDA backend only, which is absent.
std::vector<Ceiling> link_ceilings(const Env &, size_t, std::function<LinkEnds()>, bool) { return {}; }

}  // namespace gpk_bench
