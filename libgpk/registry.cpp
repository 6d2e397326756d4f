// The ladders. Order is the ladder's: the vendor library (or, on the host backend,
// the reference) first, then the rungs from the simplest kernel up. The CUDA ladders
// are the lists cuda/<op>/rungs.def (see cuda/ladders.hpp): adding a rung is one
// file under cuda/<op>/ and one line in its rungs.def.
#include "registry.hpp"

#include "cuda/ladders.hpp"
#include "host/host.hpp"

#include <cstring>
#include <iterator>

namespace gpk {
namespace {

// ---- host backend: one reference implementation per op ---------------------------

constexpr Variant<GemmArgs> kHostGemm[] = {{"host", kFloatTypes | k16BitTypes | kGemmExClasses, host::gemm}};
constexpr Variant<ReduceArgs> kHostReduce[] = {{"host", kAllTypes, host::reduce}};
constexpr Variant<TransposeArgs> kHostTranspose[] = {{"host", kAllTypes, host::transpose}};
constexpr Variant<PiArgs> kHostPi[] = {{"host", kAllTypes, host::pi}};
constexpr Variant<GemmBatchedCall> kHostGemmBatched[] = {{"host", kFloatTypes | k16BitTypes, host::gemm_batched}};

template <class Args, int N>
constexpr Ladder<Args> host_ladder(const Variant<Args> (&rungs)[N]) {
    return Ladder<Args>{rungs, N, -1, 0, {0}, 1, 0};
}

// ---- CUDA backend: the rungs.def lists --------------------------------------------

// The roles a rungs.def names, by rung name.
template <class Args>
struct Roles {
    const char *vendor = nullptr;
    const char *reference = nullptr;
    const char *autos[kMaxAuto] = {};
    int auto_count = 0;
    const char *never[kMaxRungs] = {};
    int never_count = 0;
};

// The index of the rung called `name` in `rungs`, at compile time: a role names its
// rung, and a renamed or removed rung fails the build instead of picking another.
constexpr bool same_name(const char *a, const char *b) {
    while (*a != '\0' && *a == *b) ++a, ++b;
    return *a == *b;
}
template <class Args, int N>
constexpr int rung(const Variant<Args> (&rungs)[N], const char *name) {
    for (int i = 0; i < N; ++i)
        if (same_name(rungs[i].name, name)) return i;
    throw "no rung of that name";  // not a constant expression: a compile error
}

template <class Args, int N>
constexpr Ladder<Args> cuda_ladder(const Variant<Args> (&rungs)[N], const Roles<Args> &roles) {
    static_assert(N <= kMaxRungs, "a ladder's rungs fit the bits of Ladder::never");
    Ladder<Args> l{rungs, N, rung(rungs, roles.vendor), rung(rungs, roles.reference), {}, roles.auto_count, 0};
    if (roles.auto_count < 1) throw "no GPK_AUTO line";
    // Validation runs the reference on whatever call it checks. The vendor's may refuse
    // only calls outside its dtypes of old (gemm's vendor rung: gpk_gemm_ex's calls that
    // cuBLASLt cannot take), which validation then checks against the reference.
    if (rungs[l.reference].takes != nullptr) throw "the reference rung must take every call";
    for (int i = 0; i < roles.auto_count; ++i) l.autos[i] = rung(rungs, roles.autos[i]);
    for (int i = 0; i < roles.never_count; ++i) l.never |= uint64_t{1} << rung(rungs, roles.never[i]);
    for (int i = 0; i < roles.auto_count; ++i)
        if (l.never >> l.autos[i] & 1) throw "a GPK_AUTO rung is also GPK_AUTO_NEVER";
    return l;
}

#define GPK_TAKES_any(launcher) nullptr
#define GPK_TAKES_checked(launcher) cuda::launcher##_takes
#define GPK_RUNG(nn, name, launcher, dtypes, takes) {#name, GPK_DTYPES_##dtypes, cuda::launcher, GPK_TAKES_##takes(launcher)},
#define GPK_VENDOR(name)
#define GPK_REFERENCE(name)
#define GPK_AUTO(name)
#define GPK_AUTO_NEVER(name)

constexpr Variant<GemmArgs> kCudaGemm[] = {
#include "cuda/gemm/rungs.def"
};
constexpr Variant<ReduceArgs> kCudaReduce[] = {
#include "cuda/reduce/rungs.def"
};
constexpr Variant<TransposeArgs> kCudaTranspose[] = {
#include "cuda/transpose/rungs.def"
};
constexpr Variant<PiArgs> kCudaPi[] = {
#include "cuda/pi/rungs.def"
};
constexpr Variant<GemmBatchedCall> kCudaGemmBatched[] = {
#include "cuda/gemm_batched/rungs.def"
};

#undef GPK_RUNG
#undef GPK_VENDOR
#undef GPK_REFERENCE
#undef GPK_AUTO
#undef GPK_AUTO_NEVER
#define GPK_RUNG(nn, name, launcher, dtypes, takes)
#define GPK_VENDOR(name) r.vendor = #name;
#define GPK_REFERENCE(name) r.reference = #name;
#define GPK_AUTO(name) r.autos[r.auto_count++] = #name;
#define GPK_AUTO_NEVER(name) r.never[r.never_count++] = #name;

constexpr Roles<GemmArgs> gemm_roles() {
    Roles<GemmArgs> r;
#include "cuda/gemm/rungs.def"
    return r;
}
constexpr Roles<ReduceArgs> reduce_roles() {
    Roles<ReduceArgs> r;
#include "cuda/reduce/rungs.def"
    return r;
}
constexpr Roles<TransposeArgs> transpose_roles() {
    Roles<TransposeArgs> r;
#include "cuda/transpose/rungs.def"
    return r;
}
constexpr Roles<PiArgs> pi_roles() {
    Roles<PiArgs> r;
#include "cuda/pi/rungs.def"
    return r;
}
constexpr Roles<GemmBatchedCall> gemm_batched_roles() {
    Roles<GemmBatchedCall> r;
#include "cuda/gemm_batched/rungs.def"
    return r;
}

#undef GPK_RUNG
#undef GPK_VENDOR
#undef GPK_REFERENCE
#undef GPK_AUTO
#undef GPK_AUTO_NEVER
#undef GPK_TAKES_checked
#undef GPK_TAKES_any

constexpr Ladder<GemmArgs> kGemm[2] = {cuda_ladder(kCudaGemm, gemm_roles()), host_ladder(kHostGemm)};
constexpr Ladder<ReduceArgs> kReduce[2] = {cuda_ladder(kCudaReduce, reduce_roles()), host_ladder(kHostReduce)};
constexpr Ladder<TransposeArgs> kTranspose[2] = {cuda_ladder(kCudaTranspose, transpose_roles()),
                                                 host_ladder(kHostTranspose)};
constexpr Ladder<PiArgs> kPi[2] = {cuda_ladder(kCudaPi, pi_roles()), host_ladder(kHostPi)};
constexpr Ladder<GemmBatchedCall> kGemmBatched[2] = {cuda_ladder(kCudaGemmBatched, gemm_batched_roles()),
                                                     host_ladder(kHostGemmBatched)};

int slot(int backend) { return backend == GPK_BACKEND_CUDA ? 0 : 1; }

template <class Args>
const char *name_of(const Ladder<Args> &l, int index) {
    return (index >= 0 && index < l.count) ? l.rungs[index].name : nullptr;
}

}  // namespace

const Ladder<GemmArgs> &gemm_ladder(int backend) { return kGemm[slot(backend)]; }
const Ladder<ReduceArgs> &reduce_ladder(int backend) { return kReduce[slot(backend)]; }
const Ladder<TransposeArgs> &transpose_ladder(int backend) { return kTranspose[slot(backend)]; }
const Ladder<PiArgs> &pi_ladder(int backend) { return kPi[slot(backend)]; }
const Ladder<GemmBatchedCall> &gemm_batched_ladder(int backend) { return kGemmBatched[slot(backend)]; }

int variant_count(int op, int backend) {
    switch (op) {
        case GPK_OP_GEMM: return gemm_ladder(backend).count;
        case GPK_OP_REDUCE: return reduce_ladder(backend).count;
        case GPK_OP_TRANSPOSE: return transpose_ladder(backend).count;
        case GPK_OP_PI: return pi_ladder(backend).count;
        case GPK_OP_GEMM_BATCHED: return gemm_batched_ladder(backend).count;
        default: return 0;
    }
}

const char *variant_name(int op, int backend, int index) {
    switch (op) {
        case GPK_OP_GEMM: return name_of(gemm_ladder(backend), index);
        case GPK_OP_REDUCE: return name_of(reduce_ladder(backend), index);
        case GPK_OP_TRANSPOSE: return name_of(transpose_ladder(backend), index);
        case GPK_OP_PI: return name_of(pi_ladder(backend), index);
        case GPK_OP_GEMM_BATCHED: return name_of(gemm_batched_ladder(backend), index);
        default: return nullptr;
    }
}

int variant_index(int op, int backend, const char *name) {
    const int count = variant_count(op, backend);
    for (int i = 0; i < count; ++i)
        if (std::strcmp(variant_name(op, backend, i), name) == 0) return i;
    return -1;
}

}  // namespace gpk
