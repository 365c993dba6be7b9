/* ss-param-controls.h: one control per solver parameter, built from the
 * engine's parameter table; the rows the chosen solver does not read are
 * hidden. A new parameter appears here without a change to ui/. */
#pragma once

#include <gtk/gtk.h>
#include "sharpsky.h"

G_BEGIN_DECLS

#define SS_TYPE_PARAM_CONTROLS (ss_param_controls_get_type ())
G_DECLARE_FINAL_TYPE (SsParamControls, ss_param_controls, SS, PARAM_CONTROLS, GtkGrid)

SsParamControls *ss_param_controls_new (void);

/* Shows the rows KIND reads. */
void ss_param_controls_show_solver (SsParamControls *self, SsSolverKind kind);
/* Writes every parameter's control into PARAMS (kind untouched). */
void ss_param_controls_get (SsParamControls *self, SsSolveParams *params);
/* Sets every control from PARAMS, without emitting "changed". */
void ss_param_controls_set (SsParamControls *self, const SsSolveParams *params);
/* Parameters left to the data ("auto" ticked; bit 1 << SsParamId), for those
 * the table allows it. */
guint64 ss_param_controls_get_auto (SsParamControls *self);
void ss_param_controls_set_auto (SsParamControls *self, guint64 auto_params);

/* Commits a value typed into SPIN but not yet entered (Run pressed straight
 * after typing), as Enter would; a value set in code, of more digits than
 * the field shows, is left as it is (reading back the text would round it). */
void ss_spin_button_commit_typed (GtkSpinButton *spin);

G_END_DECLS
