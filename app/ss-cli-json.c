/* ss-cli-json.c: a tiny writer for flat JSON objects (see ss-cli-json.h). */
#include "ss-cli-json.h"

#include <math.h>

void
ss_json_append_string (GString *out, const char *value)
{
  if (value == NULL)
    {
      g_string_append (out, "null");
      return;
    }

  /* JSON text must be UTF-8; file names and engine messages need not be. */
  g_autofree char *valid = g_utf8_make_valid (value, -1);

  g_string_append_c (out, '"');
  for (const unsigned char *p = (const unsigned char *) valid; *p != '\0'; p++)
    {
      switch (*p)
        {
        case '"':  g_string_append (out, "\\\""); break;
        case '\\': g_string_append (out, "\\\\"); break;
        case '\b': g_string_append (out, "\\b"); break;
        case '\f': g_string_append (out, "\\f"); break;
        case '\n': g_string_append (out, "\\n"); break;
        case '\r': g_string_append (out, "\\r"); break;
        case '\t': g_string_append (out, "\\t"); break;
        default:
          if (*p < 0x20 || *p == 0x7f)
            g_string_append_printf (out, "\\u%04x", *p);
          else
            g_string_append_c (out, (char) *p);
        }
    }
  g_string_append_c (out, '"');
}

void
ss_json_append_number (GString *out, double value)
{
  if (!isfinite (value))
    {
      g_string_append (out, "null");
      return;
    }
  /* g_ascii_formatd: always a '.' decimal point, whatever the locale. */
  char buffer[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append (out, g_ascii_formatd (buffer, sizeof buffer, "%.9g", value));
}

void
ss_json_begin (SsJsonObject *object)
{
  object->text = g_string_new ("{");
  object->has_member = FALSE;
}

static void
append_key (SsJsonObject *object, const char *key)
{
  if (object->has_member)
    g_string_append_c (object->text, ',');
  object->has_member = TRUE;
  ss_json_append_string (object->text, key);
  g_string_append_c (object->text, ':');
}

void
ss_json_add_string (SsJsonObject *object, const char *key, const char *value)
{
  append_key (object, key);
  ss_json_append_string (object->text, value);
}

void
ss_json_add_number (SsJsonObject *object, const char *key, double value)
{
  append_key (object, key);
  ss_json_append_number (object->text, value);
}

void
ss_json_add_int (SsJsonObject *object, const char *key, gint64 value)
{
  append_key (object, key);
  g_string_append_printf (object->text, "%" G_GINT64_FORMAT, value);
}

void
ss_json_add_bool (SsJsonObject *object, const char *key, gboolean value)
{
  append_key (object, key);
  g_string_append (object->text, value ? "true" : "false");
}

void
ss_json_add_null (SsJsonObject *object, const char *key)
{
  append_key (object, key);
  g_string_append (object->text, "null");
}

void
ss_json_add_number_array (SsJsonObject *object, const char *key,
                          const double *values, gsize count)
{
  append_key (object, key);
  g_string_append_c (object->text, '[');
  for (gsize i = 0; i < count; i++)
    {
      if (i > 0)
        g_string_append_c (object->text, ',');
      ss_json_append_number (object->text, values[i]);
    }
  g_string_append_c (object->text, ']');
}

void
ss_json_add_string_array (SsJsonObject *object, const char *key, const char *const *values,
                          gsize count)
{
  append_key (object, key);
  g_string_append_c (object->text, '[');
  for (gsize i = 0; i < count; i++)
    {
      if (i > 0)
        g_string_append_c (object->text, ',');
      ss_json_append_string (object->text, values[i]);
    }
  g_string_append_c (object->text, ']');
}

char *
ss_json_end (SsJsonObject *object)
{
  g_string_append_c (object->text, '}');
  char *text = g_string_free (object->text, FALSE);
  object->text = NULL;
  object->has_member = FALSE;
  return text;
}
