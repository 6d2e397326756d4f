// Rung 6, quasi-Monte Carlo: points spread evenly instead of at random.
//
// Every rung before this one draws pseudo-random points, whose error falls as
// 1/sqrt(N) however fast they are drawn. Here sample s is point s of the
// two-dimensional Sobol sequence, whose first 2^m points put exactly one point in
// every dyadic box of area 2^-m (a (0, m, 2)-net); for the quarter-circle indicator
// the error then falls close to 1/N (about N^-0.85 in practice). Its hits form a
// family of their own, and the binomial std_error of gpk_pi (include/gpk/gpk.h)
// overstates its error: the honest error figure comes from independent replicates (gpk-pi
// --replicates).
//
// The sequence, for a 32-bit index i (bits i_0 .. i_31), in 32-bit fixed point:
//   x(i) = bit reversal of i: the van der Corput radical inverse in base 2;
//   y(i) = XOR of v_k over the set bits k of i, with the Sobol direction numbers of
//          the primitive polynomial x + 1: v_0 = 2^31, v_k = v_{k-1} ^ (v_{k-1} >> 1).
// The direction numbers are the rows of Pascal's triangle mod 2, bit reversed: bit
// 31 - j of v_k is C(k, j) mod 2, which by Lucas' theorem is 1 exactly when the bits
// of j are a subset of those of k. So bit 31 - j of y is the XOR of i_k over the k
// that contain j: a superset sum over GF(2) of the 32 index bits, which five
// shift-and-mask steps compute (sobol_y), followed by one bit reversal. No table and
// no loop: each point costs a handful of integer instructions, computed directly
// from its index, so threads may take any indices in any order.
//
// Randomization: a random digital shift. Both coordinates are XORed with 32-bit
// values taken from splitmix64(seed) (low word for x, high word for y). A digital
// shift keeps the net property, makes the estimate unbiased over the shift, and
// splitmix64 is a bijection, so different seeds always give different shifts: seeds
// seed, seed + 1, ... are independent replicates whose spread measures the error.
//
// The inside test is that of common/philox.hpp, pi_inside(x, y): x^2 + y^2 < 2^64 in
// exact integers, so hits depend only on (first, count, seed), never on the launch
// configuration.
//
// Past 2^32 points: the sequence is that of a 32-bit Sobol generator, defined for any
// 64-bit index s by taking v_k = 0 for k >= 32 in y (in x, the radical inverse's
// digits of those bits fall below 2^-32 anyway: x is the 32 leading bits of the
// radical inverse of the 64-bit index, the bit reversal of its low 32 bits). So a
// point depends only on the low 32 bits of its index: the sequence has period 2^32,
// sample s + 2^32 is sample s, and every whole period adds the same hits. Requests
// up to 2^64 - 1 samples are still counted exactly, but the error stops falling at
// 2^32 points; beyond that, more accuracy comes from more replicates (independent
// shifts), not more samples.
//
// Launches: at most 2^31 samples each (a few milliseconds), a grid-stride loop over
// 32-bit offsets, the block sum of pi_common.cuh and one slot per block summed in a
// fixed order after the last launch.
#include "pi_common.cuh"

#include "../ladders.hpp"

namespace gpk::cuda {
namespace {

constexpr int kBlock = 256;
constexpr uint32_t kMaxSamplesPerLaunch = uint32_t(1) << 31;

// The 32-bit XOR masks of the digital shift for a seed.
struct DigitalShift {
    uint32_t x, y;
};

// splitmix64 (Steele, Lea, Flood, OOPSLA'14): a bijection of the 64-bit seed with
// good avalanche, so nearby seeds give unrelated shifts.
DigitalShift digital_shift(uint64_t seed) {
    uint64_t z = seed + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return DigitalShift{static_cast<uint32_t>(z), static_cast<uint32_t>(z >> 32)};
}

// Second coordinate of point i, unshifted: bit j of z becomes the XOR of the bits k
// of i whose positions contain j (as 5-bit numbers), one position bit per step.
__device__ __forceinline__ uint32_t sobol_y(uint32_t i) {
    uint32_t z = i;
    z ^= (z >> 1) & 0x55555555u;   // positions without bit 0 take those with it
    z ^= (z >> 2) & 0x33333333u;   // ... bit 1
    z ^= (z >> 4) & 0x0F0F0F0Fu;   // ... bit 2
    z ^= (z >> 8) & 0x00FF00FFu;   // ... bit 3
    z ^= (z >> 16) & 0x0000FFFFu;  // ... bit 4
    return __brev(z);
}

// Hits among samples whose indices have low words lo + i (mod 2^32), i < count.
__global__ void __launch_bounds__(kBlock) pi_sobol_kernel(uint32_t lo, uint32_t count, DigitalShift shift,
                                                          unsigned long long *slots) {
    // count <= 2^31, so i + stride never wraps, and a thread's hits fit in 32 bits.
    uint32_t hits = 0;
    const uint32_t stride = gridDim.x * kBlock;
    for (uint32_t i = blockIdx.x * kBlock + threadIdx.x; i < count; i += stride) {
        const uint32_t s = lo + i;  // wraps mod 2^32: the period of the sequence
        hits += pi_inside(__brev(s) ^ shift.x, sobol_y(s) ^ shift.y);
    }
    const uint64_t block = pi::block_sum<kBlock>(hits);
    if (threadIdx.x == 0) slots[blockIdx.x] += block;
}

}  // namespace

gpk_status pi_sobol(gpk_context &ctx, const PiArgs &args) {
    GPK_RETURN_ERROR_IF(args.count > UINT64_MAX - args.first, &ctx, GPK_ERROR_INTERNAL,
                        "pi range [%llu, +%llu) runs past sample 2^64 - 1",
                        static_cast<unsigned long long>(args.first), static_cast<unsigned long long>(args.count));
    uint64_t hits = 0;
    if (args.count > 0) {
        unsigned int blocks = 0;
        GPK_FORWARD_IF_ERROR(pi::resident_blocks(ctx, pi_sobol_kernel, kBlock, &blocks));
        const DigitalShift shift = digital_shift(args.seed);
        const cudaStream_t s = stream(ctx);
        pi::BlockSlots slots;
        GPK_FORWARD_IF_ERROR(slots.open(ctx, blocks));
        for (uint64_t done = 0; done < args.count;) {
            const uint32_t n = static_cast<uint32_t>(std::min(args.count - done, uint64_t(kMaxSamplesPerLaunch)));
            const uint32_t lo = static_cast<uint32_t>(args.first + done);
            const unsigned int grid = std::min(blocks, (n + kBlock - 1) / kBlock);
            pi_sobol_kernel<<<grid, kBlock, 0, s>>>(lo, n, shift, slots.slots());
            GPK_LAUNCH_CHECK(ctx, "pi_sobol_kernel");
            done += n;
        }
        GPK_FORWARD_IF_ERROR(slots.total(ctx, &hits));
    }
    *args.hits = hits;
    return GPK_SUCCESS;
}

}  // namespace gpk::cuda
