/* ss-solve-task.c: a solve in a worker thread, reports handed to the main loop. */
#include "ss-solve-task.h"
#include "ss-fft.h"

#include "ss-thread.h"

#include <math.h>

/* At most this many deliveries a second reach the main loop. */
#define DELIVERY_INTERVAL 0.1
/* Previews larger than this on a side are box-reduced by the engine: a
 * live picture needs no more, and stretching it for display stays cheap
 * (about 25 ms for 640×558, against 60–100 ms for a full megapixel). */
#define PREVIEW_MAX_SIDE 640
/* Seconds one CPU iteration takes per pixel (four FFTs and a few passes on
 * this class of machine); errs long so that reports come often enough. */
#define CPU_SECONDS_PER_PIXEL 6e-8
#define GPU_SECONDS_PER_PIXEL 2e-9

struct _SsSolveTask
{
  GObject parent_instance;

  /* Set at creation, read-only afterwards. */
  SsFrame *input;
  SsHeader *header;
  char *source_path;
  SsSettings settings;
  GMainContext *context;

  /* Shared with the worker, under LOCK. */
  GMutex lock;
  SsJob *job;
  char *backend;
  char *device;
  gboolean job_ready_pending;
  gboolean started_pending;
  GArray *pending_points;
  SsFrame *pending_preview;
  gboolean delivery_scheduled;
  double last_delivery;

  /* Worker only. */
  int report_every;

  /* Written by the worker before it returns; read after completion. */
  SsSolveResult result;
  SsFrame *recovered;
  SsFrame *error_frame;

  /* Main thread only. */
  GArray *points;
  GAsyncReadyCallback callback;
  gpointer user_data;
};

G_DEFINE_FINAL_TYPE (SsSolveTask, ss_solve_task, G_TYPE_OBJECT)

enum {
  SIGNAL_JOB_READY,
  SIGNAL_STARTED,
  SIGNAL_PROGRESS,
  N_SIGNALS
};
static guint signals[N_SIGNALS];

int
ss_solve_task_choose_report_every (gsize n, SsSolverKind kind, const char *backend,
                                   int iterations)
{
  if (!ss_solver_is_iterative (kind) || iterations < 1)
    return 1;
  double per_pixel = g_strcmp0 (backend, "cuda") == 0 ? GPU_SECONDS_PER_PIXEL
                                                       : CPU_SECONDS_PER_PIXEL;
  double per_iteration = MAX (per_pixel * (double) n, 1e-6);
  /* Reports every ~0.08 s keep Stop under 0.5 s even with a 5x misestimate. */
  int by_time = (int) MAX (1.0, floor (0.08 / per_iteration));
  int by_points = MAX (1, iterations / 100);
  return MAX (1, MIN (by_time, by_points));
}

/* ---- delivery to the main context ----------------------------------------- */

static void
deliver (SsSolveTask *self)
{
  g_mutex_lock (&self->lock);
  gboolean job_ready = self->job_ready_pending;
  gboolean started = self->started_pending;
  GArray *points = NULL;
  if (self->pending_points->len > 0)
    {
      points = self->pending_points;
      self->pending_points = g_array_new (FALSE, FALSE, sizeof (SsProgressPoint));
    }
  SsFrame *preview = g_steal_pointer (&self->pending_preview);
  g_autofree char *backend = g_strdup (self->backend);
  g_autofree char *device = g_strdup (self->device);
  self->job_ready_pending = self->started_pending = FALSE;
  self->delivery_scheduled = FALSE;
  self->last_delivery = g_get_monotonic_time () * 1e-6;
  g_mutex_unlock (&self->lock);

  if (job_ready)
    g_signal_emit (self, signals[SIGNAL_JOB_READY], 0);
  if (started)
    g_signal_emit (self, signals[SIGNAL_STARTED], 0, backend, device);
  if (points != NULL || preview != NULL)
    {
      if (points != NULL)
        g_array_append_vals (self->points, points->data, points->len);
      else
        points = g_array_new (FALSE, FALSE, sizeof (SsProgressPoint));
      g_signal_emit (self, signals[SIGNAL_PROGRESS], 0, points, preview);
    }
  if (points)
    g_array_unref (points);
  ss_frame_unref (preview);
}

static gboolean
deliver_source (gpointer data)
{
  deliver (SS_SOLVE_TASK (data));
  return G_SOURCE_REMOVE;
}

/* Called with LOCK held: makes sure a delivery is on its way, no sooner than
 * DELIVERY_INTERVAL after the previous one. */
