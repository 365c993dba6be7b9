/* ss-fits-guard.c: checks made before cfitsio sees a file, so that a damaged
 * or hostile file is refused with a message instead of crashing, stalling or
 * exhausting memory inside cfitsio (found by tests/fuzz; the replayed corpus
 * is tests/fuzz/corpus). Used by ss-fits.c (ss_fits_read). */
#include "ss-fits-private.h"
#include "ss-error.h"
#include "ss-header.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Headers checked before cfitsio parses them                                */
/*                                                                           */
/* cfitsio 4.2 can die while merely moving to a damaged HDU, before we get   */
/* any say (found by tests/fuzz): a compressed-image header with ZTILEn = 0  */
/* or a Rice block size of 0 divides by zero (fixed in cfitsio 4.6), and an  */
/* integer keyword whose value is a long non-number overflows a message      */
/* buffer in ffc2j (glibc aborts). So every header in the file is read here  */
/* first, and such headers are refused with a message.                      */

#define MAX_SCANNED_HDUS 100000
/* ffc2j copies up to 30 characters of a bad value into a message with room
 * for 28: a shorter token is safe whatever it holds. */
#define LONGEST_SAFE_BAD_VALUE 28

/* The header at OFFSET as cards; *END receives where its last block ends,
 * or -1 when the file ends before its END card (the cards read are still
 * returned: cfitsio parses them before it notices). */
static SsHeader *
read_raw_header (FILE *file, goffset offset, goffset *end)
{
  SsHeader *header = ss_header_new ();
  *end = -1;
  if (fseeko (file, offset, SEEK_SET) != 0)
    return header;
  char card[FITS_CARD + 1] = "";
  goffset position = offset;
  while (fread (card, 1, FITS_CARD, file) == FITS_CARD)
    {
      position += FITS_CARD;
      if (ss_fits_is_end_card (card))
        {
          *end = (position - offset + FITS_BLOCK - 1) / FITS_BLOCK * FITS_BLOCK + offset;
          break;
        }
      /* NUL bytes would cut the card short: blanks keep the columns */
      for (int i = 0; i < FITS_CARD; i++)
        if (card[i] == '\0')
          card[i] = ' ';
      ss_header_add_card (header, card);
    }
  return header;
}

static gboolean
header_integer (const SsHeader *header, const char *keyword, gint64 *value)
{
  double number = 0.0;
  if (!ss_header_get_double (header, keyword, &number) || !(fabs (number) < 9e18))
    return FALSE;
  *value = (gint64) number; /* cfitsio truncates reals read as integers */
  return TRUE;
}

/* A structural card (the ones cfitsio reads as numbers) whose unquoted value
 * is long and not a number: the text for a message, or NULL. */
static gboolean
is_commentary_card (const char *card)
{
  return strncmp (card, "HISTORY ", 8) == 0 || strncmp (card, "COMMENT ", 8) == 0
         || strncmp (card, "CONTINUE", 8) == 0 || strncmp (card, "        ", 8) == 0;
}

/* The unquoted value token of a "KEYWORD =" CARD, read from column 10 as
 * cfitsio does, or NULL for a quoted or absent value. */
static char *
card_value_token (const char *card)
{
  if (strlen (card) < 9 || card[8] != '=' || is_commentary_card (card))
    return NULL;
  const char *value = card + 9;
  while (*value == ' ')
    value++;
  if (*value == '\'')
    return NULL;
  const char *slash = strchr (value, '/');
  return g_strstrip (slash ? g_strndup (value, slash - value) : g_strdup (value));
}

static gboolean
is_number (const char *token)
{
  g_autofree char *copy = g_strdup (token);
  for (char *p = copy; *p; p++)
    if (*p == 'D' || *p == 'd')
      *p = 'E';
  char *end = NULL;
  g_ascii_strtod (copy, &end);
  return end != copy && *end == '\0';
}

/* "(re, im)" with two numbers. */
static gboolean
is_complex (const char *token)
{
  gsize length = strlen (token);
  if (length < 5 || token[0] != '(' || token[length - 1] != ')')
    return FALSE;
  g_autofree char *inside = g_strndup (token + 1, length - 2);
  g_auto (GStrv) parts = g_strsplit (inside, ",", -1);
  return g_strv_length (parts) == 2 && is_number (g_strstrip (parts[0])) && is_number (g_strstrip (parts[1]));
}

