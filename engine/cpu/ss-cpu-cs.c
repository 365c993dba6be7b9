/* ss-cpu-cs.c: the compressed-sensing solvers of engine/cs on an image:
 * A = P C, the circulant operator of the problem with its observation mask,
 * as an SsLinop (n -> n, 0 on unobserved pixels). A star field is sparse:
 * IHT, NIHT, HTP and CoSaMP keep its k brightest pixels, ALM finds the
 * l1-smallest image that fits the data. */
#include "ss-cpu-private.h"
#include "ss-cs.h"
#include "ss-error.h"

#include <string.h>

typedef struct {
  const SsOperator *op;
  const SsFft *fft;
  float *real, *spectrum, *masked;
} CirculantData;

static void
circulant_data_free (gpointer p)
{
  CirculantData *d = p;
  ss_mem_free (NULL, d->real, 0);
  ss_mem_free (NULL, d->spectrum, 0);
  ss_mem_free (NULL, d->masked, 0);
  g_free (d);
}

static void
circulant_apply (const SsLinop *A, const float *in, float *out, int batch)
{
  CirculantData *d = A->data;
  const guint8 *mask = d->op->mask;
  for (int b = 0; b < batch; b++)
    {
      /* FFTW's new-array execution wants its planned alignment: the
       * transforms run in our aligned scratch, the caller's blocks are
       * only read and written. */
      float *o = out + (gsize) b * A->rows;
      ss_cpu_circulant (d->fft, d->op, in + (gsize) b * A->cols, d->real, d->spectrum, d->real,
                        FALSE);
      for (gsize i = 0; i < A->rows; i++)
        o[i] = (mask == NULL || mask[i]) ? d->real[i] : 0.0f;
    }
}

static void
circulant_adjoint (const SsLinop *A, const float *in, float *out, int batch)
{
  CirculantData *d = A->data;
  const guint8 *mask = d->op->mask;
  for (int b = 0; b < batch; b++)
    {
      const float *i_b = in + (gsize) b * A->rows;
      if (mask)
        {
          for (gsize i = 0; i < A->rows; i++)
            d->masked[i] = mask[i] ? i_b[i] : 0.0f;
          i_b = d->masked;
        }
      ss_cpu_circulant (d->fft, d->op, i_b, d->real, d->spectrum, d->real, TRUE);
      memcpy (out + (gsize) b * A->cols, d->real, A->cols * sizeof (float));
    }
}

/* OUT = C IN at every pixel, the mask ignored: what a report's metrics
 * need, since a hold-out rule's held-out pixels are off the mask. */
static void
circulant_apply_everywhere (const SsLinop *A, const float *in, float *out)
{
  CirculantData *d = A->data;
  ss_cpu_circulant (d->fft, d->op, in, d->real, d->spectrum, out, FALSE);
}

static SsLinop *
circulant_linop_new (const SsOperator *op, GError **error)
{
  gsize n = (gsize) op->width * op->height;
  CirculantData *d = g_new0 (CirculantData, 1);
  d->op = op;
  if (!((d->fft = ss_fft_get (op->width, op->height, 1, error))
        && (d->real = ss_mem_alloc (NULL, n * sizeof (float), error))
        && (d->spectrum = ss_mem_alloc (NULL, ss_fft_spectrum_floats (op->width, op->height)
                                                  * sizeof (float), error))
        && (d->masked = ss_mem_alloc (NULL, n * sizeof (float), error))))
    {
      circulant_data_free (d);
      return NULL;
    }
  SsLinop *A = g_new0 (SsLinop, 1);
  A->rows = A->cols = n;
  A->apply = circulant_apply;
  A->adjoint = circulant_adjoint;
  A->lipschitz = op->lipschitz;
  A->name = "circulant";
  A->data = d;
  A->free_data = circulant_data_free;
  A->bytes = (2 * n + ss_fft_spectrum_floats (op->width, op->height)) * sizeof (float);
  return A;
}

typedef struct {
  SsCpuReporter *reporter;
  SsLinop *A;
  float *cx, *previous;
  gsize n;
} ImageProgress;

static gboolean
image_progress (int iteration, const float *x, gboolean last, gpointer user_data, GError **error)
{
  ImageProgress *p = user_data;
  circulant_apply_everywhere (p->A, x, p->cx);
  double change = 0, norm = 0;
  for (gsize i = 0; i < p->n; i++)
    {
      double d = (double) x[i] - p->previous[i];
      change += d * d;
      norm += (double) x[i] * x[i];
    }
  memcpy (p->previous, x, p->n * sizeof (float));
  return ss_cpu_reporter_emit (p->reporter, iteration, x, p->cx,
                               norm > 0 ? sqrt (change / norm) : 0.0, last, error);
}

gboolean
ss_cpu_cs_image (const SsProblem *problem, const SsSolveParams *params, SsReportFunc report,
                 gpointer user_data, GCancellable *cancellable, SsSolveResult *result,
                 GError **error)
{
  const SsOperator *op = problem->op;
  gsize n = (gsize) op->width * op->height;
  SsCsParams cs;
  if (!ss_cs_params_from_solve (params, n, &cs, error))
    return FALSE;
  if (!(op->lipschitz > 0))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "the operator is zero");
      return FALSE;
    }

  g_autoptr (SsLinop) A = circulant_linop_new (op, error);
  if (A == NULL)
    return FALSE;
  SsCpuReporter reporter;
  ss_cpu_reporter_init (&reporter, problem, params, report, user_data, cancellable);
  SsMemCounter mem = { 0 };
  float *x = ss_mem_alloc (&mem, n * sizeof (float), error);
  ImageProgress progress = { &reporter, A, NULL, NULL, n };
  gboolean ok = x && (progress.cx = ss_mem_alloc (&mem, n * sizeof (float), error))
                && (progress.previous = ss_mem_alloc (&mem, n * sizeof (float), error));
  cs.progress = image_progress;
  cs.user_data = &progress;
  SsCsStats stats;
  if (ok)
    ok = ss_cs_solve (&cs, A, problem->y, 1, x, &stats, error);
  if (ok)
    {
      /* The solver's own work areas: about five n-vectors besides these. */
      mem.peak += 5 * n * sizeof (float) + A->bytes;
      ss_cpu_finish_result (result, &reporter, &x, stats.iterations, &mem);
    }
  ss_mem_free (&mem, x, 0);
  ss_mem_free (&mem, progress.cx, 0);
  ss_mem_free (&mem, progress.previous, 0);
  ss_cpu_reporter_clear (&reporter);
  return ok;
}
