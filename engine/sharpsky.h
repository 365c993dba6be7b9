/* sharpsky.h: the engine's public interface, for the app, the CLI and tests. */
#pragma once

#include "ss-error.h"
#include "ss-header.h"
#include "ss-image.h"
#include "ss-psf.h"
#include "ss-model.h"
#include "ss-scaling.h"
#include "ss-solver.h"
#include "ss-backend.h"
#include "ss-bench.h"
#include "ss-mem.h"
#include "ss-report.h"
#include "ss-fits.h"
#include "ss-png.h"
#include "ss-io.h"
#include "ss-output.h"