/* Whether cfitsio reads KEYWORD's value as a number or a column name on its
 * own when it opens or reads an HDU: the structural and scaling keywords,
 * and the table (T...n) and compression (Z...) families. Other cards are
 * only ever copied, so a non-standard value there (DSS plates write
 * "SKEW = a, b") is harmless. */
static gboolean
is_parsed_by_cfitsio (const char *card)
{
  static const char *const keys[] = { "SIMPLE", "BITPIX", "EXTEND", "PCOUNT", "GCOUNT",
                                      "GROUPS", "BSCALE", "BZERO", "BLANK", "TFIELDS", "THEAP" };
  char keyword[9] = { 0 };
  memcpy (keyword, card, 8);
  g_strchomp (keyword);
  for (gsize i = 0; i < G_N_ELEMENTS (keys); i++)
    if (strcmp (keyword, keys[i]) == 0)
      return TRUE;
  gsize length = strlen (keyword);
  gboolean indexed = length > 0 && g_ascii_isdigit (keyword[length - 1]);
  return keyword[0] == 'Z' || g_str_has_prefix (keyword, "NAXIS")
         || (keyword[0] == 'T' && indexed);
}

/* A card cfitsio parses whose unquoted value is long and neither a number
 * nor a complex pair (never valid FITS; cfitsio overflows a buffer on it):
 * the text for a message, or NULL. */
static char *
bad_long_value (const SsHeader *header)
{
  for (guint i = 0; i < header->cards->len; i++)
    {
      const char *card = g_ptr_array_index (header->cards, i);
      if (!is_parsed_by_cfitsio (card))
        continue;
      g_autofree char *token = card_value_token (card);
      if (token && strlen (token) > LONGEST_SAFE_BAD_VALUE && !is_number (token) && !is_complex (token))
        {
          g_autofree char *keyword = g_strchomp (g_strndup (card, 8));
          return g_strdup_printf ("%s has a malformed value", keyword);
        }
    }
  return NULL;
}

/* The integer value of a "KEYWORD = value" CARD (cfitsio truncates reals
 * read as integers); FALSE when it is not a plain number. */
static gboolean
card_integer (const char *card, gint64 *value)
{
  g_autofree char *token = card_value_token (card);
  if (token == NULL || !is_number (token))
    return FALSE;
  for (char *p = token; *p; p++)
    if (*p == 'D' || *p == 'd')
      *p = 'E';
  double number = g_ascii_strtod (token, NULL);
  if (!(fabs (number) < 9e18))
    return FALSE;
  *value = (gint64) number;
  return TRUE;
}

/* Every card named KEYWORD (cfitsio does not always find the first of
 * duplicates) holds an integer in [LOW, HIGH]; FALSE if one does not. */
static gboolean
every_card_in_range (const SsHeader *header, const char *keyword, gint64 low, gint64 high)
{
  gsize length = strlen (keyword);
  for (guint i = 0; i < header->cards->len; i++)
    {
      const char *card = g_ptr_array_index (header->cards, i);
      gint64 value = 0;
      if (strncmp (card, keyword, length) != 0 || (card[length] != ' ' && card[length] != '='))
        continue;
      if (!card_integer (card, &value) || value < low || value > high)
        return FALSE;
    }
  return TRUE;
}

/* What cfitsio would divide by zero on in a compressed image's header, or
 * NULL. Unreadable values are refused too: cfitsio reads them as 0. */
