/* ss-header.c: FITS header cards kept verbatim, with just enough parsing to
 * look values up and to tell structural cards from descriptive ones.
 *
 * Cards are stored as the reader found them (trailing blanks trimmed: they
 * carry no meaning in FITS). Parsing follows the FITS 4.0 fixed format:
 * keyword in columns 1-8, "= " in columns 9-10, then the value; string values
 * are quoted with '' standing for one quote. ESO HIERARCH cards
 * ("HIERARCH A B C = value") are understood for look-ups.
 */
#include "ss-header.h"

#include <math.h>
#include <string.h>

#define CARD_LENGTH 80
#define KEYWORD_LENGTH 8

SsHeader *
ss_header_new (void)
{
  SsHeader *header = g_new0 (SsHeader, 1);
  header->cards = g_ptr_array_new_with_free_func (g_free);
  header->history = g_ptr_array_new_with_free_func (g_free);
  return header;
}

static void
copy_strings (GPtrArray *to, const GPtrArray *from)
{
  for (guint i = 0; from && i < from->len; i++)
    g_ptr_array_add (to, g_strdup (g_ptr_array_index (from, i)));
}

SsHeader *
ss_header_copy (const SsHeader *header)
{
  SsHeader *copy = ss_header_new ();
  if (header)
    {
      copy_strings (copy->cards, header->cards);
      copy_strings (copy->history, header->history);
    }
  return copy;
}

void
ss_header_free (SsHeader *header)
{
  if (header == NULL)
    return;
  g_ptr_array_unref (header->cards);
  g_ptr_array_unref (header->history);
  g_free (header);
}

/* A card with trailing blanks (and any line end) removed, at most 80 chars. */
static char *
card_normalised (const char *card)
{
  char *copy = g_strndup (card, CARD_LENGTH);
  char *newline = strpbrk (copy, "\r\n");
  if (newline)
    *newline = '\0';
  return g_strchomp (copy);
}

void
ss_header_add_card (SsHeader *header, const char *card)
{
  g_return_if_fail (header != NULL && card != NULL);
  g_ptr_array_add (header->cards, card_normalised (card));
}

void
ss_header_add_history (SsHeader *header, const char *fmt, ...)
{
  g_return_if_fail (header != NULL && fmt != NULL);
  va_list args;
  va_start (args, fmt);
  g_ptr_array_add (header->history, g_strdup_vprintf (fmt, args));
  va_end (args);
}

static gboolean
is_hierarch_card (const char *card)
{
  return g_ascii_strncasecmp (card, "HIERARCH ", 9) == 0;
}

/* The card's keyword (upper case, blanks trimmed); for HIERARCH cards the
 * words between HIERARCH and '=' joined by single blanks. */
static char *
card_keyword (const char *card)
{
  if (is_hierarch_card (card))
    {
      const char *equals = strchr (card, '=');
      g_autofree char *words = equals ? g_strndup (card + 9, equals - (card + 9)) : g_strdup (card + 9);
      g_auto (GStrv) parts = g_strsplit_set (g_strstrip (words), " ", -1);
      GString *joined = g_string_new (NULL);
      for (int i = 0; parts[i]; i++)
        if (parts[i][0])
          g_string_append_printf (joined, "%s%s", joined->len ? " " : "", parts[i]);
      g_autofree char *text = g_string_free (joined, FALSE);
      return g_ascii_strup (text, -1);
    }
  g_autofree char *name = g_strndup (card, KEYWORD_LENGTH);
  return g_ascii_strup (g_strchomp (name), -1);
}

/* Where the value starts, or NULL for a card without a value ("KEY     = "
 * missing: COMMENT, HISTORY, blank cards). */
static const char *
card_value_start (const char *card)
{
  if (is_hierarch_card (card))
    {
      const char *equals = strchr (card, '=');
      return equals ? equals + 1 : NULL;
    }
  if (strlen (card) >= 10 && card[8] == '=' && card[9] == ' ')
    return card + 10;
  return NULL;
}

/* Parses the value text of a card: a quoted string (with '' unescaped,
 * trailing blanks trimmed) or the bare token before any '/' comment. */
static char *
parse_value (const char *value)
{
  while (*value == ' ')
    value++;
  if (*value == '\'')
    {
      GString *text = g_string_new (NULL);
      for (const char *p = value + 1; *p; p++)
        {
          if (*p == '\'')
            {
              if (p[1] != '\'')
                break;
              p++;
            }
          g_string_append_c (text, *p);
        }
      return g_strchomp (g_string_free (text, FALSE));
    }
  const char *slash = strchr (value, '/');
  char *token = slash ? g_strndup (value, slash - value) : g_strdup (value);
  return g_strstrip (token);
}

