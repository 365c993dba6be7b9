/* ss-window-open.c: opening files: reading in a worker, the HDU and plane
 * chooser, recent files, dropped files and the bundled sample. */
#include "ss-window-private.h"
#include "ss-config.h"
#include "ss-file-patterns.h"
#include "ss-gunzip.h"

#include <math.h>
#include <string.h>

#define SAMPLE_NAME "hubble_deep_field.fits"
#define RECENT_MAX 8
#define APP_NAME "Sharpsky"

static gboolean offers_a_choice (SsWindow *self);

/* ---- loading -------------------------------------------------------------- */

/* PLANE_DEFAULT: the mean of three colour planes, else the first plane. */
#define PLANE_DEFAULT (-2)

typedef struct {
  char *path;
  int hdu;                  /* wanted: -1 = the first holding an image */
  int plane;                /* wanted: a plane, -1 = colour mean, PLANE_DEFAULT */
  gboolean chosen;          /* HDU and plane were picked by the user */
  gboolean png;             /* not FITS: a PNG (or a file the loader refuses) */
  GPtrArray *hdus;          /* the file's HDUs (FITS), a PNG as one, or NULL */
  SsFrame *frame;
  SsHeader *header;
  char *note;
  char *drop_note;          /* other files dropped with this one were left (ss_window_on_drop) */
} LoadData;

static void
load_data_free (gpointer p)
{
  LoadData *d = p;
  g_free (d->path);
  if (d->hdus)
    g_ptr_array_unref (d->hdus);
  ss_frame_unref (d->frame);
  if (d->header)
    ss_header_free (d->header);
  g_free (d->note);
  g_free (d->drop_note);
  g_free (d);
}

/* One plane to work on: PLANE of the image read (a FITS file is read one
 * plane at a time, a PNG whole), or with PLANE -1 the mean of three colour
 * planes. */
static SsFrame *
frame_from_image (const SsImage *image, int plane, GError **error)
{
  SsFrame *frame = ss_frame_new (image->width, image->height, error);
  if (frame == NULL)
    return NULL;
  gsize n = ss_image_plane_size (image);
  if (image->planes == 3 && plane == -1)
    for (gsize i = 0; i < n; i++)
      frame->data[i] = (image->data[i] + image->data[n + i] + image->data[2 * n + i]) / 3.0f;
  else
    {
      /* Anything else read whole (not expected) gives its first plane. */
      int p = plane > 0 && plane < image->planes ? plane : 0;
      memcpy (frame->data, image->data + (gsize) p * n, n * sizeof (float));
    }
  return frame;
}

/* A FITS file, or a gzip-compressed one (the reader takes both). */
static gboolean
is_fits_file (const char *path)
{
  static const char magic[] = "SIMPLE  =";
  guchar start[sizeof magic - 1];
  gsize got = 0;
  if (!ss_io_peek_file (path, start, sizeof start, &got, NULL, NULL))
    return FALSE;
  return ss_gunzip_is_gzip (start, got)
         || (got == sizeof start && memcmp (start, magic, sizeof start) == 0);
}

static const SsFitsHdu *
find_hdu (GPtrArray *hdus, int number)
{
  for (guint i = 0; hdus && i < hdus->len; i++)
    {
      const SsFitsHdu *hdu = g_ptr_array_index (hdus, i);
      if (number < 0 ? hdu->has_image : hdu->number == number)
        return hdu;
    }
  return NULL;
}

/* What a PNG, or a FITS HDU and plane, reads as: the plane chosen, or all
 * three planes of a colour image for their mean. Sets D->hdu and D->plane to
 * what is read, and notes what was chosen for the user. */
static void
resolve_plane (LoadData *d, SsFitsReadOptions *options, char **hdu_text)
{
  const SsFitsHdu *hdu = find_hdu (d->hdus, d->hdu);
  if (d->png)
    {
      /* Read whole: resolve_png_plane takes the plane, knowing how many. */
      options->plane = -1;
      return;
    }
  if (hdu == NULL)
    {
      /* An HDU the reader will refuse, with its own message. */
      d->plane = d->plane >= 0 ? d->plane : -1;
      options->plane = d->plane;
      return;
    }
  d->hdu = hdu->number;
  *hdu_text = g_strdup_printf ("%d", hdu->number);
  options->hdu = *hdu_text;
  if (d->plane == PLANE_DEFAULT)
    d->plane = hdu->planes == 3 ? -1 : 0;
  if (d->plane == -1 && hdu->planes != 3)
    d->plane = 0;
  options->plane = d->plane;   /* -1 reads all three planes, for their mean */
  if (hdu->planes > 1 && !d->chosen)
    d->note = d->plane == -1
              ? g_strdup ("colour image: working on the mean of its three planes "
                          "(Ctrl+H picks one)")
              : g_strdup_printf ("image cube: working on plane %d of %" G_GINT64_FORMAT
                                 " (Ctrl+H picks another)", d->plane, hdu->planes);
}

