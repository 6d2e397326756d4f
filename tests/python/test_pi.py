"""Context.pi on the host backend: reproducible hits and honest statistics."""

import math

import pytest

import gpk


@pytest.mark.parametrize("samples,seed", [(1, 0), (2, 0), (1001, 7), (100_000, 42), (1 << 20, 2**64 - 1)])
def test_same_samples_and_seed_give_the_same_hits(ctx, samples, seed):
    first = ctx.pi(samples, seed=seed)
    again = ctx.pi(samples, seed=seed)
    assert first == again
    with gpk.Context("host") as other:
        assert other.pi(samples, seed=seed).hits == first.hits


def test_result_fields(ctx):
    r = ctx.pi(12_345, seed=3)
    assert isinstance(r, gpk.PiResult)
    assert r.samples == 12_345
    assert isinstance(r.hits, int) and 0 < r.hits < r.samples
    assert r.estimate == 4 * r.hits / r.samples
    estimate, std_error, samples, hits = r  # a named tuple
    assert (estimate, std_error, samples, hits) == (r.estimate, r.std_error, r.samples, r.hits)


@pytest.mark.parametrize("samples", [1, 3, 1000, 65_537, 1_000_000])
def test_std_error_formula(ctx, samples):
    r = ctx.pi(samples, seed=11)
    p = r.hits / r.samples
    assert r.std_error == pytest.approx(4 * math.sqrt(p * (1 - p) / r.samples), rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("seed", [0, 1, 2, 12345, 2**63 + 5])
def test_estimate_is_close_to_pi(ctx, seed):
    r = ctx.pi(1_000_000, seed=seed)
    assert r.std_error == pytest.approx(4 * math.sqrt((math.pi / 4) * (1 - math.pi / 4) / 1_000_000), rel=0.01)
    assert abs(r.estimate - math.pi) < 5 * r.std_error


def test_error_shrinks_with_samples(ctx):
    small = ctx.pi(10_000, seed=5)
    large = ctx.pi(4_000_000, seed=5)
    assert large.std_error < small.std_error / 10
    assert abs(large.estimate - math.pi) < 5 * large.std_error


def test_hits_count_a_prefix_of_one_sequence(ctx):
    """Sample i comes from a fixed counter: one more sample adds 0 or 1 hit."""
    hits = [ctx.pi(n, seed=9).hits for n in range(1, 80)]
    steps = [b - a for a, b in zip(hits, hits[1:])]
    assert hits[0] in (0, 1)
    assert set(steps) <= {0, 1}
    assert 0 in steps and 1 in steps  # some points fall outside, most inside


def test_prefix_property_across_large_counts(ctx):
    n = 1 << 18
    a, b = ctx.pi(n, seed=21), ctx.pi(n + 1, seed=21)
    c = ctx.pi(n + 2, seed=21)
    assert b.hits - a.hits in (0, 1) and c.hits - b.hits in (0, 1)


def test_seeds_give_different_sequences(ctx):
    hits = {ctx.pi(100_000, seed=s).hits for s in range(8)}
    assert len(hits) > 1


def test_one_sample(ctx):
    r = ctx.pi(1, seed=0)
    assert r.samples == 1 and r.hits in (0, 1)
    assert r.estimate in (0.0, 4.0)
    assert r.std_error == 0.0


def test_integral_float_samples_are_accepted(ctx):
    assert ctx.pi(1e4, seed=2.0) == ctx.pi(10_000, seed=2)


# ------------------------------------------------------------------ errors --


def test_zero_samples_is_refused_by_the_library(ctx):
    with pytest.raises(gpk.InvalidArgumentError) as info:
        ctx.pi(0)
    assert info.value.status == gpk.ERROR_INVALID_ARGUMENT
    assert info.value.function == "gpk_pi"
    assert "samples (0) must be >= 1" in info.value.message


def test_too_many_samples_is_refused_by_the_library(ctx):
    with pytest.raises(gpk.InvalidArgumentError) as info:
        ctx.pi(2**63 + 1)
    assert info.value.function == "gpk_pi"
    assert "2^63" in info.value.message


@pytest.mark.parametrize("samples", [-1, 2**64, 1.5, "100", None])
def test_bad_samples(ctx, samples):
    with pytest.raises(gpk.InvalidArgumentError, match="samples") as info:
        ctx.pi(samples)
    assert info.value.status == gpk.ERROR_INVALID_ARGUMENT


@pytest.mark.parametrize("seed", [-1, 2**64, 0.5])
def test_bad_seed(ctx, seed):
    with pytest.raises(gpk.InvalidArgumentError, match="seed"):
        ctx.pi(100, seed=seed)


# --------------------------------------------------------------- pi_range --


def _split_hits(ctx, bounds, seed):
    """Hits of the ranges [bounds[i], bounds[i + 1])."""
    return sum(ctx.pi_range(a, b - a, seed=seed).hits for a, b in zip(bounds, bounds[1:]))


@pytest.mark.parametrize(
    "bounds",
    [
        [0, 1_000_003],
        [0, 1, 2, 3, 1_000_003],  # one sample each, then the rest
        [0, 0, 500_000, 500_000, 1_000_003],  # empty ranges
        [0, 7, 333_334, 333_335, 999_999, 1_000_003],  # odd starts and ends
    ],
)
def test_ranges_add_up_to_pi(ctx, bounds):
    whole = ctx.pi(bounds[-1], seed=42)
    assert _split_hits(ctx, bounds, 42) == whole.hits


def test_ranges_like_ranks_under_mpi(ctx):
    """The split an MPI code makes: size ranks, the first samples % size take one more."""
    samples, seed = 1_234_567, 2026
    whole = ctx.pi(samples, seed=seed)
    for size in (1, 2, 3, 4, 7):
        base, extra = divmod(samples, size)
        bounds = [0]
        for rank in range(size):
            bounds.append(bounds[-1] + base + (1 if rank < extra else 0))
        assert _split_hits(ctx, bounds, seed) == whole.hits


def test_range_is_a_slice_of_the_prefix_sums(ctx):
    hits = [ctx.pi(n, seed=5).hits for n in range(1, 40)]
    prefix = [0] + hits
    for first in range(0, 30):  # every residue mod 3: a Philox block gives 3 samples
        for count in range(0, 9):
            assert ctx.pi_range(first, count, seed=5).hits == prefix[first + count] - prefix[first]


def _philox4x32_10(counter, key):
    mask = 0xFFFFFFFF
    c, (k0, k1) = list(counter), key
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & mask, (p0 >> 32) ^ c[3] ^ k1, p0 & mask]
        k0, k1 = (k0 + 0x9E3779B9) & mask, (k1 + 0xBB67AE85) & mask
    return c


