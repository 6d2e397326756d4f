// gpk-bench --kernels (kernels.hpp says why): CUPTI's callback API sees every kernel
// launch of the recorded call, through the runtime (libgpk's kernels) or the driver
// (cuBLAS, cuBLASLt). The callback only copies what the launch says -- the function,
// grid, block, dynamic shared memory; the attributes and the occupancy are asked for
// after the call, outside CUPTI's callback, where CUDA calls are safe to make.
#include "kernels.hpp"

#include <algorithm>
#include <string>

#ifdef GPK_BENCH_HAS_CUPTI
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cupti.h>

#include <cxxabi.h>

#include <cstdlib>
#include <mutex>
#include <utility>
#endif

namespace gpk_bench {

#ifndef GPK_BENCH_HAS_CUPTI

bool kernels_built() { return false; }

std::unique_ptr<KernelRecorder> KernelRecorder::open(const Env &, std::string *why) {
    *why = "gpk-bench was built without CUPTI";
    return nullptr;
}

#else

bool kernels_built() { return true; }

namespace {

// One launch as the callback saw it.
struct Launch {
    bool driver = false;           // handle is a CUfunction (or CUkernel); else a runtime function or cudaKernel_t
    const void *handle = nullptr;
    std::string symbol;            // CUPTI's symbolName, mangled
    unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
    size_t dynamic_smem = 0;

    bool same_kernel(const Launch &o) const {
        return driver == o.driver && handle == o.handle && dynamic_smem == o.dynamic_smem &&
               std::equal(grid, grid + 3, o.grid) && std::equal(block, block + 3, o.block);
    }
};

#if CUPTI_API_VERSION >= 130000
// CUDA 13's <<< >>> launches through __cudaLaunchKernel, whose parameters no header
// declares; CUPTI passes them as for every launch, the arguments in order: those of
// cudaLaunchKernel with a cudaKernel_t for the function.
struct KernelHandleLaunchParams {
    cudaKernel_t kernel;
    dim3 gridDim, blockDim;
    void **args;
    size_t sharedMem;
    cudaStream_t stream;
};
#endif

constexpr std::pair<CUpti_CallbackDomain, CUpti_CallbackId> kLaunches[] = {
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060},  // the wgmma rungs
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060},
#if CUPTI_API_VERSION >= 130000
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000},
#endif
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz},
};

struct Seen {
    std::mutex mutex;  // the library may launch from threads of its own
    std::vector<Launch> launches;
};

// Runtime launches in progress on this thread: the runtime may launch through the
// driver (or through another of its launch functions), and such a launch is counted
// once, as the outermost runtime function's.
thread_local int runtime_depth = 0;

void set_dims(unsigned *to, unsigned x, unsigned y, unsigned z) { to[0] = x, to[1] = y, to[2] = z; }

void CUPTIAPI on_launch(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data) {
    const auto *cb = static_cast<const CUpti_CallbackData *>(data);
    const bool enter = cb->callbackSite == CUPTI_API_ENTER;
    Launch l;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
        if (enter) {
            ++runtime_depth;
            return;
        }
        // The outermost launch alone, should one runtime launch call another.
        if (runtime_depth > 0 && --runtime_depth > 0) return;
        if (*static_cast<const cudaError_t *>(cb->functionReturnValue) != cudaSuccess) return;
        if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060 ||
            cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060) {
            const auto *p = static_cast<const cudaLaunchKernelExC_v11060_params *>(cb->functionParams);
            l.handle = p->func;
            set_dims(l.grid, p->config->gridDim.x, p->config->gridDim.y, p->config->gridDim.z);
            set_dims(l.block, p->config->blockDim.x, p->config->blockDim.y, p->config->blockDim.z);
            l.dynamic_smem = p->config->dynamicSmemBytes;
#if CUPTI_API_VERSION >= 130000
        } else if (cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000 ||
                   cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000) {
            const auto *p = static_cast<const KernelHandleLaunchParams *>(cb->functionParams);
            l.handle = p->kernel;  // the runtime's queries take a cudaKernel_t as a function
            set_dims(l.grid, p->gridDim.x, p->gridDim.y, p->gridDim.z);
            set_dims(l.block, p->blockDim.x, p->blockDim.y, p->blockDim.z);
            l.dynamic_smem = p->sharedMem;
#endif
        } else {
            const auto *p = static_cast<const cudaLaunchKernel_v7000_params *>(cb->functionParams);
            l.handle = p->func;
            set_dims(l.grid, p->gridDim.x, p->gridDim.y, p->gridDim.z);
            set_dims(l.block, p->blockDim.x, p->blockDim.y, p->blockDim.z);
            l.dynamic_smem = p->sharedMem;
        }
    } else {
        if (enter || runtime_depth > 0 || *static_cast<const CUresult *>(cb->functionReturnValue) != CUDA_SUCCESS)
            return;
        l.driver = true;
        if (cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx || cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz) {
            const auto *p = static_cast<const cuLaunchKernelEx_params *>(cb->functionParams);
            l.handle = p->f;
            set_dims(l.grid, p->config->gridDimX, p->config->gridDimY, p->config->gridDimZ);
            set_dims(l.block, p->config->blockDimX, p->config->blockDimY, p->config->blockDimZ);
            l.dynamic_smem = p->config->sharedMemBytes;
        } else {
            const auto *p = static_cast<const cuLaunchKernel_params *>(cb->functionParams);
            l.handle = p->f;
            set_dims(l.grid, p->gridDimX, p->gridDimY, p->gridDimZ);
            set_dims(l.block, p->blockDimX, p->blockDimY, p->blockDimZ);
            l.dynamic_smem = p->sharedMemBytes;
        }
    }
    if (cb->symbolName) l.symbol = cb->symbolName;
    Seen *seen = static_cast<Seen *>(user);
    const std::lock_guard<std::mutex> lock(seen->mutex);
    seen->launches.push_back(std::move(l));
}

