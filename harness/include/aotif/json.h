/* JSON output rules shared by every writer.
 *
 * JSON text is UTF-8, and Python's json.load and most readers refuse anything else, but a
 * path on Linux is any bytes but NUL, and a model's stderr can hold anything. So:
 * - every writer prints through af_json_print, which first replaces each byte of a string
 *   (and of a key) that is not part of valid UTF-8 with U+FFFD, so the file is always valid;
 * - a path is added with af_json_add_path: the string itself when it is valid UTF-8; else
 *   the U+FFFD form for people, and beside it "<key>_hex", the exact bytes in hex, which
 *   af_json_get_path (and repro.py: bytes.fromhex then os.fsdecode) read back first. */
#ifndef AOTIF_JSON_H
#define AOTIF_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* 1 when s is valid UTF-8 (no overlong forms, surrogates or code points past U+10FFFF). */
int af_utf8_valid(const char *s);
/* s with every byte outside a valid UTF-8 sequence replaced by U+FFFD; malloc'ed, or NULL
 * when out of memory. */
char *af_utf8_lossy(const char *s);
/* Make every string and key under root valid UTF-8 (see above). 0, or -1 out of memory. */
int af_json_make_utf8(cJSON *root);
/* af_json_make_utf8, then cJSON_Print (formatted) or cJSON_PrintUnformatted. The caller frees
 * with cJSON_free; NULL when out of memory. */
char *af_json_print(cJSON *root, int formatted);
/* Add path under key (and key_hex when it is not valid UTF-8). 0, or -1 out of memory. */
int af_json_add_path(cJSON *obj, const char *key, const char *path);
/* Read the path under key, from key_hex when present. Missing: dst "" and 1 if !required
 * else -1; a bad field (not a string, bad hex, a NUL byte, longer than len - 1): -1; else 0. */
int af_json_get_path(const cJSON *obj, const char *key, char *dst, size_t len, int required);

/* The one rule for integers in the project's JSON: a number when a double holds it exactly
 * (|v| < 2^53), else a decimal string; every reader accepts both. A new cJSON item the caller
 * adds to an object or frees; NULL when out of memory. */
cJSON *af_json_int(int64_t v);
cJSON *af_json_uint(uint64_t v);

#endif
