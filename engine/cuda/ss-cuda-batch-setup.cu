/* ss-cuda-batch-setup.cu: a sub-batch of the batched CPADMM
 * (ss-cuda-batch.cu) on the device: its size from the free memory, its
 * buffers' allocation and release, and its set-up (the problems' views and
 * reporters, the upload of the data, masks and thresholds, the zeroed state). */
#include "ss-cuda-batch-private.cuh"

/* ---- memory ------------------------------------------------------------------- */

static size_t
spec_buffer_bytes (size_t count, size_t spec)
{
  /* + 256 bytes: the reporters' image starts on a 256-byte boundary. */
  return (2 * count * spec + 32) * sizeof (float2);
}

/* Device bytes of COUNT problems of N pixels (SPEC values per half-spectrum). */
static size_t
batch_bytes (size_t count, size_t n, size_t spec, gboolean mask, gboolean truth)
{
  size_t per_problem = (1 + 5 + (truth ? 1 : 0)) * n * sizeof (float) + (mask ? n : 0)
                       + sizeof (float) + SS_ACC_COUNT * sizeof (double);
  return spec * sizeof (float2) + count * per_problem + spec_buffer_bytes (count, spec);
}

static size_t
batch_work_bytes (SsCudaContext *ctx, int width, int height, size_t count)
{
  return MAX (ss_cuda_plan_work_needed (ctx, width, height, (int) (2 * count), CUFFT_R2C),
              ss_cuda_plan_work_needed (ctx, width, height, (int) (2 * count), CUFFT_C2R));
}

/* The largest sub-batch that fits the free memory now (at least 1, at most
 * COUNT and grid.y's limit); the allocation itself reports a shortfall. */
int
ss_cuda_batch_sub_batch_size (SsCudaContext *ctx, const SsProblem *problems, int count)
{
  const SsOperator *op = problems[0].op;
  size_t n = (size_t) op->width * op->height, spec = (size_t) op->height * op->spec_width;
  gboolean mask = FALSE, truth = FALSE;
  for (int b = 0; b < count; b++)
    {
      mask |= problems[b].op->mask != NULL;
      truth |= problems[b].truth != NULL;
    }
  gsize free_now = 0;
  ss_cuda_context_get_memory (ctx, &free_now, NULL);
  /* Leave a tenth for the library and the reporters' plans. */
  double budget = 0.9 * (double) free_now;
  int size = MIN (count, 65535);
  while (size > 1
         && (double) (batch_bytes (size, n, spec, mask, truth)
                      + batch_work_bytes (ctx, op->width, op->height, size)) > budget)
    size = size / 2 + (size > 3 ? size / 4 : 0);
  return MAX (size, 1);
}

static void *
batch_alloc (Batch *s, size_t bytes, const char *what, GError **error)
{
  void *ptr = NULL;
  if (!ss_cuda_alloc (s->ctx, &ptr, bytes, what, error))
    return NULL;
  s->bytes += bytes;
  return ptr;
}

void
ss_cuda_batch_free (Batch *s)
{
  if (s == NULL)
    return;
  SsCudaContext *ctx = s->ctx;
  size_t cn = (size_t) s->count * s->n;
  ss_cuda_free (ctx, s->chat, s->spec * sizeof (float2));
  ss_cuda_free (ctx, s->y, cn * sizeof (float));
  ss_cuda_free (ctx, s->mask, s->mask_stride ? cn : s->n);
  ss_cuda_free (ctx, s->truth, cn * sizeof (float));
  ss_cuda_free (ctx, s->thresh, s->count * sizeof (float));
  ss_cuda_free (ctx, s->real, 2 * cn * sizeof (float));
  ss_cuda_free (ctx, s->spec_buf, spec_buffer_bytes (s->count, s->spec));
  ss_cuda_free (ctx, s->nu, cn * sizeof (float));
  ss_cuda_free (ctx, s->mu, cn * sizeof (float));
  ss_cuda_free (ctx, s->z, cn * sizeof (float));
  ss_cuda_free (ctx, s->acc, s->count * SS_ACC_COUNT * sizeof (double));
  for (int i = 0; i < 2; i++)
    if (s->report_events[i])
      cudaEventDestroy (s->report_events[i]);
  g_free (s->views);
  g_free (s->params);
  g_free (s->reporters);
  g_free (s);
}