// The driver's queries, for the vendor's kernels, found as libgpk finds the driver's
// functions (wgmma/maps.cuh), so that gpk-bench need not link libcuda.
struct Driver {
    PFN_cuFuncGetName_v12030 name = nullptr;
    PFN_cuFuncGetAttribute_v2020 attribute = nullptr;
    PFN_cuOccupancyMaxActiveBlocksPerMultiprocessor_v6050 occupancy = nullptr;
    PFN_cuKernelGetFunction_v12000 kernel_function = nullptr;

    Driver() {
        find("cuFuncGetName", &name, 12030);
        find("cuFuncGetAttribute", &attribute, 2020);
        find("cuOccupancyMaxActiveBlocksPerMultiprocessor", &occupancy, 6050);
        find("cuKernelGetFunction", &kernel_function, 12000);
    }
    template <class Fn>
    static void find(const char *symbol, Fn *fn, unsigned version) {
        void *p = nullptr;
        cudaDriverEntryPointQueryResult q{};
        if (cudaGetDriverEntryPointByVersion(symbol, &p, version, cudaEnableDefault, &q) == cudaSuccess &&
            q == cudaDriverEntryPointSuccess)
            *fn = reinterpret_cast<Fn>(p);
    }
};

// The kernel's name as a table shows it: demangled, without its template arguments,
// parameters, return type, libgpk's own namespace and CUB's version, at most 60
// characters (cuBLAS's names say their tile within them).
std::string short_name(const std::string &symbol) {
    std::string name = symbol;
    int status = 0;
    if (char *demangled = abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status)) {
        if (status == 0) name = demangled;
        std::free(demangled);
    }
    const std::string anonymous = "(anonymous namespace)::";
    for (size_t at; (at = name.find(anonymous)) != std::string::npos;) name.erase(at, anonymous.size());
    if (const size_t cut = name.find_first_of("<("); cut != std::string::npos && cut > 0) name.resize(cut);
    if (const size_t space = name.rfind(' '); space != std::string::npos) name.erase(0, space + 1);
    if (name.rfind("gpk::cuda::", 0) == 0) name.erase(0, 11);
    // CUB's versioned inline namespace, "cub::CUB_300001_SM_900::detail::...".
    if (const size_t cub = name.find("::CUB_"); cub != std::string::npos) {
        const size_t end = name.find("::", cub + 2);
        if (end != std::string::npos) name.erase(cub, end - cub);
    }
    if (name.empty()) name = symbol.empty() ? "?" : symbol;
    if (name.size() > 60) name.resize(60);
    return name;
}

class CuptiRecorder final : public KernelRecorder {
public:
    explicit CuptiRecorder(int device) {
        cudaDeviceGetAttribute(&max_threads_per_sm_, cudaDevAttrMaxThreadsPerMultiProcessor, device);
    }

    // Subscribes with every launch callback on; returns CUPTI's answer.
    CUptiResult subscribe() {
        const CUptiResult r = cuptiSubscribe(&subscriber_, on_launch, &seen_);
        if (r != CUPTI_SUCCESS) {
            subscriber_ = nullptr;
            return r;
        }
        // A callback a CUPTI older than the header lacks is refused alone.
        for (const auto &[domain, cbid] : kLaunches) cuptiEnableCallback(1, subscriber_, domain, cbid);
        return r;
    }
    void unsubscribe() {
        if (subscriber_) cuptiUnsubscribe(subscriber_);
        subscriber_ = nullptr;
    }
    ~CuptiRecorder() override { unsubscribe(); }