/* The plane of PNG IMAGE (read whole) to work on, as resolve_plane does for
 * FITS: by default the mean of three colour planes, else the first. The PNG
 * is listed as one image, for the chooser to offer its channels. */
static gboolean
resolve_png_plane (LoadData *d, const SsImage *image, GError **error)
{
  if (d->plane == PLANE_DEFAULT || (d->plane == -1 && image->planes != 3))
    d->plane = image->planes == 3 ? -1 : 0;
  if (d->plane >= image->planes)
    {
      g_autofree char *name = g_filename_display_name (d->path);
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "%s: plane %d does not exist (the PNG has %d)", name, d->plane, image->planes);
      return FALSE;
    }
  SsFitsHdu *entry = g_new0 (SsFitsHdu, 1);
  entry->kind = SS_HDU_CHOOSER_PNG;
  entry->has_image = TRUE;
  entry->width = image->width;
  entry->height = image->height;
  entry->planes = image->planes;
  d->hdus = g_ptr_array_new_with_free_func ((GDestroyNotify) ss_fits_hdu_free);
  g_ptr_array_add (d->hdus, entry);
  d->hdu = 0;
  if (image->planes == 3 && !d->chosen)
    d->note = g_strdup ("colour image: working on the mean of its three planes "
                        "(Ctrl+H picks one)");
  return TRUE;
}

/* A HISTORY card saying where in the file the data came from. */
static void
record_source (const LoadData *d, SsHeader *header)
{
  const SsFitsHdu *hdu = find_hdu (d->hdus, d->hdu);
  if (hdu == NULL || d->png)
    return;
  g_autofree char *base = g_path_get_basename (d->path);
  g_autofree char *plane = d->plane == -1 ? g_strdup (", mean of 3 colour planes")
                           : hdu->planes > 1 ? g_strdup_printf (", plane %d of %" G_GINT64_FORMAT,
                                                                d->plane, hdu->planes)
                                             : g_strdup ("");
  ss_header_add_history (header, "input = %s, HDU %d%s%s%s", base, hdu->number,
                         hdu->name ? " (" : "", hdu->name ? hdu->name : "",
                         hdu->name ? ")" : "");
  if (plane[0])
    ss_header_add_history (header, "input plane:%s", plane + 1);
}

