"""Context.matmul's shapes against numpy's `@`, as a property over many random
pairs of 2-D and 3-D operands: extents of 0, 1 and more in every position, batch
extents that broadcast (a 2-D operand or an extent of 1 against any other, 0
included) and ones that do not, and inner dimensions that disagree. Wherever numpy
gives a result, gpk gives the same shape and values; wherever numpy raises, gpk
raises InvalidArgumentError and leaves out= as it was. Through gpk._calls and
ctypes alike."""

import numpy as np
import pytest

import gpk

CASES = 400


def draw_pair(rng):
    """Shapes of A and B: small extents, 0 and 1 often, batch and inner extents
    sometimes made to disagree."""
    extents = [0, 1, 1, 2, 3, 4]

    def extent():
        return int(rng.choice(extents))

    m, k, n = extent(), extent(), extent()
    k_b = k if rng.random() < 0.85 else extent()
    a_shape, b_shape = (m, k), (k_b, n)
    if rng.random() < 0.75:
        a_shape = (extent(),) + a_shape
    if rng.random() < 0.75:
        b_shape = (extent(),) + b_shape
    return a_shape, b_shape


def test_matmul_shapes_and_values_follow_numpy(either_calls):
    ctx = either_calls
    rng = np.random.default_rng(20240611)
    outcomes = {"result": 0, "empty": 0, "refused": 0}
    for _ in range(CASES):
        a_shape, b_shape = draw_pair(rng)
        A = rng.integers(-3, 4, size=a_shape).astype(np.float64)
        B = rng.integers(-3, 4, size=b_shape).astype(np.float64)
        try:
            want = A @ B
        except ValueError:
            want = None
        if want is None:
            out = np.full((2, 2, 2), 7.0)
            with pytest.raises(gpk.InvalidArgumentError):
                ctx.matmul(A, B, out=out)
            assert (out == 7.0).all(), f"{a_shape} @ {b_shape}: a refused call wrote out"
            with pytest.raises(gpk.InvalidArgumentError):
                ctx.matmul(A, B)
            outcomes["refused"] += 1
            continue
        got = ctx.matmul(A, B)
        assert got.shape == want.shape, f"{a_shape} @ {b_shape}: gpk {got.shape}, numpy {want.shape}"
        # Small integers: every product and sum is exact in float64.
        np.testing.assert_array_equal(got, want, err_msg=f"{a_shape} @ {b_shape}")
        out = np.full(want.shape, np.nan)
        assert ctx.matmul(A, B, out=out) is out
        np.testing.assert_array_equal(out, want, err_msg=f"{a_shape} @ {b_shape} into out")
        outcomes["empty" if want.size == 0 else "result"] += 1
    # The draw reaches each kind of case many times, or the property says little.
    assert min(outcomes.values()) >= 30, outcomes
