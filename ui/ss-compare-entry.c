/* ss-compare-entry.c: the state of one solver in a comparison. */
#include "ss-compare-entry.h"
#include "ss-mem.h"

#include <math.h>

struct _SsCompareEntry
{
  GObject parent_instance;
  char *solver_name;
  char *status;
  char *backend, *device;   /* the result's, once finished */
  guint series;
  guint revision;
  gboolean finished;
  int iterations;
  double seconds, mse, psnr, residual;
  gsize memory;
  SsFrame *recovered;
  SsFrame *error_frame;
  GArray *points;
};

G_DEFINE_FINAL_TYPE (SsCompareEntry, ss_compare_entry, G_TYPE_OBJECT)

enum { PROP_0, PROP_REVISION, N_PROPS };
static GParamSpec *properties[N_PROPS];

static void
bump (SsCompareEntry *self)
{
  self->revision++;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_REVISION]);
}

SsCompareEntry *
ss_compare_entry_new (const char *solver_name, guint series)
{
  SsCompareEntry *self = g_object_new (SS_TYPE_COMPARE_ENTRY, NULL);
  self->solver_name = g_strdup (solver_name);
  self->status = g_strdup ("waiting");
  self->series = series;
  return self;
}

void
ss_compare_entry_set_progress (SsCompareEntry *self, const SsProgressPoint *point)
{
  g_return_if_fail (SS_IS_COMPARE_ENTRY (self));
  self->iterations = point->iteration;
  self->seconds = point->elapsed;
  self->mse = point->mse;
  self->psnr = point->psnr;
  self->residual = point->residual;
  g_free (self->status);
  self->status = g_strdup ("running");
  bump (self);
}

void
ss_compare_entry_set_finished (SsCompareEntry *self, const SsSolveResult *result,
                               SsFrame *recovered, SsFrame *error_frame, GArray *points,
                               const char *status)
{
  g_return_if_fail (SS_IS_COMPARE_ENTRY (self));
  self->finished = TRUE;
  /* The metrics are those of an estimate: a run that made none has none. */
  if (result != NULL && recovered != NULL)
    {
      self->iterations = result->iterations;
      self->seconds = result->seconds;
      self->mse = result->mse;
      self->psnr = result->psnr;
      self->residual = result->residual;
      self->memory = result->peak_memory_bytes;
      g_free (self->backend);
      g_free (self->device);
      self->backend = g_strdup (result->backend);
      self->device = g_strdup (result->device);
    }
  g_clear_pointer (&self->recovered, ss_frame_unref);
  g_clear_pointer (&self->error_frame, ss_frame_unref);
  self->recovered = recovered ? ss_frame_ref (recovered) : NULL;
  self->error_frame = error_frame ? ss_frame_ref (error_frame) : NULL;
  g_clear_pointer (&self->points, g_array_unref);
  self->points = points ? g_array_ref (points) : NULL;
  g_free (self->status);
  self->status = g_strdup (status);
  bump (self);
}

const char *
ss_compare_entry_get_solver_name (SsCompareEntry *self)
{
  return self->solver_name;
}

const char *
ss_compare_entry_get_status (SsCompareEntry *self)
{
  return self->status;
}

const char *
ss_compare_entry_get_backend (SsCompareEntry *self)
{
  return self->backend;
}

const char *
ss_compare_entry_get_device (SsCompareEntry *self)
{
  return self->device;
}

guint
ss_compare_entry_get_series (SsCompareEntry *self)
{
  return self->series;
}

SsFrame *
ss_compare_entry_get_recovered (SsCompareEntry *self)
{
  return self->recovered;
}

SsFrame *
ss_compare_entry_get_error_frame (SsCompareEntry *self)
{
  return self->error_frame;
}

GArray *
ss_compare_entry_get_points (SsCompareEntry *self)
{
  return self->points;
}

double
ss_compare_entry_get_mse (SsCompareEntry *self)
{
  return self->mse;
}

double
ss_compare_entry_get_seconds (SsCompareEntry *self)
{
  return self->seconds;
}