static void
load_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  LoadData *d = task_data;
  GError *error = NULL;
  SsFitsReadOptions options = SS_FITS_READ_OPTIONS_DEFAULT;
  /* The listing reads headers only; a damaged file is reported by the read. */
  d->png = !is_fits_file (d->path);
  if (!d->png)
    d->hdus = ss_fits_list_hdus (d->path, NULL);
  g_autofree char *hdu_text = NULL;
  resolve_plane (d, &options, &hdu_text);
  /* A later open cancels this one: stop before the read and before the
   * frame, the two long steps on a large file. */
  if (g_task_return_error_if_cancelled (task))
    return;
  g_autoptr (SsImage) image = ss_image_load (d->path, &options, &error);
  if (image == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  /* Infinities and bad-pixel flags cannot be scaled or solved: blanks, as
   * in sharpsky-cli, said with the file's notes. */
  gsize flagged = ss_image_blank_non_physical (image);
  if (flagged > 0)
    {
      g_autofree char *said = d->note;
      d->note = g_strdup_printf ("%s%s%" G_GSIZE_FORMAT " infinite or flag pixels (magnitude "
                                 "%g or more) treated as blank", said ? said : "",
                                 said ? "\n" : "", flagged, SS_IMAGE_SENTINEL);
    }
  gsize finite = 0, n = ss_image_plane_size (image);
  for (gsize i = 0; i < n; i++)
    finite += isfinite (image->data[i]) ? 1 : 0;
  if (finite == 0)
    {
      g_task_return_new_error (task, SS_ERROR, SS_ERROR_FORMAT, "the image has no finite pixel");
      return;
    }
  if (d->png && !resolve_png_plane (d, image, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  if (g_task_return_error_if_cancelled (task))
    return;
  d->frame = frame_from_image (image, d->plane, &error);
  if (d->frame == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  d->header = image->header ? ss_header_copy (image->header) : NULL;
  if (d->header)
    record_source (d, d->header);
  g_task_return_boolean (task, TRUE);
}

static void
add_to_recent (const char *path)
{
  g_autofree char *uri = g_filename_to_uri (path, NULL, NULL);
  if (uri == NULL)
    return;
  /* Every field given: the guesses GTK would make need a program name,
   * which a host program (a test) may not have set. */
  g_autofree char *exec = g_strdup_printf ("%s %%u", g_get_prgname () ? g_get_prgname ()
                                                                     : "sharpsky");
  g_autofree char *lower = g_ascii_strdown (path, -1);
  GtkRecentData data = {
    .display_name = NULL,
    .description = NULL,
    .mime_type = (char *) (g_str_has_suffix (lower, ".png") ? "image/png" : "image/fits"),
    .app_name = (char *) g_get_application_name (),
    .app_exec = exec,
    .groups = NULL,
    .is_private = FALSE,
  };
  if (data.app_name == NULL)
    data.app_name = (char *) APP_NAME;
  gtk_recent_manager_add_full (gtk_recent_manager_get_default (), uri, &data);
}

/* The bundled sample opens on the teaching demo (seed 000's experiment);
 * any other file is a real image, or a measurement whose header records how
 * it was simulated: it opens on deblurring it as it is, with sharpsky-cli
 * deblur's defaults (sky median, mirror edges, x >= 0, alpha from the noise)
 * and the PSF the record names or, as --psf auto, measured on its stars, and
 * its solver for real images. */
/* Plans the CPU's transforms while the user looks at the image, for the one
 * size solved as it is: the teaching mode's (the sample). A real image is
 * solved padded to a size its PSF fixes; planning its own size instead
 * (6248 × 4176 = 8·11·71 × … for a camera frame) took FFTW minutes, holding
 * the planner, so the first Run waited for it (seen on two cores). A GPU
 * solve plans no host transform worth measuring. */
static void
plan_ahead (SsWindow *self)
{
  SsSettings s;
  ss_params_panel_get_settings (self->panel, &s);
  /* Whether Automatic means the CPU is for the planning thread to find out:
   * asking for the devices starts the GPU driver, which no open may wait
   * for on this thread. */
  if (s.mode == SS_MODE_SIMULATE)
    ss_solve_task_prepare_size (self->input->width, self->input->height, s.backend);
  ss_settings_clear (&s);
}

static void
apply_defaults_for_file (SsWindow *self, const char *base)
{
  SsSettings s;
  ss_params_panel_get_settings (self->panel, &s);
  if (g_str_equal (base, SAMPLE_NAME))
    {
      SsSettings demo;
      ss_settings_init (&demo);
      demo.params = s.params;
      demo.backend = s.backend;   /* the compute choice is kept from file to file */
      demo.device = s.device;
      ss_params_panel_set_settings (self->panel, &demo);
      ss_settings_clear (&demo);
      ss_settings_clear (&s);
      return;
    }
  SsAcquisition recorded;
  ss_acquisition_init (&recorded);
  gboolean found = FALSE;
  gboolean simulated = self->header != NULL
                       && ss_acquisition_from_header (self->header, &recorded, &found, NULL)
                       && found;
  /* The CLI's solver for real images, with its own defaults. */
  SsBackendKind backend = s.backend;
  ss_solve_params_set_defaults (&s.params, ss_solver_default_for_real_data ());
  s.backend = backend;
  s.mode = SS_MODE_DEBLUR;
  s.sky_mode = SS_SKY_MEDIAN;
  s.boundary = SS_BOUNDARY_MIRROR;
  s.saturation_mode = SS_SATURATION_AUTO;
  s.bad_pixels = TRUE;
  s.params.nonneg = TRUE;
  s.auto_params |= G_GUINT64_CONSTANT (1) << SS_PARAM_ALPHA;
  /* --alpha auto turns the hold-out rule on; here its own box says so, and
   * can turn it off for a solver whose α row (with its auto box) is hidden. */
  s.params.holdout = TRUE;
  s.psf_from_fit = !simulated;
  if (simulated)
    {
      /* The copy writes over the panel's spec: release its path first. A
       * recorded PSF file is the recording's, not the current directory's. */
      ss_acquisition_resolve_psf (&recorded, self->path);
      ss_psf_spec_clear (&s.acquisition.psf);
      ss_psf_spec_copy (&recorded.psf, &s.acquisition.psf);
    }
  ss_params_panel_set_settings (self->panel, &s);
  ss_settings_clear (&s);
  ss_acquisition_clear (&recorded);
  if (!simulated)
    ss_window_find_stars_quietly (self);
}

/* What the banner says as D's file opens, one note a line, or NULL: the
 * other files dropped with it (said now, not at the drop, so that "Opened"
 * is true: a file that cannot be opened says so instead), then the file's
 * own note. */
static char *
opening_notes (const LoadData *d)
{
  if (d->drop_note != NULL && d->note != NULL)
    return g_strdup_printf ("%s\n%s", d->drop_note, d->note);
  return g_strdup (d->drop_note != NULL ? d->drop_note : d->note);
}

static void
take_loaded_image (SsWindow *self, LoadData *d)
{
  g_free (self->path);
  self->path = g_strdup (d->path);
  g_clear_pointer (&self->hdus, g_ptr_array_unref);
  self->hdus = d->hdus ? g_ptr_array_ref (d->hdus) : NULL;
  self->hdu = d->hdus ? d->hdu : -1;
  self->plane = d->plane;
  ss_frame_unref (self->input);
  self->input = ss_frame_ref (d->frame);
  if (self->header)
    ss_header_free (self->header);
  self->header = d->header ? ss_header_copy (d->header) : NULL;
  ss_window_set_job (self, NULL);
  ss_window_clear_results (self);
  ss_plot_clear (self->plot);
  ss_compare_table_clear (self->table);
  gtk_widget_set_visible (GTK_WIDGET (self->table), FALSE);
  ss_params_panel_set_roi (self->panel, NULL);
  ss_image_view_set_roi (self->view, NULL);
  ss_params_panel_set_image_size (self->panel, self->input->width, self->input->height);
  ss_window_forget_star_fit (self);

  g_autofree char *base = g_path_get_basename (d->path);
  g_autofree char *title = g_strdup_printf ("%s — Sharpsky", base);
  gtk_window_set_title (GTK_WINDOW (self), title);
  add_to_recent (d->path);
  g_autofree char *notes = opening_notes (d);
  if (notes != NULL)
    ss_window_show_message (self, notes, FALSE);
  ss_window_set_view (self, SS_VIEW_ORIGINAL);
  ss_window_refresh_view (self);
  ss_image_view_zoom_fit (self->view);
  ss_window_update_idle_status (self);
  apply_defaults_for_file (self, base);
  plan_ahead (self);
}

static void
load_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SsWindow *self = SS_WINDOW (source);
  LoadData *d = g_task_get_task_data (G_TASK (result));
  g_autoptr (GError) error = NULL;
  /* A load that a later open replaced: the later one owns the window (an
   * older, larger file landing last took it over mid-run). */
  if (self->disposed || g_task_get_cancellable (G_TASK (result)) != self->load_cancellable)
    return;
  g_clear_object (&self->load_cancellable);
  self->loading = FALSE;
  g_clear_error (&self->load_error);
  if (g_task_propagate_boolean (G_TASK (result), &error))
    {
      self->read_seconds = (g_get_monotonic_time () - self->open_started) / 1e6;
      take_loaded_image (self, d);
      if (!d->chosen && offers_a_choice (self))
        ss_window_choose_hdu (self);
    }
  else
    {
      ss_window_show_file_error (self, "open", d->path, error);
      self->load_error = g_error_copy (error);
      ss_window_update_idle_status (self);
      ss_window_refresh_view (self);
    }
  ss_window_update_actions (self);
}

static LoadData *
load_data_new (const char *path, int hdu, int plane, gboolean chosen)
{
  LoadData *d = g_new0 (LoadData, 1);
  d->path = g_strdup (path);
  d->hdu = hdu;
  d->plane = plane;
  d->chosen = chosen;
  return d;
}

/* Starts reading D (taken) in a worker; refused while a solve runs. */
static void
start_load (SsWindow *self, LoadData *d)
{
  if (self->running)
    {
      ss_window_show_message (self, "Stop the running solve before opening another image", TRUE);
      load_data_free (d);
      return;
    }
  ss_window_dismiss_message (self);
  self->loading = TRUE;
  g_clear_error (&self->load_error);
  ss_window_set_status (self, "Loading…");
  self->open_started = g_get_monotonic_time ();
  /* One load at a time: one still reading is cancelled and its result,
   * whenever it comes, ignored (load_done). */
  if (self->load_cancellable != NULL)
    g_cancellable_cancel (self->load_cancellable);
  g_clear_object (&self->load_cancellable);
  self->load_cancellable = g_cancellable_new ();
  GTask *task = g_task_new (self, self->load_cancellable, load_done, NULL);
  g_task_set_task_data (task, d, load_data_free);
  g_task_set_name (task, "sharpsky load");
  g_task_run_in_thread (task, load_thread);
  g_object_unref (task);
  ss_window_update_actions (self);
}

static void
open_path_at (SsWindow *self, const char *path, int hdu, int plane, gboolean chosen)
{
  start_load (self, load_data_new (path, hdu, plane, chosen));
}

void
ss_window_open_path (SsWindow *self, const char *path)
{
  g_return_if_fail (SS_IS_WINDOW (self) && path != NULL);
  open_path_at (self, path, -1, PLANE_DEFAULT, FALSE);
}

/* ---- the HDU and plane ------------------------------------------------------ */

/* Whether the open file has something else to offer: another image HDU, or
 * another plane of a cube (a colour image's mean is what most want). */
static gboolean
offers_a_choice (SsWindow *self)
{
  const SsFitsHdu *hdu = find_hdu (self->hdus, self->hdu);
  return ss_fits_count_images (self->hdus, NULL) > 1
         || (hdu != NULL && hdu->planes > 1 && hdu->planes != 3);
}

static void
on_hdu_chosen (SsHduChooser *chooser, int hdu, int plane, SsWindow *self)
{
  if (self->path != NULL && (hdu != self->hdu || plane != self->plane))
    {
      g_autofree char *path = g_strdup (self->path);
      open_path_at (self, path, hdu, plane, TRUE);
    }
}

static void
on_chooser_destroyed (SsWindow *self)
{
  self->chooser = NULL;
}

void
ss_window_choose_hdu (SsWindow *self)
{
  g_return_if_fail (SS_IS_WINDOW (self));
  if (self->chooser != NULL || self->hdus == NULL || ss_fits_count_images (self->hdus, NULL) == 0
      || self->running || self->loading)
    return;
  self->chooser = ss_hdu_chooser_new (GTK_WINDOW (self), self->path, self->hdus, self->hdu,
                                      self->plane);
  g_signal_connect (self->chooser, "chosen", G_CALLBACK (on_hdu_chosen), self);
  g_signal_connect_swapped (self->chooser, "destroy", G_CALLBACK (on_chooser_destroyed), self);
  gtk_window_present (GTK_WINDOW (self->chooser));
}

void
ss_window_action_choose_hdu (GSimpleAction *action, GVariant *param, gpointer data)
{
  ss_window_choose_hdu (SS_WINDOW (data));
}

char *
ss_window_find_sample (void)
{
  const char *dirs[] = { g_getenv ("SHARPSKY_DATA"), SHARPSKY_DATADIR, SHARPSKY_SOURCE_DATADIR };
  for (guint i = 0; i < G_N_ELEMENTS (dirs); i++)
    {
      if (dirs[i] == NULL || dirs[i][0] == '\0')
        continue;
      char *path = g_build_filename (dirs[i], SAMPLE_NAME, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_REGULAR))
        return path;
      g_free (path);
    }
  return NULL;
}

void
ss_window_open_sample (SsWindow *self)
{
  g_autofree char *path = ss_window_find_sample ();
  if (path == NULL)
    {
      ss_window_show_message (self, "The sample image " SAMPLE_NAME " is not installed", TRUE);
      return;
    }
  ss_window_open_path (self, path);
}

/* ---- the open dialog and drag and drop ------------------------------------ */

static void
on_open_response (GtkNativeDialog *dialog, int response, SsWindow *self)
{
  if (response == GTK_RESPONSE_ACCEPT && !self->disposed)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = file ? g_file_get_path (file) : NULL;
      if (path)
        ss_window_open_path (self, path);
      else
        ss_window_show_message (self, "Only local files can be opened", TRUE);
    }
  g_object_unref (dialog);
  g_object_unref (self);
}