static void
schedule_delivery_locked (SsSolveTask *self)
{
  if (self->delivery_scheduled)
    return;
  self->delivery_scheduled = TRUE;
  double wait = self->last_delivery + DELIVERY_INTERVAL - g_get_monotonic_time () * 1e-6;
  GSource *source = wait > 0.001 ? g_timeout_source_new ((guint) ceil (wait * 1000))
                                 : g_idle_source_new ();
  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, deliver_source, g_object_ref (self), g_object_unref);
  g_source_set_static_name (source, "sharpsky solve progress");
  g_source_attach (source, self->context);
  g_source_unref (source);
}

/* ---- the worker ----------------------------------------------------------- */

static SsFrame *
preview_frame (SsSolveTask *self, const SsReport *report)
{
  return ss_job_preview_frame (self->job, report->preview, report->preview_width,
                               report->preview_height, NULL);
}

/* Runs on the solver's thread. */
static void
on_report (const SsReport *report, gpointer user_data)
{
  SsSolveTask *self = user_data;
  SsProgressPoint point = {
    .iteration = report->iteration, .elapsed = report->elapsed, .mse = report->mse,
    .psnr = report->psnr, .residual = report->residual, .rel_change = report->rel_change,
    .objective = report->objective, .final = report->final,
  };
  /* Every preview is copied (at most 640×640 floats, well under a
   * millisecond); a newer one replaces an undelivered one, so the window
   * gets the freshest estimate at most DELIVERY_INTERVAL apart. */
  SsFrame *preview = report->preview != NULL ? preview_frame (self, report) : NULL;
  g_mutex_lock (&self->lock);
  g_array_append_val (self->pending_points, point);
  if (preview != NULL)
    {
      ss_frame_unref (self->pending_preview);
      self->pending_preview = preview;
    }
  schedule_delivery_locked (self);
  g_mutex_unlock (&self->lock);
}

static void
choose_preview_size (const SsJob *job, int *pw, int *ph)
{
  double f = MIN (1.0, (double) PREVIEW_MAX_SIDE / MAX (job->solve_width, job->solve_height));
  *pw = MAX (1, (int) (job->solve_width * f));
  *ph = MAX (1, (int) (job->solve_height * f));
}

static gboolean
ensure_job (SsSolveTask *self, GCancellable *cancellable, GError **error)
{
  if (self->job != NULL)
    return TRUE;
  SsJob *job = ss_job_build (self->input, self->header, self->source_path, &self->settings,
                             cancellable, error);
  if (job == NULL)
    return FALSE;
  g_mutex_lock (&self->lock);
  self->job = job;
  self->job_ready_pending = TRUE;
  schedule_delivery_locked (self);
  g_mutex_unlock (&self->lock);
  return TRUE;
}

/* The engine's estimate becomes the frames shown (the image's region, input
 * units), then is freed: nothing reads it again (export writes the frames,
 * Compare and the status line the metrics), and on a 61-megapixel frame it
 * is another 244 MB or more (padded) beside the recovered frame. After a
 * stop the partial estimate is still worth showing. */
static void
take_estimate_as_frames (SsSolveTask *self, const SsJob *job)
{
  if (self->result.x != NULL && self->result.width == job->solve_width
      && self->result.height == job->solve_height)
    {
      self->recovered = ss_job_frame_from_scaled (job, self->result.x, NULL);
      self->error_frame = ss_job_error_frame (job, self->result.x, NULL);
    }
  g_clear_pointer (&self->result.x, g_free);
}