def _inside(sample, seed):
    """The Philox family's definition: triple t = sample // 3 is Philox4x32-10 of counter
    (lo t, hi t, 0, 0), key (lo seed, hi seed); its words give six 21-bit coordinates,
    points at cell midpoints, inside when (2x+1)^2 + (2y+1)^2 < 2^44."""
    t, m = sample // 3, (1 << 21) - 1
    w = _philox4x32_10([t & 0xFFFFFFFF, t >> 32, 0, 0], [seed & 0xFFFFFFFF, seed >> 32])
    c = [w[0] & m, w[1] & m, w[2] & m, w[3] & m,
         ((w[0] >> 21) | ((w[1] >> 21) << 11)) & m, ((w[2] >> 21) | ((w[3] >> 21) << 11)) & m]
    x, y = c[2 * (sample % 3)], c[2 * (sample % 3) + 1]
    return (2 * x + 1) ** 2 + (2 * y + 1) ** 2 < 1 << 44


def test_philox_known_answer():
    assert _philox4x32_10([0, 0, 0, 0], [0, 0]) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]


@pytest.mark.parametrize("first,seed", [(0, 42), (1001, 7), (3 * 2**32 - 100, 3), (2**63 - 100, 2**64 - 1)])
def test_hits_follow_the_definition(ctx, first, seed):
    assert ctx.pi_range(first, 200, seed=seed).hits == sum(_inside(s, seed) for s in range(first, first + 200))
    for s in range(first, first + 12):
        assert ctx.pi_range(s, 1, seed=seed).hits == _inside(s, seed)


def test_range_far_into_the_sequence(ctx):
    """Ranges crossing sample 3 * 2^32 (triple counter 2^32, where its high word changes),
    past 2^63 and near the end of 64-bit indices, cut at every residue mod 3."""
    for start in (3 * 2**32 - 5, 3 * 2**32 - 4, 3 * 2**32 - 3, 2**63 - 3, 2**64 - 1001):
        whole = ctx.pi_range(start, 1000, seed=3).hits
        parts = ctx.pi_range(start, 1, seed=3).hits + ctx.pi_range(start + 1, 998, seed=3).hits
        parts += ctx.pi_range(start + 999, 1, seed=3).hits
        assert parts == whole


def test_range_fields(ctx):
    r = ctx.pi_range(1_000, 100_001, seed=8)
    assert isinstance(r, gpk.PiResult)
    assert r.samples == 100_001 and 0 < r.hits < r.samples
    p = r.hits / r.samples
    assert r.estimate == 4 * p
    assert r.std_error == pytest.approx(4 * math.sqrt(p * (1 - p) / r.samples), rel=1e-12)


def test_empty_range(ctx):
    r = ctx.pi_range(12_345, 0, seed=1)
    assert (r.samples, r.hits) == (0, 0)
    assert math.isnan(r.estimate) and math.isnan(r.std_error)


def test_range_past_64_bit_indices_is_refused_by_the_library(ctx):
    ctx.pi_range(2**64 - 2, 1, seed=0)  # the last sample a range may hold
    with pytest.raises(gpk.InvalidArgumentError) as info:
        ctx.pi_range(2**64 - 2, 2, seed=0)
    assert info.value.function == "gpk_pi_range"
    assert "count" in info.value.message and "first_sample" in info.value.message


@pytest.mark.parametrize("name,args", [("first_sample", (-1, 10)), ("first_sample", (2**64, 10)),
                                       ("count", (0, -1)), ("count", (0, 2**64)), ("count", (0, 2.5))])
def test_bad_range(ctx, name, args):
    with pytest.raises(gpk.InvalidArgumentError, match=name):
        ctx.pi_range(*args)


@pytest.mark.parametrize("seed", [-1, 2**64])
def test_bad_range_seed(ctx, seed):
    with pytest.raises(gpk.InvalidArgumentError, match="seed"):
        ctx.pi_range(0, 100, seed=seed)
