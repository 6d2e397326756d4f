!> Fortran bindings of libgpk (include/gpk/gpk.h is the reference for semantics).
!>
!> Two layers in one module:
!>  * bind(c) interfaces to every C function. Contexts and arrays are type(c_ptr).
!>    gpk_gemm, gpk_reduce, gpk_transpose, gpk_pi and gpk_pi_range are generic
!>    names whose C-shaped form (specifics gpk_*_c) takes exactly the C
!>    arguments; the four functions that pass C strings are bound as
!>    gpk_last_error_c, gpk_status_string_c, gpk_variant_name_c and
!>    gpk_set_variant_c, and their C names are Fortran functions that take and
!>    return Fortran strings.
!>  * Array forms of the generics, for column-major Fortran arrays, so that no
!>    c_loc is written: gpk_gemm on real(c_float) / real(c_double) matrices,
!>    gpk_transpose on real and integer matrices, gpk_reduce on vectors, gpk_pi
!>    and gpk_pi_range with default integers. They return a gpk status, like the
!>    C functions, and take an optional errmsg that receives why a call failed:
!>    the library's message, or the rule the arguments broke that only the
!>    module can see (Fortran shapes, a dtype the arrays' kind does not hold, a
!>    default integer below its rule's least value, a NUL inside a variant
!>    name), checked before any C call. Such a refusal is
!>    GPK_ERROR_INVALID_ARGUMENT with a message that names the call, the
!>    argument and the rule; it reaches errmsg alone, since the C API has no way
!>    to set gpk_last_error, which keeps the library's own last message.
!>    gpk_set_variant takes an optional errmsg too.
!>
!> gpk_set_staging binds as is (size_t arguments are integer(c_size_t)); the generic
!> gpk_stage_trace has the C-shaped specific gpk_stage_trace_c (events as a c_ptr,
!> c_null_ptr to ask for the count) and an array form that fills events(:).
!>
!> F16 and BF16 data travel in integer(c_int16_t) arrays holding the elements' bits:
!> the gpk_gemm, gpk_reduce and gpk_transpose generics take such arrays after a dtype
!> argument, e.g. gpk_gemm(ctx, GPK_BF16, A, B, C); a 16-bit reduce writes a
!> real(c_float). The dtype must be GPK_F16 or GPK_BF16: any other would have the
!> library read and write elements of 4 or 8 bytes in 2-byte arrays (and 8 bytes
!> into the 4-byte result), so it is refused. The other array forms take no dtype:
!> each passes the one its arrays hold (and its result kind: real(c_float) for F32,
!> real(c_double) for F64, integer(c_int64_t) for I32 and I64).
!> gpk_set_math_mode / gpk_get_math_mode bind as is.
!>
!> gpk_gemm_ex and gpk_gemm_blockscaled are generic too: their C-shaped specifics
!> gpk_gemm_ex_c and gpk_gemm_blockscaled_c, and array forms whose arguments follow
!> the C order, a dtype before each array: FP8 A and B in integer(c_int8_t) arrays
!> (a_dtype, b_dtype GPK_F8E4M3 or GPK_F8E5M2) with C real(c_float) (C is F32), or
!> with a c_dtype (GPK_F16 or GPK_BF16) and C integer(c_int16_t); and for
!> gpk_gemm_ex, F16 or BF16 A and B in integer(c_int16_t) arrays with C
!> real(c_float). E.g. gpk_gemm_ex(ctx, GPK_F8E4M3, A, GPK_F8E5M2, B, GPK_BF16, C)
!> or gpk_gemm_blockscaled(ctx, GPK_F8E4M3, A, scale_a, GPK_F8E4M3, B, scale_b, C).
!> Each array form takes only the dtypes its arrays hold (any other would have the
!> library read or write elements of another size); the combinations themselves
!> are the library's rule. The scales are real(c_float) arrays scale_a(m, kb) and
!> scale_b(nb, kb), kb = ceil(k / 128), nb = ceil(n / 128): column-major, the order
!> the C API reads them in (scale_a(i, q) is op(A)'s row i over block q along k).
!>
!> gpk_gemm_strided_batched is generic too: its C-shaped specific
!> gpk_gemm_strided_batched_c, and array forms on rank-3 real(c_float) /
!> real(c_double) arrays A(:, :, b), B(:, :, b), C(:, :, b), product b in the last
!> dimension (column-major, so each product is packed and the stride is one
!> matrix); an A or B whose last extent is 1 is shared by every product (stride 0).
!>
!> The C API's uint64_t arguments (gpk_pi's samples and seed, gpk_pi_range's
!> first_sample and count, and the fields of gpk_pi_result and gpk_stage_event) are
!> integer(c_int64_t) here: the same bits, read as signed. The array forms' default
!> integers are counts and indices, so a negative first_sample or count, or a
!> samples below 1 (the C rule), is GPK_ERROR_INVALID_ARGUMENT there (naming it in
!> errmsg) instead of a huge unsigned value; a negative seed is a seed like any other.
module gpk
  use, intrinsic :: iso_c_binding
  implicit none
  private :: c_string, report, fail, too_small, dtype16, dtype_in, gemm_sizes, blockscale_sizes, mixed_options, &
    mixed_call, first_int8, first_int16, first_float, batch_sizes, transpose_any, strlen

  ! ---------------------------------------------------------------- constants --

  integer(c_int), parameter :: GPK_VERSION_MAJOR = 0
  integer(c_int), parameter :: GPK_VERSION_MINOR = 1
  integer(c_int), parameter :: GPK_VERSION_PATCH = 0

  integer(c_int), parameter :: GPK_SUCCESS = 0
  integer(c_int), parameter :: GPK_ERROR_INVALID_ARGUMENT = 1
  integer(c_int), parameter :: GPK_ERROR_INVALID_HANDLE = 2
  integer(c_int), parameter :: GPK_ERROR_NO_DEVICE = 3
  integer(c_int), parameter :: GPK_ERROR_OUT_OF_MEMORY = 4
  integer(c_int), parameter :: GPK_ERROR_NOT_SUPPORTED = 5
  integer(c_int), parameter :: GPK_ERROR_CUDA = 6
  integer(c_int), parameter :: GPK_ERROR_CUBLAS = 7
  integer(c_int), parameter :: GPK_ERROR_CURAND = 8
  integer(c_int), parameter :: GPK_ERROR_VALIDATION = 9
  integer(c_int), parameter :: GPK_ERROR_INTERNAL = 99

  integer(c_int), parameter :: GPK_BACKEND_AUTO = 0
  integer(c_int), parameter :: GPK_BACKEND_CUDA = 1
  integer(c_int), parameter :: GPK_BACKEND_HOST = 2

  integer(c_int), parameter :: GPK_F32 = 0
  integer(c_int), parameter :: GPK_F64 = 1
  integer(c_int), parameter :: GPK_I32 = 2
  integer(c_int), parameter :: GPK_I64 = 3
  integer(c_int), parameter :: GPK_F16 = 4
  integer(c_int), parameter :: GPK_BF16 = 5
  ! OCP FP8, 1-byte elements: inputs of gpk_gemm_ex and gpk_gemm_blockscaled only.
  integer(c_int), parameter :: GPK_F8E4M3 = 6
  integer(c_int), parameter :: GPK_F8E5M2 = 7

  integer(c_int), parameter :: GPK_MATH_DEFAULT = 0
  integer(c_int), parameter :: GPK_MATH_TF32 = 1

  integer(c_int), parameter :: GPK_ROW_MAJOR = 101
  integer(c_int), parameter :: GPK_COL_MAJOR = 102

  integer(c_int), parameter :: GPK_NO_TRANS = 111
  integer(c_int), parameter :: GPK_TRANS = 112

  integer(c_int), parameter :: GPK_SUM = 0
  integer(c_int), parameter :: GPK_MIN = 1
  integer(c_int), parameter :: GPK_MAX = 2

  integer(c_int), parameter :: GPK_OP_GEMM = 0
  integer(c_int), parameter :: GPK_OP_REDUCE = 1
  integer(c_int), parameter :: GPK_OP_TRANSPOSE = 2
  integer(c_int), parameter :: GPK_OP_PI = 3
  integer(c_int), parameter :: GPK_OP_GEMM_BATCHED = 4

  integer(c_int), parameter :: GPK_STAGE_COPY_IN = 0
  integer(c_int), parameter :: GPK_STAGE_COMPUTE = 1
  integer(c_int), parameter :: GPK_STAGE_COPY_OUT = 2

  !> What gpk_pi reports: estimate = 4 * hits / samples,
  !> std_error = 4 * sqrt(p * (1 - p) / samples) with p = hits / samples.
  type, bind(c) :: gpk_pi_result
    real(c_double) :: estimate
    real(c_double) :: std_error
    integer(c_int64_t) :: samples
    integer(c_int64_t) :: hits
  end type gpk_pi_result

  !> One step of the last call through the staging pipeline (gpk_stage_trace): a
  !> copy in, a kernel or a copy out (kind GPK_STAGE_*) of chunk `chunk` on pipeline
  !> stream `stream`, `bytes` moved (0 for a kernel), GPU times in milliseconds from
  !> the call's start.
  type, bind(c) :: gpk_stage_event
    integer(c_int32_t) :: kind
    integer(c_int32_t) :: stream
    integer(c_int64_t) :: chunk
    integer(c_int64_t) :: bytes
    real(c_double) :: start_ms
    real(c_double) :: end_ms
  end type gpk_stage_event

  ! --------------------------------------------------------- the C functions --

  interface
    subroutine gpk_version(major, minor, patch) bind(c, name='gpk_version')
      import :: c_int
      integer(c_int), intent(out) :: major, minor, patch
    end subroutine gpk_version

    function gpk_status_string_c(status) bind(c, name='gpk_status_string') result(text)
      import :: c_int, c_ptr
      integer(c_int), value :: status
      type(c_ptr) :: text
    end function gpk_status_string_c

    function gpk_last_error_c(ctx) bind(c, name='gpk_last_error') result(text)
      import :: c_ptr
      type(c_ptr), value :: ctx
      type(c_ptr) :: text
    end function gpk_last_error_c

    function gpk_create(ctx, backend, device) bind(c, name='gpk_create') result(status)
      import :: c_int, c_ptr
      type(c_ptr), intent(out) :: ctx
      integer(c_int), value :: backend, device
      integer(c_int) :: status
    end function gpk_create

    function gpk_destroy(ctx) bind(c, name='gpk_destroy') result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int) :: status
    end function gpk_destroy

    function gpk_get_backend(ctx, backend) bind(c, name='gpk_get_backend') result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), intent(out) :: backend
      integer(c_int) :: status
    end function gpk_get_backend

    function gpk_set_stream(ctx, cuda_stream) bind(c, name='gpk_set_stream') result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx, cuda_stream
      integer(c_int) :: status
    end function gpk_set_stream

    function gpk_synchronize(ctx) bind(c, name='gpk_synchronize') result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int) :: status
    end function gpk_synchronize

    function gpk_variant_count(ctx, op, count) bind(c, name='gpk_variant_count') result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), value :: op
      integer(c_int), intent(out) :: count
      integer(c_int) :: status
    end function gpk_variant_count

    function gpk_variant_name_c(ctx, op, index) bind(c, name='gpk_variant_name') result(name)
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), value :: op, index
      type(c_ptr) :: name
    end function gpk_variant_name_c

    function gpk_set_variant_c(ctx, op, name) bind(c, name='gpk_set_variant') result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx, name
      integer(c_int), value :: op
      integer(c_int) :: status
    end function gpk_set_variant_c

    function gpk_set_validation(ctx, enabled) bind(c, name='gpk_set_validation') result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), value :: enabled
      integer(c_int) :: status
    end function gpk_set_validation

    !> Streams (1 to 16), chunk size and device memory cap of the staging pipeline
    !> (0: the library's choice, no cap); see include/gpk/gpk.h.
    function gpk_set_staging(ctx, streams, chunk_bytes, device_bytes) bind(c, name='gpk_set_staging') &
        result(status)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: ctx
      integer(c_int), value :: streams
      integer(c_size_t), value :: chunk_bytes, device_bytes
      integer(c_int) :: status
    end function gpk_set_staging

    !> The arithmetic of F32 gemm: GPK_MATH_DEFAULT (exact FP32) or GPK_MATH_TF32.
    function gpk_set_math_mode(ctx, mode) bind(c, name='gpk_set_math_mode') result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), value :: mode
      integer(c_int) :: status
    end function gpk_set_math_mode

    function gpk_get_math_mode(ctx, mode) bind(c, name='gpk_get_math_mode') result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), intent(out) :: mode
      integer(c_int) :: status
    end function gpk_get_math_mode

    function strlen(s) bind(c, name='strlen') result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function strlen
  end interface

  interface gpk_gemm
    function gpk_gemm_c(ctx, dtype, layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc) &
        bind(c, name='gpk_gemm') result(status)
      import :: c_int, c_int64_t, c_double, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), value :: dtype, layout, transa, transb
      integer(c_int64_t), value :: m, n, k
      real(c_double), value :: alpha
      type(c_ptr), value :: A
      integer(c_int64_t), value :: lda
      type(c_ptr), value :: B
      integer(c_int64_t), value :: ldb
      real(c_double), value :: beta
      type(c_ptr), value :: C
      integer(c_int64_t), value :: ldc
      integer(c_int) :: status
    end function gpk_gemm_c
    module procedure gpk_gemm_f32, gpk_gemm_f64
    module procedure gpk_gemm_16bit
  end interface gpk_gemm

  interface gpk_gemm_strided_batched
    function gpk_gemm_strided_batched_c(ctx, dtype, layout, transa, transb, m, n, k, alpha, A, lda, stride_a, &
                                        B, ldb, stride_b, beta, C, ldc, stride_c, batch_count) &
        bind(c, name='gpk_gemm_strided_batched') result(status)
      import :: c_int, c_int64_t, c_double, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), value :: dtype, layout, transa, transb
      integer(c_int64_t), value :: m, n, k
      real(c_double), value :: alpha
      type(c_ptr), value :: A
      integer(c_int64_t), value :: lda, stride_a
      type(c_ptr), value :: B
      integer(c_int64_t), value :: ldb, stride_b
      real(c_double), value :: beta
      type(c_ptr), value :: C
      integer(c_int64_t), value :: ldc, stride_c, batch_count
      integer(c_int) :: status
    end function gpk_gemm_strided_batched_c
    module procedure gpk_gemm_batched_f32, gpk_gemm_batched_f64
  end interface gpk_gemm_strided_batched

  interface gpk_gemm_ex
    function gpk_gemm_ex_c(ctx, layout, transa, transb, m, n, k, alpha, a_dtype, A, lda, b_dtype, B, ldb, &
                           beta, c_dtype, C, ldc) bind(c, name='gpk_gemm_ex') result(status)
      import :: c_int, c_int64_t, c_double, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), value :: layout, transa, transb
      integer(c_int64_t), value :: m, n, k
      real(c_double), value :: alpha
      integer(c_int), value :: a_dtype
      type(c_ptr), value :: A
      integer(c_int64_t), value :: lda
      integer(c_int), value :: b_dtype
      type(c_ptr), value :: B
      integer(c_int64_t), value :: ldb
      real(c_double), value :: beta
      integer(c_int), value :: c_dtype
      type(c_ptr), value :: C
      integer(c_int64_t), value :: ldc
      integer(c_int) :: status
    end function gpk_gemm_ex_c
    module procedure gpk_gemm_ex_f8_f32, gpk_gemm_ex_f8_16bit, gpk_gemm_ex_16bit_f32
  end interface gpk_gemm_ex

  interface gpk_gemm_blockscaled
    function gpk_gemm_blockscaled_c(ctx, layout, transa, transb, m, n, k, alpha, a_dtype, A, lda, scale_a, &
                                    b_dtype, B, ldb, scale_b, beta, c_dtype, C, ldc) &
        bind(c, name='gpk_gemm_blockscaled') result(status)
      import :: c_int, c_int64_t, c_double, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), value :: layout, transa, transb
      integer(c_int64_t), value :: m, n, k
      real(c_double), value :: alpha
      integer(c_int), value :: a_dtype
      type(c_ptr), value :: A
      integer(c_int64_t), value :: lda
      type(c_ptr), value :: scale_a
      integer(c_int), value :: b_dtype
      type(c_ptr), value :: B
      integer(c_int64_t), value :: ldb
      type(c_ptr), value :: scale_b
      real(c_double), value :: beta
      integer(c_int), value :: c_dtype
      type(c_ptr), value :: C
      integer(c_int64_t), value :: ldc
      integer(c_int) :: status
    end function gpk_gemm_blockscaled_c
    module procedure gpk_gemm_blockscaled_f32, gpk_gemm_blockscaled_16bit
  end interface gpk_gemm_blockscaled

  interface gpk_reduce
    function gpk_reduce_c(ctx, dtype, op, x, n, res) bind(c, name='gpk_reduce') result(status)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), value :: dtype, op
      type(c_ptr), value :: x
      integer(c_int64_t), value :: n
      type(c_ptr), value :: res
      integer(c_int) :: status
    end function gpk_reduce_c
    module procedure gpk_reduce_f32, gpk_reduce_f64, gpk_reduce_i32, gpk_reduce_i64
    module procedure gpk_reduce_16bit
  end interface gpk_reduce

  interface gpk_transpose
    function gpk_transpose_c(ctx, dtype, layout, rows, cols, A, lda, B, ldb) &
        bind(c, name='gpk_transpose') result(status)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), value :: dtype, layout
      integer(c_int64_t), value :: rows, cols
      type(c_ptr), value :: A
      integer(c_int64_t), value :: lda
      type(c_ptr), value :: B
      integer(c_int64_t), value :: ldb
      integer(c_int) :: status
    end function gpk_transpose_c
    module procedure gpk_transpose_f32, gpk_transpose_f64, gpk_transpose_i32, gpk_transpose_i64
    module procedure gpk_transpose_16bit
  end interface gpk_transpose

  interface gpk_stage_trace
    function gpk_stage_trace_c(ctx, events, capacity, count) bind(c, name='gpk_stage_trace') result(status)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: ctx, events
      integer(c_int64_t), value :: capacity
      integer(c_int64_t), intent(out) :: count
      integer(c_int) :: status
    end function gpk_stage_trace_c
    module procedure gpk_stage_trace_array
  end interface gpk_stage_trace

  interface gpk_pi
    function gpk_pi_c(ctx, samples, seed, res) bind(c, name='gpk_pi') result(status)
      import :: c_int, c_int64_t, c_ptr, gpk_pi_result
      type(c_ptr), value :: ctx
      integer(c_int64_t), value :: samples, seed
      type(gpk_pi_result), intent(out) :: res
      integer(c_int) :: status
    end function gpk_pi_c
    module procedure gpk_pi_int
  end interface gpk_pi

  !> Hits among samples [first_sample, first_sample + count) of the sequence gpk_pi
  !> draws for seed: ranges that split [0, samples) add up exactly to gpk_pi's hits,
  !> so MPI ranks can each count their own (first_sample + count <= 2^64 - 1; count
  !> 0 gives hits 0 and NaN estimate and std_error).
  interface gpk_pi_range
    function gpk_pi_range_c(ctx, first_sample, count, seed, res) bind(c, name='gpk_pi_range') result(status)
      import :: c_int, c_int64_t, c_ptr, gpk_pi_result
      type(c_ptr), value :: ctx
      integer(c_int64_t), value :: first_sample, count, seed
      type(gpk_pi_result), intent(out) :: res
      integer(c_int) :: status
    end function gpk_pi_range_c
    module procedure gpk_pi_range_int
  end interface gpk_pi_range

