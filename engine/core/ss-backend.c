/* ss-backend.c: choosing where to solve, and falling back when a GPU cannot. */
#include "ss-backend-private.h"
#include "ss-boundary.h"
#include "ss-cpu.h"
#include "ss-error.h"
#include "ss-fft.h"
#include "ss-pixel-l1.h"
#include "ss-solver-choice.h"


const char *
ss_backend_kind_to_string (SsBackendKind kind)
{
  switch (kind)
    {
    case SS_BACKEND_CPU: return "cpu";
    case SS_BACKEND_CUDA: return "cuda";
    case SS_BACKEND_AUTO:
    default: return "auto";
    }
}

gboolean
ss_backend_kind_from_string (const char *text, SsBackendKind *kind, GError **error)
{
  if (text && g_ascii_strcasecmp (text, "auto") == 0)
    *kind = SS_BACKEND_AUTO;
  else if (text && g_ascii_strcasecmp (text, "cpu") == 0)
    *kind = SS_BACKEND_CPU;
  else if (text && (g_ascii_strcasecmp (text, "cuda") == 0 || g_ascii_strcasecmp (text, "gpu") == 0))
    *kind = SS_BACKEND_CUDA;
  else
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "unknown backend \"%s\": expected auto, cpu or cuda", text ? text : "");
      return FALSE;
    }
  return TRUE;
}

#if SHARPSKY_HAVE_CUDA
/* The contexts of the backends freed so far, kept for the next ones: a
 * context (driver start, stream, library handles) and its cuFFT plans cost
 * tenths of a second that the app, which makes a backend per solve, would
 * otherwise pay at every solve. A pool, not one shared context, so that two
 * backends alive at once never share a stream; each context stays on the
 * device it was made for. */
static GMutex context_pool_lock;
static GSList *context_pool;

static SsCudaContext *
take_pooled_context (int device)
{
  g_mutex_lock (&context_pool_lock);
  SsCudaContext *ctx = NULL;
  for (GSList *l = context_pool; l != NULL; l = l->next)
    if (ss_cuda_context_get_device (l->data) == device)
      {
        ctx = l->data;
        context_pool = g_slist_delete_link (context_pool, l);
        break;
      }
  g_mutex_unlock (&context_pool_lock);
  return ctx;
}

static void
pool_context (SsCudaContext *ctx)
{
  g_mutex_lock (&context_pool_lock);
  context_pool = g_slist_prepend (context_pool, ctx);
  g_mutex_unlock (&context_pool_lock);
}

/* ss_backend_warm_up's thread: the context it made goes into the pool, a
 * failure is dropped (the backend that follows meets it again and says so). */
static GThread *warm_up_thread;
static gboolean warm_up_started;   /* once a process: the pool keeps what it made */

static gpointer
warm_up_context (gpointer data)
{
  int device = GPOINTER_TO_INT (data);
  if (ss_cuda_device_count () > device)
    {
      SsCudaContext *ctx = ss_cuda_context_new (device, NULL);
      if (ctx != NULL)
        pool_context (ctx);
    }
  return NULL;
}

/* Waits for a warm-up in flight, so that its context is in the pool (or
 * known not to come) before a backend looks there. */
static void
warm_up_join (void)
{
  g_mutex_lock (&context_pool_lock);
  GThread *thread = g_steal_pointer (&warm_up_thread);
  g_mutex_unlock (&context_pool_lock);
  if (thread != NULL)
    g_thread_join (thread);
}

/* "NAME" for one device; "2 devices: 0 NAME; 1 NAME" for several. */
static char *
describe_contexts (SsCudaContext *const *contexts, const int *devices, int count)
{
  if (count == 1)
    return g_strdup (ss_cuda_context_get_device_name (contexts[0]));
  GString *text = g_string_new (NULL);
  g_string_append_printf (text, "%d devices:", count);
  for (int i = 0; i < count; i++)
    g_string_append_printf (text, "%s %d %s", i ? ";" : "", devices[i],
                            ss_cuda_context_get_device_name (contexts[i]));
  return g_string_free (text, FALSE);
}

