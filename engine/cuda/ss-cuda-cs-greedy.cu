/* ss-cuda-cs-greedy.cu: the greedy solvers on a block of problems: NIHT and
 * IHT (an iteration of two products and no host wait, replayed as a CUDA
 * graph with the selection in a conditional node), and HTP and CoSaMP with
 * their least squares on a support (CGLS, device scalars), whose start and
 * step the fit after FISTA and ALM shares (ss-cuda-cs-debias.cu). */
#include "ss-cuda-cs-private.cuh"

/* ---- NIHT's step: its small kernels --------------------------------------- */

__global__ void
niht_reset_kernel (Column *col, int batch)
{
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= batch)
    return;
  col[b].gw = col[b].ad2 = 0;
  col[b].low_on = __float_as_uint (INFINITY);
  col[b].high_off = 0;
  col[b].select = 0;
}

/* The direction on the support list (d is 0 off the support: the selection
 * clears it, and HTP's least squares keeps its CG direction there): d =
 * stale ? x : g there; ||d||² (step only). A pass over k entries, not n. */
__global__ void
niht_direction_listed_kernel (const float *__restrict__ x, const float *__restrict__ g,
                              const unsigned *__restrict__ support, float *__restrict__ d,
                              size_t n, unsigned k, Column *__restrict__ col)
{
  size_t off = blockIdx.y * n;
  const unsigned *list = support + (size_t) blockIdx.y * k;
  bool stale = col[blockIdx.y].stale;
  double v[1] = { 0.0 };
  COLUMN_LOOP (j, k)
    {
      size_t i = off + list[j];
      float di = stale ? x[i] : g[i];
      d[i] = di;
      v[0] += (double) di * di;
    }
  if (!stale)
    ss_block_sum_to<1> (v, &col[blockIdx.y].gw);
}

/* μ, the support test's two reductions, and the move, made before the test
 * is decided (no pass can wait for a whole-grid reduction): the candidate
 * x + μg everywhere, for a selection, and x += μg on the support, which is
 * the kept step x + μd (x and d are 0 off it); a selection then overwrites
 * all of x. OMEGA > 0: IHT's fixed step. */
__global__ void
niht_step_kernel (float *__restrict__ x, const float *__restrict__ g,
                  const unsigned char *__restrict__ mask, float *__restrict__ trial, size_t n,
                  Column *__restrict__ col, float omega, bool nonneg)
{
  Column *c = &col[blockIdx.y];
  if (c->stale)
    {
      /* A refresh moves nothing: r keeps its refreshed value. */
      if (blockIdx.x == 0 && threadIdx.x == 0)
        c->mu = 0.0f;
      return;
    }
  float mu = omega > 0 ? omega : (c->ad2 > 0 ? (float) (c->gw / c->ad2) : 0.0f);
  if (blockIdx.x == 0 && threadIdx.x == 0)
    c->mu = mu;
  size_t off = blockIdx.y * n;
  float low = INFINITY, high = 0.0f;
  COLUMN_LOOP (i, n)
    {
      float t = x[off + i] + mu * g[off + i], key = cs_key (t, nonneg);
      trial[off + i] = t;
      if (mask[off + i])
        {
          low = fminf (low, key);
          x[off + i] = t;
        }
      else
        high = fmaxf (high, key);
    }
  block_min_max (low, high, &c->low_on, &c->high_off);
}

/* ---- NIHT / IHT ----------------------------------------------------------- */

unsigned
small_blocks (int batch)
{
  return (unsigned) ((batch + SS_CUDA_THREADS - 1) / SS_CUDA_THREADS);
}

__global__ void
force_select_kernel (Column *col, int batch, unsigned k)
{
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b < batch)
    {
      col[b].select = 1;
      col[b].prefix = 0;
      col[b].remaining = k;
      col[b].listed = 0;
      col[b].stale = 0;
      col[b].mu = 1.0f;
    }
}

__global__ void
residual_kernel (float *__restrict__ r, const float *__restrict__ y, size_t count)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < count;
       i += (size_t) gridDim.x * blockDim.x)
    r[i] = y[i] - r[i];
}

/* r = y − A x, g = Aᵀ r. */
gboolean
niht_fresh_gradient (Niht *s, GError **error)
{
  SsCudaContext *ctx = s->L->ctx;
  size_t mb = s->L->m * s->sel.batch;
  if (!dev_apply (s->L, s->x, s->r, s->sel.batch, error))
    return FALSE;
  residual_kernel<<<ss_cuda_blocks (ctx, mb), SS_CUDA_THREADS, 0, ctx->stream>>> (s->r, s->y, mb);
  return LAUNCH_OK ("residual_kernel") && dev_adjoint (s->L, s->r, s->g, s->sel.batch, error);
}

