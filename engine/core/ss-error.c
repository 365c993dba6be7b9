/* ss-error.c */
#include "ss-error.h"

G_DEFINE_QUARK (sharpsky-error-quark, ss_error)
