! F16, BF16 and the math mode through the Fortran module, on the host backend:
! integer(c_int16_t) arrays carry the elements' bits. Small exact cases (sums of
! powers of two that every format holds exactly, so the one rounding of the result
! is the identity), a case whose F32 sum must round once to the odd neighbour,
! a bit-exact transpose of every kind of pattern, and the math mode's rules.
program test_dtypes16
  use, intrinsic :: iso_c_binding
  use gpk
  implicit none

  integer :: passed = 0, failed = 0
  type(c_ptr) :: ctx
  integer(c_int) :: status, mode
  ! F16 and BF16 bits of 1, 2, 0.5 and 0.
  integer(c_int16_t), parameter :: F16_ONE = int(z'3C00', c_int16_t), F16_TWO = int(z'4000', c_int16_t)
  integer(c_int16_t), parameter :: F16_HALF = int(z'3800', c_int16_t)
  integer(c_int16_t), parameter :: BF16_ONE = int(z'3F80', c_int16_t), BF16_TWO = int(z'4000', c_int16_t)
  integer(c_int16_t), parameter :: BF16_HALF = int(z'3F00', c_int16_t)

  call expect(gpk_create(ctx, GPK_BACKEND_HOST, 0), GPK_SUCCESS, 'gpk_create(host)')
  call check_dtype(GPK_F16, F16_ONE, F16_TWO, F16_HALF, 'F16')
  call check_dtype(GPK_BF16, BF16_ONE, BF16_TWO, BF16_HALF, 'BF16')
  call check_rounding()
  call check_math_mode()
  call expect(gpk_destroy(ctx), GPK_SUCCESS, 'gpk_destroy')

  print '(i0," passed, ",i0," failed")', passed, failed
  if (failed > 0) error stop 1

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) then
      passed = passed + 1
    else
      failed = failed + 1
      print '(a,a)', 'FAILED: ', what
    end if
  end subroutine check

  subroutine expect(got, want, what)
    integer(c_int), intent(in) :: got, want
    character(len=*), intent(in) :: what
    character(len=32) :: detail
    write (detail, '(a,i0,a,i0,a)') ' (status ', got, ', expected ', want, ')'
    call check(got == want, what // trim(detail))
  end subroutine expect

  ! A (3 x 4) of ones times B (4 x 2) of halves is 2 everywhere; plus beta = 1 times
  ! C of ones, 3 (F16 0x4200, BF16 0x4040). The sum of 7 elements is exactly 7.
  subroutine check_dtype(dtype, one, two, half, name)
    integer(c_int), intent(in) :: dtype
    integer(c_int16_t), intent(in) :: one, two, half
    character(len=*), intent(in) :: name
    integer(c_int16_t) :: A(3, 4), B(4, 2), C(3, 2), T(4, 3), x(7)
    integer(c_int16_t) :: three
    real(c_float) :: res
    integer :: i, j

    three = merge(int(z'4200', c_int16_t), int(z'4040', c_int16_t), dtype == GPK_F16)
    A = one
    B = half
    C = int(z'7E00', c_int16_t)  ! a NaN: beta = 0 must not read it
    call expect(gpk_gemm(ctx, dtype, A, B, C), GPK_SUCCESS, name // ' gemm')
    call check(all(C == two), name // ' gemm: 1 x 4 halves = 2 everywhere, NaN in C not read')
    C = one
    call expect(gpk_gemm(ctx, dtype, A, B, C, beta=1.0_c_float), GPK_SUCCESS, name // ' gemm beta = 1')
    call check(all(C == three), name // ' gemm: 2 + 1 * C = 3')
    call expect(gpk_gemm(ctx, dtype, A, B, C, transa=GPK_TRANS), GPK_ERROR_INVALID_ARGUMENT, &
                name // ' gemm: op(A) of the wrong shape is refused')

    x = one
    call expect(gpk_reduce(ctx, dtype, x, GPK_SUM, res), GPK_SUCCESS, name // ' reduce SUM')
    call check(res == 7.0_c_float, name // ' reduce: seven ones sum to 7, as a float')
    x(4) = two
    call expect(gpk_reduce(ctx, dtype, x, GPK_MAX, res), GPK_SUCCESS, name // ' reduce MAX')
    call check(res == 2.0_c_float, name // ' reduce MAX = 2')

    do j = 1, 4
      do i = 1, 3
        A(i, j) = int(i * 4099 + j * 37 - 30000, c_int16_t)  ! any bits, NaN patterns included
      end do
    end do
    T = 0
    call expect(gpk_transpose(ctx, dtype, A, T), GPK_SUCCESS, name // ' transpose')
    call check(all(T == transpose(A)), name // ' transpose moves the bits')
  end subroutine check_dtype

  ! F16: 1 + 2^-11 + 2^-13 lies above the midpoint of 1 and 1 + 2^-10, so one rounding
  ! of the F32 sum gives 1 + 2^-10 (0x3C01); rounding after each addition would give 1.
  subroutine check_rounding()
    integer(c_int16_t) :: A(1, 3), B(3, 1), C(1, 1)
    A(1, :) = [int(z'3C00', c_int16_t), int(z'1000', c_int16_t), int(z'0800', c_int16_t)]
    B = int(z'3C00', c_int16_t)
    C = 0
    call expect(gpk_gemm(ctx, GPK_F16, A, B, C), GPK_SUCCESS, 'F16 gemm rounding case')
    call check(C(1, 1) == int(z'3C01', c_int16_t), 'F16 gemm: the result is rounded once, to 1 + 2^-10')
  end subroutine check_rounding

  subroutine check_math_mode()
    mode = -1
    call expect(gpk_get_math_mode(ctx, mode), GPK_SUCCESS, 'gpk_get_math_mode')
    call check(mode == GPK_MATH_DEFAULT, 'a new context is in GPK_MATH_DEFAULT')
    call expect(gpk_set_math_mode(ctx, GPK_MATH_TF32), GPK_SUCCESS, 'gpk_set_math_mode(TF32)')
    status = gpk_set_math_mode(ctx, 2_c_int)
    call expect(status, GPK_ERROR_INVALID_ARGUMENT, 'gpk_set_math_mode(2)')
    call check(index(gpk_last_error(ctx), 'mode') > 0, 'the message names mode')
    call expect(gpk_get_math_mode(ctx, mode), GPK_SUCCESS, 'gpk_get_math_mode after a refused mode')
    call check(mode == GPK_MATH_TF32, 'a refused mode keeps the previous one')
    call expect(gpk_set_math_mode(ctx, GPK_MATH_DEFAULT), GPK_SUCCESS, 'gpk_set_math_mode(DEFAULT)')
  end subroutine check_math_mode

end program test_dtypes16