/* x stays (0 from a cold start); the support is the top-k of Aᵀr, so the
 * first step moves on it (as on the CPU). */
gboolean
niht_start (Niht *s, GError **error)
{
  SsCudaContext *ctx = s->L->ctx;
  if (!niht_fresh_gradient (s, error))
    return FALSE;
  force_select_kernel<<<small_blocks (s->sel.batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
    s->sel.col, s->sel.batch, (unsigned) s->sel.k);
  if (!LAUNCH_OK ("force_select_kernel")
      || !select_top_k (&s->sel, s->g, s->x, s->mask, FALSE, error))
    return FALSE;
  niht_reset_kernel<<<small_blocks (s->sel.batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
    s->sel.col, s->sel.batch);
  return LAUNCH_OK ("niht_reset_kernel");
}

/* An iteration is two parts: the step, its gradient and the decision, then
 * the selection, which changes x and the support but not r or g. SELECT_NODE,
 * when TELL: the graph's conditional node around the selection, which the
 * decision sets. */
static gboolean
niht_step (Niht *s, cudaGraphConditionalHandle select_node, bool tell, GError **error)
{
  SsCudaContext *ctx = s->L->ctx;
  size_t n = s->L->n;
  int batch = s->sel.batch;
  Column *col = s->sel.col;
  niht_direction_listed_kernel<<<column_grid (ctx, s->sel.k, batch), SS_CUDA_THREADS, 0,
                                 ctx->stream>>> (s->x, s->g, s->sel.support, s->d, n,
                                                 (unsigned) s->sel.k, col);
  NihtFold fold = { col, s->r, s->y, s->ad, true,
                    { batch, (unsigned) s->sel.k, true, tell, select_node } };
  if (!LAUNCH_OK ("niht_direction_listed_kernel")
      || !dev_apply_folded (s->L, s->d, s->ad, batch, &fold, error))
    return FALSE;
  niht_step_kernel<<<column_grid (ctx, n, batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
    s->x, s->g, s->mask, s->trial, n, col, s->omega, s->sel.nonneg);
  return LAUNCH_OK ("niht_step_kernel")
         && dev_adjoint_folded (s->L, s->r, s->g, batch, &fold, error);
}

static gboolean
niht_select (Niht *s, GError **error)
{
  return select_top_k (&s->sel, s->trial, s->x, s->mask, TRUE, error);
}

/* One iteration: exactly two operator applications, no host wait. */
gboolean
niht_iteration (Niht *s, GError **error)
{
  return niht_step (s, 0, false, error) && niht_select (s, error);
}

/* Captures what PART enqueues into GRAPH; LEAF, if not NULL, gets the one
 * node the captured work ends on (the stream is in order, so there is one). */
typedef gboolean (*NihtPart) (Niht *h, cudaGraphConditionalHandle select_node, GError **error);

static gboolean
capture_part (Niht *h, cudaGraph_t graph, NihtPart part, cudaGraphConditionalHandle select_node,
              cudaGraphNode_t *leaf, GError **error)
{
  cudaStream_t stream = h->L->ctx->stream;
  if (!CUDA_OK (cudaStreamBeginCaptureToGraph (stream, graph, NULL, NULL, 0,
                                               cudaStreamCaptureModeThreadLocal)))
    return FALSE;
  GError *part_error = NULL;
  gboolean ok = part (h, select_node, &part_error);
  const cudaGraphNode_t *ends = NULL;
  size_t n_ends = 0;
  cudaStreamCaptureStatus status;
  cudaError_t info = cudaStreamGetCaptureInfo (stream, &status, NULL, NULL, &ends, NULL, &n_ends);
  if (ok && leaf && info == cudaSuccess && n_ends == 1)
    *leaf = ends[0];
  cudaGraph_t same = NULL;
  cudaError_t ended = cudaStreamEndCapture (stream, &same);
  if (!ok)
    {
      g_propagate_error (error, part_error);
      return FALSE;
    }
  if (!CUDA_OK (info) || !CUDA_OK (ended))
    return FALSE;
  if (leaf && n_ends != 1)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_CUDA,
                   "capturing NIHT's iteration: %zu end nodes where one was expected", n_ends);
      return FALSE;
    }
  return TRUE;
}

static gboolean
part_step (Niht *h, cudaGraphConditionalHandle select_node, GError **error)
{
  return niht_step (h, select_node, true, error);
}