static void
solve_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  SsSolveTask *self = source;
  GError *error = NULL;

  if (!ensure_job (self, cancellable, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  if (g_cancellable_set_error_if_cancelled (cancellable, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  /* The GPU the user picked, alone; otherwise the engine's own choice. */
  const SsSettings *s = &self->settings;
  int device = s->device;
  gboolean one_gpu = s->backend == SS_BACKEND_CUDA && device >= 0;
  g_autoptr (SsBackend) backend = ss_backend_new_with_devices (s->backend, one_gpu ? &device : NULL,
                                                               one_gpu ? 1 : 0, &error);
  if (backend == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  g_mutex_lock (&self->lock);
  self->backend = g_strdup (ss_backend_get_name (backend));
  self->device = g_strdup (ss_backend_get_device (backend));
  self->started_pending = TRUE;
  schedule_delivery_locked (self);
  g_mutex_unlock (&self->lock);

  SsJob *job = self->job;
  /* A job serves every solver of a comparison: its settings give the values
   * chosen from the data, the task's the solver. */
  SsSettings run;
  ss_settings_copy (&self->settings, &run);
  ss_settings_take_resolved (&run, &job->settings);
  SsSolveParams params = run.params;
  ss_settings_clear (&run);
  self->report_every = ss_solve_task_choose_report_every (
      ss_job_solve_pixels (job), params.kind, ss_backend_get_name (backend), params.iterations);
  params.report_every = self->report_every;
  choose_preview_size (job, &params.preview_width, &params.preview_height);

  /* A real image's sky, for solvers that model the counts as measured (RL);
   * a simulation has none. */
  double background = job->settings.mode == SS_MODE_DEBLUR
                      ? ss_scaling_background (&job->scaling) : 0;
  /* What the job measured on the image, handed on as deblur hands it. */
  gboolean deblur = job->settings.mode == SS_MODE_DEBLUR;
  gboolean noise_known
    = deblur && (job->settings.auto_params & (G_GUINT64_CONSTANT (1) << SS_PARAM_ALPHA));
  SsDataStats stats = ss_data_stats_from_estimates (
    noise_known ? job->settings.noise_estimate : NAN, job->settings.sky_mode);
  SsProblem problem = { .op = job->op, .y = job->y, .truth = job->truth,
                        .background = background, .stats = deblur ? &stats : NULL,
                        .image = { job->pad_x0, job->pad_y0, job->width, job->height } };
  gboolean ok = ss_backend_solve (backend, &problem, &params, on_report, self, cancellable,
                                  &self->result, &error);
  take_estimate_as_frames (self, job);
  if (ok)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static gpointer
solver_thread_main (gpointer data)
{
  GTask *task = data;
  ss_thread_lower_priority (SS_NICENESS_SOLVER);
  solve_thread (task, g_task_get_source_object (task), NULL, g_task_get_cancellable (task));
  g_object_unref (task);
  return NULL;
}

typedef struct {
  int width, height;
  gboolean unless_gpu;   /* AUTO in a CUDA build: plan only if no GPU is found */
} PrepareSize;

/* Whether a CUDA device is present, as AUTO decides (ss_backend_new).
 * Asked on the planning thread, never the main one: the first query
 * starts the GPU driver, which takes a while. A count, not a listing,
 * which would make a context on every device to read its memory. */
static gboolean
gpu_present (void)
{
  return ss_backend_count_devices () > 0;
}

static gpointer
prepare_thread_main (gpointer data)
{
  PrepareSize *size = data;
  ss_thread_lower_priority (SS_NICENESS_SOLVER);
  if (!size->unless_gpu || !gpu_present ())
    {
      /* The batches the solvers use (ss-cpu-*.c): one transform, and pairs. */
      ss_fft_get (size->width, size->height, 1, NULL);
      ss_fft_get (size->width, size->height, 2, NULL);
    }
  g_free (size);
  return NULL;
}

void
ss_solve_task_prepare_size (int width, int height, SsBackendKind backend)
{
  /* A GPU solve plans no host transform worth making ahead. */
  if (width <= 0 || height <= 0 || backend == SS_BACKEND_CUDA)
    return;
  PrepareSize *size = g_new (PrepareSize, 1);
  size->width = width;
  size->height = height;
  size->unless_gpu = ss_backend_kind_may_use_gpu (backend);
  GThread *thread = g_thread_try_new ("sharpsky-plan", prepare_thread_main, size, NULL);
  if (thread != NULL)
    g_thread_unref (thread);
  else
    g_free (size);
}

static void
solve_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SsSolveTask *self = SS_SOLVE_TASK (source);
  /* Whatever is still queued reaches the listeners before the caller hears
   * of the end, so the curve always ends with the final point. */
  deliver (self);
  if (self->callback)
    self->callback (source, result, self->user_data);
}

/* ---- public API ----------------------------------------------------------- */

SsSolveTask *
ss_solve_task_new (SsFrame *input, const SsHeader *header, const char *source_path, SsJob *job,
                   const SsSettings *settings)
{
  g_return_val_if_fail (input != NULL || job != NULL, NULL);
  SsSolveTask *self = g_object_new (SS_TYPE_SOLVE_TASK, NULL);
  self->input = input ? ss_frame_ref (input) : NULL;
  self->header = header ? ss_header_copy (header) : NULL;
  self->source_path = g_strdup (source_path);
  ss_settings_copy (settings, &self->settings);
  self->job = job ? ss_job_ref (job) : NULL;
  return self;
}

void
ss_solve_task_run_async (SsSolveTask *self, GCancellable *cancellable,
                         GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (SS_IS_SOLVE_TASK (self));
  self->callback = callback;
  self->user_data = user_data;
  g_main_context_unref (self->context);
  self->context = g_main_context_ref_thread_default ();
  GTask *task = g_task_new (self, cancellable, solve_done, NULL);
  g_task_set_name (task, "sharpsky solve");
  g_task_set_source_tag (task, ss_solve_task_run_async);
  /* A thread of its own rather than GTask's pool: it runs at the lowest
   * priority (ss-thread.h), which must not stick to a pool thread that
   * later loads a file. The thread owns the task reference. */
  GThread *thread = g_thread_try_new ("sharpsky-solve", solver_thread_main, task, NULL);
  if (thread == NULL)
    {
      g_task_return_new_error (task, SS_ERROR, SS_ERROR_OUT_OF_MEMORY,
                               "cannot start the solver's thread");
      g_object_unref (task);
      return;
    }
  g_thread_unref (thread);
}

gboolean
ss_solve_task_run_finish (SsSolveTask *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

const SsSettings *
ss_solve_task_get_settings (SsSolveTask *self)
{
  return &self->settings;
}

void
ss_solve_task_get_run_settings (SsSolveTask *self, SsSettings *settings)
{
  ss_settings_copy (&self->settings, settings);
  SsJob *job = ss_solve_task_get_job (self);
  if (job != NULL)
    ss_settings_take_resolved (settings, &job->settings);
}

SsJob *
ss_solve_task_get_job (SsSolveTask *self)
{
  g_mutex_lock (&self->lock);
  SsJob *job = self->job;
  g_mutex_unlock (&self->lock);
  return job;
}

const SsSolveResult *
ss_solve_task_get_result (SsSolveTask *self)
{
  return &self->result;
}

SsFrame *
ss_solve_task_get_recovered (SsSolveTask *self)
{
  return self->recovered;
}

SsFrame *
ss_solve_task_get_error_frame (SsSolveTask *self)
{
  return self->error_frame;
}

GArray *
ss_solve_task_get_points (SsSolveTask *self)
{
  return self->points;
}

const char *
ss_solve_task_get_backend (SsSolveTask *self)
{
  return self->result.backend ? self->result.backend : self->backend;
}

const char *
ss_solve_task_get_device (SsSolveTask *self)
{
  return self->result.device ? self->result.device : self->device;
}

int
ss_solve_task_get_report_every (SsSolveTask *self)
{
  return self->report_every;
}

static void
ss_solve_task_finalize (GObject *object)
{
  SsSolveTask *self = SS_SOLVE_TASK (object);
  ss_frame_unref (self->input);
  if (self->header)
    ss_header_free (self->header);
  g_free (self->source_path);
  ss_settings_clear (&self->settings);
  g_main_context_unref (self->context);
  g_mutex_clear (&self->lock);
  ss_job_unref (self->job);
  g_free (self->backend);
  g_free (self->device);
  g_array_unref (self->pending_points);
  ss_frame_unref (self->pending_preview);
  ss_solve_result_clear (&self->result);
  ss_frame_unref (self->recovered);
  ss_frame_unref (self->error_frame);
  g_array_unref (self->points);
  G_OBJECT_CLASS (ss_solve_task_parent_class)->finalize (object);
}

static void
ss_solve_task_class_init (SsSolveTaskClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = ss_solve_task_finalize;
  signals[SIGNAL_JOB_READY] = g_signal_new ("job-ready", G_TYPE_FROM_CLASS (klass),
                                            G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                            G_TYPE_NONE, 0);
  signals[SIGNAL_STARTED] = g_signal_new ("started", G_TYPE_FROM_CLASS (klass),
                                          G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE,
                                          2, G_TYPE_STRING, G_TYPE_STRING);
  signals[SIGNAL_PROGRESS] = g_signal_new ("progress", G_TYPE_FROM_CLASS (klass),
                                           G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                           G_TYPE_NONE, 2, G_TYPE_POINTER, SS_TYPE_FRAME);
}

static void
ss_solve_task_init (SsSolveTask *self)
{
  g_mutex_init (&self->lock);
  self->pending_points = g_array_new (FALSE, FALSE, sizeof (SsProgressPoint));
  self->points = g_array_new (FALSE, FALSE, sizeof (SsProgressPoint));
  self->context = g_main_context_ref_thread_default ();
  self->last_delivery = -1.0;
}
