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

/* Whether a failed GPU solve goes to the CPU instead. Auto means "fastest
 * that works": a GPU too small for the problem (out of memory, too large) is
 * no reason to fail when the CPU can do it. A solver whose GPU form lacks
 * one of its options (SS_ERROR_UNSUPPORTED: admm's starlet priors) is solved
 * on the CPU whatever was asked, as a solver with no GPU form at all is. */
gboolean ss_backend_cuda_falls_back (const SsBackend *backend, const GError *cuda_error);

/* ss_backend_solve with the backend untyped and without the result's
 * checks, for the rules that solve through a function (SsSolveOnceFunc):
 * `auto`'s candidates, batches solved one by one. */
gboolean ss_backend_solve_on (gpointer backend, const SsProblem *problem,
                              const SsSolveParams *params, SsReportFunc report,
                              gpointer user_data, GCancellable *cancellable,
                              SsSolveResult *result, GError **error);
/* What every finished solve's RESULT goes through before anyone sees it: a
 * result not finite is an error (its estimate freed), a flat one warned of. */
gboolean ss_backend_finish_result (SsSolveResult *result, const SsProblem *problem,
                                   GError **error);