/* KEYWORD may be given with or without the "HIERARCH " prefix. */
static gboolean
keyword_matches (const char *card, const char *keyword)
{
  g_autofree char *name = card_keyword (card);
  g_autofree char *wanted = g_ascii_strup (keyword, -1);
  char *bare = g_strstrip (wanted);
  if (g_str_has_prefix (bare, "HIERARCH "))
    bare = g_strchug (bare + 9);
  return strcmp (name, bare) == 0;
}

static int
find_card (const SsHeader *header, const char *keyword)
{
  for (guint i = 0; header->cards && i < header->cards->len; i++)
    {
      const char *card = g_ptr_array_index (header->cards, i);
      if (card_value_start (card) && keyword_matches (card, keyword))
        return (int) i;
    }
  return -1;
}

guint
ss_header_remove (SsHeader *header, const char *keyword)
{
  guint removed = 0;
  for (int index; (index = find_card (header, keyword)) >= 0; removed++)
    g_ptr_array_remove_index (header->cards, (guint) index);
  return removed;
}

char *
ss_header_get_string (const SsHeader *header, const char *keyword)
{
  g_return_val_if_fail (keyword != NULL, NULL);
  if (header == NULL)
    return NULL;
  int index = find_card (header, keyword);
  if (index < 0)
    return NULL;
  return parse_value (card_value_start (g_ptr_array_index (header->cards, index)));
}

gboolean
ss_header_get_double (const SsHeader *header, const char *keyword, double *value)
{
  g_autofree char *text = ss_header_get_string (header, keyword);
  if (text == NULL || text[0] == '\0')
    return FALSE;
  /* FITS allows Fortran's D exponent (1.5D+03). */
  for (char *p = text; *p; p++)
    if (*p == 'D' || *p == 'd')
      *p = 'E';
  char *end = NULL;
  double number = g_ascii_strtod (text, &end);
  if (end == text || *end != '\0')
    return FALSE;
  if (value)
    *value = number;
  return TRUE;
}

/* Builds "KEYWORD = value / comment", clipped to 80 characters; keywords
 * longer than 8 characters or with blanks use the HIERARCH convention. */
static char *
make_card (const char *keyword, const char *value_text, const char *comment)
{
  g_autofree char *name = g_ascii_strup (keyword, -1);
  GString *card = g_string_new (NULL);
  if (strlen (name) > KEYWORD_LENGTH || strchr (name, ' '))
    g_string_append_printf (card, "HIERARCH %s = %s", name, value_text);
  else
    g_string_append_printf (card, "%-8s= %s", name, value_text);
  if (comment && comment[0])
    g_string_append_printf (card, " / %s", comment);
  if (card->len > CARD_LENGTH)
    g_string_truncate (card, CARD_LENGTH);
  g_autofree char *text = g_string_free (card, FALSE);
  return card_normalised (text);
}

static void
replace_or_append (SsHeader *header, const char *keyword, char *card)
{
  int index = find_card (header, keyword);
  if (index >= 0)
    {
      g_free (header->cards->pdata[index]);
      header->cards->pdata[index] = card;
    }
  else
    g_ptr_array_add (header->cards, card);
}

/* A FITS string value: quoted, '' for ', padded to the customary 8
 * characters, cut to fit one card (68 characters between the quotes at most). */
static char *
quote_string (const char *value)
{
  GString *text = g_string_new ("'");
  for (const char *p = value; *p && text->len < 68; p++)
    {
      char c = (*p >= 32 && *p <= 126) ? *p : '?';
      if (c == '\'')
        g_string_append (text, "''");
      else
        g_string_append_c (text, c);
    }
  while (text->len < 9)
    g_string_append_c (text, ' ');
  g_string_append_c (text, '\'');
  return g_string_free (text, FALSE);
}

void
ss_header_set_string (SsHeader *header, const char *keyword, const char *value, const char *comment)
{
  g_return_if_fail (header != NULL && keyword != NULL && value != NULL);
  g_autofree char *quoted = quote_string (value);
  replace_or_append (header, keyword, make_card (keyword, quoted, comment));
}