static gboolean
open_cuda (SsBackend *backend, const int *devices, int count, GError **error)
{
  static const int first_device = 0;
  if (ss_cuda_device_count () == 0)
    {
      /* Name the device asked for: the app's picker and --devices give one. */
      if (count > 0)
        g_set_error (error, SS_ERROR, SS_ERROR_NO_DEVICE,
                     "CUDA device %d was asked for, but no CUDA device is present", devices[0]);
      else
        g_set_error (error, SS_ERROR, SS_ERROR_NO_DEVICE, "no CUDA device is present");
      return FALSE;
    }
  if (count <= 0)
    {
      devices = &first_device;
      count = 1;
    }
  backend->cuda = g_new0 (SsCudaContext *, count);
  warm_up_join ();
  for (int i = 0; i < count; i++)
    {
      backend->cuda[i] = take_pooled_context (devices[i]);
      if (backend->cuda[i] == NULL)
        backend->cuda[i] = ss_cuda_context_new (devices[i], error);
      if (backend->cuda[i] == NULL)
        return FALSE;
      backend->n_cuda = i + 1;
    }
  backend->use_cuda = TRUE;
  backend->device = describe_contexts (backend->cuda, devices, count);
  return TRUE;
}

static void
close_cuda (SsBackend *backend)
{
  for (int i = 0; i < backend->n_cuda; i++)
    pool_context (backend->cuda[i]);
  g_clear_pointer (&backend->cuda, g_free);
  backend->n_cuda = 0;
  backend->use_cuda = FALSE;
}
#endif

SsBackend *
ss_backend_new (SsBackendKind kind, GError **error)
{
  return ss_backend_new_with_devices (kind, NULL, 0, error);
}

void
ss_backend_warm_up (SsBackendKind kind, const int *devices, int count)
{
#if SHARPSKY_HAVE_CUDA
  if (kind == SS_BACKEND_CPU)
    return;
  int device = count > 0 ? devices[0] : 0;
  g_mutex_lock (&context_pool_lock);
  if (!warm_up_started)
    warm_up_thread = g_thread_try_new ("sharpsky-cuda-warm-up", warm_up_context,
                                       GINT_TO_POINTER (device), NULL);
  warm_up_started = TRUE;
  g_mutex_unlock (&context_pool_lock);
#else
  (void) kind;
  (void) devices;
  (void) count;
#endif
}

void
ss_backend_warm_up_wait (void)
{
#if SHARPSKY_HAVE_CUDA
  warm_up_join ();
#endif
}

SsBackend *
ss_backend_new_with_devices (SsBackendKind kind, const int *devices, int count, GError **error)
{
  SsBackend *backend = g_new0 (SsBackend, 1);
  backend->requested = kind;
  if (kind != SS_BACKEND_CPU)
    {
#if SHARPSKY_HAVE_CUDA
      g_autoptr (GError) cuda_error = NULL;
      if (!open_cuda (backend, devices, count, &cuda_error))
        {
          close_cuda (backend);
          /* Auto tolerates a machine without a GPU, not a device list
           * naming one that is not there. */
          gboolean absent = ss_cuda_device_count () == 0;
          if (kind == SS_BACKEND_CUDA || (count > 0 && !absent))
            {
              g_propagate_error (error, g_steal_pointer (&cuda_error));
              ss_backend_free (backend);
              return NULL;
            }
        }
#else
      if (kind == SS_BACKEND_CUDA)
        {
          g_set_error (error, SS_ERROR, SS_ERROR_NO_DEVICE,
                       "this build of Sharpsky has no CUDA backend (configure with -Dcuda=enabled)");
          ss_backend_free (backend);
          return NULL;
        }
#endif
    }
  if (!backend->use_cuda)
    backend->device = ss_cpu_device_name ();
  return backend;
}

