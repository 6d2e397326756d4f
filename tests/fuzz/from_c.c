/* Calls the fuzz target makes as a C program would. C converts any int to an enum
 * type, so a C caller may hand gpk_status_string() a value that no C++ code may hold
 * in a gpk_status (outside the range of its enumerators). */
#include "gpk/gpk.h"

const char *fuzz_status_string(int value);

const char *fuzz_status_string(int value) { return gpk_status_string((gpk_status)value); }