/* ---- set-up ------------------------------------------------------------------- */

static gboolean
upload_problems (Batch *s, const SsProblem *problems, GError **error)
{
  SsCudaContext *ctx = s->ctx;
  const SsOperator *op = problems[0].op;
  size_t n = s->n;
  if (!ss_cuda_upload_spectrum (ctx, op, s->chat, error))
    return FALSE;
  if (s->mask && s->mask_stride == 0
      && !CUDA_OK (cudaMemcpyAsync (s->mask, op->mask, n, cudaMemcpyHostToDevice, ctx->stream)))
    return FALSE;
  for (int b = 0; b < s->count; b++)
    {
      const SsProblem *pb = &problems[b];
      size_t at = (size_t) b * n;
      if (!CUDA_OK (cudaMemcpyAsync (s->y + at, pb->y, n * sizeof (float),
                                     cudaMemcpyHostToDevice, ctx->stream)))
        return FALSE;
      /* One mask shared by all: uploaded once, above. Problems without a
       * mask observe every pixel: all ones. */
      if (s->mask && s->mask_stride != 0)
        {
          gboolean copied =
            pb->op->mask
              ? CUDA_OK (cudaMemcpyAsync (s->mask + at, pb->op->mask, n, cudaMemcpyHostToDevice,
                                          ctx->stream))
              : CUDA_OK (cudaMemsetAsync (s->mask + at, 1, n, ctx->stream));
          if (!copied)
            return FALSE;
        }
      if (s->truth && pb->truth
          && !CUDA_OK (cudaMemcpyAsync (s->truth + at, pb->truth, n * sizeof (float),
                                        cudaMemcpyHostToDevice, ctx->stream)))
        return FALSE;
    }
  return TRUE;
}

/* Per problem: a view of its slices, its parameters and a reporter whose
 * accumulators are its slice of ACC; every reporter borrows the same
 * scratch (reports run one after another on the stream). */
static void
make_views (Batch *s, const SsProblem *problems, const double *alphas,
            const SsSolveParams *params)
{
  uintptr_t second = (uintptr_t) (s->spec_buf + (size_t) s->count * s->spec);
  float *scratch_real = (float *) ((second + 255) & ~(uintptr_t) 255);
  for (int b = 0; b < s->count; b++)
    {
      const SsOperator *op = problems[b].op;
      size_t at = (size_t) b * s->n;
      SsCudaProblem *v = &s->views[b];
      v->width = s->width;
      v->height = s->height;
      v->n = s->n;
      v->spec = s->spec;
      v->m = op->m;
      v->lipschitz = op->lipschitz;
      v->chat = s->chat;
      v->y = s->y + at;
      v->mask = s->mask ? s->mask + b * s->mask_stride : NULL;
      v->truth = s->truth && problems[b].truth ? s->truth + at : NULL;

      s->params[b] = *params;
      s->params[b].alpha = alphas ? alphas[b] : params->alpha;

      SsCudaReporter *r = &s->reporters[b];
      memset (r, 0, sizeof *r);
      r->ctx = s->ctx;
      r->p = v;
      r->params = &s->params[b];
      r->block = s->acc + (size_t) b * SS_ACC_COUNT;
      r->block_bytes = SS_ACC_COUNT * sizeof (double);
      r->spec = s->spec_buf;
      r->real = scratch_real;
      r->has_delta = TRUE;
    }
}

static gboolean
upload_thresholds (Batch *s, GError **error)
{
  g_autofree float *host = g_new (float, s->count);
  for (int b = 0; b < s->count; b++)
    host[b] = (float) (s->params[b].alpha / s->params[b].sigma);
  return CUDA_OK (cudaMemcpyAsync (s->thresh, host, s->count * sizeof (float),
                                   cudaMemcpyHostToDevice, s->ctx->stream))
         && CUDA_OK (cudaStreamSynchronize (s->ctx->stream));
}