    // Subscribed for the call alone, so that CUPTI is out of the way of the timed calls.
    std::vector<KernelInfo> record(const std::function<gpk_status()> &call, gpk_status *status) override {
        seen_.launches.clear();
        if (const CUptiResult r = subscribe(); r != CUPTI_SUCCESS) throw Error("cuptiSubscribe: " + result_text(r));
        try {
            *status = call();
        } catch (...) {
            unsubscribe();
            throw;
        }
        unsubscribe();
        std::vector<KernelInfo> kernels;
        std::vector<const Launch *> firsts;
        for (const Launch &l : seen_.launches) {
            size_t i = 0;
            while (i < firsts.size() && !firsts[i]->same_kernel(l)) ++i;
            if (i == firsts.size()) {
                firsts.push_back(&l);
                kernels.push_back(describe(l));
            }
            ++kernels[i].launches;
        }
        // A query that failed leaves its error behind for the library's next check.
        cudaGetLastError();
        return kernels;
    }

    static std::string result_text(CUptiResult r) {
        const char *text = nullptr;
        cuptiGetResultString(r, &text);
        return text ? text : "CUPTI error " + std::to_string(static_cast<int>(r));
    }

private:
    KernelInfo describe(const Launch &l) const {
        KernelInfo k;
        std::copy(l.grid, l.grid + 3, k.grid);
        std::copy(l.block, l.block + 3, k.block);
        k.dynamic_smem = l.dynamic_smem;
        const int threads = static_cast<int>(l.block[0] * l.block[1] * l.block[2]);
        int blocks = -1;
        std::string symbol = l.symbol;
        if (!l.driver) {
            cudaFuncAttributes a{};
            if (cudaFuncGetAttributes(&a, l.handle) == cudaSuccess) {
                k.regs = a.numRegs;
                k.static_smem = static_cast<int64_t>(a.sharedSizeBytes);
            }
            int n = 0;
            if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, l.handle, threads, l.dynamic_smem) == cudaSuccess)
                blocks = n;
            const char *name = nullptr;
            if (symbol.empty() && cudaFuncGetName(&name, l.handle) == cudaSuccess && name) symbol = name;
        } else {
            static const Driver driver;
            CUfunction f = reinterpret_cast<CUfunction>(const_cast<void *>(l.handle));
            int v = 0;
            // A CUkernel launched as a function is asked about through its function.
            CUfunction g = nullptr;
            if (driver.attribute && driver.attribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f) != CUDA_SUCCESS &&
                driver.kernel_function && driver.kernel_function(&g, reinterpret_cast<CUkernel>(f)) == CUDA_SUCCESS)
                f = g;
            if (driver.attribute && driver.attribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f) == CUDA_SUCCESS) k.regs = v;
            if (driver.attribute && driver.attribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f) == CUDA_SUCCESS)
                k.static_smem = v;
            int n = 0;
            if (driver.occupancy && driver.occupancy(&n, f, threads, l.dynamic_smem) == CUDA_SUCCESS) blocks = n;
            const char *name = nullptr;
            if (symbol.empty() && driver.name && driver.name(&name, f) == CUDA_SUCCESS && name) symbol = name;
        }
        k.name = short_name(symbol);
        if (blocks >= 0 && threads > 0 && max_threads_per_sm_ > 0) {
            k.blocks_per_sm = blocks;
            k.warps_percent = 100.0 * blocks * ((threads + 31) / 32) / (max_threads_per_sm_ / 32);
        }
        return k;
    }

    CUpti_SubscriberHandle subscriber_ = nullptr;
    Seen seen_;
    int max_threads_per_sm_ = 0;
};

}  // namespace

std::unique_ptr<KernelRecorder> KernelRecorder::open(const Env &env, std::string *why) {
    // Subscribed once here to find out whether CUPTI can be had (a profiler holds it),
    // then for each recorded call alone.
    auto recorder = std::make_unique<CuptiRecorder>(env.device);
    if (const CUptiResult r = recorder->subscribe(); r != CUPTI_SUCCESS) {
        *why = "cuptiSubscribe: " + CuptiRecorder::result_text(r) +
               (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? " (a profiler, ncu or nsys, holds CUPTI)" : "");
        return nullptr;
    }
    recorder->unsubscribe();
    return recorder;
}

#endif  // GPK_BENCH_HAS_CUPTI

}  // namespace gpk_bench
