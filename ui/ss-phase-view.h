/* ss-phase-view.h: the phase-transition diagram on screen.
 *
 * The cells are the engine's heat map (ss_cs_phase_render, the raster
 * `sharpsky-cli cs --phase-transition` writes as its PNG), drawn at a whole
 * number of screen pixels a cell so its grid stays sharp; around it the
 * view adds what the PNG leaves to its text chunk: the δ and ρ axes with
 * their values, and a colour bar. Cells not yet done are light grey; a
 * tooltip gives a cell's numbers.
 */
#pragma once

#include <gtk/gtk.h>
#include "sharpsky.h"

G_BEGIN_DECLS

#define SS_TYPE_PHASE_VIEW (ss_phase_view_get_type ())
G_DECLARE_FINAL_TYPE (SsPhaseView, ss_phase_view, SS, PHASE_VIEW, GtkWidget)

GtkWidget *ss_phase_view_new (void);

/* A new grid, every cell pending. */
void ss_phase_view_set_grid (SsPhaseView *self, const double *deltas, int n_deltas,
                             const double *rhos, int n_rhos);
/* CELL is done (its index in the grid set last). */
void ss_phase_view_set_cell (SsPhaseView *self, const SsCsPhaseCell *cell);

/* The success fraction of each cell, row (ρ) by row, NAN where pending;
 * N_DELTAS and N_RHOS receive the grid's size. */
const double *ss_phase_view_get_fractions (SsPhaseView *self, int *n_deltas, int *n_rhos);

G_END_DECLS
