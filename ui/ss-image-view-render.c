/* ss-image-view-render.c: the image view's pictures, stretched and colour
 * mapped in a worker (a small thread pool), reduced to the zoom there too, so
 * the main loop only paints finished surfaces. */
#include "ss-image-view-private.h"
#include "ss-thread.h"

#include <math.h>

/* Display surfaces larger than this on a side are box-reduced: cairo's limit
 * is 32767 and a screen never needs more detail than this at "fit". */
#define MAX_SURFACE_SIDE 8192

typedef struct {
  SsFrame *frames[2];
  SsDisplay display;
  gboolean restretch;            /* FALSE: reuse SURFACES, only reduce them */
  gboolean kept[2];              /* this side's SURFACES (and SCALED, if set) are on screen */
  double zoom;                   /* screen pixels per image pixel wanted */
  cairo_surface_t *surfaces[2];
  cairo_surface_t *scaled[2];
  double lows[2], highs[2];
} RenderJob;

static void
render_job_free (gpointer data)
{
  RenderJob *job = data;
  for (int i = 0; i < 2; i++)
    {
      ss_frame_unref (job->frames[i]);
      if (job->surfaces[i])
        cairo_surface_destroy (job->surfaces[i]);
      if (job->scaled[i])
        cairo_surface_destroy (job->scaled[i]);
    }
  g_free (job);
}

/* SURFACE reduced by SCALE (< 1) with cairo's good (box-averaging) filter,
 * or NULL when no reduction is needed. */
static cairo_surface_t *
reduce_surface (cairo_surface_t *surface, double scale_x, double scale_y)
{
  if (scale_x >= 1.0 || scale_y >= 1.0)
    return NULL;
  int sw = cairo_image_surface_get_width (surface), sh = cairo_image_surface_get_height (surface);
  int w = MAX (1, (int) ceil (sw * scale_x)), h = MAX (1, (int) ceil (sh * scale_y));
  cairo_surface_t *out = cairo_image_surface_create (CAIRO_FORMAT_RGB24, w, h);
  if (cairo_surface_status (out) != CAIRO_STATUS_SUCCESS)
    {
      cairo_surface_destroy (out);
      return NULL;
    }
  cairo_t *cr = cairo_create (out);
  cairo_scale (cr, (double) w / sw, (double) h / sh);
  cairo_set_source_surface (cr, surface, 0, 0);
  cairo_pattern_set_filter (cairo_get_source (cr), CAIRO_FILTER_GOOD);
  cairo_pattern_set_extend (cairo_get_source (cr), CAIRO_EXTEND_PAD);
  cairo_paint (cr);
  cairo_destroy (cr);
  return out;
}

static void
render_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  RenderJob *job = task_data;
  for (int i = 0; i < 2; i++)
    {
      if (job->frames[i] == NULL || g_cancellable_is_cancelled (cancellable))
        continue;
      if (job->restretch && !job->kept[i])
        {
          GError *error = NULL;
          job->surfaces[i] = ss_render_surface (job->frames[i], &job->display, MAX_SURFACE_SIDE,
                                                &job->lows[i], &job->highs[i], &error);
          if (job->surfaces[i] == NULL)
            {
              g_task_return_error (task, error);
              return;
            }
        }
      if (job->surfaces[i] == NULL || job->scaled[i] != NULL
          || g_cancellable_is_cancelled (cancellable))
        continue;
      int sw = cairo_image_surface_get_width (job->surfaces[i]);
      int sh = cairo_image_surface_get_height (job->surfaces[i]);
      job->scaled[i] = reduce_surface (job->surfaces[i],
                                       job->zoom * job->frames[i]->logical_width / sw,
                                       job->zoom * job->frames[i]->logical_height / sh);
    }
  g_task_return_boolean (task, TRUE);
}

/* Renders run in a pool of their own, below the main thread's priority and
 * above the solver's (ss-thread.h), so previews stay fresh while the window
 * never waits for them. The pool is exclusive: its threads serve nothing
 * else, so their lowered priority affects no other work. */
static GThreadPool *render_pool;

static void
render_pool_run (gpointer data, gpointer pool_data)
{
  GTask *task = data;
  static GPrivate lowered;
  if (g_private_get (&lowered) == NULL)
    {
      ss_thread_lower_priority (SS_NICENESS_RENDER);
      g_private_set (&lowered, GINT_TO_POINTER (1));
    }
  render_thread (task, g_task_get_source_object (task), g_task_get_task_data (task),
                 g_task_get_cancellable (task));
  g_object_unref (task);
}

static void start_render (SsImageView *self);

