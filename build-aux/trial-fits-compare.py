#!/usr/bin/env python3
"""Does a deblurred OUTPUT keep its INPUT's header? (build-aux/trial-fits)

The input HDU is the first holding an image, as sharpsky-cli reads by default.
Checks: same width and height; every card of that HDU except the structural
ones (which must change) present verbatim; WCS values unchanged; HISTORY
added. Prints one line ending in OK, or the problems.
Usage: trial-fits-compare.py INPUT OUTPUT"""
import gzip
import re
import sys

STRUCTURAL = re.compile(r'^(SIMPLE|XTENSION|BITPIX|NAXIS\d*|EXTEND|PCOUNT|GCOUNT|BZERO|BSCALE|'
                        r'BLANK|DATAMIN|DATAMAX|CHECKSUM|DATASUM|INHERIT|TFIELDS|TTYPE\d+|'
                        r'TFORM\d+|TUNIT\d+|TDIM\d+|THEAP|Z[A-Z0-9]*)$')
WCS = re.compile(r'^(CRPIX|CRVAL|CDELT|CTYPE|CUNIT|CD\d_\d|PC\d_\d|CROTA)')


def headers(path):
    data = open(path, 'rb').read()
    if data[:2] == b'\x1f\x8b':
        data = gzip.decompress(data)
    offset = 0
    while offset + 2880 <= len(data):
        cards = []
        while offset + 2880 <= len(data):
            block = data[offset:offset + 2880].decode('ascii', 'replace')
            offset += 2880
            cards += [block[i:i + 80] for i in range(0, 2880, 80)]
            if any(c.startswith('END     ') for c in cards[-36:]):
                break
        cards = cards[:next((i for i, c in enumerate(cards) if c.startswith('END     ')),
                            len(cards))]
        values = {c[:8].strip(): c[10:].split('/')[0].strip() for c in cards if c[8:10] == '= '}
        yield cards, values

        def number(key, default=0):
            try:
                return int(values.get(key, default))
            except ValueError:
                return default
        size = 0
        if number('NAXIS'):
            size = abs(number('BITPIX')) // 8
            for axis in range(1, number('NAXIS') + 1):
                size *= number('NAXIS%d' % axis)
            size = (size + number('PCOUNT')) * number('GCOUNT', 1)
        offset += (size + 2879) // 2880 * 2880


def image_size(values):
    prefix = 'ZNAXIS' if values.get('ZIMAGE') == 'T' else 'NAXIS'
    try:
        axes = int(values.get(prefix, 0))
        sizes = [int(values[prefix + str(i)]) for i in range(1, axes + 1)]
    except (KeyError, ValueError):
        return None
    if axes == 0 or min(sizes) <= 0:
        return None
    return (sizes[0], sizes[1] if axes > 1 else 1)


def main(inp, outp):
    chosen = next(((c, v) for c, v in headers(inp) if image_size(v)), None)
    if chosen is None:
        return 'no image HDU in the input'
    in_cards, in_values = chosen
    out_cards, out_values = next(headers(outp))
    problems = []
    if image_size(in_values) != image_size(out_values):
        problems.append('size %s -> %s' % (image_size(in_values), image_size(out_values)))
    kept = set(c.rstrip() for c in out_cards)
    missing = [c.rstrip() for c in in_cards
               if c[:8].strip() and not STRUCTURAL.match(c[:8].strip()) and c.rstrip() not in kept]
    # fpack's default name for the compressed HDU is dropped, as cfitsio does.
    missing = [c for c in missing if not c.startswith("EXTNAME = 'COMPRESSED_IMAGE'")]
    if missing:
        problems.append('%d cards missing or changed, e.g. %s' % (len(missing), missing[:2]))
    changed = [k for k in in_values if WCS.match(k) and in_values[k] != out_values.get(k)]
    if changed:
        problems.append('WCS changed: %s' % changed)
    added = sum(c.startswith('HISTORY') for c in out_cards) - sum(c.startswith('HISTORY') for c in in_cards)
    if added <= 0:
        problems.append('no HISTORY added')
    size = image_size(in_values)
    return '%dx%d, %d cards, %d WCS, +%d HISTORY: %s' % (
        size[0], size[1], len(in_cards), sum(bool(WCS.match(k)) for k in in_values), added,
        '; '.join(problems) if problems else 'OK')


if __name__ == '__main__':
    print(main(sys.argv[1], sys.argv[2]))
