/* ss-cuda-context.cu: device choice, status checks, memory accounting, the
 * cuFFT plan cache and the library handles. */
#include "ss-cuda-internal.h"
#include "ss-report.h"

#include <string.h>

/* ---- status checks -------------------------------------------------------- */

/* "cufftExecR2C (plan, in, out)" -> "cufftExecR2C": the call's name alone. */
static char *
call_name (const char *call)
{
  const char *end = call;
  while (*end && *end != '(' && *end != ' ')
    end++;
  return g_strndup (call, (gsize) (end - call));
}

/* The GError of CALL failing with a library's status: out of memory where
 * the library says so, else a CUDA error; the message names the call and
 * the status. Returns FALSE. */
static gboolean
library_call_failed (const char *call, gboolean out_of_memory, const char *status_name,
                     const char *status_detail, GError **error)
{
  g_autofree char *name = call_name (call);
  g_set_error (error, SS_ERROR, out_of_memory ? SS_ERROR_OUT_OF_MEMORY : SS_ERROR_CUDA,
               "%s failed: %s (%s)", name, status_name, status_detail);
  return FALSE;
}

/* A library's numeric status as the detail of library_call_failed's message. */
static gboolean
library_status_failed (const char *call, gboolean out_of_memory, const char *status_name,
                       int status, GError **error)
{
  char number[16];
  g_snprintf (number, sizeof number, "%d", status);
  return library_call_failed (call, out_of_memory, status_name, number, error);
}

gboolean
ss_cuda_ok (cudaError_t status, const char *call, GError **error)
{
  return status == cudaSuccess
         || library_call_failed (call, status == cudaErrorMemoryAllocation,
                                 cudaGetErrorString (status), cudaGetErrorName (status), error);
}

static const char *
cufft_result_name (cufftResult status)
{
  switch (status)
    {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA: return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "unknown cuFFT status";
    }
}

gboolean
ss_cufft_ok (cufftResult status, const char *call, GError **error)
{
  return status == CUFFT_SUCCESS
         || library_status_failed (call, status == CUFFT_ALLOC_FAILED,
                                   cufft_result_name (status), (int) status, error);
}

gboolean
ss_cublas_ok (cublasStatus_t status, const char *call, GError **error)
{
  return status == CUBLAS_STATUS_SUCCESS
         || library_status_failed (call, status == CUBLAS_STATUS_ALLOC_FAILED,
                                   cublasGetStatusName (status), (int) status, error);
}

static const char *
cusolver_status_name (cusolverStatus_t status)
{
  switch (status)
    {
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
    default: return "cuSOLVER error";
    }
}

gboolean
ss_cusolver_ok (cusolverStatus_t status, const char *call, GError **error)
{
  return status == CUSOLVER_STATUS_SUCCESS
         || library_status_failed (call, status == CUSOLVER_STATUS_ALLOC_FAILED,
                                   cusolver_status_name (status), (int) status, error);
}

/* ---- devices and the context ---------------------------------------------- */

int
ss_cuda_device_count (void)
{
  int count = 0;
  if (cudaGetDeviceCount (&count) != cudaSuccess)
    {
      cudaGetLastError (); /* clear the sticky "no driver" status */
      return 0;
    }
  return count;
}

static gboolean
check_device_index (int device, GError **error)
{
  int count = ss_cuda_device_count ();
  if (count == 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_NO_DEVICE, "no CUDA device is usable");
      return FALSE;
    }
  if (device < 0 || device >= count)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_NO_DEVICE, "CUDA device %d does not exist (%d found)",
                   device, count);
      return FALSE;
    }
  return TRUE;
}

/* One text for the device in listings, status lines and HISTORY. */
static char *
device_name (const cudaDeviceProp *prop)
{
  return g_strdup_printf ("%s (CUDA %d.%d, %d SMs, %.0f GiB)", prop->name, prop->major,
                          prop->minor, prop->multiProcessorCount,
                          prop->totalGlobalMem / 1073741824.0);
}

gboolean
ss_cuda_device_query (int device, char **model, char **name, gsize *free_bytes,
                      gsize *total_bytes, GError **error)
{
  if (!check_device_index (device, error))
    return FALSE;
  /* A listing runs beside solves (the app lists devices from a worker):
   * it must not move the thread's current device under them. */
  int previous = -1;
  if (cudaGetDevice (&previous) != cudaSuccess)
    {
      cudaGetLastError ();
      previous = -1;
    }
  cudaDeviceProp prop;
  size_t free_now = 0, total = 0;
  gboolean ok = CUDA_OK (cudaSetDevice (device))
                && CUDA_OK (cudaGetDeviceProperties (&prop, device))
                && CUDA_OK (cudaMemGetInfo (&free_now, &total));
  if (previous >= 0 && previous != device)
    cudaSetDevice (previous);
  if (!ok)
    return FALSE;
  if (model)
    *model = g_strdup (prop.name);
  if (name)
    *name = device_name (&prop);
  if (free_bytes)
    *free_bytes = free_now;
  if (total_bytes)
    *total_bytes = total;
  return TRUE;
}

