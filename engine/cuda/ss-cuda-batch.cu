/* ss-cuda-batch.cu: many problems that share one operator, solved together
 * (seed 004: concurrent solves of one operator are one batched transform,
 * not a loop).
 *
 * B CPADMM problems of one size with one c^ (the planes of a cube, the
 * channels of a colour image, frames with one PSF) run as ONE iteration:
 *   real = [w_0 .. w_B-1 | q_0 .. q_B-1]  --R2C, batch 2B-->  spec
 *   spectral kernel over B half-spectra (c^ read once per frequency for all B)
 *   spec  --C2R, batch 2B-->  real = [x_0 .. x_B-1 | u_0 .. u_B-1]
 *   pixel kernel over B·n pixels (grid.y = the problem: its own threshold,
 *   mask and data, its own change accumulator)
 * Each value is computed as the single solve computes it (the arithmetic is
 * shared through ss-cuda-cpadmm.cuh), so a problem's answer does not depend
 * on the company it is solved in, up to cuFFT's batched rounding.
 *
 * Small problems leave a GPU partly idle: a 1024² pair of transforms costs
 * 27 µs alone and 34 µs for two, so a batch of 100 pays the fixed part once.
 * Reports come every params->report_every iterations; the host waits at
 * each, which costs little next to B problems' iterations.
 *
 * When B problems do not fit the free memory, they run as several
 * sub-batches of the largest size that fits.
 *
 * This file holds the kernels, the iteration and the run (reports, results,
 * the entry point); a sub-batch's sizing, allocation and upload are in
 * ss-cuda-batch-setup.cu, with what the two share in
 * ss-cuda-batch-private.cuh.
 */
#include "ss-cuda-batch-private.cuh"

/* ---- kernels ------------------------------------------------------------------ */

/* S0 holds the COUNT spectra of w, S1 the COUNT spectra of z - nu. A thread
 * takes one frequency of every problem, so c^ is read once for all of them
 * (a fifth of the kernel's bytes saved at large COUNT); consecutive threads
 * still touch consecutive values of each spectrum. */
__global__ void
batch_spectral_kernel (float2 *__restrict__ s0, float2 *__restrict__ s1,
                       const float2 *__restrict__ chat, size_t spec, int count,
                       CpadmmConstants k)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < spec;
       i += (size_t) gridDim.x * blockDim.x)
    {
      float2 c = chat[i];
      for (int b = 0; b < count; b++)
        cpadmm_spectral_at (s0[b * spec + i], s1[b * spec + i], c, k);
    }
}

template <bool MASK, unsigned FLAGS>
__global__ void
batch_pixel_kernel (float *__restrict__ real, float *__restrict__ nu, float *__restrict__ mu,
                    float *__restrict__ z, const float *__restrict__ y,
                    const unsigned char *__restrict__ mask, size_t mask_stride, size_t n,
                    size_t count,
                    const float *__restrict__ thresh, CpadmmConstants k,
                    double *__restrict__ acc)
{
  size_t problem = blockIdx.y, offset = problem * n;
  CpadmmConstants kb = k;
  kb.thresh = thresh[problem];
  float *xw = real + offset, *uq = real + (count + problem) * n;
  const unsigned char *own_mask = MASK ? mask + problem * mask_stride : NULL;
  double delta[1] = { 0.0 };
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    {
      size_t j = offset + i;
      float a = xw[i], b = uq[i], c = nu[j], e = mu[j];
      float zz = (FLAGS & SS_ITER_DELTA) ? z[j] : 0.0f;
      cpadmm_pixel<FLAGS> (a, b, c, e, zz, y[j], MASK ? own_mask[i] != 0 : true, kb, delta[0]);
      xw[i] = a;
      uq[i] = b;
      nu[j] = c;
      mu[j] = e;
      if (FLAGS & SS_ITER_WRITE_ESTIMATE)
        z[j] = zz;
    }
  if (FLAGS & SS_ITER_DELTA)
    ss_block_sum_to<1> (delta, acc + problem * SS_ACC_COUNT + SS_ACC_DELTA);
}