int
ss_backend_get_device_count (const SsBackend *backend)
{
#if SHARPSKY_HAVE_CUDA
  if (backend->use_cuda)
    return backend->n_cuda;
#endif
  return 1;
}

gboolean
ss_backend_parse_devices (const char *text, int **devices, int *count, GError **error)
{
  *devices = NULL;
  *count = 0;
  if (text != NULL && g_ascii_strcasecmp (text, "all") == 0)
    {
#if SHARPSKY_HAVE_CUDA
      *count = ss_cuda_device_count ();
      *devices = *count > 0 ? g_new (int, *count) : NULL;
      for (int i = 0; i < *count; i++)
        (*devices)[i] = i;
#endif
      return TRUE;
    }
  g_auto (GStrv) parts = g_strsplit (text ? text : "", ",", -1);
  int n = (int) g_strv_length (parts);
  g_autofree int *list = g_new0 (int, MAX (n, 1));
  for (int i = 0; i < n; i++)
    {
      guint64 value;
      if (!g_ascii_string_to_unsigned (g_strstrip (parts[i]), 10, 0, 1023, &value, NULL))
        {
          g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                       "\"%s\": expected all or device numbers such as 0,1", text);
          return FALSE;
        }
      list[i] = (int) value;
    }
  if (n == 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "\"\": expected all or device numbers such as 0,1");
      return FALSE;
    }
  *devices = g_steal_pointer (&list);
  *count = n;
  return TRUE;
}

void
ss_backend_free (SsBackend *backend)
{
  if (backend == NULL)
    return;
#if SHARPSKY_HAVE_CUDA
  close_cuda (backend);
#endif
  g_free (backend->device);
  g_free (backend);
}

const char *
ss_backend_get_name (const SsBackend *backend)
{
  return backend->use_cuda ? "cuda" : "cpu";
}

const char *
ss_backend_get_device (const SsBackend *backend)
{
  return backend->device;
}

gboolean
ss_backend_cuda_falls_back (const SsBackend *backend, const GError *cuda_error)
{
  return g_error_matches (cuda_error, SS_ERROR, SS_ERROR_UNSUPPORTED)
         || (backend->requested == SS_BACKEND_AUTO
             && (g_error_matches (cuda_error, SS_ERROR, SS_ERROR_OUT_OF_MEMORY)
                 || g_error_matches (cuda_error, SS_ERROR, SS_ERROR_TOO_LARGE)));
}

static gboolean
check_problem (const SsProblem *problem, GError **error)
{
  if (problem == NULL || problem->op == NULL || problem->y == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "no problem to solve");
      return FALSE;
    }
  return TRUE;
}

/* One solve on the backend, as the solver itself does it. */
static gboolean
solve_once (gpointer data, const SsProblem *problem, const SsSolveParams *params,
            SsReportFunc report, gpointer user_data, GCancellable *cancellable,
            SsSolveResult *result, GError **error)
{
#if SHARPSKY_HAVE_CUDA
  SsBackend *backend = data;
  if (backend->use_cuda && !ss_solver_has_cuda (ss_solver_info (params->kind)))
    {
      /* Not every solver has a GPU form yet: the CPU gives the same answer. */
      gboolean ok = ss_cpu_solve (problem, params, report, user_data, cancellable, result, error);
      g_free (result->warning);
      result->warning = g_strdup_printf ("%s has no CUDA implementation; solved on the CPU",
                                         ss_solver_kind_to_string (params->kind));
      return ok;
    }
  if (backend->use_cuda)
    {
      g_autoptr (GError) cuda_error = NULL;
      if (ss_cuda_solve (backend->cuda[0], problem, params, report, user_data, cancellable, result,
                         &cuda_error))
        return TRUE;
      if (!ss_backend_cuda_falls_back (backend, cuda_error))
        {
          g_propagate_error (error, g_steal_pointer (&cuda_error));
          return FALSE;
        }
      g_autofree char *warning = g_strdup_printf ("%s; solved on the CPU instead",
                                                  cuda_error->message);
      /* An option with no GPU form is expected; running out of GPU is news. */
      if (!g_error_matches (cuda_error, SS_ERROR, SS_ERROR_UNSUPPORTED))
        g_warning ("%s", warning);
      ss_solve_result_clear (result);
      gboolean ok = ss_cpu_solve (problem, params, report, user_data, cancellable, result, error);
      result->warning = g_steal_pointer (&warning);
      return ok;
    }
#else
  (void) data;   /* a build without CUDA solves every backend on the CPU */
#endif
  return ss_cpu_solve (problem, params, report, user_data, cancellable, result, error);
}

