/* ss-application.c: application-wide actions, accelerators and style. */
#include "ss-application.h"
#include "ss-config.h"
#include "ss-window.h"

struct _SsApplication
{
  GtkApplication parent_instance;
};

G_DEFINE_FINAL_TYPE (SsApplication, ss_application, GTK_TYPE_APPLICATION)

static void
action_quit (GSimpleAction *action, GVariant *param, gpointer data)
{
  /* Closing each window cancels its solve; the app ends with the last one. */
  GList *windows = g_list_copy (gtk_application_get_windows (GTK_APPLICATION (data)));
  for (GList *l = windows; l; l = l->next)
    gtk_window_close (GTK_WINDOW (l->data));
  g_list_free (windows);
}

static void
action_about (GSimpleAction *action, GVariant *param, gpointer data)
{
  static const char *authors[] = { "The Sharpsky developers", NULL };
  GtkWindow *parent = gtk_application_get_active_window (GTK_APPLICATION (data));
  gtk_show_about_dialog (
      parent, "program-name", "Sharpsky", "version", SHARPSKY_VERSION, "logo-icon-name",
      SS_APPLICATION_ID, "comments",
      "Deblurs astronomical images with sparse recovery (CPADMM, FISTA) and direct "
      "inversion (Cholesky, GETS, FFT), on the GPU when there is one, with a live preview "
      "and convergence curve.",
      "license-type", GTK_LICENSE_GPL_3_0, "authors", authors, "copyright",
      "© The Sharpsky developers", NULL);
}

static const GActionEntry app_entries[] = {
  { "quit", action_quit, NULL, NULL, NULL, { 0 } },
  { "about", action_about, NULL, NULL, NULL, { 0 } },
};

typedef struct {
  const char *action;
  const char *accels[4];
} Accel;

static const Accel accels[] = {
  { "app.quit", { "<Control>q", NULL } },
  { "win.open", { "<Control>o", NULL } },
  { "win.choose-hdu", { "<Control>h", NULL } },
  { "win.pick-star", { "<Control>k", NULL } },
  { "win.find-stars", { "<Control><Shift>k", NULL } },
  { "win.run", { "<Control>r", NULL } },
  { "win.stop", { "Escape", NULL } },
  { "win.compare", { "<Control><Shift>r", NULL } },
  { "win.phase-transition", { "<Control>t", NULL } },
  { "win.export::fits", { "<Control>s", NULL } },
  { "win.export::png", { "<Control><Shift>s", NULL } },
  { "win.export::csv", { "<Control>e", NULL } },
  { "win.fullscreen", { "F11", NULL } },
  { "win.zoom-in", { "<Control>plus", "<Control>equal", "<Control>KP_Add", NULL } },
  { "win.zoom-out", { "<Control>minus", "<Control>KP_Subtract", NULL } },
  { "win.zoom-fit", { "<Control>0", "<Control>KP_0", NULL } },
  { "win.zoom-one", { "<Control>1", "<Control>KP_1", NULL } },
  { "win.view::original", { "<Alt>1", NULL } },
  { "win.view::measured", { "<Alt>2", NULL } },
  { "win.view::recovered", { "<Alt>3", NULL } },
  { "win.view::error", { "<Alt>4", NULL } },
  { "win.split", { "<Control>backslash", NULL } },
  { "win.show-help-overlay", { "<Control>question", "F1", NULL } },
};

static void
load_style (void)
{
  GtkCssProvider *provider = gtk_css_provider_new ();
  gtk_css_provider_load_from_resource (provider, "/org/sharpsky/Sharpsky/style.css");
  gtk_style_context_add_provider_for_display (gdk_display_get_default (),
                                              GTK_STYLE_PROVIDER (provider),
                                              GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
  g_object_unref (provider);
}

static void
ss_application_startup (GApplication *app)
{
  G_APPLICATION_CLASS (ss_application_parent_class)->startup (app);
  g_action_map_add_action_entries (G_ACTION_MAP (app), app_entries, G_N_ELEMENTS (app_entries),
                                   app);
  for (guint i = 0; i < G_N_ELEMENTS (accels); i++)
    gtk_application_set_accels_for_action (GTK_APPLICATION (app), accels[i].action,
                                           accels[i].accels);
  gtk_window_set_default_icon_name (SS_APPLICATION_ID);
  load_style ();
}

static void
ss_application_activate (GApplication *app)
{
  SsWindow *window = ss_window_new (GTK_APPLICATION (app));
  ss_window_open_sample (window);
  gtk_window_present (GTK_WINDOW (window));
}

static void
ss_application_open (GApplication *app, GFile **files, int n_files, const char *hint)
{
  for (int i = 0; i < n_files; i++)
    {
      SsWindow *window = ss_window_new (GTK_APPLICATION (app));
      g_autofree char *path = g_file_get_path (files[i]);
      if (path)
        ss_window_open_path (window, path);
      gtk_window_present (GTK_WINDOW (window));
    }
}

static void
ss_application_class_init (SsApplicationClass *klass)
{
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);
  app_class->startup = ss_application_startup;
  app_class->activate = ss_application_activate;
  app_class->open = ss_application_open;
}

static void
ss_application_init (SsApplication *self)
{
}

SsApplication *
ss_application_new (GApplicationFlags flags)
{
  SsApplication *app = g_object_new (SS_TYPE_APPLICATION, "application-id", SS_APPLICATION_ID,
                                     "flags", flags | G_APPLICATION_HANDLES_OPEN, NULL);
  g_application_set_option_context_parameter_string (G_APPLICATION (app), "[FILE…]");
  g_application_set_option_context_summary (
      G_APPLICATION (app),
      "Deblur astronomical images (FITS or PNG). With no FILE, the bundled sample opens.");
  return app;
}
