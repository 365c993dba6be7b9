/* ss-cuda-iterate.cu: the iteration loop shared by the iterative solvers.
 *
 * The host only enqueues work. Between report points nothing waits on the
 * device: plain iterations go out as CUDA graphs of up to SS_CUDA_GRAPH_CHUNK
 * iterations (or as plain launches when graphs are off; the graphs stay
 * with the iterator, so a second run of the same solver reuses them), the last two
 * iterations of an interval write the estimate and its change, and the report
 * work and an asynchronous copy into one of two pinned slots follow. The host
 * then waits for the PREVIOUS report's copy only, runs its callback while the
 * device computes the next interval, and checks for cancellation; a cancel
 * stops the run at the report already enqueued, within one interval.
 */
#include "ss-cuda-internal.h"

#include <string.h>

static gboolean
capture_plain (SsCudaContext *ctx, SsCudaIterator *it, int count, GError **error)
{
  cudaGraph_t graph = NULL;
  if (!CUDA_OK (cudaStreamBeginCapture (ctx->stream, cudaStreamCaptureModeThreadLocal)))
    return FALSE;
  gboolean ok = TRUE;
  for (int i = 0; i < count && ok; i++)
    ok = it->iterate (it->solver, 0, error);
  cudaError_t ended = cudaStreamEndCapture (ctx->stream, &graph);
  if (!ok)
    {
      cudaGetLastError ();
      if (graph)
        cudaGraphDestroy (graph);
      return FALSE;
    }
  if (!CUDA_OK (ended))
    return FALSE;
  ok = CUDA_OK (cudaGraphInstantiate (&it->graphs[count], graph, 0));
  cudaGraphDestroy (graph);
  if (!ok)
    it->graphs[count] = NULL;
  return ok;
}

gboolean
ss_cuda_iterator_enqueue_plain (SsCudaContext *ctx, SsCudaIterator *it, int count,
                                GError **error)
{
  if (!ctx->use_graphs || !it->capturable)
    {
      for (int i = 0; i < count; i++)
        if (!it->iterate (it->solver, 0, error))
          return FALSE;
      return TRUE;
    }
  while (count > 0)
    {
      int chunk = MIN (count, SS_CUDA_GRAPH_CHUNK);
      if (it->graphs[chunk] == NULL && !capture_plain (ctx, it, chunk, error))
        return FALSE;
      if (!CUDA_OK (cudaGraphLaunch (it->graphs[chunk], ctx->stream)))
        return FALSE;
      count -= chunk;
    }
  return TRUE;
}

void
ss_cuda_iterator_clear (SsCudaIterator *it)
{
  for (int i = 0; i <= SS_CUDA_GRAPH_CHUNK; i++)
    if (it->graphs[i])
      cudaGraphExecDestroy (it->graphs[i]);
  memset (it->graphs, 0, sizeof it->graphs);
}

static double
now_seconds (void)
{
  return (double) g_get_monotonic_time () * 1e-6;
}

/* Returns TRUE when the iterator's stopping rule ends the run here. */
static gboolean
deliver (SsCudaIterator *it, SsCudaReporter *reporter, const void *slot, int iteration,
         gboolean final, double start, SsReportFunc report, gpointer user_data,
         SsCudaRunOutcome *outcome)
{
  SsReport rep;
  memset (&rep, 0, sizeof rep);
  rep.iteration = it->iteration_offset + iteration;
  rep.elapsed = now_seconds () - start;
  ss_cuda_reporter_fill (reporter, slot, &rep);
  gboolean stop = it->stop != NULL && it->stop (it->solver, &rep, (const double *) slot);
  rep.final = (final || stop) && !it->provisional;
  if (report)
    report (&rep, user_data);
  outcome->last = rep;
  outcome->last.preview = NULL;
  outcome->iterations = iteration;
  return stop;
}

gboolean
ss_cuda_run_iterations (SsCudaContext *ctx, SsCudaIterator *it, SsCudaReporter *reporter,
                        const SsSolveParams *params, SsReportFunc report, gpointer user_data,
                        GCancellable *cancellable, double start, SsCudaRunOutcome *outcome,
                        GError **error)
{
  memset (outcome, 0, sizeof *outcome);
  const int total = params->iterations, every = MAX (params->report_every, 1);
  size_t stride = (reporter->block_bytes + 255) & ~(size_t) 255;
  char *pinned = (char *) ss_cuda_pinned (ctx, 2 * stride, error);
  if (pinned == NULL)
    return FALSE;

  cudaEvent_t copied[2] = { NULL, NULL };
  gboolean ok = CUDA_OK (cudaEventCreateWithFlags (&copied[0], cudaEventDisableTiming))
                && CUDA_OK (cudaEventCreateWithFlags (&copied[1], cudaEventDisableTiming));

  int done = 0, index = 0, pending = -1, pending_iteration = 0;
  while (ok && done < total)
    {
      int end = MIN (done + every, total), length = end - done;
      int slot = index & 1;
      ok = ss_cuda_reporter_reset (reporter, error)
           && ss_cuda_iterator_enqueue_plain (ctx, it, MAX (length - 2, 0), error)
           && (length < 2 || it->iterate (it->solver, SS_ITER_WRITE_ESTIMATE, error))
           && it->iterate (it->solver,
                            SS_ITER_WRITE_ESTIMATE | SS_ITER_DELTA
                              | (end == total ? SS_ITER_LAST : 0),
                            error)
           && ss_cuda_reporter_enqueue (reporter, it->estimate (it->solver), error)
           && CUDA_OK (cudaMemcpyAsync (pinned + slot * stride, reporter->block,
                                        reporter->block_bytes, cudaMemcpyDeviceToHost,
                                        ctx->stream))
           && CUDA_OK (cudaEventRecord (copied[slot], ctx->stream));
      if (!ok)
        break;
      if (pending >= 0)
        {
          ok = CUDA_OK (cudaEventSynchronize (copied[pending]));
          if (!ok)
            break;
          deliver (it, reporter, pinned + pending * stride, pending_iteration,
                   pending_iteration == total, start, report, user_data, outcome);
        }
      pending = slot;
      pending_iteration = end;
      done = end;
      index++;
      if (it->stop != NULL)
        {
          /* A rule reads this report before the next interval moves the estimate. */
          ok = CUDA_OK (cudaEventSynchronize (copied[pending]));
          gboolean stop = ok && deliver (it, reporter, pinned + pending * stride,
                                         pending_iteration, pending_iteration == total, start,
                                         report, user_data, outcome);
          pending = -1;
          if (stop)
            break;
        }
      if (g_cancellable_is_cancelled (cancellable))
        {
          outcome->cancelled = TRUE;
          break;
        }
    }
  if (ok && pending >= 0)
    {
      ok = CUDA_OK (cudaEventSynchronize (copied[pending]));
      if (ok)
        deliver (it, reporter, pinned + pending * stride, pending_iteration,
                 pending_iteration == total, start, report, user_data, outcome);
    }
  if (!ok)
    cudaStreamSynchronize (ctx->stream);
  for (int i = 0; i < 2; i++)
    if (copied[i])
      cudaEventDestroy (copied[i]);
  return ok;
}