SsCudaContext *
ss_cuda_context_new (int device, GError **error)
{
  if (!check_device_index (device, error))
    return NULL;
  cudaDeviceProp prop;
  if (!CUDA_OK (cudaSetDevice (device)) || !CUDA_OK (cudaGetDeviceProperties (&prop, device)))
    return NULL;

  SsCudaContext *ctx = g_new0 (SsCudaContext, 1);
  ctx->device = device;
  ctx->name = device_name (&prop);
  ctx->sm_count = prop.multiProcessorCount;
  ctx->total_memory = prop.totalGlobalMem;
  ctx->plans = g_array_new (FALSE, TRUE, sizeof (SsCudaPlan));
  const char *graphs = g_getenv ("SHARPSKY_CUDA_GRAPHS");
  ctx->use_graphs = graphs == NULL || g_strcmp0 (graphs, "0") != 0;
  ctx->blocks_per_sm = 16;
  if (!CUDA_OK (cudaStreamCreateWithFlags (&ctx->stream, cudaStreamNonBlocking)))
    {
      ss_cuda_context_free (ctx);
      return NULL;
    }
  return ctx;
}

void
ss_cuda_context_free (SsCudaContext *ctx)
{
  if (ctx == NULL)
    return;
  cudaSetDevice (ctx->device);
  if (ctx->stream)
    cudaStreamSynchronize (ctx->stream);
  ss_cuda_plans_clear (ctx);
  g_array_unref (ctx->plans);
  if (ctx->cublas)
    cublasDestroy (ctx->cublas);
  if (ctx->cusolver)
    cusolverDnDestroy (ctx->cusolver);
  if (ctx->pinned)
    cudaFreeHost (ctx->pinned);
  if (ctx->stream)
    cudaStreamDestroy (ctx->stream);
  g_free (ctx->name);
  g_free (ctx);
}

int
ss_cuda_context_get_device (const SsCudaContext *ctx)
{
  return ctx->device;
}

const char *
ss_cuda_context_get_device_name (const SsCudaContext *ctx)
{
  return ctx->name;
}

gsize
ss_cuda_context_get_allocated (const SsCudaContext *ctx)
{
  return ctx->mem_current;
}

void
ss_cuda_context_get_memory (SsCudaContext *ctx, gsize *free_bytes, gsize *total_bytes)
{
  size_t free_now = 0, total = 0;
  cudaSetDevice (ctx->device);
  if (cudaMemGetInfo (&free_now, &total) != cudaSuccess)
    {
      cudaGetLastError ();
      free_now = 0;
      total = ctx->total_memory;
    }
  if (free_bytes)
    *free_bytes = free_now;
  if (total_bytes)
    *total_bytes = total;
}

void
ss_cuda_context_set_graphs (SsCudaContext *ctx, gboolean use_graphs)
{
  ctx->use_graphs = use_graphs;
}

gboolean
ss_cuda_context_get_graphs (const SsCudaContext *ctx)
{
  return ctx->use_graphs;
}

gboolean
ss_cuda_cublas (SsCudaContext *ctx, GError **error)
{
  if (ctx->cublas)
    return TRUE;
  if (!CUBLAS_OK (cublasCreate (&ctx->cublas)))
    return FALSE;
  return CUBLAS_OK (cublasSetStream (ctx->cublas, ctx->stream));
}

gboolean
ss_cuda_cusolver (SsCudaContext *ctx, GError **error)
{
  if (ctx->cusolver)
    return TRUE;
  if (!CUSOLVER_OK (cusolverDnCreate (&ctx->cusolver)))
    return FALSE;
  return CUSOLVER_OK (cusolverDnSetStream (ctx->cusolver, ctx->stream));
}

/* ---- memory --------------------------------------------------------------- */

char *
ss_cuda_format_bytes (double bytes)
{
  if (bytes >= 1073741824.0)
    return g_strdup_printf ("%.2f GiB", bytes / 1073741824.0);
  if (bytes >= 1048576.0)
    return g_strdup_printf ("%.1f MiB", bytes / 1048576.0);
  if (bytes >= 1024.0)
    return g_strdup_printf ("%.1f KiB", bytes / 1024.0);
  return g_strdup_printf ("%.0f bytes", bytes);
}

