/* ss-backend-private.h: the backend's state, shared by ss-backend.c (choice
 * of devices, single solves, bench) and ss-backend-batch.c (batches). */
#pragma once

#include "ss-backend.h"
#include "ss-config.h"

#if SHARPSKY_HAVE_CUDA
#include "cuda/ss-cuda.h"
#endif

struct _SsBackend {
  SsBackendKind requested;
  gboolean use_cuda;
  char *device;
#if SHARPSKY_HAVE_CUDA
  SsCudaContext **cuda;   /* one per device in use; cuda[0] does single solves */
  int n_cuda;
#endif
};