/* Blocks along x for one problem of N items; grid.y carries the problems. */
static dim3
batch_grid (const Batch *s, size_t items)
{
  return dim3 (ss_cuda_blocks (s->ctx, items), (unsigned) s->count, 1);
}

template <bool MASK>
static void
launch_batch_pixel (Batch *s, unsigned flags)
{
  dim3 grid = batch_grid (s, s->n);
  cudaStream_t st = s->ctx->stream;
  cpadmm_with_flags (flags, [&] (auto f) {
    batch_pixel_kernel<MASK, decltype (f)::value><<<grid, SS_CUDA_THREADS, 0, st>>> (
      s->real, s->nu, s->mu, s->z, s->y, s->mask, s->mask_stride, s->n, s->count, s->thresh,
      s->k, s->acc);
  });
}

static const char *const batch_stage_names[] = {
  "R2C batch 2B", "spectral kernel", "C2R batch 2B", "pixel kernel",
};

static gboolean
batch_stage (gpointer solver, int stage, unsigned flags, GError **error)
{
  Batch *s = (Batch *) solver;
  SsCudaContext *ctx = s->ctx;
  switch (stage)
    {
    case 0:
      return CUFFT_OK (cufftExecR2C (s->r2c, s->real, (cufftComplex *) s->spec_buf));
    case 1:
      batch_spectral_kernel<<<ss_cuda_blocks (ctx, s->spec), SS_CUDA_THREADS, 0, ctx->stream>>> (
        s->spec_buf, s->spec_buf + (size_t) s->count * s->spec, s->chat, s->spec, s->count,
        s->k);
      return LAUNCH_OK ("batch_spectral_kernel");
    case 2:
      return CUFFT_OK (cufftExecC2R (s->c2r, (cufftComplex *) s->spec_buf, s->real));
    default:
      if (s->mask)
        launch_batch_pixel<true> (s, flags);
      else
        launch_batch_pixel<false> (s, flags);
      return LAUNCH_OK ("batch_pixel_kernel");
    }
}

static gboolean
batch_iterate (gpointer solver, unsigned flags, GError **error)
{
  for (int stage = 0; stage < 4; stage++)
    if (!batch_stage (solver, stage, flags, error))
      return FALSE;
  return TRUE;
}

static const float *
batch_estimate (gpointer solver)
{
  return ((Batch *) solver)->z;
}

/* ---- the run ------------------------------------------------------------------ */

static double
now_seconds (void)
{
  return (double) g_get_monotonic_time () * 1e-6;
}

/* Ends PHASE: waits for the stream (phase boundaries only, never inside
 * the iterations), adds the seconds since *MARK to the context's count and
 * moves *MARK to now. */
static gboolean
phase_end (SsCudaContext *ctx, SsBatchPhase phase, double *mark, GError **error)
{
  if (!CUDA_OK (cudaStreamSynchronize (ctx->stream)))
    return FALSE;
  double now = now_seconds ();
  ctx->batch_phases[phase] += now - *mark;
  *mark = now;
  return TRUE;
}

typedef struct {
  SsBatchReportFunc report;
  gpointer user_data;
  int first_index;            /* the batch's first problem in the caller's numbering */
  GCancellable *cancellable;
  double start;               /* the sub-batch's start: set-up, reports and results */
  double mark;                /* the current phase's start (SsBatchPhase) */
} BatchRun;

/* C x of every estimate at once: a batched R2C of z into the first half of
 * the spectra (free between iterations), the product with c^, a batched C2R
 * into the second half (COUNT images fit there: a half-spectrum holds more
 * bytes than an image), where every reporter reads its slice. */
