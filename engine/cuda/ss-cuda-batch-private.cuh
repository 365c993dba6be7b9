/* ss-cuda-batch-private.cuh: what the batched CPADMM's files share
 * (ss-cuda-batch.cu, the kernels and the run, and ss-cuda-batch-setup.cu, a
 * sub-batch's memory and set-up; never C code): the sub-batch's state and
 * the functions the run calls in the set-up's file. The design is described
 * at the top of ss-cuda-batch.cu. */
#pragma once

#include "ss-cuda-cpadmm.cuh"

#include <math.h>
#include <string.h>

typedef struct {
  SsCudaContext *ctx;
  int count;
  int width, height;
  size_t n, spec;
  float2 *chat;               /* spec: the shared operator */
  float *y;                   /* count · n */
  unsigned char *mask;        /* count · n, or NULL when no problem has one; only n
                               * when every problem has the same mask (mask_stride 0) */
  size_t mask_stride;         /* n, or 0: one mask shared by every problem */
  float *truth;               /* count · n, or NULL when no problem has one */
  float *thresh;              /* count: alpha_b / sigma */
  CpadmmConstants k;
  cufftHandle r2c, c2r;       /* batch 2 · count */
  float *real;                /* 2 · count · n */
  float2 *spec_buf;           /* 2 · count · spec (+ alignment) */
  float *nu, *mu, *z;         /* count · n each */
  double *acc;                /* count · SS_ACC_COUNT */
  SsCudaProblem *views;       /* per problem, pointing into the arrays above */
  SsSolveParams *params;      /* per problem (its alpha) */
  SsCudaReporter *reporters;  /* per problem, sharing the scratch */
  size_t bytes;               /* device bytes allocated here */
  cudaEvent_t report_events[2]; /* around a report point's device work (timing) */
  double report_seconds;      /* report points so far: device work and callbacks */
  double capture_seconds;     /* the first enqueue of plain iterations (graph capture) */
} Batch;

/* ---- a sub-batch's memory and set-up (ss-cuda-batch-setup.cu) ----------------- */

/* The largest sub-batch that fits the free memory now (at least 1, at most
 * COUNT and grid.y's limit); the allocation itself reports a shortfall. */
int ss_cuda_batch_sub_batch_size (SsCudaContext *ctx, const SsProblem *problems, int count);
/* COUNT problems (ALPHAS: their alphas, or NULL for PARAMS's) allocated on
 * the device, with their views, parameters and reporters; NULL on failure. */
Batch *ss_cuda_batch_new (SsCudaContext *ctx, const SsProblem *problems, int count,
                          const double *alphas, const SsSolveParams *params, GError **error);
/* Frees what ss_cuda_batch_new made, and S (NULL allowed). */
void ss_cuda_batch_free (Batch *s);
/* The problems' data, masks and thresholds uploaded and the iterates and
 * accumulators zeroed (enqueued on the context's stream). */
gboolean ss_cuda_batch_upload (Batch *s, const SsProblem *problems, GError **error);