int
ss_compare_entry_get_iterations (SsCompareEntry *self)
{
  return self->iterations;
}

gboolean
ss_compare_entry_is_finished (SsCompareEntry *self)
{
  return self->finished;
}

static char *
format_metric (double value, const char *format)
{
  if (!isfinite (value))
    return g_strdup ("—");
  char buffer[G_ASCII_DTOSTR_BUF_SIZE];
  return g_strdup (g_ascii_formatd (buffer, sizeof buffer, format, value));
}

char *
ss_compare_entry_dup_column_text (SsCompareEntry *self, SsCompareColumn column)
{
  g_return_val_if_fail (SS_IS_COMPARE_ENTRY (self), NULL);
  /* Before the first report there is nothing to show but the name. */
  gboolean started = self->iterations > 0 || self->finished;
  if (!started && column != SS_COMPARE_COLUMN_SOLVER && column != SS_COMPARE_COLUMN_STATUS)
    return g_strdup ("—");
  switch (column)
    {
    case SS_COMPARE_COLUMN_SOLVER: return g_strdup (self->solver_name);
    case SS_COMPARE_COLUMN_STATUS: return g_strdup (self->status);
    case SS_COMPARE_COLUMN_BACKEND: return g_strdup (self->backend ? self->backend : "—");
    case SS_COMPARE_COLUMN_TIME: return format_metric (self->seconds, "%.2f");
    case SS_COMPARE_COLUMN_ITERATIONS: return g_strdup_printf ("%d", self->iterations);
    case SS_COMPARE_COLUMN_MSE: return format_metric (self->mse, "%.3e");
    case SS_COMPARE_COLUMN_PSNR: return format_metric (self->psnr, "%.2f");
    case SS_COMPARE_COLUMN_RESIDUAL: return format_metric (self->residual, "%.3e");
    case SS_COMPARE_COLUMN_MEMORY:
      return self->memory > 0 ? ss_format_bytes (self->memory) : g_strdup ("—");
    case SS_COMPARE_N_COLUMNS:
    default:
      return g_strdup ("");
    }
}

const char *
ss_compare_column_title (SsCompareColumn column)
{
  static const char *const titles[] = {
    [SS_COMPARE_COLUMN_SOLVER] = "Solver", [SS_COMPARE_COLUMN_STATUS] = "Status",
    [SS_COMPARE_COLUMN_TIME] = "Time (s)", [SS_COMPARE_COLUMN_ITERATIONS] = "Iterations",
    [SS_COMPARE_COLUMN_MSE] = "MSE", [SS_COMPARE_COLUMN_PSNR] = "PSNR (dB)",
    [SS_COMPARE_COLUMN_RESIDUAL] = "Residual", [SS_COMPARE_COLUMN_MEMORY] = "Memory",
    [SS_COMPARE_COLUMN_BACKEND] = "Ran on",
  };
  return (unsigned) column < G_N_ELEMENTS (titles) ? titles[column] : "";
}

static void
ss_compare_entry_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  SsCompareEntry *self = SS_COMPARE_ENTRY (object);
  if (prop_id == PROP_REVISION)
    g_value_set_uint (value, self->revision);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
ss_compare_entry_finalize (GObject *object)
{
  SsCompareEntry *self = SS_COMPARE_ENTRY (object);
  g_free (self->solver_name);
  g_free (self->status);
  g_free (self->backend);
  g_free (self->device);
  ss_frame_unref (self->recovered);
  ss_frame_unref (self->error_frame);
  if (self->points)
    g_array_unref (self->points);
  G_OBJECT_CLASS (ss_compare_entry_parent_class)->finalize (object);
}

static void
ss_compare_entry_class_init (SsCompareEntryClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->get_property = ss_compare_entry_get_property;
  object_class->finalize = ss_compare_entry_finalize;
  properties[PROP_REVISION] = g_param_spec_uint ("revision", NULL, NULL, 0, G_MAXUINT, 0,
                                                 G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
ss_compare_entry_init (SsCompareEntry *self)
{
  self->mse = self->psnr = self->residual = NAN;
}
