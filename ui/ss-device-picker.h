/* ss-device-picker.h: where a solve runs: Automatic, the CPU, or one GPU.
 *
 * A drop-down of "Automatic", "CPU" and one row per usable CUDA device the
 * engine lists (ss_backend_list_devices), "GPU N: MODEL", N numbered as
 * `sharpsky-cli info` and --devices number it. Without a CUDA build or a
 * GPU only Automatic and CPU are offered: never a row that cannot run. The
 * window finds the devices off the main thread and hands them over with
 * ss_device_picker_set_devices; until then only Automatic and CPU show.
 *
 * The choice is a backend kind and a device: (AUTO, -1), (CPU, -1), or
 * (CUDA, N) for the GPU numbered N, solved with
 * ss_backend_new_with_devices (CUDA, {N}, 1).
 *
 * Signal: changed () whenever the choice changes (the user's or a set).
 */
#pragma once

#include <gtk/gtk.h>
#include "sharpsky.h"

G_BEGIN_DECLS

#define SS_TYPE_DEVICE_PICKER (ss_device_picker_get_type ())
G_DECLARE_FINAL_TYPE (SsDevicePicker, ss_device_picker, SS, DEVICE_PICKER, GtkWidget)

GtkWidget *ss_device_picker_new (void);

/* DEVICES: SsDeviceInfo as ss_backend_list_devices gives them (NULL: none);
 * unusable ones are left out. The choice is kept when its row stays; a GPU
 * set before the list came is chosen now if it is listed. */
void ss_device_picker_set_devices (SsDevicePicker *self, GArray *devices);
/* TRUE once the devices have been set (found, or found to be none). */
gboolean ss_device_picker_has_devices (SsDevicePicker *self);

/* DEVICE: the CUDA device with CUDA, else -1. */
void ss_device_picker_get_choice (SsDevicePicker *self, SsBackendKind *kind, int *device);
/* CUDA with DEVICE -1 means device 0, as ss_backend_new. A GPU that is not
 * listed cannot be shown: Automatic is chosen instead (and, before the list
 * came, the GPU once it is listed). */
void ss_device_picker_set_choice (SsDevicePicker *self, SsBackendKind kind, int device);

/* The drop-down itself (its model is a GtkStringList of the rows' labels),
 * for a label's mnemonic and for tests. */
GtkDropDown *ss_device_picker_get_drop_down (SsDevicePicker *self);

G_END_DECLS