static gboolean
enqueue_batched_cx (Batch *s, GError **error)
{
  cufftHandle r2c, c2r;
  float *cx = s->reporters[0].real;
  return ss_cuda_plan (s->ctx, s->width, s->height, s->count, CUFFT_R2C, &r2c, error)
         && ss_cuda_plan (s->ctx, s->width, s->height, s->count, CUFFT_C2R, &c2r, error)
         && CUFFT_OK (cufftExecR2C (r2c, s->z, (cufftComplex *) s->spec_buf))
         && ss_cuda_spectrum_multiply (s->ctx, s->spec_buf, s->chat, s->spec, s->count, FALSE,
                                       (float) (1.0 / (double) s->n), error)
         && CUFFT_OK (cufftExecC2R (c2r, (cufftComplex *) s->spec_buf, cx));
}

/* Enqueues every problem's report work, copies the accumulators and hands
 * each problem's report over. LAST (COUNT reports) keeps the metrics. */
static gboolean
report_all (Batch *s, const BatchRun *run, int iteration, gboolean final, double *host,
            SsReport *last, GError **error)
{
  SsCudaContext *ctx = s->ctx;
  if (!CUDA_OK (cudaEventRecord (s->report_events[0], ctx->stream))
      || !enqueue_batched_cx (s, error))
    return FALSE;
  const float *cx = s->reporters[0].real;
  for (int b = 0; b < s->count; b++)
    if (!ss_cuda_reporter_enqueue_metrics (&s->reporters[b], s->z + (size_t) b * s->n,
                                           cx + (size_t) b * s->n, error))
      return FALSE;
  if (!CUDA_OK (cudaMemcpyAsync (host, s->acc, s->count * SS_ACC_COUNT * sizeof (double),
                                 cudaMemcpyDeviceToHost, ctx->stream))
      || !CUDA_OK (cudaEventRecord (s->report_events[1], ctx->stream))
      || !CUDA_OK (cudaStreamSynchronize (ctx->stream)))
    return FALSE;
  /* The report's device time (the iterations before it ran before its
   * first event) and, below, the host's share. */
  float device_ms = 0.0f;
  if (!CUDA_OK (cudaEventElapsedTime (&device_ms, s->report_events[0], s->report_events[1])))
    return FALSE;
  double host_mid = now_seconds ();
  double elapsed = host_mid - run->start;
  for (int b = 0; b < s->count; b++)
    {
      SsReport rep;
      memset (&rep, 0, sizeof rep);
      rep.iteration = iteration;
      rep.elapsed = elapsed;
      rep.final = final;
      ss_cuda_reporter_fill (&s->reporters[b], host + (size_t) b * SS_ACC_COUNT, &rep);
      rep.preview = NULL;
      last[b] = rep;
      if (run->report)
        run->report (run->first_index + b, &rep, run->user_data);
    }
  /* The device's report work plus the callbacks; enqueueing it overlaps
   * the iterations still running, so it is not counted. */
  s->report_seconds += 1e-3 * device_ms + (now_seconds () - host_mid);
  return TRUE;
}

/* The iterations, reports every params->report_every; *DONE iterations done,
 * *CANCELLED when a report point found the run cancelled. */
/* Host arrays for the estimates, their pages touched: a fresh 4 MB array
 * is mapped on first touch, and a page fault per 4 KiB inside the download
 * would serialise with the copy; touched here, while the device iterates,
 * the faults cost nothing on the critical path. */
static gboolean
prepare_results (Batch *s, SsSolveResult *results, GError **error)
{
  const size_t page_floats = 4096 / sizeof (float);
  for (int b = 0; b < s->count; b++)
    {
      float *x = (float *) g_try_malloc (s->n * sizeof (float));
      if (x == NULL)
        {
          g_set_error (error, SS_ERROR, SS_ERROR_OUT_OF_MEMORY,
                       "no host memory for the %d×%d result", s->width, s->height);
          return FALSE;
        }
      for (size_t i = 0; i < s->n; i += page_floats)
        x[i] = 0.0f;
      x[s->n - 1] = 0.0f;
      g_free (results[b].x);
      results[b].x = x;
    }
  return TRUE;
}

