/* ss-cli-json.h: a tiny writer for flat JSON objects, one per line.
 *
 * sharpsky-cli prints one JSON object per progress report and one summary;
 * that needs only objects of strings, numbers, booleans, nulls and arrays of
 * numbers or strings, so this is all it does. Strings are escaped (quotes, backslash,
 * control characters; invalid UTF-8 is repaired), numbers are written with
 * %.9g in the C locale, and NaN or infinities become null (JSON has no
 * spelling for them).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  GString *text;
  gboolean has_member;   /* a comma goes before the next member */
} SsJsonObject;

/* Starts "{". */
void ss_json_begin (SsJsonObject *object);
/* Members. A NULL string is written as null. */
void ss_json_add_string (SsJsonObject *object, const char *key, const char *value);
void ss_json_add_number (SsJsonObject *object, const char *key, double value);
void ss_json_add_int (SsJsonObject *object, const char *key, gint64 value);
void ss_json_add_bool (SsJsonObject *object, const char *key, gboolean value);
void ss_json_add_null (SsJsonObject *object, const char *key);
void ss_json_add_number_array (SsJsonObject *object, const char *key,
                               const double *values, gsize count);
void ss_json_add_string_array (SsJsonObject *object, const char *key,
                               const char *const *values, gsize count);
/* Closes the object and returns its text (no newline); OBJECT is emptied. */
char *ss_json_end (SsJsonObject *object);

/* Appends VALUE to OUT as a JSON string literal, quotes included. */
void ss_json_append_string (GString *out, const char *value);
/* Appends VALUE as a JSON number (%.9g, C locale) or null when not finite. */
void ss_json_append_number (GString *out, double value);

G_END_DECLS