static char *
bad_compression_keys (const SsHeader *header)
{
  gint64 axes = 0;
  if (!header_integer (header, "ZNAXIS", &axes)
      || !every_card_in_range (header, "ZNAXIS", 1, MAX_COMPRESS_DIM))
    return g_strdup ("invalid ZNAXIS");
  for (int i = 1; i <= axes; i++)
    {
      g_autofree char *axis_key = g_strdup_printf ("ZNAXIS%d", i);
      g_autofree char *tile_key = g_strdup_printf ("ZTILE%d", i);
      gint64 length = 0;
      if (!header_integer (header, axis_key, &length) || !every_card_in_range (header, axis_key, 1, G_MAXINT64))
        return g_strdup_printf ("invalid %s", axis_key);
      if (!every_card_in_range (header, tile_key, 1, G_MAXLONG))
        return g_strdup_printf ("invalid %s", tile_key);
    }
  g_autofree char *type = ss_header_get_string (header, "ZCMPTYPE");
  if (type && (g_ascii_strcasecmp (type, "RICE_1") == 0 || g_ascii_strcasecmp (type, "RICE_ONE") == 0))
    {
      /* ZVAL1 is the block size (ZVAL2 the bytes a pixel, swapped back by
       * cfitsio when both are given the wrong way round, still >= 1). */
      gint64 block = 0;
      if (!header_integer (header, "ZVAL1", &block) || !every_card_in_range (header, "ZVAL1", 1, G_MAXINT)
          || !every_card_in_range (header, "ZVAL2", G_MININT, G_MAXINT))
        return g_strdup ("invalid Rice parameters (ZVAL1, ZVAL2)");
    }
  return NULL;
}

/* Bytes of the data unit HEADER describes (FITS 4.0 §4.4.1.1), or -1. */
static goffset
raw_data_size (const SsHeader *header)
{
  gint64 bitpix = 0, naxis = 0, pcount = 0, gcount = 1;
  if (!header_integer (header, "BITPIX", &bitpix) || !header_integer (header, "NAXIS", &naxis)
      || naxis < 0 || naxis > 999)
    return -1;
  header_integer (header, "PCOUNT", &pcount);
  header_integer (header, "GCOUNT", &gcount);
  if (naxis == 0)
    return 0;
  g_autofree char *groups = ss_header_get_string (header, "GROUPS");
  guint64 product = 1;
  for (int i = 1; i <= naxis; i++)
    {
      g_autofree char *key = g_strdup_printf ("NAXIS%d", i);
      gint64 length = 0;
      if (!header_integer (header, key, &length) || length < 0)
        return -1;
      if (i == 1 && length == 0 && groups && strcmp (groups, "T") == 0)
        continue;                       /* random groups */
      if (!g_uint64_checked_mul (&product, product, (guint64) length))
        return -1;
    }
  guint64 bytes = 0;
  if (pcount < 0 || gcount < 0 || product > G_MAXINT64 - (guint64) pcount
      || !g_uint64_checked_mul (&bytes, (guint64) ABS (bitpix) / 8, (guint64) gcount)
      || !g_uint64_checked_mul (&bytes, bytes, product + (guint64) pcount) || bytes > G_MAXINT64 / 2)
    return -1;
  return (goffset) bytes;
}

static gboolean
has_keyword (const SsHeader *header, const char *keyword)
{
  gsize length = strlen (keyword);
  for (guint i = 0; i < header->cards->len; i++)
    {
      const char *card = g_ptr_array_index (header->cards, i);
      if (strncmp (card, keyword, length) == 0 && (card[length] == ' ' || card[length] == '='))
        return TRUE;
    }
  return FALSE;
}

static gboolean
block_starts_extension (FILE *file, goffset offset)
{
  char start[8];
  return fseeko (file, offset, SEEK_SET) == 0 && fread (start, 1, 8, file) == 8
         && memcmp (start, "XTENSION", 8) == 0;
}

/* Reads every header in the file and refuses the ones that would crash
 * cfitsio. Headers are followed by their data sizes; where that fails (a
 * size that cannot be worked out, or no extension where one should start)
 * every later block that starts with XTENSION is checked instead, since
 * cfitsio may still find it there. */
