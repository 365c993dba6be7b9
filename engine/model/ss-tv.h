/* ss-tv.h: isotropic total variation on periodic finite differences.
 *
 * ∇x = (x[i, j+1] − x[i, j], x[i+1, j] − x[i, j]) with wrap-around, so each
 * component is a circulant whose DFT is e^{2πik/N} − 1; TV(x) = Σ |∇x|₂. */
#pragma once

#include <glib.h>
#include <math.h>

G_BEGIN_DECLS

/* The half-spectra (complex, interleaved) of the horizontal then the vertical
 * difference: 2 arrays of 2 * height * (width/2 + 1) floats (g_free). */
float *ss_tv_spectra (int width, int height);

/* The prox of t‖·‖₂ on each 2-vector (gx[i], gy[i]): grouped shrinkage,
 * g ← g · max(1 − t/|g|, 0). */
static inline void
ss_tv_shrink_pair (float *gx, float *gy, float t)
{
  float norm = sqrtf (*gx * *gx + *gy * *gy);
  float scale = norm > t ? 1.0f - t / norm : 0.0f;
  *gx *= scale;
  *gy *= scale;
}

/* The same over N pairs. */
void ss_tv_shrink (float *gx, float *gy, gsize n, float t);

/* TV(x) = Σ |∇x|₂, periodic, in double: the objective's prior term. */
double ss_tv_value (const float *x, int width, int height);

G_END_DECLS
