/* ss-cuda.h: the CUDA backend behind a plain C interface.
 *
 * An opaque context owns the device choice, a stream, cuFFT plans cached per
 * size, cuBLAS/cuSOLVER handles and pinned host buffers for reports. Every
 * CUDA, cuFFT, cuBLAS and cuSOLVER status is checked and becomes a GError
 * (SS_ERROR_CUDA naming the call; SS_ERROR_OUT_OF_MEMORY naming need and free
 * memory). The engine includes this header only when SHARPSKY_HAVE_CUDA is 1.
 */
#pragma once

#include "../ss-solver.h"
#include "../ss-bench.h"

G_BEGIN_DECLS

typedef struct _SsCudaContext SsCudaContext;

/* Usable devices; 0 when there is no driver or device (never fails). */
int ss_cuda_device_count (void);

SsCudaContext *ss_cuda_context_new (int device, GError **error);
void ss_cuda_context_free (SsCudaContext *ctx);
const char *ss_cuda_context_get_device_name (const SsCudaContext *ctx);
/* Free and total device memory now, bytes. */
void ss_cuda_context_get_memory (SsCudaContext *ctx, gsize *free_bytes, gsize *total_bytes);

/* Same contract as ss_backend_solve (ss-backend.h). */
gboolean ss_cuda_solve (SsCudaContext *ctx, const SsProblem *problem,
                        const SsSolveParams *params, SsReportFunc report,
                        gpointer user_data, GCancellable *cancellable,
                        SsSolveResult *result, GError **error);

gboolean ss_cuda_bench (SsCudaContext *ctx, const SsBenchParams *params,
                        SsBenchResult *result, GError **error);

G_END_DECLS