static gboolean
run_batch (Batch *s, SsCudaIterator *it, const SsSolveParams *params, const BatchRun *run,
           SsReport *last, SsSolveResult *results, int *done, gboolean *cancelled,
           GError **error)
{
  SsCudaContext *ctx = s->ctx;
  const int total = params->iterations, every = MAX (params->report_every, 1);
  double *host = (double *) ss_cuda_pinned (ctx, s->count * SS_ACC_COUNT * sizeof (double),
                                            error);
  if (host == NULL)
    return FALSE;
  *done = 0;
  *cancelled = FALSE;
  while (*done < total)
    {
      int end = MIN (*done + every, total), length = end - *done;
      /* The first enqueue captures and instantiates the graphs with the
       * device idle (the upload was waited for): its host time is theirs. */
      double enqueue_start = now_seconds ();
      gboolean ok =
        CUDA_OK (cudaMemsetAsync (s->acc, 0, s->count * SS_ACC_COUNT * sizeof (double),
                                  ctx->stream))
        && ss_cuda_iterator_enqueue_plain (ctx, it, MAX (length - 2, 0), error);
      if (ok && *done == 0)
        s->capture_seconds = now_seconds () - enqueue_start;
      ok = ok
        && (length < 2 || batch_iterate (s, SS_ITER_WRITE_ESTIMATE, error))
        && batch_iterate (s, SS_ITER_WRITE_ESTIMATE | SS_ITER_DELTA, error)
        && (*done > 0 || prepare_results (s, results, error))
        && report_all (s, run, end, end == total, host, last, error);
      if (!ok)
        {
          cudaStreamSynchronize (ctx->stream);
          return FALSE;
        }
      *done = end;
      if (g_cancellable_is_cancelled (run->cancellable))
        {
          *cancelled = TRUE;
          break;
        }
    }
  return TRUE;
}

static gboolean
download_estimates (Batch *s, SsSolveResult *results, GError **error)
{
  /* Into the arrays prepare_results made during the iterations. */
  for (int b = 0; b < s->count; b++)
    if (results[b].x == NULL)
      return prepare_results (s, results, error) && download_estimates (s, results, error);
  for (int b = 0; b < s->count; b++)
    {
      float *x = results[b].x;
      if (!CUDA_OK (cudaMemcpyAsync (x, s->z + (size_t) b * s->n, s->n * sizeof (float),
                                     cudaMemcpyDeviceToHost, s->ctx->stream)))
        return FALSE;
    }
  return CUDA_OK (cudaStreamSynchronize (s->ctx->stream));
}

static void
fill_results (const Batch *s, const SsReport *last, int iterations, double seconds,
              SsSolveResult *results)
{
  for (int b = 0; b < s->count; b++)
    {
      SsSolveResult *r = &results[b];
      r->width = s->width;
      r->height = s->height;
      r->iterations = iterations;
      r->seconds = seconds / s->count;
      r->mse = last[b].mse;
      r->psnr = last[b].psnr;
      r->residual = last[b].residual;
      r->objective = last[b].objective;
      r->rel_change = last[b].rel_change;
      r->peak_memory_bytes = s->ctx->mem_peak;
      g_free (r->backend);
      r->backend = g_strdup ("cuda");
      g_free (r->device);
      r->device = g_strdup (s->ctx->name);
    }
}

