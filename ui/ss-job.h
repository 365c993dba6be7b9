/* ss-job.h: the settings of one solve, and the problem built from them.
 *
 * The app builds its problem the way sharpsky-cli does, so the two agree:
 *  - simulate: scaling = ss_scaling_estimate (sky) of the image (or region);
 *    truth = (image - sky) / scale clamped >= 0 (blank pixels 0);
 *    op = ss_operator_new (acquisition); y = ss_simulate; the solve gets the
 *    truth, so it reports MSE/PSNR.
 *  - deblur: y = (image - sky) / scale; op = ss_operator_new_blur (psf, y):
 *    blank (NaN) pixels are left out of the data term, and so are the
 *    clipped ones (ss-saturation.h) unless settings.saturation_mode is NONE,
 *    and with settings.bad_pixels (ss-bad-pixels.h) the hot ones and, with
 *    x >= 0, the cold ones.
 *    The image is first padded as the CLI does (ss-boundary.h: mirror by
 *    default), so that the circulant model sees no step at the edges; the
 *    solve runs at the padded size and the result is cropped back.
 * Results map back to input units as x * scale + sky.
 *
 * A job is immutable once built and reference counted: a comparison runs
 * several solvers on one job, from worker threads. A PSF file is read when
 * the job is built, once (ss_psf_spec_load): its settings' PSF holds that
 * reading and its notes.
 */
#pragma once

#include "sharpsky.h"
#include "ss-boundary.h"
#include "ss-frame.h"
#include "ss-psf-fit.h"

G_BEGIN_DECLS

typedef enum {
  SS_MODE_DEBLUR,     /* deblur the image as it is */
  SS_MODE_SIMULATE,   /* blur/sample a sharp image, then recover it */
} SsMode;

typedef struct {
  SsMode mode;
  SsAcquisition acquisition;  /* psf; ratio, seed, noise in simulate mode */
  /* A PSF measured from stars: deblur uses the fitted profile with its
   * ellipticity, as sharpsky-cli's --psf-from-star and --psf auto do;
   * acquisition.psf then holds its circular approximation (the padding
   * margin, and the blur of a simulation). psf_fit.fwhm is 0 until a star
   * has been measured. */
  gboolean psf_from_fit;
  SsPsfFit psf_fit;
  SsSkyMode sky_mode;
  double sky_value;
  SsBoundary boundary;        /* deblur mode: padding of the edges (CLI default mirror) */
  /* Deblur mode: AUTO leaves the clipped pixels out of the data term, as
   * sharpsky-cli's default --saturation auto (ss-saturation.h), NONE keeps
   * them; BAD_PIXELS leaves out the dead (with x >= 0) and the hot ones, as
   * its default --bad-pixels auto (ss-bad-pixels.h). DEFECTS is what the
   * job found, set when it is built. */
  SsSaturationMode saturation_mode;
  gboolean bad_pixels;
  SsDefects defects;
  SsSolveParams params;
  /* Parameters chosen from the data when the job is built (bit 1 << SsParamId;
   * only alpha so far: from the estimated noise, or the simulation's), as
   * sharpsky-cli's --alpha auto. */
  guint64 auto_params;
  double noise_estimate;      /* scaled units; set by the job when alpha is auto */
  /* The rule's α before the solver's own factor (ss_solver_alpha_auto): a
   * job serves every solver, each scales it (set by the job, with alpha). */
  double alpha_rule;
  /* Where it runs: AUTO or CPU with DEVICE -1, or CUDA on the GPU numbered
   * DEVICE as `sharpsky-cli info` lists it (-1: device 0), solved with
   * ss_backend_new_with_devices. Where a solve runs changes nothing in the
   * problem, so a job is reused across devices. */
  SsBackendKind backend;
  int device;
  gboolean use_roi;
  int roi_x, roi_y, roi_width, roi_height; /* full-image pixels; roi_y = first (bottom) row */
} SsSettings;

void ss_settings_init (SsSettings *settings);
void ss_settings_clear (SsSettings *settings);
void ss_settings_copy (const SsSettings *src, SsSettings *dst);
/* Takes into SETTINGS the values a built job chose from the data (its
 * settings RESOLVED): alpha and the noise estimate when alpha is auto, the
 * saturation level and the cold and hot pixels found. */
void ss_settings_take_resolved (SsSettings *settings, const SsSettings *resolved);
/* TRUE when A and B build the same problem (a job can be reused). */
gboolean ss_settings_same_problem (const SsSettings *a, const SsSettings *b);
/* One HISTORY card per parameter. */
void ss_settings_add_history (const SsSettings *settings, SsHeader *header);
const char *ss_mode_to_string (SsMode mode);
const char *ss_sky_mode_to_string (SsSkyMode mode);
/* "CPADMM", "Direct (Cholesky)", ...: names for people. */

typedef struct {
  SsSettings settings;
  int x0, y0, width, height;  /* the region solved, in full-image pixels */
  /* The problem the solver sees: the region, padded in deblur mode; the
   * region lies at (pad_x0, pad_y0) in it. */
  int solve_width, solve_height;
  int pad_x0, pad_y0;
  SsScaling scaling;
  SsOperator *op;
  float *y;                   /* P^T y, scaled units, 0 where unobserved (solve size) */
  float *truth;               /* scaled units (solve size), or NULL (deblur) */
  SsFrame *original;          /* the region of the input, input units */
  SsFrame *measured;          /* y in input units, NaN where unobserved */
  SsHeader *header;           /* the input's header (may be NULL) */
  char *source_path;          /* may be NULL */
  /*< private >*/
  gint ref_count;
} SsJob;

/* Builds the problem from INPUT (the full image, input units); slow for big
 * images (FFTs), so call it from a worker thread. A cancelled CANCELLABLE
 * (may be NULL) stops it between its steps with G_IO_ERROR_CANCELLED. */
SsJob *ss_job_build (SsFrame *input, const SsHeader *header, const char *source_path,
                     const SsSettings *settings, GCancellable *cancellable, GError **error);
SsJob *ss_job_ref (SsJob *job);
/* What the user should be told about the job's data: the PSF file it read
 * (its negative wings zeroed, an off-centre centroid:
 * ss_psf_spec_get_notes) and the saturated pixels left out, one line each;
 * NULL when there is nothing to tell. */
char *ss_job_get_notes (const SsJob *job);
void ss_job_unref (SsJob *job);

static inline gsize
ss_job_n_pixels (const SsJob *job)
{
  return (gsize) job->width * (gsize) job->height;
}

static inline gsize
ss_job_solve_pixels (const SsJob *job)
{
  return (gsize) job->solve_width * (gsize) job->solve_height;
}

/* X (scaled, solve size) as a frame of the job's region in input units. */
SsFrame *ss_job_frame_from_scaled (const SsJob *job, const float *x, GError **error);
/* |x - truth| in input units, or NULL (without error) when there is no truth. */
SsFrame *ss_job_error_frame (const SsJob *job, const float *x, GError **error);
/* A PW x PH box-reduced preview of the solve-size estimate (scaled units),
 * cut to the region and mapped to input units. */
SsFrame *ss_job_preview_frame (const SsJob *job, const float *preview, int pw, int ph,
                               GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SsJob, ss_job_unref)

G_END_DECLS
