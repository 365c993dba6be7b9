/* ss-cuda-cs-select.cu: the top-k of a block of problems by a 3-pass radix
 * select on the keys' bits (11, 10, 10 bits, histogram in shared memory), for
 * the problems whose select flag is set, with no host wait. */
#include "ss-cuda-cs-private.cuh"

/* ---- radix select (problems with col->select set) ------------------------- */

/* Histogram of the keys' bits [SHIFT, SHIFT + BITS) among keys whose higher
 * bits equal the prefix found so far. */
__global__ void
select_histogram_kernel (const float *__restrict__ v, size_t n, const Column *__restrict__ col,
                         unsigned *__restrict__ hist, int shift, int bits, bool nonneg)
{
  const Column *c = &col[blockIdx.y];
  if (!c->select)
    return;
  __shared__ unsigned local[RADIX_BINS];
  for (int i = threadIdx.x; i < (1 << bits); i += blockDim.x)
    local[i] = 0;
  __syncthreads ();
  unsigned high_mask = shift + bits >= 32 ? 0u : ~0u << (shift + bits);
  size_t off = blockIdx.y * n;
  COLUMN_LOOP (i, n)
    {
      unsigned key = __float_as_uint (cs_key (v[off + i], nonneg));
      if ((key & high_mask) == c->prefix)
        atomicAdd (&local[(key >> shift) & ((1u << bits) - 1)], 1u);
    }
  __syncthreads ();
  unsigned *h = hist + (size_t) blockIdx.y * RADIX_BINS;
  for (int i = threadIdx.x; i < (1 << bits); i += blockDim.x)
    if (local[i])
      atomicAdd (&h[i], local[i]);
}

/* One block per problem finds the bin holding the remaining-th largest key:
 * each thread sums a run of bins, a scan over the runs (in shared memory)
 * gives the keys above each run, and the one thread whose run holds the
 * rank extends the prefix. The histogram is then cleared for the next pass. */
__global__ void
select_bin_kernel (Column *col, unsigned *hist, int shift, int bits, int batch)
{
  Column *c = &col[blockIdx.x];
  unsigned *h = hist + (size_t) blockIdx.x * RADIX_BINS;
  __shared__ unsigned run_sum[SS_CUDA_THREADS], above[SS_CUDA_THREADS];
  __shared__ unsigned rank;
  const int bins = 1 << bits, per = (bins + blockDim.x - 1) / blockDim.x;
  const int lo = threadIdx.x * per;
  bool active = c->select;
  unsigned mine[RADIX_BINS / SS_CUDA_THREADS], sum = 0;
  for (int j = 0; j < per; j++)
    {
      mine[j] = lo + j < bins ? h[lo + j] : 0;
      sum += mine[j];
    }
  run_sum[threadIdx.x] = sum;
  if (threadIdx.x == 0)
    rank = c->remaining;
  __syncthreads ();
  if (threadIdx.x == 0)
    for (int t = blockDim.x - 1, acc = 0; t >= 0; t--)
      {
        above[t] = (unsigned) acc;
        acc += run_sum[t];
      }
  __syncthreads ();
  unsigned seen = above[threadIdx.x];
  if (active && seen < rank && seen + sum >= rank)
    for (int j = per - 1; j >= 0; j--)
      {
        if (seen + mine[j] >= rank)
          {
            c->prefix |= (unsigned) (lo + j) << shift;
            c->remaining = rank - seen;
            /* After the last pass: the keys equal to the k-th still to keep. */
            c->ties = rank - seen;
            break;
          }
        seen += mine[j];
      }
  for (int j = 0; j < per; j++)
    if (lo + j < bins)
      h[lo + j] = 0;
}

/* x = the candidate's entries with keys above the k-th (and as many equal to
 * it as the rank asks), mask = their places; WRITE_X false keeps x (NIHT's
 * start keeps x = 0 and takes the support of Aᵀy). With SUPPORT (NIHT's),
 * the places also go to that list of K a problem, in no order, and the
 * direction D, which NIHT writes on the support only, is cleared. */
__global__ void
select_threshold_kernel (const float *v, float *x,   /* may be the same array (CoSaMP) */
                         unsigned char *__restrict__ mask, size_t n, Column *__restrict__ col,
                         bool nonneg, bool write_x, unsigned *__restrict__ support,
                         float *__restrict__ d, unsigned k)
{
  Column *c = &col[blockIdx.y];
  if (!c->select)
    return;
  size_t off = blockIdx.y * n;
  float kth = __uint_as_float (c->prefix);
  COLUMN_LOOP (i, n)
    {
      float vi = v[off + i], key = cs_key (vi, nonneg);
      bool keep = key > kth || (key == kth && atomicSub (&c->ties, 1u) - 1u < 0x80000000u);
      mask[off + i] = keep;
      if (write_x)
        x[off + i] = keep ? (nonneg ? fmaxf (vi, 0.0f) : vi) : 0.0f;
      if (support)
        {
          d[off + i] = 0.0f;
          unsigned place = keep ? atomicAdd (&c->listed, 1u) : k;
          if (place < k)
            support[(size_t) blockIdx.y * k + place] = (unsigned) i;
        }
    }
}

/* Top-k of V for the problems whose select flag is set (no host wait). */
gboolean
select_top_k (Selector *s, const float *v, float *x, unsigned char *mask, gboolean write_x,
              GError **error)
{
  SsCudaContext *ctx = s->ctx;
  /* Keys are >= 0: 31 bits, in passes of 11, 10 and 10. */
  const int shifts[3] = { 20, 10, 0 }, bits[3] = { 11, 10, 10 };
  dim3 grid = column_grid (ctx, s->n, s->batch);
  for (int pass = 0; pass < 3; pass++)
    {
      select_histogram_kernel<<<grid, SS_CUDA_THREADS, 0, ctx->stream>>> (
        v, s->n, s->col, s->hist, shifts[pass], bits[pass], s->nonneg);
      if (!LAUNCH_OK ("select_histogram_kernel"))
        return FALSE;
      select_bin_kernel<<<s->batch, SS_CUDA_THREADS, 0, ctx->stream>>> (
        s->col, s->hist, shifts[pass], bits[pass], s->batch);
      if (!LAUNCH_OK ("select_bin_kernel"))
        return FALSE;
    }
  select_threshold_kernel<<<grid, SS_CUDA_THREADS, 0, ctx->stream>>> (
    v, x, mask, s->n, s->col, s->nonneg, write_x, s->support, s->direction, (unsigned) s->k);
  return LAUNCH_OK ("select_threshold_kernel");
}