static void
set_out_of_memory (SsCudaContext *ctx, double need, const char *what, GError **error)
{
  gsize free_now = 0, total = 0;
  ss_cuda_context_get_memory (ctx, &free_now, &total);
  g_autofree char *need_text = ss_cuda_format_bytes (need);
  g_autofree char *free_text = ss_cuda_format_bytes ((double) free_now);
  g_autofree char *total_text = ss_cuda_format_bytes ((double) total);
  g_set_error (error, SS_ERROR, SS_ERROR_OUT_OF_MEMORY,
               "%s needs %s of device memory; %s is free on %s (%s in all)", what, need_text,
               free_text, ctx->name, total_text);
}

gboolean
ss_cuda_alloc (SsCudaContext *ctx, void **ptr, size_t bytes, const char *what, GError **error)
{
  *ptr = NULL;
  if (bytes == 0)
    return TRUE;
  cudaError_t status = cudaMalloc (ptr, bytes);
  if (status != cudaSuccess)
    {
      cudaGetLastError ();
      *ptr = NULL;
      if (status == cudaErrorMemoryAllocation)
        set_out_of_memory (ctx, (double) bytes, what, error);
      else
        ss_cuda_ok (status, "cudaMalloc", error);
      return FALSE;
    }
  ctx->mem_current += bytes;
  if (ctx->mem_current > ctx->mem_peak)
    ctx->mem_peak = ctx->mem_current;
  return TRUE;
}

gboolean
ss_cuda_upload (SsCudaContext *ctx, void **dev, const void *host, size_t bytes, const char *what,
                GError **error)
{
  /* On the context's non-blocking stream, which the legacy default stream
   * of a plain cudaMemcpy does not order (its DMA may land after the
   * kernels that read it). A pageable HOST is staged before the call
   * returns, so the caller may free it. */
  return ss_cuda_alloc (ctx, dev, bytes, what, error)
         && CUDA_OK (cudaMemcpyAsync (*dev, host, bytes, cudaMemcpyHostToDevice, ctx->stream));
}

void
ss_cuda_free (SsCudaContext *ctx, void *ptr, size_t bytes)
{
  if (ptr == NULL)
    return;
  cudaFree (ptr);
  ctx->mem_current -= MIN (bytes, ctx->mem_current);
}

gboolean
ss_cuda_check_free (SsCudaContext *ctx, size_t need, const char *what, GError **error)
{
  gsize free_now = 0;
  ss_cuda_context_get_memory (ctx, &free_now, NULL);
  if (need <= free_now)
    return TRUE;
  set_out_of_memory (ctx, (double) need, what, error);
  return FALSE;
}

void
ss_cuda_reset_peak (SsCudaContext *ctx)
{
  ctx->mem_peak = ctx->mem_current;
}

void *
ss_cuda_pinned (SsCudaContext *ctx, size_t bytes, GError **error)
{
  if (bytes <= ctx->pinned_bytes)
    return ctx->pinned;
  if (ctx->pinned)
    {
      /* The old slots may still be the target of a copy in flight. */
      if (!CUDA_OK (cudaStreamSynchronize (ctx->stream)))
        return NULL;
      cudaFreeHost (ctx->pinned);
      ctx->pinned = NULL;
      ctx->pinned_bytes = 0;
    }
  if (!CUDA_OK (cudaHostAlloc (&ctx->pinned, bytes, cudaHostAllocDefault)))
    {
      ctx->pinned = NULL;
      return NULL;
    }
  ctx->pinned_bytes = bytes;
  return ctx->pinned;
}

/* ---- cuFFT plans ---------------------------------------------------------- */

static gboolean
make_plan (int width, int height, int batch, cufftType type, cufftHandle *handle,
           size_t *work_bytes, GError **error)
{
  long long dims[2] = { height, width };
  int rank = height == 1 ? 1 : 2;
  long long *shape = height == 1 ? dims + 1 : dims;
  if (!CUFFT_OK (cufftCreate (handle)))
    return FALSE;
  if (!CUFFT_OK (cufftSetAutoAllocation (*handle, 0))
      || !CUFFT_OK (cufftMakePlanMany64 (*handle, rank, shape, NULL, 1, 0, NULL, 1, 0, type,
                                         batch, work_bytes)))
    {
      cufftDestroy (*handle);
      return FALSE;
    }
  return TRUE;
}

size_t
ss_cuda_plan_work_estimate (int width, int height, int batch, cufftType type)
{
  long long dims[2] = { height, width };
  int rank = height == 1 ? 1 : 2;
  size_t work = 0;
  cufftHandle handle;
  if (cufftCreate (&handle) != CUFFT_SUCCESS)
    return 0;
  if (cufftGetSizeMany64 (handle, rank, height == 1 ? dims + 1 : dims, NULL, 1, 0, NULL, 1, 0,
                          type, batch, &work) != CUFFT_SUCCESS)
    work = 0;
  cufftDestroy (handle);
  return work;
}

