/* ss-dense.h: the dense direct solver's linear algebra on the CPU (seed 002).
 *
 * x = (A^T A + lambda I)^-1 A^T y with A = P C as an n x n system: build the
 * normal matrix, Cholesky L L^T (LAPACKE_spotrf), then either two triangular
 * solves, or the explicit triangular inverse L^-1 by GETS (Gaussian
 * elimination on [L | I], blocked so its updates are matrix products) and two
 * triangular products. Matrices are column-major, lower triangle used.
 */
#pragma once

#include "ss-solver.h"

G_BEGIN_DECLS

/* Bytes the dense path needs for an n-unknown system with m observations. */
gsize ss_dense_bytes_needed (gsize n, gsize m, SsDirectMethod method);

/* Fails with SS_ERROR_TOO_LARGE and a message naming the need, the memory
 * available (LIMIT, or ss_mem_available () when 0) and the largest square
 * image (side x side) or region that would fit. */
gboolean ss_dense_check_fits (int width, int height, gsize m, SsDirectMethod method,
                              gsize limit, GError **error);

/* The largest n whose system fits in BYTES. */
gsize ss_dense_max_unknowns (gsize bytes, double observed_fraction, SsDirectMethod method);

/* N x N normal matrix A^T A + lambda I (full, symmetric, column-major), from
 * ss_mem_alloc: free with ss_mem_free (NULL, matrix, n * n * sizeof (float)). */
float *ss_dense_normal_matrix (const SsOperator *op, double lambda, GError **error);

/* R = L^-1 by GETS for a lower-triangular column-major N x N L (leading
 * dimension LDA); R's strict upper triangle is set to 0. Returns FALSE with
 * SS_ERROR_NUMERIC on a zero pivot. */
gboolean ss_gets_lower_inverse (const float *L, int n, int lda, float *R, int ldr, GError **error);
/* The seed's unblocked form (one elimination step per pivot), kept as a
 * second algorithm for tests and benchmarks. */
gboolean ss_gets_lower_inverse_unblocked (const float *L, int n, int lda, float *R, int ldr,
                                          GError **error);

G_END_DECLS