/* The pixel-ℓ1 rules' floor: on the device for a CUDA backend (a frame's
 * spectrum and RL's setup transforms there), else, or if that fails, on the
 * host. */
static double
measure_floor (gpointer data, const SsProblem *problem, const SsSolveParams *params)
{
#if SHARPSKY_HAVE_CUDA
  SsBackend *backend = data;
  double floor;
  if (backend->use_cuda && ss_cuda_rl_floor (backend->cuda[0], problem, params, &floor, NULL))
    return floor;
#endif
  return ss_pixel_l1_floor (problem, params);
}

/* The solve without the result's checks: `auto`'s candidates (a diverged
 * one is not chosen, its held-out error not finite) and a batch's runs
 * (checked together, ss-backend-batch.c). */
gboolean
ss_backend_solve_on (gpointer data, const SsProblem *problem, const SsSolveParams *params,
                     SsReportFunc report, gpointer user_data, GCancellable *cancellable,
                     SsSolveResult *result, GError **error)
{
  SsBackend *backend = data;
  if (!check_problem (problem, error) || !ss_solve_params_validate (params, error))
    return FALSE;
  /* `auto`: its candidates, each with every rule (ss-solver-choice.h). */
  if (ss_solver_info (params->kind)->n_candidates > 0)
    return ss_solver_choice_solve (ss_backend_solve_on, backend, problem, params,
                                   SS_SOLVER_CHOICE_CROP, report, user_data, cancellable, result,
                                   error);
  /* A real image's floor, or the hold-out rule (ss-pixel-l1.h). */
  if (ss_pixel_l1_applies (problem, params))
    return ss_pixel_l1_solve (solve_once, measure_floor, backend, problem, params, report,
                              user_data, cancellable, result, error);
  return solve_once (backend, problem, params, report, user_data, cancellable, result, error);
}

gboolean
ss_backend_finish_result (SsSolveResult *result, const SsProblem *problem, GError **error)
{
  gsize n = (gsize) problem->op->width * problem->op->height;
  if (!ss_solve_result_check_finite (result, n, error))
    return FALSE;
  ss_solve_result_warn_if_flat (result, problem->y, n);
  return TRUE;
}

gboolean
ss_backend_solve (SsBackend *backend, const SsProblem *problem, const SsSolveParams *params,
                  SsReportFunc report, gpointer user_data, GCancellable *cancellable,
                  SsSolveResult *result, GError **error)
{
  return ss_backend_solve_on (backend, problem, params, report, user_data, cancellable, result,
                              error)
         && ss_backend_finish_result (result, problem, error);
}

/* The padding margin of a bench problem: its PSF's reach (the row box of
 * width 5 both backends blur with), measured on a small canvas since the
 * reach does not depend on the image size. */
static int
bench_margin (const SsBenchParams *params, GError **error)
{
  if (params->margin >= 0)
    return params->margin;
  SsPsfSpec psf = { .kind = SS_PSF_BOX_ROW, .size = 5 };
  return ss_boundary_margin_for_psf (&psf, MIN (params->width, 256), MIN (params->height, 256),
                                     error);
}