static void
take_job_result (SsImageView *self, RenderJob *job)
{
  for (int i = 0; i < 2; i++)
    {
      if (job->restretch)
        {
          g_clear_pointer (&self->surfaces[i], cairo_surface_destroy);
          self->surfaces[i] = g_steal_pointer (&job->surfaces[i]);
          self->lows[i] = job->lows[i];
          self->highs[i] = job->highs[i];
          self->have_limits[i] = self->surfaces[i] != NULL;
          g_clear_pointer (&self->surface_frames[i], ss_frame_unref);
          if (self->surfaces[i] != NULL)
            self->surface_frames[i] = ss_frame_ref (job->frames[i]);
          if (job->frames[i] != NULL && !job->kept[i])
            self->stretch_count++;
        }
      g_clear_pointer (&self->scaled[i], cairo_surface_destroy);
      self->scaled[i] = g_steal_pointer (&job->scaled[i]);
    }
  self->scaled_zoom = job->zoom;
  if (job->restretch)
    self->render_count++;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
render_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SsImageView *self = SS_IMAGE_VIEW (source);
  RenderJob *job = g_task_get_task_data (G_TASK (result));
  g_autoptr (GError) error = NULL;
  /* A stale job (new frames came while it ran) ends unseen. */
  if ((gpointer) result != self->render_task)
    return;
  self->render_task = NULL;
  self->render_frames[0] = self->render_frames[1] = NULL;
  g_clear_object (&self->render_cancellable);
  self->render_in_flight = FALSE;

  if (g_task_propagate_boolean (G_TASK (result), &error))
    take_job_result (self, job);
  else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      /* Too large to display: say so in place of the picture. */
      for (int i = 0; i < 2; i++)
        {
          g_clear_pointer (&self->surfaces[i], cairo_surface_destroy);
          g_clear_pointer (&self->scaled[i], cairo_surface_destroy);
        }
      ss_image_view_set_placeholder (self, error->message);
    }

  if (g_cancellable_is_cancelled (self->cancellable))
    return;
  if (self->render_dirty || (self->rescale_dirty && self->zoom != self->scaled_zoom))
    start_render (self);
  else
    self->rescale_dirty = FALSE;
}

static void
start_render (SsImageView *self)
{
  gboolean restretch = self->render_dirty;
  self->render_dirty = self->rescale_dirty = FALSE;
  if (self->frames[0] == NULL && self->frames[1] == NULL)
    {
      for (int i = 0; i < 2; i++)
        {
          g_clear_pointer (&self->surfaces[i], cairo_surface_destroy);
          g_clear_pointer (&self->scaled[i], cairo_surface_destroy);
          self->have_limits[i] = FALSE;
        }
      gtk_widget_queue_draw (GTK_WIDGET (self));
      return;
    }
  RenderJob *job = g_new0 (RenderJob, 1);
  job->restretch = restretch;
  job->zoom = self->zoom;
  job->display = self->display;
  for (int i = 0; i < 2; i++)
    {
      job->frames[i] = self->frames[i] ? ss_frame_ref (self->frames[i]) : NULL;
      self->render_frames[i] = job->frames[i];
      /* A side whose frame was stretched with this display keeps its
       * picture (a large frame's stretch takes most of a second). */
      job->kept[i] = restretch && job->frames[i] != NULL && self->surfaces[i] != NULL
                     && self->surface_frames[i] == job->frames[i];
      /* Reducing only, or kept: work from the pictures on screen (cairo
       * image surfaces are only read, from both threads). */
      if ((!restretch || job->kept[i]) && self->surfaces[i] && job->frames[i])
        job->surfaces[i] = cairo_surface_reference (self->surfaces[i]);
      if (job->kept[i])
        {
          job->lows[i] = self->lows[i];
          job->highs[i] = self->highs[i];
          if (self->scaled[i] != NULL && self->scaled_zoom == self->zoom)
            job->scaled[i] = cairo_surface_reference (self->scaled[i]);
        }
    }
  self->render_in_flight = TRUE;
  self->render_cancellable = g_cancellable_new ();
  /* The task holds a reference on the view, so the callback always has a live one. */
  GTask *task = g_task_new (self, self->render_cancellable, render_done, NULL);
  self->render_task = task;
  g_task_set_task_data (task, job, render_job_free);
  g_task_set_name (task, "sharpsky render");
  if (render_pool == NULL)
    render_pool = g_thread_pool_new (render_pool_run, NULL, 2, TRUE, NULL);
  /* The pool owns the task reference until the render returns. */
  g_thread_pool_push (render_pool, task, NULL);
}

void
ss_image_view_request_render (SsImageView *self)
{
  self->render_dirty = TRUE;
  if (!self->render_in_flight)
    start_render (self);
}

/* Whether the job in flight draws none of the frames now set. */
static gboolean
render_in_flight_is_stale (SsImageView *self)
{
  for (int i = 0; i < 2; i++)
    if (self->render_frames[i] != NULL
        && (self->render_frames[i] == self->frames[0] || self->render_frames[i] == self->frames[1]))
      return FALSE;
  return TRUE;
}

void
ss_image_view_request_render_anew (SsImageView *self)
{
  /* A 61 Mpx frame's stretch takes most of a second: a preview that comes
   * while the last run's full estimate is being stretched would wait for it,
   * and then show it first. A job still drawing a frame that stays (a split
   * view's other side) is left to end, or previews coming faster than it
   * would cancel every job and the view would show nothing. */
  if (self->render_in_flight && render_in_flight_is_stale (self))
    {
      g_cancellable_cancel (self->render_cancellable);
      g_clear_object (&self->render_cancellable);
      self->render_task = NULL;
      self->render_frames[0] = self->render_frames[1] = NULL;
      self->render_in_flight = FALSE;
    }
  ss_image_view_request_render (self);
}

void
ss_image_view_request_rescale (SsImageView *self)
{
  if (self->zoom == self->scaled_zoom && !self->render_dirty)
    return;
  self->rescale_dirty = TRUE;
  if (!self->render_in_flight)
    start_render (self);
}

/* ---- geometry ------------------------------------------------------------- */

