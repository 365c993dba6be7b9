/* ss-star-fit.c: star fits in a worker thread (see ss-star-fit.h). */
#include "ss-star-fit.h"
#include "ss-image.h"

#include <math.h>
#include <string.h>

typedef struct {
  SsFrame *frame;
  gboolean search;
  int col, row;
  SsPsfModel model;
  SsHeader *header;       /* the input's cards (their SATURATE, SATLEVEL), or NULL */
  SsPsfFit fit;
} StarFitData;

static void
star_fit_data_free (gpointer p)
{
  StarFitData *d = p;
  ss_frame_unref (d->frame);
  if (d->header != NULL)
    ss_header_free (d->header);
  g_free (d);
}

/* The frame's pixels as the one-plane image the engine's fitters take,
 * with the cards *HEADER holds (taken: the task's copy, made on the main
 * thread, is needed once). */
static SsImage *
image_of_frame (const SsFrame *frame, SsHeader **header, GError **error)
{
  SsImage *image = ss_image_new (frame->width, frame->height, 1, error);
  if (image != NULL)
    {
      memcpy (image->data, frame->data, ss_frame_n_pixels (frame) * sizeof (float));
      image->header = g_steal_pointer (header);
    }
  return image;
}

static void
star_fit_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  StarFitData *d = task_data;
  GError *error = NULL;
  /* A fit replaced before its turn in the pool copies no frame. */
  if (g_task_return_error_if_cancelled (task))
    return;
  g_autoptr (SsImage) image = image_of_frame (d->frame, &d->header, &error);
  gboolean ok = FALSE;
  if (image != NULL && d->search)
    {
      SsStarSearch search;
      ss_star_search_init (&search);
      search.model = d->model;
      /* A search on a large frame is long: opening another image
       * cancels it, and the engine stops at its next look. */
      ok = ss_psf_find_stars (image, &search, &d->fit, NULL, cancellable, &error);
    }
  else if (image != NULL)
    ok = ss_psf_fit_star (image, d->col, d->row, d->model,
                          ss_psf_fit_saturation_for (image, NAN), &d->fit, &error);
  if (ok)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void
star_fit_start (StarFitData *d, GCancellable *cancellable, GAsyncReadyCallback callback,
                gpointer user_data)
{
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_task_data (task, d, star_fit_data_free);
  g_task_set_name (task, "sharpsky star fit");
  g_task_run_in_thread (task, star_fit_thread);
  g_object_unref (task);
}

void
ss_star_fit_at_async (SsFrame *frame, const SsHeader *header, int col, int row, SsPsfModel model,
                      GCancellable *cancellable, GAsyncReadyCallback callback,
                      gpointer user_data)
{
  g_return_if_fail (frame != NULL);
  StarFitData *d = g_new0 (StarFitData, 1);
  d->frame = ss_frame_ref (frame);
  d->header = header != NULL ? ss_header_copy (header) : NULL;
  d->col = col;
  d->row = row;
  d->model = model;
  star_fit_start (d, cancellable, callback, user_data);
}

void
ss_star_fit_search_async (SsFrame *frame, const SsHeader *header, SsPsfModel model,
                          GCancellable *cancellable, GAsyncReadyCallback callback,
                          gpointer user_data)
{
  g_return_if_fail (frame != NULL);
  StarFitData *d = g_new0 (StarFitData, 1);
  d->frame = ss_frame_ref (frame);
  d->header = header != NULL ? ss_header_copy (header) : NULL;
  d->search = TRUE;
  d->model = model;
  star_fit_start (d, cancellable, callback, user_data);
}

gboolean
ss_star_fit_finish (GAsyncResult *result, SsPsfFit *fit, int *n_stars, GError **error)
{
  g_return_val_if_fail (G_IS_TASK (result), FALSE);
  if (!g_task_propagate_boolean (G_TASK (result), error))
    return FALSE;
  StarFitData *d = g_task_get_task_data (G_TASK (result));
  *fit = d->fit;
  if (n_stars != NULL)   /* a combination's iterations are its stars (ss-psf-fit.h) */
    *n_stars = d->search ? d->fit.iterations : 1;
  return TRUE;
}
