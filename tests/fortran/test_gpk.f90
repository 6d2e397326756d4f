! Every op through the Fortran module, on column-major arrays, checked against
! plain loops and intrinsics: on the host backend always, then on the CUDA
! backend -- every variant of every op -- when a GPU is usable.
program test_gpk
  use, intrinsic :: iso_c_binding
  use, intrinsic :: ieee_arithmetic, only: ieee_is_nan
  use gpk
  use gpk_test
  implicit none

  integer :: skipped = 0
  ! While a variant is pinned, a dtype it lacks is GPK_ERROR_NOT_SUPPORTED: a skip.
  logical :: pinned = .false.
  type(c_ptr) :: ctx
  integer(c_int) :: status, major, minor, patch

  call gpk_version(major, minor, patch)
  call check(major == GPK_VERSION_MAJOR .and. minor == GPK_VERSION_MINOR .and. patch == GPK_VERSION_PATCH, &
             'gpk_version matches the module''s constants')
  call check(len(gpk_status_string(GPK_ERROR_INVALID_ARGUMENT)) > 0, 'gpk_status_string is not empty')

  status = gpk_create(ctx, GPK_BACKEND_HOST, 0)
  call expect(status, GPK_SUCCESS, 'gpk_create(host)')
  call check_context(ctx, GPK_BACKEND_HOST)
  call check_errors(ctx)
  call expect(gpk_destroy(ctx), GPK_SUCCESS, 'gpk_destroy(host)')
  call expect(gpk_destroy(c_null_ptr), GPK_SUCCESS, 'gpk_destroy(NULL) is a no-op')

  status = gpk_create(ctx, GPK_BACKEND_CUDA, 0)
  if (status == GPK_SUCCESS) then
    call check_context(ctx, GPK_BACKEND_CUDA)
    call expect(gpk_destroy(ctx), GPK_SUCCESS, 'gpk_destroy(cuda)')
  else
    call check(status == GPK_ERROR_NO_DEVICE, 'gpk_create(cuda) without a GPU is GPK_ERROR_NO_DEVICE')
    call check(.not. c_associated(ctx), 'a failed gpk_create leaves ctx NULL')
    call check(len(gpk_last_error(c_null_ptr)) > 0, 'a failed gpk_create leaves a message')
    print '(a)', 'skipped: the CUDA backend (no usable GPU)'
  end if

  call finish(skipped)

