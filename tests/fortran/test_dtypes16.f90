! F16, BF16 and the math mode through the Fortran module, on the host backend:
! integer(c_int16_t) arrays carry the elements' bits. Small exact cases (sums of
! powers of two that every format holds exactly, so the one rounding of the result
! is the identity), a case whose F32 sum must round once to the odd neighbour,
! a bit-exact transpose of every kind of pattern, the math mode's rules, and every
! dtype other than F16 and BF16 refused by the 16-bit array forms.
program test_dtypes16
  use, intrinsic :: iso_c_binding
  use gpk
  use gpk_test
  implicit none

  type(c_ptr) :: ctx
  integer(c_int) :: status, mode

  call expect(gpk_create(ctx, GPK_BACKEND_HOST, 0), GPK_SUCCESS, 'gpk_create(host)')
  call check_dtype(GPK_F16, F16_ONE, F16_TWO, F16_HALF, 'F16')
  call check_dtype(GPK_BF16, BF16_ONE, BF16_TWO, BF16_HALF, 'BF16')
  call check_rounding()
  call check_math_mode()
  call check_other_dtypes()
  call expect(gpk_destroy(ctx), GPK_SUCCESS, 'gpk_destroy')

  call finish()

contains

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
    call check(same(res, 7.0_c_float), name // ' reduce: seven ones sum to 7, as a float')
    x(4) = two
    call expect(gpk_reduce(ctx, dtype, x, GPK_MAX, res), GPK_SUCCESS, name // ' reduce MAX')
    call check(same(res, 2.0_c_float), name // ' reduce MAX = 2')

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

  ! The 16-bit array forms hold 2-byte elements and reduce into a real(c_float):
  ! every other dtype (F32, F64, I32, I64, an unknown value) would have the library
  ! read and write 2 to 4 times the arrays' bytes, so it is refused by name, and
  ! nothing is written. The arrays are the first elements of larger buffers, so that
  ! a call that did go through writes inside them, where the check sees it.
  subroutine check_other_dtypes()
    integer(c_int), parameter :: others(6) = [GPK_F32, GPK_F64, GPK_I32, GPK_I64, 6_c_int, -1_c_int]
    integer(c_int16_t), target :: a_store(48), b_store(32), c_store(24), x_store(28), t_store(48)
    integer(c_int16_t), pointer, contiguous :: A(:, :), B(:, :), C(:, :), x(:), T(:, :)
    real(c_float), target :: res_store(2)
    character(len=200) :: msg
    character(len=16) :: label
    integer :: i

    A(1:3, 1:4) => a_store(1:12)
    B(1:4, 1:2) => b_store(1:8)
    C(1:3, 1:2) => c_store(1:6)
    x(1:7) => x_store(1:7)
    T(1:4, 1:3) => t_store(1:12)
    a_store = F16_ONE
    b_store = F16_ONE
    x_store = F16_ONE
    do i = 1, size(others)
      write (label, '(a,i0,a)') 'dtype ', others(i), ':'
      c_store = 77
      msg = ''
      call expect(gpk_gemm(ctx, others(i), A, B, C, errmsg=msg), GPK_ERROR_INVALID_ARGUMENT, &
                  '16-bit gemm, ' // trim(label) // ' refused')
      call check(index(msg, 'gpk_gemm: dtype') == 1, '16-bit gemm, ' // trim(label) // ' the message names dtype: ' &
                 // trim(msg))
      call check(all(c_store == 77), '16-bit gemm, ' // trim(label) // ' C is not written')

      res_store = -3
      msg = ''
      call expect(gpk_reduce(ctx, others(i), x, GPK_SUM, res_store(1), errmsg=msg), GPK_ERROR_INVALID_ARGUMENT, &
                  '16-bit reduce, ' // trim(label) // ' refused')
      call check(index(msg, 'gpk_reduce: dtype') == 1, '16-bit reduce, ' // trim(label) // &
                 ' the message names dtype: ' // trim(msg))
      call check(all(same(res_store, -3.0_c_float)), '16-bit reduce, ' // trim(label) // ' res is not written')

      t_store = 55
      msg = ''
      call expect(gpk_transpose(ctx, others(i), A, T, errmsg=msg), GPK_ERROR_INVALID_ARGUMENT, &
                  '16-bit transpose, ' // trim(label) // ' refused')
      call check(index(msg, 'gpk_transpose: dtype') == 1, '16-bit transpose, ' // trim(label) // &
                 ' the message names dtype: ' // trim(msg))
      call check(all(t_store == 55), '16-bit transpose, ' // trim(label) // ' B is not written')
    end do
  end subroutine check_other_dtypes

end program test_dtypes16
