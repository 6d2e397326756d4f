! gpk_gemm_ex and gpk_gemm_blockscaled through the Fortran module, on the host
! backend: FP8 elements travel as integer(c_int8_t) bits, F16 and BF16 as
! integer(c_int16_t). The cases are exact -- small sums of powers of two, E4M3's
! largest finite value and smallest subnormal, whose products and sums F32 holds
! exactly -- so results are compared bit for bit. Then every dtype an array form's
! arrays cannot hold is refused by name, and the library's own refusals (a dtype
! mix outside the contract, a NULL scale) reach errmsg.
program test_fp8
  use, intrinsic :: iso_c_binding
  use gpk
  use gpk_test
  implicit none

  type(c_ptr) :: ctx
  ! E4M3 bits: 1, 0.5, 448 (largest finite), 2^-9 (smallest subnormal), NaN.
  integer(c_int8_t), parameter :: E4_ONE = int(z'38', c_int8_t), E4_HALF = int(z'30', c_int8_t)
  integer(c_int8_t), parameter :: E4_MAX = int(z'7E', c_int8_t), E4_TINY = int(z'01', c_int8_t)
  integer(c_int8_t), parameter :: E4_NAN = int(z'7F', c_int8_t)
  ! E5M2 bits: 1 and 0.5.
  integer(c_int8_t), parameter :: E5_ONE = int(z'3C', c_int8_t), E5_HALF = int(z'38', c_int8_t)
  ! BF16 bits of 3 (those of 1, 2 and 0.5 are gpk_test's).
  integer(c_int16_t), parameter :: BF16_THREE = int(z'4040', c_int16_t)

  call expect(gpk_create(ctx, GPK_BACKEND_HOST, 0), GPK_SUCCESS, 'gpk_create(host)')
  call check_fp8_to_f32()
  call check_fp8_to_16bit()
  call check_extremes()
  call check_16bit_to_f32()
  call check_blockscaled()
  call check_refusals()
  call expect(gpk_destroy(ctx), GPK_SUCCESS, 'gpk_destroy')

  call finish()

contains

  ! E4M3 ones (3 x 4) times E5M2 halves (4 x 2) is 2 everywhere; op(A) from its
  ! transpose too; beta = 1 adds C; k = 0 gives zeros; a NaN in A fills its row of C.
  subroutine check_fp8_to_f32()
    integer(c_int8_t) :: A(3, 4), At(4, 3), B(4, 2), A0(3, 0), B0(0, 2)
    real(c_float) :: C(3, 2), nan
    nan = transfer(int(z'7FC00000', c_int32_t), 1.0_c_float)
    A = E4_ONE
    At = E4_ONE
    B = E5_HALF
    C = nan  ! beta = 0: not read
    call expect(gpk_gemm_ex(ctx, GPK_F8E4M3, A, GPK_F8E5M2, B, C), GPK_SUCCESS, 'E4M3 x E5M2 -> F32')
    call check(all(same(C, 2.0_c_float)), 'E4M3 x E5M2 -> F32: 4 halves = 2, NaN in C not read')
    C = 1
    call expect(gpk_gemm_ex(ctx, GPK_F8E4M3, At, GPK_F8E5M2, B, C, alpha=0.5_c_float, beta=1.0_c_float, &
                            transa=GPK_TRANS), GPK_SUCCESS, 'transa, alpha 0.5, beta 1')
    call check(all(same(C, 2.0_c_float)), 'transa: 0.5 * 2 + 1 = 2')
    C = 7
    call expect(gpk_gemm_ex(ctx, GPK_F8E5M2, A0, GPK_F8E5M2, B0, C), GPK_SUCCESS, 'k = 0')
    call check(all(same(C, 0.0_c_float)), 'k = 0: C = 0')
    A(2, 3) = E4_NAN
    call expect(gpk_gemm_ex(ctx, GPK_F8E4M3, A, GPK_F8E5M2, B, C), GPK_SUCCESS, 'a NaN in A')
    call check(all(C(2, :) /= C(2, :)) .and. all(same(C([1, 3], :), 2.0_c_float)), &
               'a NaN in row 2 of A makes row 2 of C NaN, the rest 2')
  end subroutine check_fp8_to_f32

  ! The same product into F16 and BF16 C; beta = 1 adds C's ones (3 exactly).
  subroutine check_fp8_to_16bit()
    integer(c_int8_t) :: A(3, 4), B(4, 2)
    integer(c_int16_t) :: C(3, 2)
    A = E4_ONE
    B = E5_HALF
    C = -1
    call expect(gpk_gemm_ex(ctx, GPK_F8E4M3, A, GPK_F8E5M2, B, GPK_F16, C), GPK_SUCCESS, 'FP8 -> F16')
    call check(all(C == F16_TWO), 'FP8 -> F16: 2 everywhere')
    C = BF16_ONE
    call expect(gpk_gemm_ex(ctx, GPK_F8E4M3, A, GPK_F8E5M2, B, GPK_BF16, C, beta=1.0_c_float), GPK_SUCCESS, &
                'FP8 -> BF16, beta 1')
    call check(all(C == BF16_THREE), 'FP8 -> BF16: 2 + 1 = 3')
  end subroutine check_fp8_to_16bit

  ! 448 * 448 = 200704 and 2^-9 * 2^-9 = 2^-18: exact in F32.
  subroutine check_extremes()
    integer(c_int8_t) :: A(2, 1), B(1, 2)
    real(c_float) :: C(2, 2)
    A(:, 1) = [E4_MAX, E4_TINY]
    B(1, :) = [E4_MAX, E4_TINY]
    call expect(gpk_gemm_ex(ctx, GPK_F8E4M3, A, GPK_F8E4M3, B, C), GPK_SUCCESS, 'extremes')
    call check(same(C(1, 1), 200704.0_c_float) .and. same(C(2, 2), 2.0_c_float**(-18)) .and. &
               same(C(1, 2), 448.0_c_float * 2.0_c_float**(-9)), '448^2, (2^-9)^2 and 448 * 2^-9, exact')
  end subroutine check_extremes

  ! F16 and BF16 ones (3 x 4) times halves (4 x 2), F32 C: 2 everywhere.
  subroutine check_16bit_to_f32()
    integer(c_int16_t) :: A(3, 4), B(4, 2)
    real(c_float) :: C(3, 2)
    A = F16_ONE
    B = F16_HALF
    call expect(gpk_gemm_ex(ctx, GPK_F16, A, GPK_F16, B, C), GPK_SUCCESS, 'F16 -> F32')
    call check(all(same(C, 2.0_c_float)), 'F16 -> F32: 2 everywhere')
    A = BF16_ONE
    B = BF16_HALF
    C = 1
    call expect(gpk_gemm_ex(ctx, GPK_BF16, A, GPK_BF16, B, C, beta=1.0_c_float), GPK_SUCCESS, 'BF16 -> F32')
    call check(all(same(C, 3.0_c_float)), 'BF16 -> F32: 2 + 1 = 3')
  end subroutine check_16bit_to_f32

  ! k = 200: two blocks along k, of 128 and 72. A and B of ones; scale_a(i, :) =
  ! [1, 2], scale_b(1, :) = [1, 0.5] (n = 2: one column block), so every element is
  ! 128 * 1 * 1 + 72 * 2 * 0.5 = 200.
  subroutine check_blockscaled()
    integer(c_int8_t) :: A(3, 200), B(200, 2)
    real(c_float) :: scale_a(3, 2), scale_b(1, 2), C(3, 2)
    integer(c_int16_t) :: C16(3, 2)
    A = E4_ONE
    B = E5_ONE
    scale_a(:, 1) = 1
    scale_a(:, 2) = 2
    scale_b(1, :) = [1.0_c_float, 0.5_c_float]
    call expect(gpk_gemm_blockscaled(ctx, GPK_F8E4M3, A, scale_a, GPK_F8E5M2, B, scale_b, C), GPK_SUCCESS, &
                'blockscaled -> F32')
    call check(all(same(C, 200.0_c_float)), 'blockscaled: 128 * 1 + 72 * 2 * 0.5 = 200')
    call expect(gpk_gemm_blockscaled(ctx, GPK_F8E4M3, A, scale_a, GPK_F8E5M2, B, scale_b, GPK_BF16, C16, &
                                     alpha=0.25_c_float), GPK_SUCCESS, 'blockscaled -> BF16')
    call check(all(C16 == int(z'4248', c_int16_t)), 'blockscaled -> BF16: 200 / 4 = 50 (0x4248)')
  end subroutine check_blockscaled

  subroutine check_refusals()
    integer(c_int8_t), target :: A(2, 3), B(3, 2)
    integer(c_int16_t) :: H(2, 3), G(3, 2), C16(2, 2)
    real(c_float), target :: C(2, 2), scale_b(1, 1)
    real(c_float) :: scale_a(2, 1), wrong(1, 1)
    character(len=300) :: msg
    integer(c_int) :: status
    A = E4_ONE
    B = E4_ONE
    H = F16_ONE
    G = BF16_ONE
    scale_a = 1
    scale_b = 1
    wrong = 1

    ! The array forms' own rules: dtypes their arrays cannot hold, by name.
    C = 5
    msg = ''
    call expect(gpk_gemm_ex(ctx, GPK_F16, A, GPK_F8E4M3, B, C, errmsg=msg), GPK_ERROR_INVALID_ARGUMENT, &
                'FP8 form, a_dtype F16')
    call check(index(msg, 'a_dtype (GPK_F16) must be GPK_F8E4M3 or GPK_F8E5M2') > 0, 'it names a_dtype: ' // trim(msg))
    call check(all(same(C, 5.0_c_float)), 'a refused call writes nothing')
    msg = ''
    call expect(gpk_gemm_ex(ctx, GPK_F8E4M3, A, GPK_F32, B, C, errmsg=msg), GPK_ERROR_INVALID_ARGUMENT, &
                'FP8 form, b_dtype F32')
    call check(index(msg, 'b_dtype (GPK_F32)') > 0, 'it names b_dtype: ' // trim(msg))
    msg = ''
    call expect(gpk_gemm_ex(ctx, GPK_F8E4M3, A, GPK_F8E4M3, B, GPK_F32, C16, errmsg=msg), &
                GPK_ERROR_INVALID_ARGUMENT, '16-bit C form, c_dtype F32')
    call check(index(msg, 'c_dtype (GPK_F32) must be GPK_F16 or GPK_BF16') > 0, 'it names c_dtype: ' // trim(msg))
    msg = ''
    call expect(gpk_gemm_ex(ctx, GPK_F8E5M2, H, GPK_F16, G, C, errmsg=msg), GPK_ERROR_INVALID_ARGUMENT, &
                '16-bit form, a_dtype F8E5M2')
    call check(index(msg, 'a_dtype (GPK_F8E5M2) must be GPK_F16 or GPK_BF16') > 0, 'it names a_dtype: ' // trim(msg))
    msg = ''
    call expect(gpk_gemm_ex(ctx, 42_c_int, A, GPK_F8E4M3, B, C, errmsg=msg), GPK_ERROR_INVALID_ARGUMENT, &
                'FP8 form, a_dtype 42')
    call check(index(msg, 'a_dtype (42)') > 0, 'it names a_dtype and the value: ' // trim(msg))
    msg = ''
    call expect(gpk_gemm_blockscaled(ctx, GPK_F8E4M3, A, scale_a, GPK_I32, B, scale_b, C, errmsg=msg), &
                GPK_ERROR_INVALID_ARGUMENT, 'blockscaled, b_dtype I32')
    call check(index(msg, 'gpk_gemm_blockscaled: b_dtype (GPK_I32)') > 0, 'it names b_dtype: ' // trim(msg))
    msg = ''
    call expect(gpk_gemm_blockscaled(ctx, GPK_F8E4M3, A, wrong, GPK_F8E4M3, B, scale_b, C, errmsg=msg), &
                GPK_ERROR_INVALID_ARGUMENT, 'blockscaled, scale_a 1 x 1')
    call check(index(msg, 'scale_a is 1 x 1 but must be 2 x 1') > 0, 'it names scale_a: ' // trim(msg))
    msg = ''
    call expect(gpk_gemm_ex(ctx, GPK_F8E4M3, A, GPK_F8E4M3, A, C, errmsg=msg), GPK_ERROR_INVALID_ARGUMENT, &
                'op(B) of the wrong shape')
    call check(index(msg, 'gpk_gemm_ex: op(B) has 3 columns but C has 2 (n)') > 0, &
               'the shape rule names the call: ' // trim(msg))

    ! The library's rules, its message in errmsg: F16 x BF16, and NULL scales.
    msg = ''
    call expect(gpk_gemm_ex(ctx, GPK_F16, H, GPK_BF16, G, C, errmsg=msg), GPK_ERROR_INVALID_ARGUMENT, 'F16 x BF16')
    call check(index(msg, 'b_dtype') > 0 .or. index(msg, 'a_dtype') > 0, &
               'the library names the operand: ' // trim(msg))
    status = gpk_gemm_blockscaled_c(ctx, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 2_c_int64_t, 2_c_int64_t, &
                                    3_c_int64_t, 1.0_c_double, GPK_F8E4M3, c_loc(A), 2_c_int64_t, c_null_ptr, &
                                    GPK_F8E4M3, c_loc(B), 3_c_int64_t, c_loc(scale_b), 0.0_c_double, GPK_F32, &
                                    c_loc(C), 2_c_int64_t)
    call expect(status, GPK_ERROR_INVALID_ARGUMENT, 'gpk_gemm_blockscaled_c with a NULL scale_a')
    call check(index(gpk_last_error(ctx), 'scale_a') > 0, 'the library names scale_a: ' // gpk_last_error(ctx))
  end subroutine check_refusals

end program test_fp8