gboolean
ss_fits_check_raw_headers (const char *path, const char *name, goffset file_size, GError **error)
{
  FILE *file = g_fopen (path, "rb");
  if (file == NULL)
    return TRUE;                        /* cfitsio will say why */
  goffset offset = 0, end = 0;
  gboolean following = TRUE;
  g_autofree char *problem = NULL;
  for (int number = 0; number < MAX_SCANNED_HDUS && offset < file_size && problem == NULL; number++)
    {
      if (!following)
        {
          while (offset < file_size && !block_starts_extension (file, offset))
            offset += FITS_BLOCK;
          if (offset >= file_size)
            break;
        }
      g_autoptr (SsHeader) header = read_raw_header (file, offset, &end);
      problem = bad_long_value (header);
      /* cfitsio allocates a column description per field before it looks
       * further: a damaged TFIELDS of millions costs gigabytes (fuzzing). */
      if (problem == NULL && !every_card_in_range (header, "TFIELDS", 0, 999))
        problem = g_strdup ("invalid TFIELDS (FITS allows 0 to 999 columns)");
      if (problem == NULL && has_keyword (header, "ZIMAGE"))
        problem = bad_compression_keys (header);
      if (problem)
        {
          g_autofree char *where = following ? g_strdup_printf ("HDU %d", number)
                                             : g_strdup_printf ("header at byte %" G_GINT64_FORMAT,
                                                                (gint64) offset);
          g_set_error (error, SS_ERROR, SS_ERROR_FORMAT, "%s: %s: damaged header: %s", name, where, problem);
          break;
        }
      if (end < 0)
        break;                          /* no END: cfitsio stops here too */
      goffset size = raw_data_size (header);
      goffset next = size >= 0 && end <= G_MAXINT64 / 2 - size
                     ? end + (size + FITS_BLOCK - 1) / FITS_BLOCK * FITS_BLOCK : -1;
      if (following && next >= 0 && (next >= file_size || block_starts_extension (file, next)))
        offset = next;
      else
        {
          following = FALSE;
          offset = end;
        }
    }
  fclose (file);
  return problem == NULL;
}

/* ------------------------------------------------------------------------ */
/* Compressed tiles checked before cfitsio decodes them                      */
/*                                                                           */
/* cfitsio's tile decoders (4.2, and still 4.6) trust the compressed bytes:  */
/* - Rice (fits_rdecomp*) reads past a damaged tile's buffer and crashes     */
/*   (found by tests/fuzz);                                                  */
/* - PLIO (pl_l2pi) takes its read length and start from the stream;        */
/* - HCOMPRESS (fits_hdecompress) is not even told the input's length and    */
/*   takes the output size from the stream: a crafted tile writes past the  */
/*   output buffer.                                                          */
/* So before reading, every Rice and PLIO tile is walked as the decoder     */
/* would, bounds checked, with the parameters cfitsio itself parsed         */
/* (fitsfile->Fptr); HCOMPRESS is refused (funpack converts such files).    */
/* GZIP tiles are inflated once here (GIO's zlib decompressor) to make sure  */
/* each stream ends within its tile: on some damaged streams cfitsio's own   */
/* inflate loop grows its buffer for ever (a hang found by tests/fuzz).      */

/* Follows fits_rdecomp's reads over NX pixels coded in blocks of NBLOCK;
 * FALSE if it would read beyond the LENGTH bytes at BYTES. */
static gboolean
rice_stream_fits (const guchar *bytes, gsize length, gsize nx, int nblock, int bytepix)
{
  int fsbits = bytepix == 1 ? 3 : bytepix == 2 ? 4 : 5;
  int fsmax = bytepix == 1 ? 6 : bytepix == 2 ? 14 : 25;
  int bbits = 1 << fsbits;
  int first = bytepix == 1 ? 1 : bytepix == 2 ? 2 : 4; /* raw first pixel */
  if (nblock <= 0 || length < (gsize) first + 1)
    return FALSE;
  const guchar *c = bytes + first, *end = bytes + length;
  guint32 b = *c++;
  int nbits = 8;
#define NEXT_BYTE(into) G_STMT_START { if (c >= end) return FALSE; (into) = *c++; } G_STMT_END
  for (gsize i = 0; i < nx;)
    {
      guint32 byte = 0;
      nbits -= fsbits;
      while (nbits < 0)
        {
          NEXT_BYTE (byte);
          b = (b << 8) | byte;
          nbits += 8;
        }
      int fs = (int) (b >> nbits) - 1;
      b &= (1u << nbits) - 1;
      gsize imax = MIN (i + (gsize) nblock, nx);
      if (fs < 0)
        i = imax;                       /* all differences zero: no bits */
      else if (fs == fsmax)
        for (; i < imax; i++)           /* pixels stored directly */
          {
            int k = bbits - nbits;
            for (k -= 8; k >= 0; k -= 8)
              NEXT_BYTE (b);
            if (nbits > 0)
              {
                NEXT_BYTE (b);
                b &= (1u << nbits) - 1;
              }
            else
              b = 0;
          }
      else
        for (; i < imax; i++)           /* Rice codes */
          {
            while (b == 0)
              {
                nbits += 8;
                NEXT_BYTE (b);
              }
            int nzero = nbits - (int) g_bit_storage (b);
            nbits -= nzero + 1;
            b ^= 1u << nbits;
            nbits -= fs;
            while (nbits < 0)
              {
                NEXT_BYTE (byte);
                b = (b << 8) | byte;
                nbits += 8;
              }
            b &= (1u << nbits) - 1;
          }
    }
#undef NEXT_BYTE
  return TRUE;
}

