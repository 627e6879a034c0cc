/*
 * bmp2xbm: stands in for ImageMagick's `convert IN.bmp OUT.xbm` in the firmware build.
 *
 * LEGO's makefiles turn the brick's icons and fonts (BMP files) into X bitmaps that the
 * firmware #includes as C arrays. Only that one conversion is needed, so a small tool does
 * it instead of a whole image suite: uncompressed BMP (1, 4, 8, 24 or 32 bits per pixel,
 * bottom-up or top-down) in, XBM out. A pixel darker than mid-grey is set (foreground),
 * which is how the firmware's bitmaps are drawn: set bits are black on the LCD.
 * The XBM's C names come from the output file's base name, as convert does it.
 *
 * Copyright the cubot authors. MIT OR Apache-2.0.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what, const char *path)
{
    fprintf(stderr, "bmp2xbm: %s: %s\n", path, what);
    exit(2);
}

static uint32_t le32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* Reads the whole file: the BMPs are a few kilobytes. */
static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot open", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (n < 54)
        die("too short for a BMP", path);
    uint8_t *buf = malloc((size_t)n);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
        die("cannot read", path);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Luminance in 0..255 with the usual Rec. 601 weights. */
static int grey(int r, int g, int b) { return (299 * r + 587 * g + 114 * b) / 1000; }

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: bmp2xbm IN.bmp OUT.xbm\n");
        return 2;
    }
    const char *in = argv[1], *out = argv[2];
    size_t len;
    uint8_t *d = slurp(in, &len);
    if (d[0] != 'B' || d[1] != 'M')
        die("not a BMP", in);
    uint32_t pixels = le32(d + 10), header = le32(d + 14);
    int32_t w = (int32_t)le32(d + 18), h = (int32_t)le32(d + 22);
    unsigned bpp = le16(d + 28);
    uint32_t compression = le32(d + 30), colours = le32(d + 46);
    if (compression != 0 && compression != 3)
        die("compressed BMPs are not supported", in);
    if (bpp != 1 && bpp != 4 && bpp != 8 && bpp != 24 && bpp != 32)
        die("unsupported bits per pixel", in);
    int top_down = h < 0;
    if (top_down)
        h = -h;
    if (w <= 0 || h <= 0)
        die("bad size", in);
    const uint8_t *palette = d + 14 + header;
    if (bpp <= 8 && colours == 0)
        colours = 1u << bpp;
    size_t stride = ((size_t)w * bpp + 31) / 32 * 4;
    if (pixels + stride * (size_t)h > len)
        die("truncated pixel data", in);

    /* The C identifier: the output's base name without its extension. */
    const char *base = strrchr(out, '/');
    base = base ? base + 1 : out;
    char name[256];
    size_t n = 0;
    for (; base[n] && base[n] != '.' && n + 1 < sizeof name; n++)
        name[n] = isalnum((unsigned char)base[n]) ? base[n] : '_';
    name[n] = 0;

    FILE *f = fopen(out, "w");
    if (!f)
        die("cannot create", out);
    fprintf(f, "#define %s_width %d\n#define %s_height %d\n", name, w, name, h);
    fprintf(f, "static char %s_bits[] = {\n", name);
    size_t row_bytes = ((size_t)w + 7) / 8, written = 0, total = row_bytes * (size_t)h;
    for (int y = 0; y < h; y++) {
        const uint8_t *row = d + pixels + stride * (size_t)(top_down ? y : h - 1 - y);
        for (size_t bx = 0; bx < row_bytes; bx++) {
            unsigned byte = 0;
            for (int bit = 0; bit < 8; bit++) {
                int x = (int)(bx * 8) + bit;
                if (x >= w)
                    break;
                int r, g, b;
                if (bpp >= 24) {
                    const uint8_t *p = row + (size_t)x * (bpp / 8);
                    b = p[0], g = p[1], r = p[2];
                } else {
                    unsigned idx;
                    if (bpp == 8)
                        idx = row[x];
                    else if (bpp == 4)
                        idx = (row[x / 2] >> (x % 2 ? 0 : 4)) & 0x0F;
                    else
                        idx = (row[x / 8] >> (7 - x % 8)) & 1;
                    if (idx >= colours)
                        die("palette index out of range", in);
                    const uint8_t *p = palette + 4 * idx;
                    b = p[0], g = p[1], r = p[2];
                }
                if (grey(r, g, b) < 128)
                    byte |= 1u << bit; /* XBM: least significant bit is the leftmost pixel */
            }
            written++;
            fprintf(f, "%s0x%02X%s", written % 12 == 1 ? "  " : " ", byte,
                    written == total ? "" : written % 12 == 0 ? ",\n" : ",");
        }
    }
    fprintf(f, "};\n");
    if (fclose(f) != 0)
        die("cannot write", out);
    free(d);
    return 0;
}
