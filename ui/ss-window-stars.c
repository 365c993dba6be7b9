/* ss-window-stars.c: the PSF measured from a picked star or found stars. */
#include "ss-window-private.h"
#include "ss-star-fit.h"

/* A PSF measured on the image (or HDU, or plane) no longer shown is not
 * this one's: the CLI measures it on the data it deblurs, and so does the
 * app. A fit still running is dropped. */
void
ss_window_forget_star_fit (SsWindow *self)
{
  if (self->fit_cancellable != NULL)
    g_cancellable_cancel (self->fit_cancellable);
  self->fitting = FALSE;   /* the cancelled fit's end changes nothing */
  ss_params_panel_set_psf_fit (self->panel, NULL, 0);
  ss_image_view_set_pick_mode (self->view, FALSE);
}

/* ---- the PSF measured from stars ------------------------------------------ */

/* What a finished fit says: in the banner when the user asked for it, in the
 * status line when it ran by itself on opening a file. */
static void
announce_fit (SsWindow *self, gboolean ok, const SsPsfFit *fit, int n_stars, const GError *error)
{
  if (ok)
    {
      g_autofree char *text = ss_psf_fit_describe (fit);
      g_autofree char *message = n_stars > 1
                                 ? g_strdup_printf ("PSF measured on %d stars: %s", n_stars, text)
                                 : g_strdup_printf ("PSF measured: %s", text);
      if (self->fit_quiet)
        ss_window_set_status (self, message);
      else
        ss_window_show_message (self, message, FALSE);
    }
  else if (self->fit_quiet)
    ss_window_set_status (self, "No isolated stars found for the PSF: pick a star (Ctrl+K) "
                                "or choose a PSF model");
  else
    ss_window_show_error (self, "No PSF measured", error);
}

static void
star_fit_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SsWindow *self = SS_WINDOW (user_data);
  SsPsfFit fit;
  int n_stars = 0;
  g_autoptr (GError) error = NULL;
  gboolean ok = ss_star_fit_finish (result, &fit, &n_stars, &error);
  gboolean cancelled = g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  /* A fit replaced by a newer one (cancelled) leaves the state to it. */
  if (!cancelled)
    {
      self->fitting = FALSE;
      g_clear_error (&self->fit_error);
    }
  if (!self->disposed && !cancelled)
    {
      if (ok)
        {
          ss_params_panel_set_psf_fit (self->panel, &fit, n_stars);
          ss_image_view_set_pick_mode (self->view, FALSE);
        }
      else if (!self->fit_quiet)
        self->fit_error = g_error_copy (error);
      ss_window_update_actions (self);
      if (!self->fit_quiet || !ok)
        ss_window_update_idle_status (self);
      announce_fit (self, ok, &fit, n_stars, error);
    }
  g_object_unref (self);
}

/* Starts a star fit when an image is open and none is running: clears the
 * message, arms a new cancellable and says STATUS. FALSE when it cannot. */
static gboolean
begin_star_fit (SsWindow *self, const char *status)
{
  if (self->input == NULL)
    {
      ss_window_show_message (self, "Open an image first (Ctrl+O)", TRUE);
      return FALSE;
    }
  /* The search started by opening a file gives way to the user's request. */
  if (self->fitting && self->fit_quiet)
    g_cancellable_cancel (self->fit_cancellable);
  else if (self->fitting)
    return FALSE;
  ss_window_dismiss_message (self);
  self->fitting = TRUE;
  self->fit_quiet = FALSE;
  g_clear_object (&self->fit_cancellable);
  self->fit_cancellable = g_cancellable_new ();
  ss_window_set_status (self, status);
  ss_window_update_actions (self);
  return TRUE;
}

static void
fit_star_at (SsWindow *self, int col, int row)
{
  if (begin_star_fit (self, "Fitting the star…"))
    ss_star_fit_at_async (self->input, self->header, col, row,
                          ss_params_panel_get_star_model (self->panel), self->fit_cancellable,
                          star_fit_done, g_object_ref (self));
}

/* The search over the whole image, with the model the panel shows. */
static void
start_search (SsWindow *self)
{
  ss_star_fit_search_async (self->input, self->header,
                            ss_params_panel_get_star_model (self->panel), self->fit_cancellable,
                            star_fit_done, g_object_ref (self));
}

void
ss_window_find_stars (SsWindow *self)
{
  if (begin_star_fit (self, "Looking for isolated stars…"))
    start_search (self);
}

/* The search a real image gets when it opens (as --psf auto): its outcome
 * goes to the status line, not the banner, and a fit the user asks for
 * replaces it. */
void
ss_window_find_stars_quietly (SsWindow *self)
{
  if (self->input == NULL || self->fitting)
    return;
  self->fitting = TRUE;
  self->fit_quiet = TRUE;
  g_clear_object (&self->fit_cancellable);
  self->fit_cancellable = g_cancellable_new ();
  ss_window_set_status (self, "Measuring the PSF on the image's stars…");
  ss_window_update_actions (self);
  start_search (self);
}

void
ss_window_on_pixel_picked (SsImageView *view, int col, int row, SsWindow *self)
{
  fit_star_at (self, col, row);
}

void
ss_window_action_pick_star (GSimpleAction *action, GVariant *param, gpointer data)
{
  SsWindow *self = SS_WINDOW (data);
  ss_image_view_set_pick_mode (self->view, !ss_image_view_get_pick_mode (self->view));
  if (ss_image_view_get_pick_mode (self->view))
    ss_window_set_status (self, "Click an isolated, unsaturated star (Escape cancels)");
}

void
ss_window_action_find_stars (GSimpleAction *action, GVariant *param, gpointer data)
{
  ss_window_find_stars (SS_WINDOW (data));
}
