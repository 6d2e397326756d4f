// Whether this build of libgpk carries machine code (or PTX the driver can JIT) for
// a GPU. A device that exists but lacks an image would fail every launch with
// cudaErrorNoKernelImageForDevice; asking for a kernel's attributes finds that out
// without launching anything.
#include "resources.hpp"

namespace gpk::cuda {
namespace {

__global__ void probe_kernel() {}

}  // namespace

// The caller has made `device` current; the attributes are looked up for that device.
bool kernels_runnable(int /*device*/) {
    cudaFuncAttributes attributes{};
    const cudaError_t err = cudaFuncGetAttributes(&attributes, probe_kernel);
    // A failed lookup (no image: cudaErrorInvalidDeviceFunction or
    // cudaErrorNoKernelImageForDevice) is recorded as the runtime's last error;
    // clear it so that the next launch check does not report it.
    (void)cudaGetLastError();
    return err == cudaSuccess;
}

}  // namespace gpk::cuda