static gboolean
part_select (Niht *h, cudaGraphConditionalHandle select_node, GError **error)
{
  return niht_select (h, error);
}

/* The iteration captured as a graph (its buffers are fixed for the solve),
 * with the selection inside a conditional node that the decision sets. In
 * the steady state no problem changes its support, and the selection's
 * seven launches (each a whole grid of blocks that would return at once)
 * are then skipped on the device. */
static gboolean
niht_capture (Niht *h, GError **error)
{
  cudaGraph_t graph = NULL;
  cudaGraphConditionalHandle select_node = 0;
  cudaGraphNode_t decided = NULL, conditional = NULL;
  cudaGraphNodeParams params = {};
  if (!CUDA_OK (cudaGraphCreate (&graph, 0)))
    return FALSE;
  gboolean ok = CUDA_OK (cudaGraphConditionalHandleCreate (&select_node, graph, 0,
                                                           cudaGraphCondAssignDefault))
                && capture_part (h, graph, part_step, select_node, &decided, error);
  if (ok)
    {
      params.type = cudaGraphNodeTypeConditional;
      params.conditional.handle = select_node;
      params.conditional.type = cudaGraphCondTypeIf;
      params.conditional.size = 1;
      ok = CUDA_OK (cudaGraphAddNode (&conditional, graph, &decided, NULL, 1, &params));
    }
  ok = ok
       && capture_part (h, params.conditional.phGraph_out[0], part_select, select_node, NULL,
                        error)
       && CUDA_OK (cudaGraphInstantiate (h->graph, graph, 0));
  cudaGraphDestroy (graph);
  return ok;
}

/* ITERATIONS iterations; with graphs on (the context's setting), one
 * iteration is captured once and replayed: its small launches then cost
 * one graph launch. */
gboolean
niht_run (Niht *h, int iterations, GError **error)
{
  SsCudaContext *ctx = h->L->ctx;
  if (!ctx->use_graphs || h->graph == NULL)
    {
      for (int i = 0; i < iterations; i++)
        if (!niht_iteration (h, error))
          return FALSE;
      return TRUE;
    }
  if (*h->graph == NULL && !niht_capture (h, error))
    return FALSE;
  for (int i = 0; i < iterations; i++)
    if (!CUDA_OK (cudaGraphLaunch (*h->graph, ctx->stream)))
      return FALSE;
  return TRUE;
}

/* ---- least squares on a support: HTP and CoSaMP (CGLS, device scalars) ----- */

__global__ void
cg_reset_kernel (Column *col, int batch, bool first)
{
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= batch)
    return;
  col[b].cg_q2 = 0;
  col[b].cg_next = 0;
  if (first)
    col[b].cg_gamma = 0;
}

/* s = Aᵀr on the support (in place); ||s||² into cg_gamma (FIRST) or cg_next. */
__global__ void
cg_restrict_kernel (float *__restrict__ g, const unsigned char *__restrict__ mask, size_t n,
                    Column *__restrict__ col, bool first)
{
  size_t off = blockIdx.y * n;
  double v[1] = { 0.0 };
  COLUMN_LOOP (i, n)
    {
      float gi = mask[off + i] ? g[off + i] : 0.0f;
      g[off + i] = gi;
      v[0] += (double) gi * gi;
    }
  Column *c = &col[blockIdx.y];
  ss_block_sum_to<1> (v, first ? &c->cg_gamma : &c->cg_next);
}

__global__ void
cg_start_kernel (Column *col, int batch)
{
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= batch)
    return;
  col[b].cg_gamma0 = col[b].cg_gamma;
  col[b].cg_active = col[b].cg_gamma > 0;
}

__global__ void
sum_squares_kernel (const float *__restrict__ v, size_t m, Column *__restrict__ col)
{
  size_t off = blockIdx.y * m;
  double acc[1] = { 0.0 };
  COLUMN_LOOP (i, m)
    acc[0] += (double) v[off + i] * v[off + i];
  ss_block_sum_to<1> (acc, &col[blockIdx.y].cg_q2);
}

__global__ void
cg_step_size_kernel (Column *col, int batch)
{
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= batch)
    return;
  Column *c = &col[b];
  c->cg_alpha = c->cg_active && c->cg_q2 > 0 ? (float) (c->cg_gamma / c->cg_q2) : 0.0f;
}

