/* ss-cli-deblur-private.h: what the two files of `deblur` share beyond
 * ss-cli-deblur.h (which `quality` includes too): the command
 * (ss-cli-deblur.c) uses these helpers of ss-cli-deblur-prepare.c. */
#pragma once

#include "ss-cli-deblur.h"

G_BEGIN_DECLS

/* Frees JOB's per-pixel buffers; what summaries and HISTORY need stays. */
void cli_deblur_plane_job_release_buffers (CliPlaneJob *job);

/* "PATH" or "PATH (plane 2)" for messages (PLANE -1: a single-plane image). */
char *cli_deblur_plane_label (const char *path, int plane);

/* Prepares JOB for IN, a recorded measurement: the operator and units come
 * from IN's header. Returns -1, or the exit status after printing the
 * message. */
int cli_deblur_prepare_recorded (const CliDeblurInput *in, const CliOptions *o,
                                 const CliConfig *c, CliPlaneJob *job);

/* Reads PSF's file once when PSF is file:PATH not yet loaded
 * (ss_psf_spec_load), printing its notes; LABEL names the image in a
 * failure that does not name the file. Returns -1, or the exit status
 * after printing the message. */
int cli_deblur_load_psf (const CliOptions *o, const char *label, SsPsfSpec *psf);

G_END_DECLS