contains

  ! ----------------------------------------------------------------- strings --

  !> A Fortran copy of a NUL-terminated C string ('' for NULL).
  function c_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n

    if (.not. c_associated(p)) then
      s = ''
      return
    end if
    n = int(strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate (character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function c_string

  !> The message of the last failed call on ctx (c_null_ptr: on this thread).
  function gpk_last_error(ctx) result(text)
    type(c_ptr), intent(in) :: ctx
    character(len=:), allocatable :: text
    text = c_string(gpk_last_error_c(ctx))
  end function gpk_last_error

  function gpk_status_string(status) result(text)
    integer(c_int), intent(in) :: status
    character(len=:), allocatable :: text
    text = c_string(gpk_status_string_c(status))
  end function gpk_status_string

  !> The name of variant `index` (from 0) of `op`; '' when out of range.
  function gpk_variant_name(ctx, op, index) result(name)
    type(c_ptr), intent(in) :: ctx
    integer(c_int), intent(in) :: op, index
    character(len=:), allocatable :: name
    name = c_string(gpk_variant_name_c(ctx, op, index))
  end function gpk_variant_name

  !> Chooses the variant of `op` by name; an absent name (or 'auto') restores the
  !> default. Trailing blanks are padding, not part of the name; a NUL anywhere in it
  !> is refused, since C would read the name only up to there ('host' // c_null_char
  !> // 'x' would choose 'host').
  function gpk_set_variant(ctx, op, name, errmsg) result(status)
    type(c_ptr), intent(in) :: ctx
    integer(c_int), intent(in) :: op
    character(len=*), intent(in), optional :: name
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    character(kind=c_char), allocatable, target :: buffer(:)
    character(len=160) :: message
    integer :: i, n

    if (.not. present(name)) then
      status = gpk_set_variant_c(ctx, op, c_null_ptr)
      call report(ctx, status, errmsg)
      return
    end if
    n = len_trim(name)
    i = index(name(1:n), c_null_char)
    if (i > 0) then
      write (message, '(a,i0,a,i0,a)') 'gpk_set_variant: name contains a NUL character (at ', i, ' of ', n, &
        '); a variant name is one C string'
      status = fail(trim(message), errmsg)
      return
    end if
    allocate (buffer(n + 1))
    do i = 1, n
      buffer(i) = name(i:i)
    end do
    buffer(n + 1) = c_null_char
    status = gpk_set_variant_c(ctx, op, c_loc(buffer))
    call report(ctx, status, errmsg)
  end function gpk_set_variant

  ! ----------------------------------------------------------------- helpers --

  !> Writes the library's message to errmsg after a failed call.
  subroutine report(ctx, status, errmsg)
    type(c_ptr), intent(in) :: ctx
    integer(c_int), intent(in) :: status
    character(len=*), intent(inout), optional :: errmsg
    if (status /= GPK_SUCCESS .and. present(errmsg)) errmsg = gpk_last_error(ctx)
  end subroutine report

  !> An argument error found before any C call: INVALID_ARGUMENT and its message.
  function fail(message, errmsg) result(status)
    character(len=*), intent(in) :: message
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    status = GPK_ERROR_INVALID_ARGUMENT
    if (present(errmsg)) errmsg = message
  end function fail

  !> The dtype of a 16-bit array form: GPK_F16 or GPK_BF16, the dtypes whose elements
  !> integer(c_int16_t) arrays hold (and whose reduce gives a real(c_float)); any
  !> other is refused by name, before the library can read or write past the arrays.
  function dtype16(call, dtype, arrays, errmsg) result(status)
    character(len=*), intent(in) :: call, arrays
    integer(c_int), intent(in) :: dtype
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    character(len=*), parameter :: names(0:5) = [character(len=8) :: 'GPK_F32', 'GPK_F64', 'GPK_I32', &
                                                 'GPK_I64', 'GPK_F16', 'GPK_BF16']
    character(len=200) :: message

    status = GPK_SUCCESS
    if (dtype == GPK_F16 .or. dtype == GPK_BF16) return
    if (dtype >= lbound(names, 1) .and. dtype <= ubound(names, 1)) then
      write (message, '(a,a,a,a,a)') call, ': dtype (', trim(names(dtype)), ') must be GPK_F16 or GPK_BF16 with ', &
        arrays
    else
      write (message, '(a,a,i0,a,a)') call, ': dtype (', dtype, ') must be GPK_F16 or GPK_BF16 with ', arrays
    end if
    status = fail(trim(message), errmsg)
  end function dtype16

  !> A dtype argument `name` of an array form that holds elements of `first` or
  !> `second` only (the two dtypes of the arrays' size): anything else is refused by
  !> name, before the library can read or write past the arrays.
  function dtype_in(call, name, dtype, first, second, arrays, errmsg) result(status)
    character(len=*), intent(in) :: call, name, arrays
    integer(c_int), intent(in) :: dtype, first, second
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    character(len=*), parameter :: names(0:7) = [character(len=10) :: 'GPK_F32', 'GPK_F64', 'GPK_I32', &
                                                 'GPK_I64', 'GPK_F16', 'GPK_BF16', 'GPK_F8E4M3', 'GPK_F8E5M2']
    character(len=240) :: message
    character(len=24) :: given

    status = GPK_SUCCESS
    if (dtype == first .or. dtype == second) return
    if (dtype >= lbound(names, 1) .and. dtype <= ubound(names, 1)) then
      given = names(dtype)
    else
      write (given, '(i0)') dtype
    end if
    write (message, '(12a)') call, ': ', name, ' (', trim(given), ') must be ', trim(names(first)), ' or ', &
      trim(names(second)), ' with ', arrays
    status = fail(trim(message), errmsg)
  end function dtype_in

  !> The blocks of gpk_gemm_blockscaled: scale_a must be m x kb and scale_b nb x kb
  !> (kb = ceil(k / 128), nb = ceil(n / 128)), else the rule, naming the scale.
  function blockscale_sizes(shape_sa, shape_sb, m, n, k, errmsg) result(status)
    integer(c_int64_t), intent(in) :: shape_sa(2), shape_sb(2), m, n, k
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    integer(c_int64_t) :: kb, nb
    character(len=200) :: message

    status = GPK_SUCCESS
    kb = (k + 127) / 128
    nb = (n + 127) / 128
    if (shape_sa(1) /= m .or. shape_sa(2) /= kb) then
      write (message, '(a,i0,a,i0,a,i0,a,i0,a)') 'gpk_gemm_blockscaled: scale_a is ', shape_sa(1), ' x ', &
        shape_sa(2), ' but must be ', m, ' x ', kb, ' (m x ceil(k / 128))'
      status = fail(trim(message), errmsg)
    else if (shape_sb(1) /= nb .or. shape_sb(2) /= kb) then
      write (message, '(a,i0,a,i0,a,i0,a,i0,a)') 'gpk_gemm_blockscaled: scale_b is ', shape_sb(1), ' x ', &
        shape_sb(2), ' but must be ', nb, ' x ', kb, ' (ceil(n / 128) x ceil(k / 128))'
      status = fail(trim(message), errmsg)
    end if
  end function blockscale_sizes

  !> m, n, k of C = op(A) op(B) from the shapes, or the shape rule they break (the
  !> message names `call`, the generic the user called).
  function gemm_sizes(call, shape_a, shape_b, shape_c, transa, transb, m, n, k, errmsg) result(status)
    character(len=*), intent(in) :: call
    integer(c_int64_t), intent(in) :: shape_a(2), shape_b(2), shape_c(2)
    integer(c_int), intent(in) :: transa, transb
    integer(c_int64_t), intent(out) :: m, n, k
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    integer(c_int64_t) :: a_rows, b_rows, b_cols
    character(len=160) :: message

    status = GPK_SUCCESS
    m = shape_c(1)
    n = shape_c(2)
    a_rows = shape_a(1)
    k = shape_a(2)
    if (transa == GPK_TRANS) then
      a_rows = shape_a(2)
      k = shape_a(1)
    end if
    b_rows = shape_b(1)
    b_cols = shape_b(2)
    if (transb == GPK_TRANS) then
      b_rows = shape_b(2)
      b_cols = shape_b(1)
    end if
    ! Unknown trans values go to the library, which names them.
    if ((transa /= GPK_NO_TRANS .and. transa /= GPK_TRANS) .or. &
        (transb /= GPK_NO_TRANS .and. transb /= GPK_TRANS)) return
    if (a_rows /= m) then
      write (message, '(a,a,i0,a,i0,a)') call, ': op(A) has ', a_rows, ' rows but C has ', m, ' (m)'
      status = fail(trim(message), errmsg)
    else if (b_cols /= n) then
      write (message, '(a,a,i0,a,i0,a)') call, ': op(B) has ', b_cols, ' columns but C has ', n, ' (n)'
      status = fail(trim(message), errmsg)
    else if (b_rows /= k) then
      write (message, '(a,a,i0,a,i0,a)') call, ': op(B) has ', b_rows, ' rows but op(A) has ', k, &
        ' columns (k)'
      status = fail(trim(message), errmsg)
    end if
  end function gemm_sizes

  ! ------------------------------------------------------------------- gemm ---

  !> C = alpha * op(A) * op(B) + beta * C on column-major arrays; alpha defaults
  !> to 1, beta to 0 (C is then not read), transa/transb to GPK_NO_TRANS.
  function gpk_gemm_f32(ctx, A, B, C, alpha, beta, transa, transb, errmsg) result(status)
    type(c_ptr), intent(in) :: ctx
    real(c_float), intent(in), target, contiguous :: A(:, :), B(:, :)
    real(c_float), intent(inout), target, contiguous :: C(:, :)
    real(c_float), intent(in), optional :: alpha, beta
    integer(c_int), intent(in), optional :: transa, transb
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    real(c_double) :: al, be
    integer(c_int) :: ta, tb
    integer(c_int64_t) :: m, n, k
    type(c_ptr) :: pa, pb, pc

    al = 1
    be = 0
    ta = GPK_NO_TRANS
    tb = GPK_NO_TRANS
    if (present(alpha)) al = alpha
    if (present(beta)) be = beta
    if (present(transa)) ta = transa
    if (present(transb)) tb = transb
    status = gemm_sizes('gpk_gemm', shape(A, kind=c_int64_t), shape(B, kind=c_int64_t), shape(C, kind=c_int64_t), &
                        ta, tb, m, n, k, errmsg)
    if (status /= GPK_SUCCESS) return
    ! c_loc needs a nonzero size; the library reads no empty array.
    pa = c_null_ptr
    pb = c_null_ptr
    pc = c_null_ptr
    if (size(A) > 0) pa = c_loc(A)
    if (size(B) > 0) pb = c_loc(B)
    if (size(C) > 0) pc = c_loc(C)
    status = gpk_gemm_c(ctx, GPK_F32, GPK_COL_MAJOR, ta, tb, m, n, k, al, &
                        pa, max(1_c_int64_t, size(A, 1, kind=c_int64_t)), &
                        pb, max(1_c_int64_t, size(B, 1, kind=c_int64_t)), &
                        be, pc, max(1_c_int64_t, size(C, 1, kind=c_int64_t)))
    call report(ctx, status, errmsg)
  end function gpk_gemm_f32

  function gpk_gemm_f64(ctx, A, B, C, alpha, beta, transa, transb, errmsg) result(status)
    type(c_ptr), intent(in) :: ctx
    real(c_double), intent(in), target, contiguous :: A(:, :), B(:, :)
    real(c_double), intent(inout), target, contiguous :: C(:, :)
    real(c_double), intent(in), optional :: alpha, beta
    integer(c_int), intent(in), optional :: transa, transb
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    real(c_double) :: al, be
    integer(c_int) :: ta, tb
    integer(c_int64_t) :: m, n, k
    type(c_ptr) :: pa, pb, pc

    al = 1
    be = 0
    ta = GPK_NO_TRANS
    tb = GPK_NO_TRANS
    if (present(alpha)) al = alpha
    if (present(beta)) be = beta
    if (present(transa)) ta = transa
    if (present(transb)) tb = transb
    status = gemm_sizes('gpk_gemm', shape(A, kind=c_int64_t), shape(B, kind=c_int64_t), shape(C, kind=c_int64_t), &
                        ta, tb, m, n, k, errmsg)
    if (status /= GPK_SUCCESS) return
    ! c_loc needs a nonzero size; the library reads no empty array.
    pa = c_null_ptr
    pb = c_null_ptr
    pc = c_null_ptr
    if (size(A) > 0) pa = c_loc(A)
    if (size(B) > 0) pb = c_loc(B)
    if (size(C) > 0) pc = c_loc(C)
    status = gpk_gemm_c(ctx, GPK_F64, GPK_COL_MAJOR, ta, tb, m, n, k, al, &
                        pa, max(1_c_int64_t, size(A, 1, kind=c_int64_t)), &
                        pb, max(1_c_int64_t, size(B, 1, kind=c_int64_t)), &
                        be, pc, max(1_c_int64_t, size(C, 1, kind=c_int64_t)))
    call report(ctx, status, errmsg)
  end function gpk_gemm_f64

  ! ------------------------------------------------------------ batched gemm ---

  !> The shape rules of one product (gemm_sizes) and of the batch: C's last extent
  !> is the batch count, A's and B's are either that or 1 (shared, stride 0).
  function batch_sizes(shape_a, shape_b, shape_c, transa, transb, m, n, k, sa, sb, errmsg) result(status)
    integer(c_int64_t), intent(in) :: shape_a(3), shape_b(3), shape_c(3)
    integer(c_int), intent(in) :: transa, transb
    integer(c_int64_t), intent(out) :: m, n, k, sa, sb
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    character(len=160) :: message

    sa = 0
    sb = 0
    status = gemm_sizes('gpk_gemm_strided_batched', shape_a(1:2), shape_b(1:2), shape_c(1:2), transa, transb, &
                        m, n, k, errmsg)
    if (status /= GPK_SUCCESS) return
    if (shape_a(3) /= shape_c(3) .and. shape_a(3) /= 1) then
      write (message, '(a,i0,a,i0,a)') 'gpk_gemm_strided_batched: A holds ', shape_a(3), &
        ' matrices but C holds ', shape_c(3), ' (batch_count); A may hold 1 (shared)'
      status = fail(trim(message), errmsg)
    else if (shape_b(3) /= shape_c(3) .and. shape_b(3) /= 1) then
      write (message, '(a,i0,a,i0,a)') 'gpk_gemm_strided_batched: B holds ', shape_b(3), &
        ' matrices but C holds ', shape_c(3), ' (batch_count); B may hold 1 (shared)'
      status = fail(trim(message), errmsg)
    end if
    if (status /= GPK_SUCCESS) return
    if (shape_a(3) /= 1 .or. shape_c(3) == 1) sa = shape_a(1) * shape_a(2)
    if (shape_b(3) /= 1 .or. shape_c(3) == 1) sb = shape_b(1) * shape_b(2)
  end function batch_sizes

  !> C(:, :, b) = alpha * op(A(:, :, b)) * op(B(:, :, b)) + beta * C(:, :, b) for
  !> every b; alpha defaults to 1, beta to 0 (C not read), transa/transb to
  !> GPK_NO_TRANS. A or B with a last extent of 1 is shared by every product.
  function gpk_gemm_batched_f32(ctx, A, B, C, alpha, beta, transa, transb, errmsg) result(status)
    type(c_ptr), intent(in) :: ctx
    real(c_float), intent(in), target, contiguous :: A(:, :, :), B(:, :, :)
    real(c_float), intent(inout), target, contiguous :: C(:, :, :)
    real(c_float), intent(in), optional :: alpha, beta
    integer(c_int), intent(in), optional :: transa, transb
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    real(c_double) :: al, be
    integer(c_int) :: ta, tb
    integer(c_int64_t) :: m, n, k, sa, sb
    type(c_ptr) :: pa, pb, pc

    al = 1
    be = 0
    ta = GPK_NO_TRANS
    tb = GPK_NO_TRANS
    if (present(alpha)) al = alpha
    if (present(beta)) be = beta
    if (present(transa)) ta = transa
    if (present(transb)) tb = transb
    status = batch_sizes(shape(A, kind=c_int64_t), shape(B, kind=c_int64_t), shape(C, kind=c_int64_t), &
                         ta, tb, m, n, k, sa, sb, errmsg)
    if (status /= GPK_SUCCESS) return
    pa = c_null_ptr
    pb = c_null_ptr
    pc = c_null_ptr
    if (size(A) > 0) pa = c_loc(A)
    if (size(B) > 0) pb = c_loc(B)
    if (size(C) > 0) pc = c_loc(C)
    status = gpk_gemm_strided_batched_c(ctx, GPK_F32, GPK_COL_MAJOR, ta, tb, m, n, k, al, &
                                        pa, max(1_c_int64_t, size(A, 1, kind=c_int64_t)), sa, &
                                        pb, max(1_c_int64_t, size(B, 1, kind=c_int64_t)), sb, &
                                        be, pc, max(1_c_int64_t, size(C, 1, kind=c_int64_t)), &
                                        size(C, 1, kind=c_int64_t) * size(C, 2, kind=c_int64_t), &
                                        size(C, 3, kind=c_int64_t))
    call report(ctx, status, errmsg)
  end function gpk_gemm_batched_f32

  function gpk_gemm_batched_f64(ctx, A, B, C, alpha, beta, transa, transb, errmsg) result(status)
    type(c_ptr), intent(in) :: ctx
    real(c_double), intent(in), target, contiguous :: A(:, :, :), B(:, :, :)
    real(c_double), intent(inout), target, contiguous :: C(:, :, :)
    real(c_double), intent(in), optional :: alpha, beta
    integer(c_int), intent(in), optional :: transa, transb
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    real(c_double) :: al, be
    integer(c_int) :: ta, tb
    integer(c_int64_t) :: m, n, k, sa, sb
    type(c_ptr) :: pa, pb, pc

    al = 1
    be = 0
    ta = GPK_NO_TRANS
    tb = GPK_NO_TRANS
    if (present(alpha)) al = alpha
    if (present(beta)) be = beta
    if (present(transa)) ta = transa
    if (present(transb)) tb = transb
    status = batch_sizes(shape(A, kind=c_int64_t), shape(B, kind=c_int64_t), shape(C, kind=c_int64_t), &
                         ta, tb, m, n, k, sa, sb, errmsg)
    if (status /= GPK_SUCCESS) return
    pa = c_null_ptr
    pb = c_null_ptr
    pc = c_null_ptr
    if (size(A) > 0) pa = c_loc(A)
    if (size(B) > 0) pb = c_loc(B)
    if (size(C) > 0) pc = c_loc(C)
    status = gpk_gemm_strided_batched_c(ctx, GPK_F64, GPK_COL_MAJOR, ta, tb, m, n, k, al, &
                                        pa, max(1_c_int64_t, size(A, 1, kind=c_int64_t)), sa, &
                                        pb, max(1_c_int64_t, size(B, 1, kind=c_int64_t)), sb, &
                                        be, pc, max(1_c_int64_t, size(C, 1, kind=c_int64_t)), &
                                        size(C, 1, kind=c_int64_t) * size(C, 2, kind=c_int64_t), &
                                        size(C, 3, kind=c_int64_t))
    call report(ctx, status, errmsg)
  end function gpk_gemm_batched_f64

  ! ---------------------------------------------------------------- reduce ---

  !> res = the sum, min or max (op = GPK_SUM, GPK_MIN, GPK_MAX) of x. res is
  !> intent(inout): a failed call leaves it as it was, as the C function does.
  function gpk_reduce_f32(ctx, x, op, res, errmsg) result(status)
    type(c_ptr), intent(in) :: ctx
    real(c_float), intent(in), target, contiguous :: x(:)
    integer(c_int), intent(in) :: op
    real(c_float), intent(inout), target :: res
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    type(c_ptr) :: px
    px = c_null_ptr
    if (size(x) > 0) px = c_loc(x)
    status = gpk_reduce_c(ctx, GPK_F32, op, px, size(x, kind=c_int64_t), c_loc(res))
    call report(ctx, status, errmsg)
  end function gpk_reduce_f32

  function gpk_reduce_f64(ctx, x, op, res, errmsg) result(status)
    type(c_ptr), intent(in) :: ctx
    real(c_double), intent(in), target, contiguous :: x(:)
    integer(c_int), intent(in) :: op
    real(c_double), intent(inout), target :: res
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    type(c_ptr) :: px
    px = c_null_ptr
    if (size(x) > 0) px = c_loc(x)
    status = gpk_reduce_c(ctx, GPK_F64, op, px, size(x, kind=c_int64_t), c_loc(res))
    call report(ctx, status, errmsg)
  end function gpk_reduce_f64

  !> Integer reductions accumulate in 64 bits, so res is integer(c_int64_t).
  function gpk_reduce_i32(ctx, x, op, res, errmsg) result(status)
    type(c_ptr), intent(in) :: ctx
    integer(c_int32_t), intent(in), target, contiguous :: x(:)
    integer(c_int), intent(in) :: op
    integer(c_int64_t), intent(inout), target :: res
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    type(c_ptr) :: px
    px = c_null_ptr
    if (size(x) > 0) px = c_loc(x)
    status = gpk_reduce_c(ctx, GPK_I32, op, px, size(x, kind=c_int64_t), c_loc(res))
    call report(ctx, status, errmsg)
  end function gpk_reduce_i32

  function gpk_reduce_i64(ctx, x, op, res, errmsg) result(status)
    type(c_ptr), intent(in) :: ctx
    integer(c_int64_t), intent(in), target, contiguous :: x(:)
    integer(c_int), intent(in) :: op
    integer(c_int64_t), intent(inout), target :: res
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    type(c_ptr) :: px
    px = c_null_ptr
    if (size(x) > 0) px = c_loc(x)
    status = gpk_reduce_c(ctx, GPK_I64, op, px, size(x, kind=c_int64_t), c_loc(res))
    call report(ctx, status, errmsg)
  end function gpk_reduce_i64

  ! ------------------------------------------------------------- transpose ---

  !> B = transpose(A); B must be size(A, 2) x size(A, 1).
  function gpk_transpose_f32(ctx, A, B, errmsg) result(status)
    type(c_ptr), intent(in) :: ctx
    real(c_float), intent(in), target, contiguous :: A(:, :)
    real(c_float), intent(inout), target, contiguous :: B(:, :)
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    type(c_ptr) :: pa, pb
    pa = c_null_ptr
    pb = c_null_ptr
    if (size(A) > 0) pa = c_loc(A)
    if (size(B) > 0) pb = c_loc(B)
    status = transpose_any(ctx, GPK_F32, shape(A, kind=c_int64_t), shape(B, kind=c_int64_t), pa, pb, errmsg)
  end function gpk_transpose_f32

  function gpk_transpose_f64(ctx, A, B, errmsg) result(status)
    type(c_ptr), intent(in) :: ctx
    real(c_double), intent(in), target, contiguous :: A(:, :)
    real(c_double), intent(inout), target, contiguous :: B(:, :)
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    type(c_ptr) :: pa, pb
    pa = c_null_ptr
    pb = c_null_ptr
    if (size(A) > 0) pa = c_loc(A)
    if (size(B) > 0) pb = c_loc(B)
    status = transpose_any(ctx, GPK_F64, shape(A, kind=c_int64_t), shape(B, kind=c_int64_t), pa, pb, errmsg)
  end function gpk_transpose_f64

  function gpk_transpose_i32(ctx, A, B, errmsg) result(status)
    type(c_ptr), intent(in) :: ctx
    integer(c_int32_t), intent(in), target, contiguous :: A(:, :)
    integer(c_int32_t), intent(inout), target, contiguous :: B(:, :)
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    type(c_ptr) :: pa, pb
    pa = c_null_ptr
    pb = c_null_ptr
    if (size(A) > 0) pa = c_loc(A)
    if (size(B) > 0) pb = c_loc(B)
    status = transpose_any(ctx, GPK_I32, shape(A, kind=c_int64_t), shape(B, kind=c_int64_t), pa, pb, errmsg)
  end function gpk_transpose_i32

  function gpk_transpose_i64(ctx, A, B, errmsg) result(status)
    type(c_ptr), intent(in) :: ctx
    integer(c_int64_t), intent(in), target, contiguous :: A(:, :)
    integer(c_int64_t), intent(inout), target, contiguous :: B(:, :)
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    type(c_ptr) :: pa, pb
    pa = c_null_ptr
    pb = c_null_ptr
    if (size(A) > 0) pa = c_loc(A)
    if (size(B) > 0) pb = c_loc(B)
    status = transpose_any(ctx, GPK_I64, shape(A, kind=c_int64_t), shape(B, kind=c_int64_t), pa, pb, errmsg)
  end function gpk_transpose_i64

  function transpose_any(ctx, dtype, shape_a, shape_b, A, B, errmsg) result(status)
    type(c_ptr), intent(in) :: ctx
    integer(c_int), intent(in) :: dtype
    integer(c_int64_t), intent(in) :: shape_a(2), shape_b(2)
    type(c_ptr), intent(in) :: A, B
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    character(len=160) :: message

    if (shape_b(1) /= shape_a(2) .or. shape_b(2) /= shape_a(1)) then
      write (message, '(a,i0,a,i0,a,i0,a,i0)') 'gpk_transpose: B is ', shape_b(1), ' x ', shape_b(2), &
        ' but the transpose of A is ', shape_a(2), ' x ', shape_a(1)
      status = fail(trim(message), errmsg)
      return
    end if
    status = gpk_transpose_c(ctx, dtype, GPK_COL_MAJOR, shape_a(1), shape_a(2), &
                             A, max(1_c_int64_t, shape_a(1)), B, max(1_c_int64_t, shape_b(1)))
    call report(ctx, status, errmsg)
  end function transpose_any

  ! ----------------------------------------------------------------- 16-bit ---

  !> gemm of F16 or BF16 (dtype) matrices held as integer(c_int16_t) bits: products
  !> accumulate in F32, alpha and beta (default 1 and 0) are applied in F32, and each
  !> element of C is rounded once.
  function gpk_gemm_16bit(ctx, dtype, A, B, C, alpha, beta, transa, transb, errmsg) result(status)
    type(c_ptr), intent(in) :: ctx
    integer(c_int), intent(in) :: dtype
    integer(c_int16_t), intent(in), target, contiguous :: A(:, :), B(:, :)
    integer(c_int16_t), intent(inout), target, contiguous :: C(:, :)
    real(c_float), intent(in), optional :: alpha, beta
    integer(c_int), intent(in), optional :: transa, transb
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    real(c_double) :: al, be
    integer(c_int) :: ta, tb
    integer(c_int64_t) :: m, n, k
    type(c_ptr) :: pa, pb, pc

    al = 1
    be = 0
    ta = GPK_NO_TRANS
    tb = GPK_NO_TRANS
    if (present(alpha)) al = alpha
    if (present(beta)) be = beta
    if (present(transa)) ta = transa
    if (present(transb)) tb = transb
    status = dtype16('gpk_gemm', dtype, 'integer(c_int16_t) arrays', errmsg)
    if (status /= GPK_SUCCESS) return
    status = gemm_sizes('gpk_gemm', shape(A, kind=c_int64_t), shape(B, kind=c_int64_t), shape(C, kind=c_int64_t), &
                        ta, tb, m, n, k, errmsg)
    if (status /= GPK_SUCCESS) return
    pa = c_null_ptr
    pb = c_null_ptr
    pc = c_null_ptr
    if (size(A) > 0) pa = c_loc(A)
    if (size(B) > 0) pb = c_loc(B)
    if (size(C) > 0) pc = c_loc(C)
    status = gpk_gemm_c(ctx, dtype, GPK_COL_MAJOR, ta, tb, m, n, k, al, &
                        pa, max(1_c_int64_t, size(A, 1, kind=c_int64_t)), &
                        pb, max(1_c_int64_t, size(B, 1, kind=c_int64_t)), &
                        be, pc, max(1_c_int64_t, size(C, 1, kind=c_int64_t)))
    call report(ctx, status, errmsg)
  end function gpk_gemm_16bit

  !> res = the sum, min or max of the F16 or BF16 (dtype) elements of x, in F32.
  function gpk_reduce_16bit(ctx, dtype, x, op, res, errmsg) result(status)
    type(c_ptr), intent(in) :: ctx
    integer(c_int), intent(in) :: dtype
    integer(c_int16_t), intent(in), target, contiguous :: x(:)
    integer(c_int), intent(in) :: op
    real(c_float), intent(inout), target :: res
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    type(c_ptr) :: px
    status = dtype16('gpk_reduce', dtype, 'integer(c_int16_t) x and real(c_float) res', errmsg)
    if (status /= GPK_SUCCESS) return
    px = c_null_ptr
    if (size(x) > 0) px = c_loc(x)
    status = gpk_reduce_c(ctx, dtype, op, px, size(x, kind=c_int64_t), c_loc(res))
    call report(ctx, status, errmsg)
  end function gpk_reduce_16bit

  !> B = transpose(A) for 2-byte elements (dtype GPK_F16 or GPK_BF16), bit for bit.
  !> The dtype is checked though any 2-byte one would do: a 4- or 8-byte dtype would
  !> move 2 or 4 times the arrays' bytes.
  function gpk_transpose_16bit(ctx, dtype, A, B, errmsg) result(status)
    type(c_ptr), intent(in) :: ctx
    integer(c_int), intent(in) :: dtype
    integer(c_int16_t), intent(in), target, contiguous :: A(:, :)
    integer(c_int16_t), intent(inout), target, contiguous :: B(:, :)
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    type(c_ptr) :: pa, pb
    status = dtype16('gpk_transpose', dtype, 'integer(c_int16_t) arrays', errmsg)
    if (status /= GPK_SUCCESS) return
    pa = c_null_ptr
    pb = c_null_ptr
    if (size(A) > 0) pa = c_loc(A)
    if (size(B) > 0) pb = c_loc(B)
    status = transpose_any(ctx, dtype, shape(A, kind=c_int64_t), shape(B, kind=c_int64_t), pa, pb, errmsg)
  end function gpk_transpose_16bit

  ! ------------------------------------------------------- FP8, mixed dtypes ---

  !> The optional arguments of the mixed-dtype forms, defaults filled in: alpha 1,
  !> beta 0 (C not read), GPK_NO_TRANS.
  subroutine mixed_options(alpha, beta, transa, transb, al, be, ta, tb)
    real(c_float), intent(in), optional :: alpha, beta
    integer(c_int), intent(in), optional :: transa, transb
    real(c_double), intent(out) :: al, be
    integer(c_int), intent(out) :: ta, tb
    al = 1
    be = 0
    ta = GPK_NO_TRANS
    tb = GPK_NO_TRANS
    if (present(alpha)) al = alpha
    if (present(beta)) be = beta
    if (present(transa)) ta = transa
    if (present(transb)) tb = transb
  end subroutine mixed_options

  !> The call itself, for every array form of gpk_gemm_ex and gpk_gemm_blockscaled
  !> (scaled: with sa and sb): shapes checked, then column-major with each array's
  !> rows as its leading dimension. c_loc needs a nonzero size; the library reads
  !> no empty array.
  function mixed_call(ctx, call, scaled, a_dtype, shape_a, pa, b_dtype, shape_b, pb, c_dtype, shape_c, pc, &
                      shape_sa, sa, shape_sb, sb, alpha, beta, transa, transb, errmsg) result(status)
    type(c_ptr), intent(in) :: ctx
    character(len=*), intent(in) :: call
    logical, intent(in) :: scaled
    integer(c_int), intent(in) :: a_dtype, b_dtype, c_dtype
    integer(c_int64_t), intent(in) :: shape_a(2), shape_b(2), shape_c(2), shape_sa(2), shape_sb(2)
    type(c_ptr), intent(in) :: pa, pb, pc, sa, sb
    real(c_float), intent(in), optional :: alpha, beta
    integer(c_int), intent(in), optional :: transa, transb
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    real(c_double) :: al, be
    integer(c_int) :: ta, tb
    integer(c_int64_t) :: m, n, k

    call mixed_options(alpha, beta, transa, transb, al, be, ta, tb)
    status = gemm_sizes(call, shape_a, shape_b, shape_c, ta, tb, m, n, k, errmsg)
    if (status /= GPK_SUCCESS) return
    if (scaled) then
      status = blockscale_sizes(shape_sa, shape_sb, m, n, k, errmsg)
      if (status /= GPK_SUCCESS) return
      status = gpk_gemm_blockscaled_c(ctx, GPK_COL_MAJOR, ta, tb, m, n, k, al, &
                                      a_dtype, pa, max(1_c_int64_t, shape_a(1)), sa, &
                                      b_dtype, pb, max(1_c_int64_t, shape_b(1)), sb, &
                                      be, c_dtype, pc, max(1_c_int64_t, shape_c(1)))
    else
      status = gpk_gemm_ex_c(ctx, GPK_COL_MAJOR, ta, tb, m, n, k, al, &
                             a_dtype, pa, max(1_c_int64_t, shape_a(1)), &
                             b_dtype, pb, max(1_c_int64_t, shape_b(1)), &
                             be, c_dtype, pc, max(1_c_int64_t, shape_c(1)))
    end if
    call report(ctx, status, errmsg)
  end function mixed_call

  !> The address of an array's first element, or c_null_ptr for an empty one.
  function first_int8(x) result(p)
    integer(c_int8_t), intent(in), target, contiguous :: x(:, :)
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(x) > 0) p = c_loc(x)
  end function first_int8

  function first_int16(x) result(p)
    integer(c_int16_t), intent(in), target, contiguous :: x(:, :)
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(x) > 0) p = c_loc(x)
  end function first_int16

  function first_float(x) result(p)
    real(c_float), intent(in), target, contiguous :: x(:, :)
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(x) > 0) p = c_loc(x)
  end function first_float

  !> C (F32) = alpha * op(A) * op(B) + beta * C for FP8 A and B (a_dtype, b_dtype
  !> GPK_F8E4M3 or GPK_F8E5M2) held as integer(c_int8_t) bits.
  function gpk_gemm_ex_f8_f32(ctx, a_dtype, A, b_dtype, B, C, alpha, beta, transa, transb, errmsg) result(status)
    type(c_ptr), intent(in) :: ctx
    integer(c_int), intent(in) :: a_dtype, b_dtype
    integer(c_int8_t), intent(in), target, contiguous :: A(:, :), B(:, :)
    real(c_float), intent(inout), target, contiguous :: C(:, :)
    real(c_float), intent(in), optional :: alpha, beta
    integer(c_int), intent(in), optional :: transa, transb
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    status = dtype_in('gpk_gemm_ex', 'a_dtype', a_dtype, GPK_F8E4M3, GPK_F8E5M2, 'integer(c_int8_t) A', errmsg)
    if (status /= GPK_SUCCESS) return
    status = dtype_in('gpk_gemm_ex', 'b_dtype', b_dtype, GPK_F8E4M3, GPK_F8E5M2, 'integer(c_int8_t) B', errmsg)
    if (status /= GPK_SUCCESS) return
    status = mixed_call(ctx, 'gpk_gemm_ex', .false., a_dtype, shape(A, kind=c_int64_t), first_int8(A), &
                        b_dtype, shape(B, kind=c_int64_t), first_int8(B), GPK_F32, shape(C, kind=c_int64_t), &
                        first_float(C), [0_c_int64_t, 0_c_int64_t], c_null_ptr, [0_c_int64_t, 0_c_int64_t], &
                        c_null_ptr, alpha, beta, transa, transb, errmsg)
  end function gpk_gemm_ex_f8_f32

  !> As gpk_gemm_ex_f8_f32, with C of c_dtype GPK_F16 or GPK_BF16 held as
  !> integer(c_int16_t) bits.
  function gpk_gemm_ex_f8_16bit(ctx, a_dtype, A, b_dtype, B, c_dtype, C, alpha, beta, transa, transb, errmsg) &
      result(status)
    type(c_ptr), intent(in) :: ctx
    integer(c_int), intent(in) :: a_dtype, b_dtype, c_dtype
    integer(c_int8_t), intent(in), target, contiguous :: A(:, :), B(:, :)
    integer(c_int16_t), intent(inout), target, contiguous :: C(:, :)
    real(c_float), intent(in), optional :: alpha, beta
    integer(c_int), intent(in), optional :: transa, transb
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    status = dtype_in('gpk_gemm_ex', 'a_dtype', a_dtype, GPK_F8E4M3, GPK_F8E5M2, 'integer(c_int8_t) A', errmsg)
    if (status /= GPK_SUCCESS) return
    status = dtype_in('gpk_gemm_ex', 'b_dtype', b_dtype, GPK_F8E4M3, GPK_F8E5M2, 'integer(c_int8_t) B', errmsg)
    if (status /= GPK_SUCCESS) return
    status = dtype_in('gpk_gemm_ex', 'c_dtype', c_dtype, GPK_F16, GPK_BF16, 'integer(c_int16_t) C', errmsg)
    if (status /= GPK_SUCCESS) return
    status = mixed_call(ctx, 'gpk_gemm_ex', .false., a_dtype, shape(A, kind=c_int64_t), first_int8(A), &
                        b_dtype, shape(B, kind=c_int64_t), first_int8(B), c_dtype, shape(C, kind=c_int64_t), &
                        first_int16(C), [0_c_int64_t, 0_c_int64_t], c_null_ptr, [0_c_int64_t, 0_c_int64_t], &
                        c_null_ptr, alpha, beta, transa, transb, errmsg)
  end function gpk_gemm_ex_f8_16bit

  !> C (F32) = alpha * op(A) * op(B) + beta * C for F16 or BF16 A and B (a_dtype,
  !> b_dtype; the library takes them equal) held as integer(c_int16_t) bits.
  function gpk_gemm_ex_16bit_f32(ctx, a_dtype, A, b_dtype, B, C, alpha, beta, transa, transb, errmsg) &
      result(status)
    type(c_ptr), intent(in) :: ctx
    integer(c_int), intent(in) :: a_dtype, b_dtype
    integer(c_int16_t), intent(in), target, contiguous :: A(:, :), B(:, :)
    real(c_float), intent(inout), target, contiguous :: C(:, :)
    real(c_float), intent(in), optional :: alpha, beta
    integer(c_int), intent(in), optional :: transa, transb
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    status = dtype_in('gpk_gemm_ex', 'a_dtype', a_dtype, GPK_F16, GPK_BF16, 'integer(c_int16_t) A', errmsg)
    if (status /= GPK_SUCCESS) return
    status = dtype_in('gpk_gemm_ex', 'b_dtype', b_dtype, GPK_F16, GPK_BF16, 'integer(c_int16_t) B', errmsg)
    if (status /= GPK_SUCCESS) return
    status = mixed_call(ctx, 'gpk_gemm_ex', .false., a_dtype, shape(A, kind=c_int64_t), first_int16(A), &
                        b_dtype, shape(B, kind=c_int64_t), first_int16(B), GPK_F32, shape(C, kind=c_int64_t), &
                        first_float(C), [0_c_int64_t, 0_c_int64_t], c_null_ptr, [0_c_int64_t, 0_c_int64_t], &
                        c_null_ptr, alpha, beta, transa, transb, errmsg)
  end function gpk_gemm_ex_16bit_f32

  !> gpk_gemm_blockscaled on FP8 integer(c_int8_t) A and B with scale_a(m, kb) and
  !> scale_b(nb, kb); C F32.
  function gpk_gemm_blockscaled_f32(ctx, a_dtype, A, scale_a, b_dtype, B, scale_b, C, alpha, beta, transa, &
                                    transb, errmsg) result(status)
    type(c_ptr), intent(in) :: ctx
    integer(c_int), intent(in) :: a_dtype, b_dtype
    integer(c_int8_t), intent(in), target, contiguous :: A(:, :), B(:, :)
    real(c_float), intent(in), target, contiguous :: scale_a(:, :), scale_b(:, :)
    real(c_float), intent(inout), target, contiguous :: C(:, :)
    real(c_float), intent(in), optional :: alpha, beta
    integer(c_int), intent(in), optional :: transa, transb
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    status = dtype_in('gpk_gemm_blockscaled', 'a_dtype', a_dtype, GPK_F8E4M3, GPK_F8E5M2, 'integer(c_int8_t) A', &
                      errmsg)
    if (status /= GPK_SUCCESS) return
    status = dtype_in('gpk_gemm_blockscaled', 'b_dtype', b_dtype, GPK_F8E4M3, GPK_F8E5M2, 'integer(c_int8_t) B', &
                      errmsg)
    if (status /= GPK_SUCCESS) return
    status = mixed_call(ctx, 'gpk_gemm_blockscaled', .true., a_dtype, shape(A, kind=c_int64_t), first_int8(A), &
                        b_dtype, shape(B, kind=c_int64_t), first_int8(B), GPK_F32, shape(C, kind=c_int64_t), &
                        first_float(C), shape(scale_a, kind=c_int64_t), first_float(scale_a), &
                        shape(scale_b, kind=c_int64_t), first_float(scale_b), alpha, beta, transa, transb, errmsg)
  end function gpk_gemm_blockscaled_f32

  !> As gpk_gemm_blockscaled_f32, with C of c_dtype GPK_F16 or GPK_BF16 held as
  !> integer(c_int16_t) bits.
  function gpk_gemm_blockscaled_16bit(ctx, a_dtype, A, scale_a, b_dtype, B, scale_b, c_dtype, C, alpha, beta, &
                                      transa, transb, errmsg) result(status)
    type(c_ptr), intent(in) :: ctx
    integer(c_int), intent(in) :: a_dtype, b_dtype, c_dtype
    integer(c_int8_t), intent(in), target, contiguous :: A(:, :), B(:, :)
    real(c_float), intent(in), target, contiguous :: scale_a(:, :), scale_b(:, :)
    integer(c_int16_t), intent(inout), target, contiguous :: C(:, :)
    real(c_float), intent(in), optional :: alpha, beta
    integer(c_int), intent(in), optional :: transa, transb
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    status = dtype_in('gpk_gemm_blockscaled', 'a_dtype', a_dtype, GPK_F8E4M3, GPK_F8E5M2, 'integer(c_int8_t) A', &
                      errmsg)
    if (status /= GPK_SUCCESS) return
    status = dtype_in('gpk_gemm_blockscaled', 'b_dtype', b_dtype, GPK_F8E4M3, GPK_F8E5M2, 'integer(c_int8_t) B', &
                      errmsg)
    if (status /= GPK_SUCCESS) return
    status = dtype_in('gpk_gemm_blockscaled', 'c_dtype', c_dtype, GPK_F16, GPK_BF16, 'integer(c_int16_t) C', errmsg)
    if (status /= GPK_SUCCESS) return
    status = mixed_call(ctx, 'gpk_gemm_blockscaled', .true., a_dtype, shape(A, kind=c_int64_t), first_int8(A), &
                        b_dtype, shape(B, kind=c_int64_t), first_int8(B), c_dtype, shape(C, kind=c_int64_t), &
                        first_int16(C), shape(scale_a, kind=c_int64_t), first_float(scale_a), &
                        shape(scale_b, kind=c_int64_t), first_float(scale_b), alpha, beta, transa, transb, errmsg)
  end function gpk_gemm_blockscaled_16bit

  ! ------------------------------------------------------------------ trace ---

  !> The first size(events) events of the last call through the staging pipeline;
  !> count receives how many there are (0 on the host backend).
  function gpk_stage_trace_array(ctx, events, count, errmsg) result(status)
    type(c_ptr), intent(in) :: ctx
    type(gpk_stage_event), intent(inout), target, contiguous :: events(:)
    integer(c_int64_t), intent(out) :: count
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    if (size(events) > 0) then
      status = gpk_stage_trace_c(ctx, c_loc(events), int(size(events), c_int64_t), count)
    else
      status = gpk_stage_trace_c(ctx, c_null_ptr, 0_c_int64_t, count)
    end if
    call report(ctx, status, errmsg)
  end function gpk_stage_trace_array

  ! --------------------------------------------------------------------- pi ---

  !> A default integer below the least value its rule allows (a negative one, passed
  !> on, would read as 2^64 - |value|): INVALID_ARGUMENT naming the call, the argument
  !> and the rule, before any C call.
  function too_small(call, name, value, least, errmsg) result(status)
    character(len=*), intent(in) :: call, name
    integer, intent(in) :: value, least
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    character(len=160) :: message
    write (message, '(a,a,a,a,i0,a,i0)') call, ': ', name, ' (', value, ') must be >= ', least
    status = fail(trim(message), errmsg)
  end function too_small

  !> gpk_pi with default-kind integer samples and seed.
  function gpk_pi_int(ctx, samples, seed, res, errmsg) result(status)
    type(c_ptr), intent(in) :: ctx
    integer, intent(in) :: samples, seed
    type(gpk_pi_result), intent(inout) :: res
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    ! The C rule is 1 <= samples <= 2^63; a default integer never passes the top.
    if (samples < 1) then
      status = too_small('gpk_pi', 'samples', samples, 1, errmsg)
      return
    end if
    status = gpk_pi_c(ctx, int(samples, c_int64_t), int(seed, c_int64_t), res)
    call report(ctx, status, errmsg)
  end function gpk_pi_int

  !> gpk_pi_range with default-kind integer first_sample, count and seed.
  function gpk_pi_range_int(ctx, first_sample, count, seed, res, errmsg) result(status)
    type(c_ptr), intent(in) :: ctx
    integer, intent(in) :: first_sample, count, seed
    type(gpk_pi_result), intent(inout) :: res
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: status
    if (first_sample < 0) then
      status = too_small('gpk_pi_range', 'first_sample', first_sample, 0, errmsg)
      return
    end if
    if (count < 0) then
      status = too_small('gpk_pi_range', 'count', count, 0, errmsg)
      return
    end if
    status = gpk_pi_range_c(ctx, int(first_sample, c_int64_t), int(count, c_int64_t), int(seed, c_int64_t), res)
    call report(ctx, status, errmsg)
  end function gpk_pi_range_int

end module gpk
