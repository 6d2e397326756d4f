! gpk_gemm_strided_batched through the Fortran module on rank-3 arrays, on the host
! backend: every product against matmul (small integers, exact in both kinds), a
! shared A and a shared B (last extent 1, stride 0), transposes, beta, the shape
! rules refused with C untouched, and the C-shaped specific with a padded stride.
program test_batched
  use, intrinsic :: iso_c_binding
  use gpk
  use gpk_test
  implicit none

  type(c_ptr) :: ctx

  call expect(gpk_create(ctx, GPK_BACKEND_HOST, 0), GPK_SUCCESS, 'gpk_create(host)')
  call check_f64()
  call check_f32()
  call check_c_shaped()
  call expect(gpk_destroy(ctx), GPK_SUCCESS, 'gpk_destroy')

  call finish()

contains

  subroutine check_f64()
    real(c_double) :: A(3, 4, 5), B(4, 2, 5), C(3, 2, 5), C0(3, 2, 5), At(4, 3, 5), A1(3, 4, 1), B1(4, 2, 1)
    character(len=256) :: msg
    integer :: ib, i, j
    logical :: ok

    do ib = 1, 5
      do j = 1, 4
        do i = 1, 3
          A(i, j, ib) = real(mod(i + 2 * j + 3 * ib, 7) - 3, c_double)
        end do
      end do
      do j = 1, 2
        do i = 1, 4
          B(i, j, ib) = real(mod(3 * i + j + ib, 5) - 2, c_double)
        end do
      end do
      At(:, :, ib) = transpose(A(:, :, ib))
    end do
    C = ieee_nan()
    call expect(gpk_gemm_strided_batched(ctx, A, B, C), GPK_SUCCESS, 'F64 batched')
    ok = .true.
    do ib = 1, 5
      ok = ok .and. all(C(:, :, ib) == matmul(A(:, :, ib), B(:, :, ib)))
    end do
    call check(ok, 'F64 batched: every product is matmul, NaN in C not read with beta = 0')

    C0 = 1
    C = C0
    call expect(gpk_gemm_strided_batched(ctx, At, B, C, alpha=2.0_c_double, beta=-1.0_c_double, &
                                         transa=GPK_TRANS), GPK_SUCCESS, 'F64 batched transa, alpha, beta')
    ok = .true.
    do ib = 1, 5
      ok = ok .and. all(C(:, :, ib) == 2 * matmul(A(:, :, ib), B(:, :, ib)) - C0(:, :, ib))
    end do
    call check(ok, 'F64 batched: 2 op(A) B - C with A given transposed')

    A1(:, :, 1) = A(:, :, 2)
    call expect(gpk_gemm_strided_batched(ctx, A1, B, C), GPK_SUCCESS, 'F64 batched shared A')
    ok = .true.
    do ib = 1, 5
      ok = ok .and. all(C(:, :, ib) == matmul(A1(:, :, 1), B(:, :, ib)))
    end do
    call check(ok, 'F64 batched: one A shared by every product')

    B1(:, :, 1) = B(:, :, 4)
    call expect(gpk_gemm_strided_batched(ctx, A, B1, C), GPK_SUCCESS, 'F64 batched shared B')
    ok = .true.
    do ib = 1, 5
      ok = ok .and. all(C(:, :, ib) == matmul(A(:, :, ib), B1(:, :, 1)))
    end do
    call check(ok, 'F64 batched: one B shared by every product')

    C0 = C
    msg = ''
    call expect(gpk_gemm_strided_batched(ctx, A(:, :, 1:4), B, C, errmsg=msg), GPK_ERROR_INVALID_ARGUMENT, &
                'F64 batched: 4 A matrices for 5 products refused')
    call check(index(msg, 'A holds 4') > 0, 'F64 batched: the message says how many A matrices: ' // trim(msg))
    call check(all(C == C0), 'F64 batched: a refused call leaves C as it was')
    ! The shape rules of one product are checked for the batched call, and named so.
    msg = ''
    call expect(gpk_gemm_strided_batched(ctx, A, B, C, transb=GPK_TRANS, errmsg=msg), GPK_ERROR_INVALID_ARGUMENT, &
                'F64 batched: op(B) of the wrong shape refused')
    call check(all(C == C0), 'F64 batched: C untouched after the shape error')
    call check(index(msg, 'gpk_gemm_strided_batched: op(B) has 4 columns but C has 2 (n)') == 1, &
               'F64 batched: the shape error names the batched call and op(B): ' // trim(msg))
    msg = ''
    call expect(gpk_gemm_strided_batched(ctx, A, B(:, :, 1:1), C(1:2, :, :), errmsg=msg), &
                GPK_ERROR_INVALID_ARGUMENT, 'F64 batched: C with 2 rows for op(A) with 3 refused')
    call check(index(msg, 'gpk_gemm_strided_batched: op(A) has 3 rows but C has 2 (m)') == 1, &
               'F64 batched: the row rule names the batched call: ' // trim(msg))
  end subroutine check_f64

  subroutine check_f32()
    real(c_float) :: A(2, 3, 7), B(3, 4, 7), C(2, 4, 7), Cz(2, 4, 0)
    real(c_float) :: Az(2, 3, 0), Bz(3, 4, 0)
    integer :: ib, i, j
    logical :: ok

    do ib = 1, 7
      do j = 1, 3
        do i = 1, 2
          A(i, j, ib) = real(i - j + ib, c_float)
        end do
      end do
      do j = 1, 4
        do i = 1, 3
          B(i, j, ib) = real(mod(i * j + ib, 4), c_float)
        end do
      end do
    end do
    call expect(gpk_gemm_strided_batched(ctx, A, B, C), GPK_SUCCESS, 'F32 batched')
    ok = .true.
    do ib = 1, 7
      ok = ok .and. all(C(:, :, ib) == matmul(A(:, :, ib), B(:, :, ib)))
    end do
    call check(ok, 'F32 batched: every product is matmul')
    call expect(gpk_gemm_strided_batched(ctx, Az, Bz, Cz), GPK_SUCCESS, 'F32 batched: no product')
  end subroutine check_f32

  ! The C-shaped specific: two 2 x 2 products with C matrices 6 elements apart (2
  ! of padding each, which must keep its value), and stride_c too small refused.
  subroutine check_c_shaped()
    real(c_double), target :: A(2, 2, 2), B(2, 2, 2), C(12)
    integer(c_int) :: status

    A = 1
    B = 2
    C = -7
    status = gpk_gemm_strided_batched_c(ctx, GPK_F64, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 2_c_int64_t, &
                                        2_c_int64_t, 2_c_int64_t, 1.0_c_double, c_loc(A), 2_c_int64_t, 4_c_int64_t, &
                                        c_loc(B), 2_c_int64_t, 4_c_int64_t, 0.0_c_double, c_loc(C), 2_c_int64_t, &
                                        6_c_int64_t, 2_c_int64_t)
    call expect(status, GPK_SUCCESS, 'C-shaped batched, padded stride_c')
    call check(all(C(1:4) == 4) .and. all(C(7:10) == 4), 'C-shaped batched: both products are 4 everywhere')
    call check(all(C(5:6) == -7) .and. all(C(11:12) == -7), 'C-shaped batched: the stride padding is untouched')
    status = gpk_gemm_strided_batched_c(ctx, GPK_F64, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 2_c_int64_t, &
                                        2_c_int64_t, 2_c_int64_t, 1.0_c_double, c_loc(A), 2_c_int64_t, 4_c_int64_t, &
                                        c_loc(B), 2_c_int64_t, 4_c_int64_t, 0.0_c_double, c_loc(C), 2_c_int64_t, &
                                        3_c_int64_t, 2_c_int64_t)
    call expect(status, GPK_ERROR_INVALID_ARGUMENT, 'C-shaped batched: stride_c 3 < 4 refused')
    call check(index(gpk_last_error(ctx), 'stride_c') > 0, 'C-shaped batched: the message names stride_c')
  end subroutine check_c_shaped

  function ieee_nan() result(v)
    use, intrinsic :: ieee_arithmetic
    real(c_double) :: v
    v = ieee_value(v, ieee_quiet_nan)
  end function ieee_nan

end program test_batched
