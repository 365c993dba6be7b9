/* ss-cuda-cpadmm.cu: CPADMM (seed 000, Alg. 3) on the GPU.
 *
 * One iteration is a batch-of-2 R2C, one spectral kernel, a batch-of-2 C2R and
 * one pixel kernel:
 *   real = [w | z - nu]  --R2C-->  spec = [F(w) | F(z - nu)]
 *   spectral: x^ = (rho conj(c^) F(w) + sigma F(z - nu)) / (rho |c^|^2 + sigma);
 *             spec = [x^ / n | c^ x^ / n]
 *   spec  --C2R-->  real = [x | u]
 *   pixel:  v = D (rho (u - mu) + P^T y);  z = soft(x + nu, alpha/sigma);
 *           mu += tau (v - u);  nu += tau (x - z);  real = [v + mu | z - nu]
 * The state between iterations is nu, mu and the two transform inputs; z
 * itself is written only on the iterations a report needs (the one before a
 * report point, for the relative change, and the report iteration). This is
 * the CPU's iteration (ss-cpu-cpadmm.c) in the same order on the same state.
 *
 * Memory: real 2n, spec 2 half-spectra (~2n), nu, mu, z: ~7 floats per pixel,
 * plus the problem (c^ ~1, y 1, mask 1/4, truth 1).
 */
#include "ss-cuda-cpadmm.cuh"

#include <string.h>

typedef struct {
  SsCudaSolver base;
  const SsCudaProblem *p;
  CpadmmConstants k;
  cufftHandle r2c2, c2r2;
  float *real;   /* 2n */
  float2 *spec;  /* 2 spec */
  float *nu, *mu, *z;
  SsCudaReporter *reporter;
} Cpadmm;

__global__ void
cpadmm_spectral_kernel (float2 *__restrict__ s0, float2 *__restrict__ s1,
                        const float2 *__restrict__ chat, size_t count, CpadmmConstants k)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < count;
       i += (size_t) gridDim.x * blockDim.x)
    cpadmm_spectral_at (s0[i], s1[i], chat[i], k);
}

/* One pixel per thread and grid-stride step. Measured at 4096² on an H100:
 * this form moves its 37 bytes per pixel at 2.6 TB/s; four pixels per thread
 * with 16-byte accesses ran at 1.2 TB/s (the same accesses without the
 * arithmetic ran at 2.8 TB/s), so the scalar form is kept. */
template <bool MASK, unsigned FLAGS>
__global__ void
cpadmm_pixel_kernel (float *__restrict__ xw, float *__restrict__ uq, float *__restrict__ nu,
                     float *__restrict__ mu, float *__restrict__ z, const float *__restrict__ y,
                     const unsigned char *__restrict__ mask, size_t n, CpadmmConstants k,
                     double *__restrict__ delta_acc)
{
  double delta[1] = { 0.0 };
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    {
      float a = xw[i], b = uq[i], c = nu[i], e = mu[i];
      float zz = (FLAGS & SS_ITER_DELTA) ? z[i] : 0.0f;
      cpadmm_pixel<FLAGS> (a, b, c, e, zz, y[i], MASK ? mask[i] != 0 : true, k, delta[0]);
      xw[i] = a;
      uq[i] = b;
      nu[i] = c;
      mu[i] = e;
      if (FLAGS & SS_ITER_WRITE_ESTIMATE)
        z[i] = zz;
    }
  if (FLAGS & SS_ITER_DELTA)
    ss_block_sum_to<1> (delta, delta_acc + SS_ACC_DELTA);
}

template <bool MASK>
static void
launch_pixel (Cpadmm *s, unsigned flags, unsigned blocks)
{
  const SsCudaProblem *p = s->p;
  cudaStream_t st = s->base.ctx->stream;
  float *xw = s->real, *uq = s->real + p->n;
  double *acc = s->reporter->block;
  cpadmm_with_flags (flags, [&] (auto f) {
    cpadmm_pixel_kernel<MASK, decltype (f)::value><<<blocks, SS_CUDA_THREADS, 0, st>>> (
      xw, uq, s->nu, s->mu, s->z, p->y, p->mask, p->n, s->k, acc);
  });
}

static const char *const cpadmm_stage_names[] = {
  "R2C batch 2", "spectral kernel", "C2R batch 2", "pixel kernel",
};

static gboolean
cpadmm_stage (gpointer solver, int stage, unsigned flags, GError **error)
{
  Cpadmm *s = (Cpadmm *) solver;
  SsCudaContext *ctx = s->base.ctx;
  const SsCudaProblem *p = s->p;
  switch (stage)
    {
    case 0:
      return CUFFT_OK (cufftExecR2C (s->r2c2, s->real, (cufftComplex *) s->spec));
    case 1:
      cpadmm_spectral_kernel<<<ss_cuda_blocks (ctx, p->spec), SS_CUDA_THREADS, 0, ctx->stream>>> (
        s->spec, s->spec + p->spec, p->chat, p->spec, s->k);
      return LAUNCH_OK ("cpadmm_spectral_kernel");
    case 2:
      return CUFFT_OK (cufftExecC2R (s->c2r2, (cufftComplex *) s->spec, s->real));
    default:
      {
        unsigned blocks = ss_cuda_blocks (ctx, p->n);
        if (p->mask)
          launch_pixel<true> (s, flags, blocks);
        else
          launch_pixel<false> (s, flags, blocks);
        return LAUNCH_OK ("cpadmm_pixel_kernel");
      }
    }
}