size_t
ss_cuda_plan_work_needed (SsCudaContext *ctx, int width, int height, int batch, cufftType type)
{
  for (guint i = 0; i < ctx->plans->len; i++)
    {
      const SsCudaPlan *cached = &g_array_index (ctx->plans, SsCudaPlan, i);
      if (cached->width == width && cached->height == height && cached->batch == batch
          && cached->type == type)
        return 0;
    }
  return ss_cuda_plan_work_estimate (width, height, batch, type);
}

gboolean
ss_cuda_check_solver_room (SsCudaContext *ctx, int width, int height, int batch, size_t bytes,
                           const char *what, GError **error)
{
  size_t work = MAX (ss_cuda_plan_work_needed (ctx, width, height, batch, CUFFT_R2C),
                     ss_cuda_plan_work_needed (ctx, width, height, batch, CUFFT_C2R));
  return ss_cuda_check_free (ctx, bytes + work, what, error);
}

/* Grows the shared work area to BYTES and points every plan at it. */
static gboolean
ensure_work_area (SsCudaContext *ctx, size_t bytes, GError **error)
{
  if (bytes <= ctx->fft_work_bytes)
    return TRUE;
  if (ctx->fft_work)
    {
      if (!CUDA_OK (cudaStreamSynchronize (ctx->stream)))
        return FALSE;
      cudaFree (ctx->fft_work);
      ctx->fft_work = NULL;
      ctx->fft_work_bytes = 0;
    }
  cudaError_t status = cudaMalloc (&ctx->fft_work, bytes);
  if (status != cudaSuccess)
    {
      cudaGetLastError ();
      ctx->fft_work = NULL;
      set_out_of_memory (ctx, (double) bytes, "the cuFFT work area", error);
      return FALSE;
    }
  ctx->fft_work_bytes = bytes;
  for (guint i = 0; i < ctx->plans->len; i++)
    {
      SsCudaPlan *plan = &g_array_index (ctx->plans, SsCudaPlan, i);
      if (!CUFFT_OK (cufftSetWorkArea (plan->handle, ctx->fft_work)))
        return FALSE;
    }
  return TRUE;
}

gboolean
ss_cuda_plan (SsCudaContext *ctx, int width, int height, int batch, cufftType type,
              cufftHandle *plan, GError **error)
{
  for (guint i = 0; i < ctx->plans->len; i++)
    {
      SsCudaPlan *cached = &g_array_index (ctx->plans, SsCudaPlan, i);
      if (cached->width == width && cached->height == height && cached->batch == batch
          && cached->type == type)
        {
          *plan = cached->handle;
          return TRUE;
        }
    }
  SsCudaPlan fresh = { width, height, batch, type, 0, 0 };
  double start = ss_now ();
  gboolean made = make_plan (width, height, batch, type, &fresh.handle, &fresh.work_bytes, error);
  ss_planning_add (ss_now () - start);
  if (!made)
    return FALSE;
  if (!CUFFT_OK (cufftSetStream (fresh.handle, ctx->stream)))
    {
      cufftDestroy (fresh.handle);
      return FALSE;
    }
  g_array_append_val (ctx->plans, fresh);
  if (!ensure_work_area (ctx, MAX (fresh.work_bytes, (size_t) 1), error))
    return FALSE;
  if (ctx->fft_work && !CUFFT_OK (cufftSetWorkArea (fresh.handle, ctx->fft_work)))
    return FALSE;
  *plan = fresh.handle;
  return TRUE;
}

void
ss_cuda_plans_prepare (SsCudaContext *ctx, int width, int height)
{
  gboolean other = FALSE;
  for (guint i = 0; i < ctx->plans->len; i++)
    {
      SsCudaPlan *plan = &g_array_index (ctx->plans, SsCudaPlan, i);
      other |= plan->width != width || plan->height != height;
    }
  /* The shared work area was sized for the old plans too: start afresh. */
  if (other)
    ss_cuda_plans_clear (ctx);
}

void
ss_cuda_plans_clear (SsCudaContext *ctx)
{
  if (ctx->stream)
    cudaStreamSynchronize (ctx->stream);
  for (guint i = 0; i < ctx->plans->len; i++)
    cufftDestroy (g_array_index (ctx->plans, SsCudaPlan, i).handle);
  g_array_set_size (ctx->plans, 0);
  if (ctx->fft_work)
    cudaFree (ctx->fft_work);
  ctx->fft_work = NULL;
  ctx->fft_work_bytes = 0;
}

void
ss_cuda_context_take_batch_phases (SsCudaContext *ctx, double *seconds)
{
  for (int i = 0; i < SS_BATCH_PHASES; i++)
    {
      seconds[i] += ctx->batch_phases[i];
      ctx->batch_phases[i] = 0.0;
    }
}