/* The open dialog's first filter: every image the window opens. */
static void
add_images_filter (GtkFileChooser *chooser)
{
  GtkFileFilter *filter = gtk_file_filter_new ();
  gtk_file_filter_set_name (filter, "Images (FITS, PNG)");
  ss_file_filter_add_suffixes (filter, ss_fits_read_suffixes);
  ss_file_filter_add_suffixes (filter, ss_png_suffixes);
  gtk_file_chooser_add_filter (chooser, filter);
  g_object_unref (filter);
}

void
ss_window_action_open (GSimpleAction *action, GVariant *param, gpointer data)
{
  SsWindow *self = data;
  GtkFileChooserNative *dialog = gtk_file_chooser_native_new (
      "Open an Image", GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_OPEN, "_Open", "_Cancel");
  GtkFileChooser *chooser = GTK_FILE_CHOOSER (dialog);
  add_images_filter (chooser);
  ss_file_chooser_add_filter (chooser, "FITS images", ss_fits_read_suffixes);
  ss_file_chooser_add_filter (chooser, "PNG images", ss_png_suffixes);
  ss_file_chooser_add_all_filter (chooser);
  if (self->path)
    {
      g_autoptr (GFile) file = g_file_new_for_path (self->path);
      g_autoptr (GFile) folder = g_file_get_parent (file);
      if (folder)
        gtk_file_chooser_set_current_folder (chooser, folder, NULL);
    }
  g_signal_connect (dialog, "response", G_CALLBACK (on_open_response), g_object_ref (self));
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

/* What a drop of several files says once the first is open: the window
 * works on one image, and the others must not vanish without a word. */
static char *
dropped_files_note (const char *opened_path, guint n_left)
{
  g_autofree char *name = g_filename_display_basename (opened_path);
  return n_left == 1
         ? g_strdup_printf ("Opened “%s”; Sharpsky opens one image at a time, so the other "
                            "dropped file was not opened.", name)
         : g_strdup_printf ("Opened “%s”; Sharpsky opens one image at a time, so the other "
                            "%u dropped files were not opened.", name, n_left);
}

/* Opens the first of FILES, the others being left with a note. */
static gboolean
open_dropped_files (SsWindow *self, GSList *files)
{
  g_autofree char *path = g_file_get_path (files->data);
  if (path == NULL)
    {
      ss_window_show_message (self, "Only local files can be opened", TRUE);
      return FALSE;
    }
  LoadData *d = load_data_new (path, -1, PLANE_DEFAULT, FALSE);
  guint n_left = g_slist_length (files) - 1;
  if (n_left > 0)
    d->drop_note = dropped_files_note (path, n_left);
  start_load (self, d);
  return TRUE;
}

gboolean
ss_window_on_drop (GtkDropTarget *target, const GValue *value, double x, double y, SsWindow *self)
{
  if (!G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    return FALSE;
  GSList *files = gdk_file_list_get_files (g_value_get_boxed (value));
  gboolean opened = files != NULL && open_dropped_files (self, files);
  g_slist_free (files);
  return opened;
}

/* ---- recent files --------------------------------------------------------- */

void
ss_window_rebuild_recent_menu (SsWindow *self)
{
  if (self->disposed)
    return;
  g_menu_remove_all (self->recent_menu);
  GList *items = gtk_recent_manager_get_items (gtk_recent_manager_get_default ());
  guint count = 0;
  for (GList *l = items; l != NULL && count < RECENT_MAX; l = l->next)
    {
      GtkRecentInfo *info = l->data;
      const char *app_name = g_get_application_name ();
      if (!gtk_recent_info_has_application (info, app_name ? app_name : APP_NAME)
          || !gtk_recent_info_is_local (info) || !gtk_recent_info_exists (info))
        continue;
      GMenuItem *item = g_menu_item_new (gtk_recent_info_get_display_name (info), NULL);
      g_menu_item_set_action_and_target_value (
          item, "win.open-recent", g_variant_new_string (gtk_recent_info_get_uri (info)));
      g_menu_append_item (self->recent_menu, item);
      g_object_unref (item);
      count++;
    }
  g_list_free_full (items, (GDestroyNotify) gtk_recent_info_unref);
}

void
ss_window_action_open_recent (GSimpleAction *action, GVariant *param, gpointer data)
{
  SsWindow *self = data;
  g_autofree char *path = g_filename_from_uri (g_variant_get_string (param, NULL), NULL, NULL);
  if (path)
    ss_window_open_path (self, path);
}