/* Follows pl_l2pi's reads of the COUNT 16-bit words at WORDS; FALSE if it
 * would read outside them. */
static gboolean
plio_stream_fits (const short *words, gsize count)
{
  if (count < 5)
    return FALSE;
  /* the header, as pl_l2pi reads it (its arrays are 1-based) */
  long length, first;
  if (words[2] > 0)
    length = words[2], first = 4;
  else
    length = (long) words[4] * 32768 + words[3], first = words[1] + 1; /* (w4 << 15) + w3 */
  if (length <= 0)
    return TRUE;                        /* decodes nothing */
  if (first < 1 || (gsize) length > count)
    return FALSE;
  gboolean skip = FALSE;
  for (long ip = first; ip <= length; ip++)
    {
      if (skip)
        {
          skip = FALSE;
          continue;
        }
      /* opcode 1 takes the following word as data */
      if (words[ip - 1] / 4096 == 1)
        {
          if ((gsize) ip + 1 > count)
            return FALSE;
          skip = TRUE;
        }
    }
  return TRUE;
}

/* Pixels in tile ROW (0-based) of the compressed image: edge tiles are cut
 * to the image, as cfitsio does. */
static guint64
tile_length (const FITSfile *file, LONGLONG row)
{
  guint64 length = 1;
  for (int axis = 0; axis < file->zndim && axis < MAX_COMPRESS_DIM; axis++)
    {
      long tile = MAX (file->tilesize[axis], 1);
      LONGLONG tiles = (file->znaxis[axis] + tile - 1) / tile;
      LONGLONG index = tiles > 0 ? row % tiles : 0;
      row = tiles > 0 ? row / tiles : 0;
      length *= (guint64) MIN ((LONGLONG) tile, file->znaxis[axis] - index * tile);
    }
  return length;
}

/* Reads tile ROW's data in COLUMN (bytes, or 16-bit words for PLIO) into a
 * new buffer; NULL with *COUNT = 0 for a tile not stored in that column,
 * NULL with *COUNT < 0 when the tile is damaged. */
static gpointer
read_compressed_tile (fitsfile *fits, int column, LONGLONG row, gboolean words, LONGLONG heap,
                      LONGLONG *count)
{
  LONGLONG offset = 0;
  int status = 0;
  *count = 0;
  fits_read_descriptll (fits, column, row + 1, count, &offset, &status);
  if (status == 0 && *count == 0)
    return NULL;
  LONGLONG size = *count * (words ? 2 : 1);
  if (status != 0 || *count < 0 || offset < 0 || size > heap || offset > heap - size)
    {
      fits_clear_errmsg ();
      *count = -1;
      return NULL;
    }
  gpointer data = g_try_malloc ((gsize) MAX (size, 1));
  if (data)
    {
      if (words)
        {
          short null_word = 0;
          fits_read_col (fits, TSHORT, column, row + 1, 1, *count, &null_word, data, NULL, &status);
        }
      else
        {
          unsigned char null_byte = 0;
          fits_read_col (fits, TBYTE, column, row + 1, 1, *count, &null_byte, data, NULL, &status);
        }
    }
  if (data == NULL || status != 0)
    {
      fits_clear_errmsg ();
      g_free (data);
      *count = -1;
      return NULL;
    }
  return data;
}

