! What the Fortran tests share: the counts of checks passed and failed, check and
! expect (a status against the one wanted, with the library's last message where
! they differ), the bitwise comparison of exact F32 results, the F16 and BF16 bits
! of small powers of two, and the closing line and exit status. Compiled into each
! test program (bindings/meson.build).
module gpk_test
  use, intrinsic :: iso_c_binding
  use gpk, only: gpk_last_error
  implicit none
  private
  public :: check, expect, same, finish

  integer, public :: passed = 0, failed = 0
  ! F16 and BF16 bits of 1, 2 and 0.5.
  integer(c_int16_t), parameter, public :: F16_ONE = int(z'3C00', c_int16_t), F16_TWO = int(z'4000', c_int16_t)
  integer(c_int16_t), parameter, public :: F16_HALF = int(z'3800', c_int16_t)
  integer(c_int16_t), parameter, public :: BF16_ONE = int(z'3F80', c_int16_t), BF16_TWO = int(z'4000', c_int16_t)
  integer(c_int16_t), parameter, public :: BF16_HALF = int(z'3F00', c_int16_t)

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
    if (got /= want) print '(a,a)', '  last error: ', gpk_last_error(c_null_ptr)
  end subroutine expect

  !> Whether two floats have the same bits: the results compared this way are exact,
  !> so -0 and 0, or two NaNs, are told apart too.
  elemental logical function same(a, b)
    real(c_float), intent(in) :: a, b
    same = transfer(a, 0_c_int32_t) == transfer(b, 0_c_int32_t)
  end function same

  !> The counts, then a failing exit status if any check failed. A program that skips
  !> checks (no GPU) gives their count too.
  subroutine finish(skipped)
    integer, intent(in), optional :: skipped
    if (present(skipped)) then
      print '(i0," passed, ",i0," failed, ",i0," skipped")', passed, failed, skipped
    else
      print '(i0," passed, ",i0," failed")', passed, failed
    end if
    if (failed > 0) error stop 1
  end subroutine finish

end module gpk_test