void
ss_header_set_double (SsHeader *header, const char *keyword, double value, const char *comment)
{
  g_return_if_fail (header != NULL && keyword != NULL);
  if (!isfinite (value))
    {
      /* FITS has no literal for NaN or infinity: store it as text. */
      ss_header_set_string (header, keyword, isnan (value) ? "NaN" : value > 0 ? "Inf" : "-Inf", comment);
      return;
    }
  char number[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd (number, sizeof number, "%.17G", value);
  /* Keep it a real (not an integer) for readers that care about the type. */
  if (!strpbrk (number, ".E"))
    g_strlcat (number, ".", sizeof number);
  g_autofree char *padded = g_strdup_printf ("%20s", number);
  replace_or_append (header, keyword, make_card (keyword, padded, comment));
}

static gboolean
has_digits_after (const char *name, const char *prefix)
{
  gsize length = strlen (prefix);
  if (strncmp (name, prefix, length) != 0 || name[length] == '\0')
    return FALSE;
  for (const char *p = name + length; *p; p++)
    if (!g_ascii_isdigit (*p))
      return FALSE;
  return TRUE;
}

gboolean
ss_header_card_is_structural (const char *card)
{
  static const char *const exact[] = {
    "SIMPLE", "BITPIX", "NAXIS", "EXTEND", "XTENSION", "PCOUNT", "GCOUNT", "END",
    "BZERO", "BSCALE", "BLANK", "DATAMIN", "DATAMAX", "CHECKSUM", "DATASUM",
    "INHERIT", "GROUPS", "THEAP", "TFIELDS",
    /* tile compression (FITS 4.0 §10) */
    "ZIMAGE", "ZSIMPLE", "ZTENSION", "ZEXTEND", "ZBITPIX", "ZNAXIS", "ZCMPTYPE",
    "ZMASKCMP", "ZBLOCKED", "ZPCOUNT", "ZGCOUNT", "ZHECKSUM", "ZDATASUM", "ZQUANTIZ",
    "ZDITHER0", "ZBLANK", "ZSCALE", "ZZERO", "ZTHEAP",
  };
  static const char *const numbered[] = {
    "NAXIS", "ZNAXIS", "ZTILE", "ZNAME", "ZVAL", "TTYPE", "TFORM", "TDIM", "TUNIT",
    "TNULL", "TSCAL", "TZERO",
  };
  if (card == NULL)
    return FALSE;
  if (is_hierarch_card (card))
    return FALSE;
  g_autofree char *name = card_keyword (card);
  for (gsize i = 0; i < G_N_ELEMENTS (exact); i++)
    if (strcmp (name, exact[i]) == 0)
      return TRUE;
  for (gsize i = 0; i < G_N_ELEMENTS (numbered); i++)
    if (has_digits_after (name, numbered[i]))
      return TRUE;
  return FALSE;
}

/* Keywords of the primary header that describe the file or one HDU of it,
 * not the observation: an image taken from an extension must not claim
 * them. */
static gboolean
is_hdu_identity (const char *keyword)
{
  static const char *const keys[] = {
    "EXTNAME", "EXTVER", "EXTLEVEL", "HDUNAME", "HDUVER", "HDULEVEL", "NEXTEND",
  };
  for (gsize i = 0; i < G_N_ELEMENTS (keys); i++)
    if (strcmp (keyword, keys[i]) == 0)
      return TRUE;
  return FALSE;
}

/* Whether CARD of a primary header passes to an extension that does not
 * define its keyword (HEADER, the extension's cards). */
static gboolean
is_inherited (const SsHeader *header, const char *card)
{
  if (card_value_start (card) == NULL || ss_header_card_is_structural (card))
    return FALSE;
  g_autofree char *keyword = card_keyword (card);
  return !is_hdu_identity (keyword) && find_card (header, keyword) < 0;
}

guint
ss_header_inherit (SsHeader *header, const SsHeader *primary)
{
  g_return_val_if_fail (header != NULL, 0);
  if (primary == NULL)
    return 0;
  g_autofree char *inherit = ss_header_get_string (header, "INHERIT");
  if (inherit != NULL && g_ascii_strcasecmp (inherit, "F") == 0)
    return 0;
  /* After XTENSION ... GCOUNT, where a reader of the header expects them. */
  guint at = 0;
  while (at < header->cards->len
         && ss_header_card_is_structural (g_ptr_array_index (header->cards, at)))
    at++;
  guint added = 0;
  gboolean last_taken = FALSE;
  for (guint i = 0; primary->cards && i < primary->cards->len; i++)
    {
      const char *card = g_ptr_array_index (primary->cards, i);
      /* A long string's CONTINUE cards go with the card they continue. */
      gboolean continues = g_str_has_prefix (card, "CONTINUE");
      last_taken = continues ? last_taken : is_inherited (header, card);
      if (last_taken)
        g_ptr_array_insert (header->cards, (gint) (at + added++), g_strdup (card));
    }
  return added;
}