/* TRUE if the gzip stream in LENGTH BYTES ends (trailer and CRC checked)
 * within CAPACITY bytes of output. cfitsio's inflate loop grows its buffer
 * without end on some damaged streams (found by tests/fuzz: a hang). The
 * output goes to a small scratch buffer: only its amount matters. */
static gboolean
gzip_stream_fits (const guchar *bytes, gsize length, guint64 capacity)
{
  g_autoptr (GZlibDecompressor) inflater = g_zlib_decompressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP);
  guchar scratch[65536];
  gsize in = 0;
  guint64 out = 0;
  for (;;)
    {
      gsize read = 0, written = 0;
      GConverterResult result = g_converter_convert (G_CONVERTER (inflater), bytes + in, length - in,
                                                     scratch, sizeof scratch, G_CONVERTER_INPUT_AT_END,
                                                     &read, &written, NULL);
      in += read;
      out += written;
      if (result == G_CONVERTER_ERROR || out > capacity)
        return FALSE;
      if (result == G_CONVERTER_FINISHED)
        return TRUE;
      if (read == 0 && written == 0)
        return FALSE;                   /* no progress: truncated stream */
    }
}

/* Checks the tile stored in COLUMN of row ROW as TYPE's data. */
static gboolean
tile_is_sound (fitsfile *fits, int column, int type, LONGLONG row, LONGLONG heap, gboolean *present)
{
  const FITSfile *file = fits->Fptr;
  LONGLONG count = 0;
  gpointer data = read_compressed_tile (fits, column, row, type == PLIO_1, heap, &count);
  *present = count != 0;
  if (data == NULL)
    return count == 0;
  guint64 pixels = tile_length (file, row);
  gboolean sound;
  if (type == PLIO_1)
    sound = plio_stream_fits (data, (gsize) count);
  else if (type == RICE_1)
    sound = rice_stream_fits (data, (gsize) count, pixels, file->rice_blocksize, file->rice_bytepix);
  else /* gzip: at most 8 bytes a pixel (doubles stored losslessly) */
    sound = gzip_stream_fits (data, (gsize) count, pixels * 8 + 64);
  g_free (data);
  return sound;
}

static const char *
compression_label (int type)
{
  return type == PLIO_1 ? "PLIO" : type == RICE_1 ? "Rice" : "gzip";
}

gboolean
ss_fits_check_compressed_tiles (fitsfile *fits, const char *name, GError **error)
{
  const FITSfile *file = fits->Fptr;
  int type = file->compress_type;
  if (type == HCOMPRESS_1)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_UNSUPPORTED,
                   "%s: HCOMPRESS_1 tile compression is not read (its decoder in cfitsio is unsafe "
                   "on damaged data); uncompress it first with funpack", name);
      return FALSE;
    }
  if (type != RICE_1 && type != PLIO_1 && type != GZIP_1 && type != GZIP_2)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_UNSUPPORTED, "%s: unsupported tile compression", name);
      return FALSE;
    }
  LONGLONG heap = ss_fits_read_key_longlong (fits, "PCOUNT");
  for (LONGLONG row = 0; row < file->numrows; row++)
    {
      gboolean present = FALSE, sound = TRUE;
      int failed = type;
      if (file->cn_compressed > 0)
        sound = tile_is_sound (fits, file->cn_compressed, type, row, heap, &present);
      /* a float tile that could not be quantized is gzipped in its own column */
      if (sound && !present && file->cn_gzip_data > 0)
        {
          failed = GZIP_1;
          sound = tile_is_sound (fits, file->cn_gzip_data, GZIP_1, row, heap, &present);
        }
      if (!sound)
        {
          g_set_error (error, SS_ERROR, SS_ERROR_FORMAT,
                       "%s: damaged compressed image: the %s data of tile %lld are corrupt",
                       name, compression_label (failed), row + 1);
          return FALSE;
        }
    }
  return TRUE;
}