/* v += α w (x by the direction, or r by −A w with NEGATE). */
__global__ void
cg_axpy_kernel (float *__restrict__ v, const float *__restrict__ w, size_t len,
                const Column *__restrict__ col, bool negate)
{
  float a = col[blockIdx.y].cg_alpha;
  if (a == 0.0f)
    return;
  if (negate)
    a = -a;
  size_t off = blockIdx.y * len;
  COLUMN_LOOP (i, len)
    v[off + i] += a * w[off + i];
}

/* β = γ'/γ; past float32's seven digits CG only wanders: stop there. */
__global__ void
cg_beta_kernel (Column *col, int batch)
{
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= batch)
    return;
  Column *c = &col[b];
  c->cg_beta = c->cg_gamma > 0 ? (float) (c->cg_next / c->cg_gamma) : 0.0f;
  c->cg_gamma = c->cg_next;
  if (c->cg_next <= 1e-14 * c->cg_gamma0)
    c->cg_active = 0;
}

__global__ void
cg_direction_kernel (float *__restrict__ w, const float *__restrict__ g, size_t n,
                     const Column *__restrict__ col)
{
  const Column *c = &col[blockIdx.y];
  size_t off = blockIdx.y * n;
  if (!c->cg_active)
    COLUMN_LOOP (i, n)
      w[off + i] = 0.0f;
  else
    COLUMN_LOOP (i, n)
      w[off + i] = g[off + i] + c->cg_beta * w[off + i];
}

/* CGLS's start on MASKS from x (a warm start): r = y − A x, s = Aᵀr on the
 * masks, into g and the direction d; γ0 = ||s||², and a problem whose s is
 * 0 (an empty mask, or already the fit) is inactive from the start. */
gboolean
cg_begin (Niht *h, const unsigned char *masks, GError **error)
{
  SsCudaContext *ctx = h->L->ctx;
  size_t n = h->L->n;
  int batch = h->sel.batch;
  Column *col = h->sel.col;
  unsigned small = small_blocks (batch);
  if (!niht_fresh_gradient (h, error))
    return FALSE;
  cg_reset_kernel<<<small, SS_CUDA_THREADS, 0, ctx->stream>>> (col, batch, true);
  cg_restrict_kernel<<<column_grid (ctx, n, batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
    h->g, masks, n, col, true);
  cg_start_kernel<<<small, SS_CUDA_THREADS, 0, ctx->stream>>> (col, batch);
  return LAUNCH_OK ("cg start kernels")
         && CUDA_OK (cudaMemcpyAsync (h->d, h->g, n * batch * 4, cudaMemcpyDeviceToDevice,
                                      ctx->stream));
}

/* One CGLS step on MASKS; the step sizes and the stopping test are device
 * scalars, so an inactive problem's step is 0 and it does not move (no host
 * wait). The direction lives in d, A d in ad. */
gboolean
cg_step (Niht *h, const unsigned char *masks, GError **error)
{
  SsCudaContext *ctx = h->L->ctx;
  size_t n = h->L->n, m = h->L->m;
  int batch = h->sel.batch;
  Column *col = h->sel.col;
  dim3 gn = column_grid (ctx, n, batch), gm = column_grid (ctx, m, batch);
  unsigned small = small_blocks (batch);
  if (!dev_apply (h->L, h->d, h->ad, batch, error))
    return FALSE;
  cg_reset_kernel<<<small, SS_CUDA_THREADS, 0, ctx->stream>>> (col, batch, false);
  sum_squares_kernel<<<gm, SS_CUDA_THREADS, 0, ctx->stream>>> (h->ad, m, col);
  cg_step_size_kernel<<<small, SS_CUDA_THREADS, 0, ctx->stream>>> (col, batch);
  cg_axpy_kernel<<<gn, SS_CUDA_THREADS, 0, ctx->stream>>> (h->x, h->d, n, col, false);
  cg_axpy_kernel<<<gm, SS_CUDA_THREADS, 0, ctx->stream>>> (h->r, h->ad, m, col, true);
  if (!LAUNCH_OK ("cg step kernels") || !dev_adjoint (h->L, h->r, h->g, batch, error))
    return FALSE;
  cg_restrict_kernel<<<gn, SS_CUDA_THREADS, 0, ctx->stream>>> (h->g, masks, n, col, false);
  cg_beta_kernel<<<small, SS_CUDA_THREADS, 0, ctx->stream>>> (col, batch);
  cg_direction_kernel<<<gn, SS_CUDA_THREADS, 0, ctx->stream>>> (h->d, h->g, n, col);
  return LAUNCH_OK ("cg direction kernels");
}

/* x = argmin ||y − A z|| over z on MASKS, by CGLS from x for h->inner
 * steps; leaves r = y − A x and g = Aᵀ r. */