gboolean
ss_backend_bench (SsBackend *backend, const SsBenchParams *params, SsBenchResult *result,
                  GError **error)
{
  SsBenchParams padded = *params;
  int margin = 0;
  if (params->boundary != SS_BOUNDARY_PERIODIC)
    {
      margin = bench_margin (params, error);
      if (margin < 0
          || !ss_boundary_padded_size (params->width, params->height, params->boundary, margin,
                                       &padded.width, &padded.height, error))
        return FALSE;
    }
  gboolean ok;
#if SHARPSKY_HAVE_CUDA
  if (backend->use_cuda)
    ok = ss_cuda_bench (backend->cuda[0], &padded, result, error);
  else
#endif
    ok = ss_cpu_bench (&padded, result, error);
  result->margin = margin;
  return ok;
}

static void
device_info_clear (gpointer data)
{
  SsDeviceInfo *info = data;
  g_free (info->model);
  g_free (info->name);
  g_free (info->unusable);
}

GArray *
ss_backend_list_devices (void)
{
  GArray *list = g_array_new (FALSE, TRUE, sizeof (SsDeviceInfo));
  g_array_set_clear_func (list, device_info_clear);
#if SHARPSKY_HAVE_CUDA
  int count = ss_cuda_device_count ();
  for (int i = 0; i < count; i++)
    {
      SsDeviceInfo info = { .index = i };
      g_autoptr (GError) error = NULL;
      if (!ss_cuda_device_query (i, &info.model, &info.name, &info.free_bytes,
                                 &info.total_bytes, &error))
        info.unusable = g_strdup (error->message);
      g_array_append_val (list, info);
    }
#endif
  return list;
}

int
ss_backend_count_devices (void)
{
#if SHARPSKY_HAVE_CUDA
  return ss_cuda_device_count ();
#else
  return 0;
#endif
}

char *
ss_backend_describe_devices (void)
{
  GString *text = g_string_new (NULL);
  g_autofree char *cpu = ss_cpu_device_name ();
  g_string_append_printf (text, "cpu: %s\n", cpu);
#if SHARPSKY_HAVE_CUDA
  g_autoptr (GArray) devices = ss_backend_list_devices ();
  if (devices->len == 0)
    g_string_append (text, "cuda: no device found\n");
  for (guint i = 0; i < devices->len; i++)
    {
      const SsDeviceInfo *d = &g_array_index (devices, SsDeviceInfo, i);
      if (d->unusable)
        {
          g_string_append_printf (text, "cuda %d: unusable: %s\n", d->index, d->unusable);
          continue;
        }
      g_autofree char *free_text = g_format_size_full (d->free_bytes, G_FORMAT_SIZE_IEC_UNITS);
      g_autofree char *total_text = g_format_size_full (d->total_bytes, G_FORMAT_SIZE_IEC_UNITS);
      g_string_append_printf (text, "cuda %d: %s, %s free of %s\n", d->index, d->name,
                              free_text, total_text);
    }
#else
  g_string_append (text, "cuda: not built (configure with -Dcuda=enabled)\n");
#endif
  return g_string_free (text, FALSE);
}

gboolean
ss_backend_kind_may_use_gpu (SsBackendKind kind)
{
  /* No device is asked about: the first CUDA call of a process starts the
   * driver (measured: prepare grew by 0.25 s on the H100, with no saving
   * in the solve). Where no GPU turns up, the CPU makes the spectrum when
   * it solves (ss_operator_realize), as it would have before. */
  return SHARPSKY_HAVE_CUDA && kind != SS_BACKEND_CPU;
}

SsOperator *
ss_backend_kind_new_operator (SsBackendKind kind, float *kernel, const float *observed,
                              int width, int height, GError **error)
{
  if (ss_backend_kind_may_use_gpu (kind))
    return ss_operator_new_deferred_take (kernel, observed, width, height, error);
  g_autofree float *owned = kernel;
  return ss_operator_new_from_kernel (kernel, observed, width, height, error);
}
