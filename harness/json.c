/* JSON output rules shared by every writer: see aotif/json.h. */
#include "aotif/json.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at p, or 0 when the byte at p does not start one. */
static size_t utf8_seq(const unsigned char *p)
{
    unsigned c = p[0];
    if (c < 0x80)
        return 1;
    size_t n;
    uint32_t cp, min;
    if ((c & 0xe0) == 0xc0)
        n = 2, cp = c & 0x1f, min = 0x80;
    else if ((c & 0xf0) == 0xe0)
        n = 3, cp = c & 0x0f, min = 0x800;
    else if ((c & 0xf8) == 0xf0)
        n = 4, cp = c & 0x07, min = 0x10000;
    else
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) /* also stops at the NUL */
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

int af_utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t n = utf8_seq(p);
        if (!n)
            return 0;
        p += n;
    }
    return 1;
}

char *af_utf8_lossy(const char *s)
{
    size_t len = strlen(s);
    char *out = malloc(3 * len + 1), *o = out;
    if (!out)
        return NULL;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t n = utf8_seq(p);
        if (n) {
            memcpy(o, p, n);
            o += n, p += n;
        } else {
            memcpy(o, "\xef\xbf\xbd", 3); /* U+FFFD */
            o += 3, p++;
        }
    }
    *o = '\0';
    return out;
}

/* Replace *slot (a string cJSON owns) with its lossy form when it is not valid UTF-8. */
static int fix_string(char **slot)
{
    if (!*slot || af_utf8_valid(*slot))
        return 0;
    char *fixed = af_utf8_lossy(*slot);
    if (!fixed)
        return -1;
    char *copy = cJSON_malloc(strlen(fixed) + 1);
    if (!copy) {
        free(fixed);
        return -1;
    }
    memcpy(copy, fixed, strlen(fixed) + 1);
    free(fixed);
    cJSON_free(*slot);
    *slot = copy;
    return 0;
}

/* one item, its key, and everything under it */
static int fix_item(cJSON *it)
{
    if (!(it->type & cJSON_StringIsConst) && fix_string(&it->string) != 0)
        return -1;
    if (cJSON_IsString(it) && !(it->type & cJSON_IsReference) && fix_string(&it->valuestring) != 0)
        return -1;
    for (cJSON *c = it->child; c; c = c->next)
        if (fix_item(c) != 0)
            return -1;
    return 0;
}

int af_json_make_utf8(cJSON *root)
{
    return root ? fix_item(root) : 0;
}

char *af_json_print(cJSON *root, int formatted)
{
    if (af_json_make_utf8(root) != 0)
        return NULL;
    return formatted ? cJSON_Print(root) : cJSON_PrintUnformatted(root);
}

int af_json_add_path(cJSON *obj, const char *key, const char *path)
{
    if (af_utf8_valid(path))
        return cJSON_AddStringToObject(obj, key, path) ? 0 : -1;
    char *lossy = af_utf8_lossy(path);
    size_t len = strlen(path);
    char *hex = malloc(2 * len + 1);
    char hkey[128];
    int rc = -1;
    if (lossy && hex && snprintf(hkey, sizeof hkey, "%s_hex", key) < (int)sizeof hkey) {
        for (size_t i = 0; i < len; i++)
            snprintf(hex + 2 * i, 3, "%02x", (unsigned char)path[i]);
        hex[2 * len] = '\0';
        if (cJSON_AddStringToObject(obj, key, lossy) && cJSON_AddStringToObject(obj, hkey, hex))
            rc = 0;
    }
    free(lossy);
    free(hex);
    return rc;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

int af_json_get_path(const cJSON *obj, const char *key, char *dst, size_t len, int required)
{
    char hkey[128];
    dst[0] = '\0';
    if (snprintf(hkey, sizeof hkey, "%s_hex", key) >= (int)sizeof hkey)
        return -1;
    const cJSON *hex = cJSON_GetObjectItemCaseSensitive(obj, hkey);
    if (hex) {
        if (!cJSON_IsString(hex))
            return -1;
        const char *h = hex->valuestring;
        size_t n = strlen(h);
        if (n % 2 || n / 2 >= len)
            return -1;
        for (size_t i = 0; i < n / 2; i++) {
            int hi = hexval(h[2 * i]), lo = hexval(h[2 * i + 1]);
            if (hi < 0 || lo < 0 || (hi | lo) == 0)
                return -1; /* not hex, or a NUL byte */
            dst[i] = (char)(hi << 4 | lo);
        }
        dst[n / 2] = '\0';
        return 0;
    }
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!item)
        return required ? -1 : 1;
    if (!cJSON_IsString(item) || strlen(item->valuestring) >= len)
        return -1;
    memcpy(dst, item->valuestring, strlen(item->valuestring) + 1);
    return 0;
}

#define JSON_EXACT_INT (1LL << 53) /* integers beyond this go out as strings */

/* Integers that a double holds exactly go out as numbers, others as decimal strings
 * (the reader accepts both). */
cJSON *af_json_int(int64_t v)
{
    if (v > -JSON_EXACT_INT && v < JSON_EXACT_INT)
        return cJSON_CreateNumber((double)v);
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    return cJSON_CreateString(buf);
}

cJSON *af_json_uint(uint64_t v)
{
    if (v < (uint64_t)JSON_EXACT_INT)
        return cJSON_CreateNumber((double)v);
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    return cJSON_CreateString(buf);
}