static gboolean
project_on_supports (Niht *h, const unsigned char *masks, GError **error)
{
  if (!cg_begin (h, masks, error))
    return FALSE;
  for (int it = 0; it < h->inner; it++)
    if (!cg_step (h, masks, error))
      return FALSE;
  /* The fresh residual (and gradient) the next iteration starts from. */
  return niht_fresh_gradient (h, error);
}

__global__ void
nonneg_kernel (float *x, size_t count)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < count;
       i += (size_t) gridDim.x * blockDim.x)
    x[i] = fmaxf (x[i], 0.0f);
}

/* HTP: NIHT's step picks the support (selection only where it changed),
 * then the least-squares fit on it. */
gboolean
htp_iteration (Niht *h, GError **error)
{
  SsCudaContext *ctx = h->L->ctx;
  size_t n = h->L->n;
  int batch = h->sel.batch;
  Column *col = h->sel.col;
  dim3 gn = column_grid (ctx, n, batch);
  niht_reset_kernel<<<small_blocks (batch), SS_CUDA_THREADS, 0, ctx->stream>>> (col, batch);
  niht_direction_listed_kernel<<<column_grid (ctx, h->sel.k, batch), SS_CUDA_THREADS, 0,
                                 ctx->stream>>> (h->x, h->g, h->sel.support, h->d, n,
                                                 (unsigned) h->sel.k, col);
  NihtFold fold = { col, h->r, h->y, h->ad, false, {} };
  if (!LAUNCH_OK ("niht_direction_listed_kernel")
      || !dev_apply_folded (h->L, h->d, h->ad, batch, &fold, error))
    return FALSE;
  niht_step_kernel<<<gn, SS_CUDA_THREADS, 0, ctx->stream>>> (h->x, h->g, h->mask, h->trial, n, col,
                                                             0.0f, h->sel.nonneg);
  NihtDecision how = { batch, (unsigned) h->sel.k, false, false, 0 };
  niht_decide_kernel<<<1, SS_CUDA_THREADS, 0, ctx->stream>>> (col, how);
  if (!LAUNCH_OK ("htp kernels") || !select_top_k (&h->sel, h->trial, h->x, h->mask, TRUE, error)
      || !project_on_supports (h, h->mask, error))
    return FALSE;
  if (h->sel.nonneg)
    {
      nonneg_kernel<<<ss_cuda_blocks (ctx, n * batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
        h->x, n * batch);
      return LAUNCH_OK ("nonneg_kernel") && niht_fresh_gradient (h, error);
    }
  return TRUE;
}

__global__ void
merge_masks_kernel (unsigned char *__restrict__ merged, const unsigned char *__restrict__ mask,
                    size_t count)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < count;
       i += (size_t) gridDim.x * blockDim.x)
    merged[i] |= mask[i];
}

/* Marks every problem to select the WIDTH largest keys. */
static gboolean
select_all (Niht *h, size_t width, GError **error)
{
  SsCudaContext *ctx = h->L->ctx;
  force_select_kernel<<<small_blocks (h->sel.batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
    h->sel.col, h->sel.batch, (unsigned) width);
  return LAUNCH_OK ("force_select_kernel");
}

/* CoSaMP: support ∪ the gradient's 2k largest (either sign, as on the CPU),
 * least squares on that, keep the k largest, fresh residual. */
gboolean
cosamp_iteration (Niht *h, GError **error)
{
  SsCudaContext *ctx = h->L->ctx;
  size_t n = h->L->n, nb = n * h->sel.batch;
  Selector wide = h->sel;
  wide.k = MIN (2 * h->sel.k, n);
  wide.nonneg = FALSE;
  wide.support = NULL;   /* a wider set than the support list holds */
  wide.direction = NULL;
  if (!select_all (h, wide.k, error) || !select_top_k (&wide, h->g, h->x, h->merged, FALSE, error))
    return FALSE;
  merge_masks_kernel<<<ss_cuda_blocks (ctx, nb), SS_CUDA_THREADS, 0, ctx->stream>>> (h->merged,
                                                                                    h->mask, nb);
  if (!LAUNCH_OK ("merge_masks_kernel") || !project_on_supports (h, h->merged, error)
      || !select_all (h, h->sel.k, error)
      || !select_top_k (&h->sel, h->x, h->x, h->mask, TRUE, error))
    return FALSE;
  niht_reset_kernel<<<small_blocks (h->sel.batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
    h->sel.col, h->sel.batch);
  return LAUNCH_OK ("niht_reset_kernel") && niht_fresh_gradient (h, error);
}