contains

  !> Whether an op call succeeded, so that its result is worth checking.
  logical function succeeded(status, what)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: what
    succeeded = status == GPK_SUCCESS
    if (.not. succeeded .and. pinned .and. status == GPK_ERROR_NOT_SUPPORTED) then
      skipped = skipped + 1
    else
      call expect(status, GPK_SUCCESS, what)
    end if
  end function succeeded

  ! Every variant of every op on one context.
  subroutine check_context(ctx, backend)
    type(c_ptr), intent(in) :: ctx
    integer(c_int), intent(in) :: backend
    integer(c_int) :: got, op, count, i
    character(len=:), allocatable :: name
    character(len=*), parameter :: ops(0:3) = [character(len=9) :: 'gemm', 'reduce', 'transpose', 'pi']

    call expect(gpk_get_backend(ctx, got), GPK_SUCCESS, 'gpk_get_backend')
    call check(got == backend, 'the context has the backend asked for')
    do op = GPK_OP_GEMM, GPK_OP_PI
      call expect(gpk_variant_count(ctx, op, count), GPK_SUCCESS, 'gpk_variant_count')
      call check(count >= 1, 'every op has a variant')
      call check(len(gpk_variant_name(ctx, op, count)) == 0, 'a name past the ladder is empty')
      do i = 0, count - 1
        name = gpk_variant_name(ctx, op, i)
        call check(len(name) > 0, 'variant names are not empty')
        call expect(gpk_set_variant(ctx, op, name), GPK_SUCCESS, 'gpk_set_variant ' // name)
        pinned = .true.
        select case (op)
        case (GPK_OP_GEMM)
          call check_gemm(ctx, trim(ops(op)) // '/' // name)
        case (GPK_OP_REDUCE)
          call check_reduce(ctx, trim(ops(op)) // '/' // name)
        case (GPK_OP_TRANSPOSE)
          call check_transpose(ctx, trim(ops(op)) // '/' // name)
        case (GPK_OP_PI)
          call check_pi(ctx, trim(ops(op)) // '/' // name)
        end select
      end do
      pinned = .false.
      call expect(gpk_set_variant(ctx, op), GPK_SUCCESS, 'gpk_set_variant to auto')
    end do
    call check_gemm(ctx, 'gemm/auto')
    call check_reduce(ctx, 'reduce/auto')
    call check_transpose(ctx, 'transpose/auto')
    call check_staged(ctx, backend)
    call check_pi(ctx, 'pi/auto')
  end subroutine check_context

  ! The transpose just made, of host arrays, went through the staging pipeline on the
  ! GPU: its trace has the copy in, the kernel and the copy out of each chunk.
  subroutine check_staged(ctx, backend)
    type(c_ptr), intent(in) :: ctx
    integer(c_int), intent(in) :: backend
    type(gpk_stage_event), allocatable :: events(:)
    integer(c_int64_t) :: count, total
    character(len=256) :: errmsg

    call expect(gpk_stage_trace(ctx, c_null_ptr, 0_c_int64_t, total), GPK_SUCCESS, 'gpk_stage_trace (count)')
    if (backend /= GPK_BACKEND_CUDA) then
      call check(total == 0, 'no trace on the host backend')
      return
    end if
    call check(total >= 3, 'a transpose of host arrays leaves a trace')
    if (total < 1) return
    allocate (events(total))
    errmsg = ''
    call expect(gpk_stage_trace(ctx, events, count, errmsg), GPK_SUCCESS, 'gpk_stage_trace ' // trim(errmsg))
    call check(count == total, 'the count does not change between two reads')
    call check(all(events%kind >= GPK_STAGE_COPY_IN .and. events%kind <= GPK_STAGE_COPY_OUT), 'event kinds')
    call check(all(events%end_ms >= events%start_ms), 'events end after they start')
    call check(any(events%kind == GPK_STAGE_COMPUTE), 'a kernel in the trace')
  end subroutine check_staged

  ! ------------------------------------------------------------------- gemm ---

  subroutine check_gemm(ctx, label)
    type(c_ptr), intent(in) :: ctx
    character(len=*), intent(in) :: label
    integer, parameter :: m = 7, n = 5, k = 9
    real(c_double) :: A(m, k), At(k, m), Bt(n, k), C0(m, n), want(m, n)
    real(c_double), target :: B(k, n), C(m, n)
    real(c_double), target :: big(m + 3, k + 2)
    real(c_float) :: As(m, k), Bs(k, n), Cs(m, n)

    call fill(A, 1.0d0)
    call fill(B, 2.0d0)
    call fill(C0, 3.0d0)
    At = transpose(A)
    Bt = transpose(B)
    want = reference(A, B, 1.0d0, 0.0d0, C0)

    C = huge(1.0d0)  ! beta = 0: C is not read
    if (succeeded(gpk_gemm(ctx, A, B, C), label // ' f64')) &
        call check(near(C, want, 1d-12), label // ' f64: C = A B')

    C = C0
    if (succeeded(gpk_gemm(ctx, A, B, C, alpha=0.5d0, beta=-2.0d0), label // ' f64 alpha beta')) &
        call check(near(C, reference(A, B, 0.5d0, -2.0d0, C0), 1d-12), label // ' f64: C = 0.5 A B - 2 C')

    C = 0
    if (succeeded(gpk_gemm(ctx, At, Bt, C, transa=GPK_TRANS, transb=GPK_TRANS), label // ' f64 TT')) &
        call check(near(C, want, 1d-12), label // ' f64: C = (A^T)^T (B^T)^T')

    C = 0
    if (succeeded(gpk_gemm(ctx, At, B, C, transa=GPK_TRANS), label // ' f64 TN')) &
        call check(near(C, want, 1d-12), label // ' f64: C = (A^T)^T B')

    As = real(A, c_float)
    Bs = real(B, c_float)
    Cs = 0
    if (succeeded(gpk_gemm(ctx, As, Bs, Cs), label // ' f32')) &
        call check(near(real(Cs, c_double), reference(real(As, c_double), real(Bs, c_double), 1.0d0, 0.0d0, C0), &
                     1d-5), label // ' f32: C = A B')

    ! A section of a bigger array is copied in and out by the compiler...
    big = 0
    big(2:m + 1, 3:k + 2) = A
    C = 0
    if (succeeded(gpk_gemm(ctx, big(2:m + 1, 3:k + 2), B, C), label // ' f64 section')) &
        call check(near(C, want, 1d-12), label // ' f64: C = A B with A a section')
    ! ...and the C form reads it in place, with a leading dimension.
    C = 0
    if (succeeded(gpk_gemm(ctx, GPK_F64, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, &
                               int(m, c_int64_t), int(n, c_int64_t), int(k, c_int64_t), 1.0d0, &
                               c_loc(big(2, 3)), int(m + 3, c_int64_t), c_loc(B), int(k, c_int64_t), &
                               0.0d0, c_loc(C), int(m, c_int64_t)), label // ' f64 C form with lda')) &
        call check(near(C, want, 1d-12), label // ' f64: the C form with lda = m + 3')

    ! Empty sizes are a quick return; k = 0 scales C by beta.
    C = C0
    if (succeeded(gpk_gemm(ctx, A(:, 1:0), B(1:0, :), C, beta=2.0d0), label // ' f64 k = 0')) &
        call check(near(C, 2 * C0, 0.0d0), label // ' f64: k = 0 gives beta C')
  end subroutine check_gemm

  function reference(A, B, alpha, beta, C) result(R)
    real(c_double), intent(in) :: A(:, :), B(:, :), alpha, beta, C(:, :)
    real(c_double) :: R(size(A, 1), size(B, 2))
    integer :: i, j, p
    do j = 1, size(B, 2)
      do i = 1, size(A, 1)
        R(i, j) = 0
        do p = 1, size(A, 2)
          R(i, j) = R(i, j) + A(i, p) * B(p, j)
        end do
        R(i, j) = alpha * R(i, j) + beta * C(i, j)
      end do
    end do
  end function reference

  subroutine fill(X, phase)
    real(c_double), intent(out) :: X(:, :)
    real(c_double), intent(in) :: phase
    integer :: i, j
    do j = 1, size(X, 2)
      do i = 1, size(X, 1)
        X(i, j) = sin(phase + 0.7d0 * i + 1.3d0 * j)
      end do
    end do
  end subroutine fill

  logical function near(got, want, rtol)
    real(c_double), intent(in) :: got(:, :), want(:, :), rtol
    near = all(abs(got - want) <= rtol * (1 + abs(want)))
  end function near

  ! ----------------------------------------------------------------- reduce ---

  subroutine check_reduce(ctx, label)
    type(c_ptr), intent(in) :: ctx
    character(len=*), intent(in) :: label
    integer, parameter :: n = 1000
    real(c_float) :: xs(n), rs
    real(c_double) :: xd(n), rd
    integer(c_int32_t) :: xi(n)
    integer(c_int64_t) :: xl(n), ri
    integer :: i

    do i = 1, n
      xd(i) = sin(0.37d0 * i)
      xi(i) = int(mod(i * 7919, 2001) - 1000, c_int32_t)
      xl(i) = int(i, c_int64_t) * 3000000000_c_int64_t * merge(1, -1, mod(i, 3) == 0)
    end do
    xs = real(xd, c_float)

    if (succeeded(gpk_reduce(ctx, xd, GPK_SUM, rd), label // ' f64 sum')) &
        call check(abs(rd - sum(xd)) <= 1d-12 * sum(abs(xd)), label // ' f64 sum')
    if (succeeded(gpk_reduce(ctx, xd, GPK_MIN, rd), label // ' f64 min')) &
        call check(rd == minval(xd), label // ' f64 min')
    if (succeeded(gpk_reduce(ctx, xd, GPK_MAX, rd), label // ' f64 max')) &
        call check(rd == maxval(xd), label // ' f64 max')

    if (succeeded(gpk_reduce(ctx, xs, GPK_SUM, rs), label // ' f32 sum')) &
        call check(abs(rs - sum(real(xs, c_double))) <= 1d-4 * sum(abs(real(xs, c_double))), label // ' f32 sum')
    if (succeeded(gpk_reduce(ctx, xs, GPK_MIN, rs), label // ' f32 min')) &
        call check(rs == minval(xs), label // ' f32 min')
    if (succeeded(gpk_reduce(ctx, xs, GPK_MAX, rs), label // ' f32 max')) &
        call check(rs == maxval(xs), label // ' f32 max')

    if (succeeded(gpk_reduce(ctx, xi, GPK_SUM, ri), label // ' i32 sum')) &
        call check(ri == sum(int(xi, c_int64_t)), label // ' i32 sum')
    if (succeeded(gpk_reduce(ctx, xi, GPK_MIN, ri), label // ' i32 min')) &
        call check(ri == minval(xi), label // ' i32 min')
    if (succeeded(gpk_reduce(ctx, xi, GPK_MAX, ri), label // ' i32 max')) &
        call check(ri == maxval(xi), label // ' i32 max')

    ! The sum of these int32 values overflows 32 bits; the result is 64-bit.
    xi = huge(1_c_int32_t)
    if (succeeded(gpk_reduce(ctx, xi, GPK_SUM, ri), label // ' i32 sum past 2^31')) &
        call check(ri == n * int(huge(1_c_int32_t), c_int64_t), label // ' i32 sum accumulates in 64 bits')

    if (succeeded(gpk_reduce(ctx, xl, GPK_SUM, ri), label // ' i64 sum')) &
        call check(ri == sum(xl), label // ' i64 sum')
    if (succeeded(gpk_reduce(ctx, xl, GPK_MIN, ri), label // ' i64 min')) &
        call check(ri == minval(xl), label // ' i64 min')
    if (succeeded(gpk_reduce(ctx, xl, GPK_MAX, ri), label // ' i64 max')) &
        call check(ri == maxval(xl), label // ' i64 max')

    ! Strided sections are copied to contiguous temporaries by the compiler.
    if (succeeded(gpk_reduce(ctx, xd(1:n:3), GPK_SUM, rd), label // ' f64 strided sum')) &
        call check(abs(rd - sum(xd(1:n:3))) <= 1d-12 * sum(abs(xd)), label // ' f64 strided sum')

    if (succeeded(gpk_reduce(ctx, xd(1:0), GPK_SUM, rd), label // ' f64 empty sum')) &
        call check(rd == 0, label // ' the sum of nothing is 0')
  end subroutine check_reduce

  ! -------------------------------------------------------------- transpose ---

  subroutine check_transpose(ctx, label)
    type(c_ptr), intent(in) :: ctx
    character(len=*), intent(in) :: label
    integer, parameter :: rows = 37, cols = 19
    real(c_double) :: ad(rows, cols), bd(cols, rows)
    real(c_float) :: as(rows, cols), bs(cols, rows)
    integer(c_int32_t) :: ai(rows, cols), bi(cols, rows)
    integer(c_int64_t) :: al(rows, cols), bl(cols, rows)
    integer :: i, j

    do j = 1, cols
      do i = 1, rows
        ad(i, j) = i + 1000.0d0 * j
        ai(i, j) = int(i - 1000 * j, c_int32_t)
        al(i, j) = int(i, c_int64_t) * 10000000000_c_int64_t + j
      end do
    end do
    as = real(ad, c_float)

    if (succeeded(gpk_transpose(ctx, ad, bd), label // ' f64')) &
        call check(all(bd == transpose(ad)), label // ' f64')
    if (succeeded(gpk_transpose(ctx, as, bs), label // ' f32')) &
        call check(all(bs == transpose(as)), label // ' f32')
    if (succeeded(gpk_transpose(ctx, ai, bi), label // ' i32')) &
        call check(all(bi == transpose(ai)), label // ' i32')
    if (succeeded(gpk_transpose(ctx, al, bl), label // ' i64')) &
        call check(all(bl == transpose(al)), label // ' i64')
  end subroutine check_transpose

  ! --------------------------------------------------------------------- pi ---

  subroutine check_pi(ctx, label)
    type(c_ptr), intent(in) :: ctx
    character(len=*), intent(in) :: label
    type(gpk_pi_result) :: r1, r2, r3, part(3)
    real(c_double), parameter :: pi = acos(-1.0d0)

    if (.not. succeeded(gpk_pi(ctx, 1000000, 42, r1), label // ' default integers')) return
    if (succeeded(gpk_pi(ctx, 1000000_c_int64_t, 42_c_int64_t, r2), label // ' C form')) &
        call check(r1%samples == 1000000 .and. r1%hits == r2%hits, label // ' is reproducible')
    call check(abs(r1%estimate - 4.0d0 * r1%hits / r1%samples) < 1d-15, label // ' estimate = 4 hits / samples')
    call check(abs(r1%estimate - pi) < 6 * r1%std_error, label // ' estimate within 6 standard errors')
    call check(r1%std_error > 0 .and. r1%std_error < 0.01d0, label // ' std_error is sane')
    if (succeeded(gpk_pi(ctx, 1000000, 43, r3), label // ' another seed')) &
        call check(r3%hits /= r1%hits, label // ' another seed, other hits')

    ! Uneven ranges, an empty one among them, add up to the whole run's hits.
    if (.not. succeeded(gpk_pi_range(ctx, 0, 333333, 42, part(1)), label // ' range, default integers')) return
    if (.not. succeeded(gpk_pi_range(ctx, 333333_c_int64_t, 0_c_int64_t, 42_c_int64_t, part(2)), &
                        label // ' empty range')) return
    if (.not. succeeded(gpk_pi_range(ctx, 333333_c_int64_t, 666667_c_int64_t, 42_c_int64_t, part(3)), &
                        label // ' range')) return
    call check(sum(part%hits) == r1%hits, label // ' ranges add up to the whole run''s hits')
    call check(sum(part%samples) == r1%samples, label // ' ranges add up to the whole run''s samples')
    call check(part(2)%hits == 0 .and. ieee_is_nan(part(2)%estimate), label // ' empty range: 0 hits, NaN')
  end subroutine check_pi

  ! ----------------------------------------------------------------- errors ---

  subroutine check_errors(ctx)
    type(c_ptr), intent(in) :: ctx
    real(c_double) :: A(4, 3), B(3, 2), C(4, 2), wrong(5, 2), x(0)
    real(c_double), target :: t(4, 4)
    real(c_double) :: r
    character(len=200) :: msg
    type(gpk_pi_result) :: p

    A = 1
    B = 1
    C = 7
    msg = ''
    call expect(gpk_gemm(ctx, A, A, C, errmsg=msg), GPK_ERROR_INVALID_ARGUMENT, 'gemm shape mismatch')
    call check(index(msg, 'op(B)') > 0, 'the shape error names op(B): ' // trim(msg))
    call check(all(C == 7), 'nothing is written on error')
    call expect(gpk_gemm(ctx, A, B, wrong, errmsg=msg), GPK_ERROR_INVALID_ARGUMENT, 'gemm C shape')
    call check(index(msg, 'C has 5') > 0, 'the shape error names C: ' // trim(msg))
    call expect(gpk_gemm(ctx, A, B, C, transa=7_c_int, errmsg=msg), GPK_ERROR_INVALID_ARGUMENT, 'bad transa')
    call check(index(msg, 'transa') > 0, 'the library names transa: ' // trim(msg))

    ! The library's own checks, through the C form.
    call expect(gpk_gemm(ctx, GPK_F64, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 4_c_int64_t, 4_c_int64_t, &
                         4_c_int64_t, 1.0d0, c_loc(t), 3_c_int64_t, c_loc(t), 4_c_int64_t, 0.0d0, c_loc(t), &
                         4_c_int64_t), GPK_ERROR_INVALID_ARGUMENT, 'lda too small')
    call check(index(gpk_last_error(ctx), 'lda') > 0, 'gpk_last_error names lda: ' // gpk_last_error(ctx))
    call check(index(gpk_last_error(c_null_ptr), 'lda') > 0, 'the thread''s last error names lda')

    call expect(gpk_transpose(ctx, A, C, errmsg=msg), GPK_ERROR_INVALID_ARGUMENT, 'transpose shape')
    call check(index(msg, 'transpose of A is 3 x 4') > 0, 'the shape error says what B must be: ' // trim(msg))
    call expect(gpk_reduce(ctx, x, GPK_MIN, r, errmsg=msg), GPK_ERROR_INVALID_ARGUMENT, 'min of nothing')
    call check(index(msg, 'n (0)') > 0, 'the library names n: ' // trim(msg))
    call expect(gpk_reduce(ctx, A(:, 1), 9_c_int, r, errmsg=msg), GPK_ERROR_INVALID_ARGUMENT, 'bad reduce op')
    call check(index(msg, 'op') > 0, 'the library names op: ' // trim(msg))
    call expect(gpk_pi(ctx, 0, 1, p, errmsg=msg), GPK_ERROR_INVALID_ARGUMENT, 'pi of no samples')
    call check(index(msg, 'samples') > 0, 'the library names samples: ' // trim(msg))
    ! first_sample 2^64 - 2 (the bits of -2): two more samples end past 2^64 - 1.
    call expect(gpk_pi_range(ctx, -2_c_int64_t, 2_c_int64_t, 1_c_int64_t, p), GPK_ERROR_INVALID_ARGUMENT, &
                'pi range past 64-bit indices')
    call check(index(gpk_last_error(ctx), 'first_sample') > 0, 'gpk_last_error names first_sample: ' // &
               gpk_last_error(ctx))

    ! Default integers are counts and indices: a negative one is rejected by name, and
    ! is never passed on as 2^64 - |value| (first_sample -1000 would otherwise count
    ! ten samples just below 2^64 and succeed).
    p%hits = -7
    msg = ''
    call expect(gpk_pi_range(ctx, -1000, 10, 42, p, errmsg=msg), GPK_ERROR_INVALID_ARGUMENT, &
                'pi range with a negative first_sample')
    call check(index(msg, 'first_sample (-1000)') > 0, 'the message names first_sample: ' // trim(msg))
    call check(p%hits == -7, 'a rejected range leaves the result alone')
    msg = ''
    call expect(gpk_pi_range(ctx, 5, -1, 42, p, errmsg=msg), GPK_ERROR_INVALID_ARGUMENT, &
                'pi range with a negative count')
    call check(index(msg, 'count (-1)') > 0, 'the message names count: ' // trim(msg))
    msg = ''
    call expect(gpk_pi(ctx, -5, 1, p, errmsg=msg), GPK_ERROR_INVALID_ARGUMENT, 'pi with negative samples')
    ! The rule is samples >= 1 (0 is refused too), so that is what the message says.
    call check(index(msg, 'gpk_pi: samples (-5) must be >= 1') > 0, 'the message names samples and its rule: ' &
               // trim(msg))
    call check(p%hits == -7, 'a rejected pi leaves the result alone')
    msg = ''
    call expect(gpk_pi(ctx, 0, 1, p, errmsg=msg), GPK_ERROR_INVALID_ARGUMENT, 'pi with no samples')
    call check(index(msg, 'samples (0) must be >= 1') > 0, 'the same rule for 0: ' // trim(msg))
    call check(p%hits == -7, 'a rejected pi leaves the result alone (0 samples)')
    ! A negative seed is a seed: the same bits as the C form's.
    block
      type(gpk_pi_result) :: q1, q2
      call expect(gpk_pi_range(ctx, 0, 1000, -3, q1), GPK_SUCCESS, 'pi range with a negative seed')
      call expect(gpk_pi_range(ctx, 0_c_int64_t, 1000_c_int64_t, -3_c_int64_t, q2), GPK_SUCCESS, &
                  'the C form, seed -3')
      call check(q1%hits == q2%hits .and. q1%samples == 1000, 'a negative seed draws the C form''s sequence')
    end block

    call expect(gpk_set_variant(ctx, GPK_OP_GEMM, 'no-such-variant'), GPK_ERROR_INVALID_ARGUMENT, 'bad variant')
    call check(index(gpk_last_error(ctx), 'no-such-variant') > 0, 'the message quotes the name')
    msg = ''
    call expect(gpk_set_variant(ctx, GPK_OP_GEMM, 'no-such-variant', errmsg=msg), GPK_ERROR_INVALID_ARGUMENT, &
                'bad variant, errmsg')
    call check(index(msg, 'no-such-variant') > 0, 'errmsg quotes the name: ' // trim(msg))
    ! C reads a name up to its first NUL: 'host' // NUL // 'x' would be taken as 'host',
    ! a variant the host backend has. The whole name is the name, so it is refused.
    msg = ''
    call expect(gpk_set_variant(ctx, GPK_OP_GEMM, 'host' // c_null_char // 'x', errmsg=msg), &
                GPK_ERROR_INVALID_ARGUMENT, 'a variant name with a NUL inside')
    call check(index(msg, 'gpk_set_variant: name') == 1 .and. index(msg, 'NUL') > 0, &
               'the message names name and the NUL: ' // trim(msg))
    call expect(gpk_set_variant(ctx, GPK_OP_GEMM, 'host' // c_null_char), GPK_ERROR_INVALID_ARGUMENT, &
                'a variant name ending in a NUL')
    call expect(gpk_set_variant(ctx, GPK_OP_GEMM, 'host  '), GPK_SUCCESS, &
                'trailing blanks are Fortran padding, not part of the name')
    call expect(gpk_set_variant(ctx, GPK_OP_GEMM), GPK_SUCCESS, 'gemm back to auto')
    call expect(gpk_set_validation(ctx, 1_c_int), GPK_ERROR_NOT_SUPPORTED, 'validation on the host backend')
    call expect(gpk_set_validation(ctx, 0_c_int), GPK_SUCCESS, 'validation off')
    call expect(gpk_set_staging(ctx, 2_c_int, 4096_c_size_t, 0_c_size_t), GPK_SUCCESS, 'gpk_set_staging')
    call expect(gpk_set_staging(ctx, 17_c_int, 0_c_size_t, 0_c_size_t), GPK_ERROR_INVALID_ARGUMENT, &
                'gpk_set_staging with 17 streams')
    call check(index(gpk_last_error(ctx), 'streams') > 0, 'the message names streams')
    call expect(gpk_set_staging(ctx, 4_c_int, 0_c_size_t, 0_c_size_t), GPK_SUCCESS, 'gpk_set_staging defaults')
    block
      type(gpk_stage_event) :: events(4)
      integer(c_int64_t) :: count
      count = -1
      call expect(gpk_stage_trace(ctx, c_null_ptr, 0_c_int64_t, count), GPK_SUCCESS, 'gpk_stage_trace (count)')
      call check(count == 0, 'no trace on the host backend')
      count = -1
      call expect(gpk_stage_trace(ctx, events, count), GPK_SUCCESS, 'gpk_stage_trace (array)')
      call check(count == 0, 'no trace on the host backend (array)')
      call expect(gpk_stage_trace(ctx, c_null_ptr, 1_c_int64_t, count), GPK_ERROR_INVALID_ARGUMENT, &
                  'gpk_stage_trace with events NULL and capacity 1')
    end block
    call expect(gpk_set_stream(ctx, c_null_ptr), GPK_SUCCESS, 'the default stream')
    call expect(gpk_synchronize(ctx), GPK_SUCCESS, 'gpk_synchronize')
    call expect(gpk_synchronize(c_null_ptr), GPK_ERROR_INVALID_HANDLE, 'a NULL context')
  end subroutine check_errors

end program test_gpk
