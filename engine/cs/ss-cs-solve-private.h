/* ss-cs-solve-private.h: what the CPU compressed-sensing solvers share between
 * ss-cs-solve.c (the block's state, FISTA/ALM, the driver) and
 * ss-cs-solve-greedy.c (the IHT, NIHT, HTP and CoSaMP iterations). Only these
 * two files include it; what one file alone uses stays in that file. */
#pragma once

#include "ss-cs.h"

G_BEGIN_DECLS

/* The state of a block solve: the problems' arrays and the per-problem state. */
typedef struct {
  const SsCsParams *params;
  SsLinop *A;
  gsize n, m, k;
  int batch;
  const float *y;
  float *x;            /* n x batch, the estimate */
  float *r;            /* m x batch, y − A x */
  float *g;            /* n x batch, Aᵀ r */
  float *w;            /* n x batch, a direction (g on the support, or a CG direction) */
  float *aw;           /* m x batch, A w */
  float *trial;        /* n: a candidate x */
  float *r_trial;      /* m: its residual */
  float *scratch;      /* n: selection keys */
  guint32 *indices;    /* up to 2k + k indices */
  guint8 *support;     /* n x batch, 1 on the support */
  guint8 *merged;      /* n x batch, CoSaMP's support ∪ top-2k */
  double *y_norm;      /* per problem */
  double *history;     /* per problem, the last 16 residual norms (stall test) */
  gboolean *done;
  SsCsStats *stats;
} Block;

/* Residual norms kept per problem (allocated by the driver, read by the stall test). */
#define HISTORY 16

/* Column B of a block of columns of LENGTH floats. */
static inline float *
ss_cs_col (float *block, gsize length, int b)
{
  return block + (gsize) b * length;
}

/* r = y − A x for the whole block (ss-cs-solve.c). */
void ss_cs_refresh_residual (Block *s);

/* The greedy solvers' first support and residual (ss-cs-solve-greedy.c). */
void ss_cs_greedy_start (Block *s);

/* One NIHT iteration on the block, or IHT's with the fixed step OMEGA > 0. */
void ss_cs_niht_iteration (Block *s, int iteration, double omega);

/* x_b = argmin ||y_b − A z|| over z supported on MASKS_b (n x batch), by
 * CGLS from x_b for at most ITERATIONS steps, problems not done only;
 * leaves r = y − A x (ss-cs-solve-greedy.c). */
void ss_cs_project_on_supports (Block *s, const guint8 *masks, int iterations);

/* One HTP iteration on the block: NIHT's support, then least squares on it. */
void ss_cs_htp_iteration (Block *s, int iteration);

/* One CoSaMP iteration on the block: support ∪ top-2k, least squares, keep k. */
void ss_cs_cosamp_iteration (Block *s, int iteration);

G_END_DECLS
