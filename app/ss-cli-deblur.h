/* ss-cli-deblur.h: deblur's steps for one plane of a real image, shared
 * with `quality` (ss-cli-quality-run.c), which runs every solver exactly as
 * `deblur IN -o OUT` would on its cases: same sky, scaling, padding,
 * automatic alpha and non-negativity. */
#pragma once

#include "ss-cli-solve.h"

G_BEGIN_DECLS

/* One plane's problem and result. Sizes: the image is w x h; the problem
 * solved is the padded pw x ph with the image at (x0, y0). */
typedef struct {
  int plane;                /* -1 for a single-plane image */
  SsScaling scaling;
  double background;        /* the sky subtracted, scaled units (a real image), else 0 */
  SsSkyMode sky_mode;
  SsOperator *op;
  float *y;                 /* pw x ph, 0 where unobserved */
  float *truth;             /* pw x ph, or NULL */
  float *truth_image;       /* w x h, or NULL */
  int pw, ph, x0, y0;
  int w, h;                 /* the image's size (w x h at (x0, y0) in the padded frame) */
  gsize blanks;
  SsDefects defects;        /* a real image's clipped, cold and hot pixels left out of the
                               data term, and its noise (input units) when they took it */
  SsSolveParams params;
  double noise;             /* scaled units, when alpha is automatic */
  double alpha_noise;       /* the σ the α rule took (ss_noise_for_alpha), scaled units */
  SsDataStats stats;        /* what the solvers may reuse (noise and median) */
  SsPsfSpec psf;            /* the blur (for a fit: its circular approximation) */
  SsPsfFit fit;
  gboolean fitted;
  char *psf_text;           /* for summaries and HISTORY */
  gsize observed;           /* the operator's m, kept after the buffers go */
  SsSolveResult result;     /* x is freed once cropped into the output */
  double mse, psnr, baseline;
} CliPlaneJob;

/* What every plane shares. */
typedef struct {
  const char *in_path;
  const char *truth_path;
  SsImage *image;           /* the planes processed */
  SsImage *truth;           /* NULL, one plane, or as many as IMAGE */
  gboolean recorded;
  SsAcquisition acq;        /* when recorded */
  CliPhases phases;         /* where the time went, over every plane */
} CliDeblurInput;

void cli_plane_job_init (CliPlaneJob *job, int plane, const CliConfig *config);
void cli_plane_job_clear (CliPlaneJob *job);

/* Scales, pads and builds the operator of plane JOB->plane of IN->image (a
 * real image: no acquisition record), with the PSF, sky, boundary, alpha
 * and non-negativity settings of CONFIG; a PSF file is read once into the
 * spec (ss_psf_spec_load), which every plane's copy shares. Returns -1, or
 * the exit status after printing the message. */
int cli_deblur_prepare_real (CliDeblurInput *in, const CliOptions *options,
                             const CliConfig *config, CliPlaneJob *job);

/* The problem JOB describes, with the sky subtracted as its background. */
SsProblem cli_plane_job_problem (const CliPlaneJob *job);

/* Crops SOLVED (JOB's padded size, scaled units) back to the image and maps it
 * to the input's units in OUT (width x height); sets JOB's MSE with a truth. */
gboolean cli_deblur_crop_plane (const CliDeblurInput *in, CliPlaneJob *job, const float *solved,
                                float *out, GError **error);

G_END_DECLS