/* One sub-batch, allocated: upload, iterate, copy the estimates out, free. */
static gboolean
solve_sub_batch (Batch *s, const SsProblem *problems, const SsSolveParams *params,
                 BatchRun *run, SsSolveResult *results, GError **error)
{
  int count = s->count;
  SsCudaContext *ctx = s->ctx;
  if (!ss_cuda_batch_upload (s, problems, error)
      || !phase_end (ctx, SS_BATCH_PHASE_UPLOAD, &run->mark, error))
    {
      ss_cuda_batch_free (s);
      return FALSE;
    }
  SsCudaIterator it;
  memset (&it, 0, sizeof it);
  it.solver = s;
  it.iterate = batch_iterate;
  it.stage = batch_stage;
  it.stage_count = 4;
  it.stage_names = batch_stage_names;
  it.estimate = batch_estimate;
  it.capturable = TRUE;
  g_autofree SsReport *last = g_new0 (SsReport, count);
  int done = 0;
  gboolean cancelled = FALSE;
  s->report_seconds = s->capture_seconds = 0.0;
  gboolean ok = run_batch (s, &it, params, run, last, results, &done, &cancelled, error);
  if (ok)
    {
      /* run_batch ends at a report point's sync: the iterations (graph
       * capture included) are what the report points did not take. */
      double now = now_seconds ();
      ctx->batch_phases[SS_BATCH_PHASE_REPORT] += s->report_seconds;
      ctx->batch_phases[SS_BATCH_PHASE_CAPTURE] += s->capture_seconds;
      ctx->batch_phases[SS_BATCH_PHASE_ITERATE]
        += MAX (now - run->mark - s->report_seconds - s->capture_seconds, 0.0);
      run->mark = now;
    }
  ok = ok && download_estimates (s, results, error)
       && phase_end (ctx, SS_BATCH_PHASE_DOWNLOAD, &run->mark, error);
  if (ok)
    fill_results (s, last, done, now_seconds () - run->start, results);
  if (ok && cancelled)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "the solve was cancelled");
      ok = FALSE;
    }
  ss_cuda_iterator_clear (&it);
  ss_cuda_batch_free (s);
  if (ok)
    {
      ctx->batch_phases[SS_BATCH_PHASE_FREE] += now_seconds () - run->mark;
      run->mark = now_seconds ();
    }
  return ok;
}

/* One lock per device index (a few more devices than a host holds share
 * the last), held while a sub-batch is sized and allocated. */
static GMutex *
device_setup_lock (int device)
{
  static GMutex locks[16];
  return &locks[CLAMP (device, 0, (int) G_N_ELEMENTS (locks) - 1)];
}

gboolean
ss_cuda_solve_batch (SsCudaContext *ctx, const SsProblem *problems, int count,
                     const double *alphas, const SsSolveParams *params,
                     SsBatchReportFunc report, gpointer user_data, GCancellable *cancellable,
                     SsSolveResult *results, GError **error)
{
  if (count <= 0)
    return TRUE;
  if (!ss_solve_params_validate (params, error) || !CUDA_OK (cudaSetDevice (ctx->device)))
    return FALSE;
  for (int b = 0; b < count; b++)
    if (problems[b].op == NULL || problems[b].y == NULL
        || (problems[b].op->chat == NULL && problems[b].op->kernel == NULL))
      {
        g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                     "problem %d of the batch is incomplete (operator or data missing)", b);
        return FALSE;
      }
  if (params->kind != SS_SOLVER_CPADMM || !ss_problems_share_operator (problems, count))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_UNSUPPORTED,
                   "the device batches only CPADMM problems that share one operator");
      return FALSE;
    }

  ss_cuda_plans_prepare (ctx, problems[0].op->width, problems[0].op->height);
  BatchRun run = { report, user_data, 0, cancellable, 0.0, 0.0 };
  GMutex *lock = device_setup_lock (ctx->device);
  for (int first = 0; first < count;)
    {
      /* Sizing and allocating under the device's lock: contexts sharing a
       * device (--devices 0,0, or two apps' threads) see each other's
       * buffers in the free memory they size from. */
      run.start = run.mark = now_seconds ();
      g_mutex_lock (lock);
      int size = MIN (ss_cuda_batch_sub_batch_size (ctx, problems + first, count - first),
                      count - first);
      ss_cuda_reset_peak (ctx);
      Batch *s = ss_cuda_batch_new (ctx, problems + first, size, alphas ? alphas + first : NULL,
                                    params, error);
      g_mutex_unlock (lock);
      if (s != NULL && !phase_end (ctx, SS_BATCH_PHASE_SETUP, &run.mark, error))
        {
          ss_cuda_batch_free (s);
          return FALSE;
        }
      run.first_index = first;
      if (s == NULL || !solve_sub_batch (s, problems + first, params, &run, results + first,
                                         error))
        return FALSE;
      first += size;
    }
  return TRUE;
}