static gboolean
cpadmm_iterate (gpointer solver, unsigned flags, GError **error)
{
  for (int stage = 0; stage < 4; stage++)
    if (!cpadmm_stage (solver, stage, flags, error))
      return FALSE;
  return TRUE;
}

static gboolean
cpadmm_reset (gpointer solver, GError **error)
{
  Cpadmm *s = (Cpadmm *) solver;
  SsCudaContext *ctx = s->base.ctx;
  size_t image = s->p->n * sizeof (float);
  return CUDA_OK (cudaMemsetAsync (s->real, 0, 2 * image, ctx->stream))
         && CUDA_OK (cudaMemsetAsync (s->nu, 0, image, ctx->stream))
         && CUDA_OK (cudaMemsetAsync (s->mu, 0, image, ctx->stream))
         && CUDA_OK (cudaMemsetAsync (s->z, 0, image, ctx->stream));
}

static const float *
cpadmm_estimate (gpointer solver)
{
  return ((Cpadmm *) solver)->z;
}

static size_t spec_bytes (const SsCudaProblem *p);

static void
cpadmm_destroy (SsCudaSolver *solver)
{
  Cpadmm *s = (Cpadmm *) solver;
  SsCudaContext *ctx = solver->ctx;
  const SsCudaProblem *p = s->p;
  ss_cuda_free (ctx, s->real, 2 * p->n * sizeof (float));
  ss_cuda_free (ctx, s->spec, spec_bytes (p));
  ss_cuda_free (ctx, s->nu, p->n * sizeof (float));
  ss_cuda_free (ctx, s->mu, p->n * sizeof (float));
  ss_cuda_free (ctx, s->z, p->n * sizeof (float));
  g_free (s);
}

/* Two half-spectra, plus 256 bytes so that the reporter's image inside the
 * second one can start on a 256-byte boundary. */
static size_t
spec_bytes (const SsCudaProblem *p)
{
  return (2 * p->spec + 32) * sizeof (float2);
}

static size_t
cpadmm_buffer_bytes (const SsCudaProblem *p)
{
  return 5 * p->n * sizeof (float) + spec_bytes (p);
}

double
ss_cuda_cpadmm_iteration_bytes (const SsCudaProblem *p)
{
  /* spectral: read 2 spectra + c^, write 2 spectra; pixel: read x, u, nu, mu,
   * y (+ mask byte), write w, z - nu, nu, mu. */
  double spectral = 5.0 * 8.0 * (double) p->spec;
  double pixel = (9.0 * 4.0 + (p->mask ? 1.0 : 0.0)) * (double) p->n;
  return spectral + pixel;
}

SsCudaSolver *
ss_cuda_cpadmm_new (SsCudaContext *ctx, const SsCudaProblem *p, const SsSolveParams *params,
                    SsCudaIterator *it, SsCudaReporter *reporter, GError **error)
{
  g_autofree char *what = g_strdup_printf ("a %d×%d CPADMM solve", p->width, p->height);
  if (!ss_cuda_check_solver_room (ctx, p->width, p->height, 2, cpadmm_buffer_bytes (p), what,
                                  error))
    return NULL;

  Cpadmm *s = g_new0 (Cpadmm, 1);
  s->base.ctx = ctx;
  s->base.destroy = cpadmm_destroy;
  s->base.bytes = cpadmm_buffer_bytes (p);
  s->p = p;
  s->reporter = reporter;
  s->k = cpadmm_constants (params, p->n);

  gboolean ok =
    ss_cuda_plan (ctx, p->width, p->height, 2, CUFFT_R2C, &s->r2c2, error)
    && ss_cuda_plan (ctx, p->width, p->height, 2, CUFFT_C2R, &s->c2r2, error)
    && ss_cuda_alloc (ctx, (void **) &s->real, 2 * p->n * sizeof (float), what, error)
    && ss_cuda_alloc (ctx, (void **) &s->spec, spec_bytes (p), what, error)
    && ss_cuda_alloc (ctx, (void **) &s->nu, p->n * sizeof (float), what, error)
    && ss_cuda_alloc (ctx, (void **) &s->mu, p->n * sizeof (float), what, error)
    && ss_cuda_alloc (ctx, (void **) &s->z, p->n * sizeof (float), what, error)
    && cpadmm_reset (s, error);
  if (!ok)
    {
      cpadmm_destroy (&s->base);
      return NULL;
    }
  /* Between iterations the spectra are free: the reporter borrows the first
   * as its spectrum and the second as its image (2 spec + 64 floats hold n
   * floats from the next 256-byte boundary on). */
  uintptr_t second = (uintptr_t) (s->spec + p->spec);
  ss_cuda_reporter_borrow (reporter, s->spec, (float *) ((second + 255) & ~(uintptr_t) 255),
                           TRUE);
  ss_cuda_iterator_bind (it, s, cpadmm_iterate, cpadmm_estimate, cpadmm_reset, TRUE);
  ss_cuda_iterator_stages (it, cpadmm_stage, cpadmm_stage_names,
                           G_N_ELEMENTS (cpadmm_stage_names));
  return &s->base;
}

void
ss_cuda_solver_free (SsCudaSolver *solver)
{
  if (solver)
    solver->destroy (solver);
}
