/* ss-error.h: the engine's GError domain.
 *
 * Every failure the engine can meet (bad file, bad parameter, too little
 * memory, a CUDA status) is reported as a GError in SS_ERROR, except
 * cancellation, which uses G_IO_ERROR_CANCELLED as GIO does.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define SS_ERROR (ss_error_quark ())

typedef enum {
  SS_ERROR_INVALID_ARGUMENT, /* a parameter out of range or malformed */
  SS_ERROR_IO,               /* a file cannot be opened, read or written */
  SS_ERROR_FORMAT,           /* a file is not what it claims: not FITS, truncated, ... */
  SS_ERROR_UNSUPPORTED,      /* a valid input this version cannot handle */
  SS_ERROR_TOO_LARGE,        /* the problem does not fit in the memory available */
  SS_ERROR_OUT_OF_MEMORY,    /* an allocation failed */
  SS_ERROR_NO_DEVICE,        /* the CUDA backend was asked for and none is usable */
  SS_ERROR_CUDA,             /* a CUDA, cuFFT, cuBLAS or cuSOLVER call failed */
  SS_ERROR_NUMERIC,          /* a factorisation failed (matrix not positive definite) */
} SsErrorCode;

GQuark ss_error_quark (void);

G_END_DECLS