static gboolean
zero_state (Batch *s, GError **error)
{
  cudaStream_t st = s->ctx->stream;
  size_t image_bytes = (size_t) s->count * s->n * sizeof (float);
  return CUDA_OK (cudaMemsetAsync (s->real, 0, 2 * image_bytes, st))
         && CUDA_OK (cudaMemsetAsync (s->nu, 0, image_bytes, st))
         && CUDA_OK (cudaMemsetAsync (s->mu, 0, image_bytes, st))
         && CUDA_OK (cudaMemsetAsync (s->z, 0, image_bytes, st))
         && CUDA_OK (cudaMemsetAsync (s->acc, 0, s->count * SS_ACC_COUNT * sizeof (double), st));
}

Batch *
ss_cuda_batch_new (SsCudaContext *ctx, const SsProblem *problems, int count, const double *alphas,
                   const SsSolveParams *params, GError **error)
{
  const SsOperator *op = problems[0].op;
  gboolean any_mask = FALSE, any_truth = FALSE, one_mask = op->mask != NULL;
  for (int b = 0; b < count; b++)
    {
      any_mask |= problems[b].op->mask != NULL;
      any_truth |= problems[b].truth != NULL;
      one_mask &= problems[b].op->mask == op->mask;
    }
  Batch *s = g_new0 (Batch, 1);
  s->ctx = ctx;
  s->count = count;
  s->width = op->width;
  s->height = op->height;
  s->n = (size_t) op->width * op->height;
  s->spec = (size_t) op->height * op->spec_width;
  /* Frames of one operator share its mask (the same array): one copy on
   * the device, read by every problem, instead of COUNT. */
  s->mask_stride = one_mask ? 0 : s->n;
  s->k = cpadmm_constants (params, s->n);
  s->views = g_new0 (SsCudaProblem, count);
  s->params = g_new0 (SsSolveParams, count);
  s->reporters = g_new0 (SsCudaReporter, count);
  size_t cn = (size_t) count * s->n;
  g_autofree char *what = g_strdup_printf ("a batch of %d %d×%d CPADMM solves", count, s->width,
                                           s->height);
  gboolean ok =
    ss_cuda_plan (ctx, s->width, s->height, 2 * count, CUFFT_R2C, &s->r2c, error)
    && ss_cuda_plan (ctx, s->width, s->height, 2 * count, CUFFT_C2R, &s->c2r, error)
    && (s->chat = (float2 *) batch_alloc (s, s->spec * sizeof (float2), what, error))
    && (s->y = (float *) batch_alloc (s, cn * sizeof (float), what, error))
    && (!any_mask
        || (s->mask = (unsigned char *) batch_alloc (s, one_mask ? s->n : cn, what, error)))
    && (!any_truth || (s->truth = (float *) batch_alloc (s, cn * sizeof (float), what, error)))
    && (s->thresh = (float *) batch_alloc (s, count * sizeof (float), what, error))
    && (s->real = (float *) batch_alloc (s, 2 * cn * sizeof (float), what, error))
    && (s->spec_buf = (float2 *) batch_alloc (s, spec_buffer_bytes (count, s->spec), what,
                                              error))
    && (s->nu = (float *) batch_alloc (s, cn * sizeof (float), what, error))
    && (s->mu = (float *) batch_alloc (s, cn * sizeof (float), what, error))
    && (s->z = (float *) batch_alloc (s, cn * sizeof (float), what, error))
    && (s->acc = (double *) batch_alloc (s, count * SS_ACC_COUNT * sizeof (double), what,
                                         error))
    && CUDA_OK (cudaEventCreate (&s->report_events[0]))
    && CUDA_OK (cudaEventCreate (&s->report_events[1]));
  if (!ok)
    {
      ss_cuda_batch_free (s);
      return NULL;
    }
  make_views (s, problems, alphas, params);
  return s;
}

gboolean
ss_cuda_batch_upload (Batch *s, const SsProblem *problems, GError **error)
{
  return upload_problems (s, problems, error) && upload_thresholds (s, error)
         && zero_state (s, error);
}
