/* dtype.c — the dtypes aoti-fuzz runs: one table of names, element sizes and value ranges,
 * torch's other spellings of the same dtypes ("torch.float", "long"), and the ScalarType
 * codes of a serialized ExportedProgram. Everything else asks here instead of keeping its
 * own list. */
#include "aotif/dtype.h"
#include "aotif/spec.h"

#include <string.h>

static const struct {
    const char *name;
    size_t size;
    int is_float;
    int64_t lo, hi; /* value range that an int_range must fit */
} dtype_info[AF_DT_COUNT] = {
    [AF_DT_FLOAT32] = {"float32", 4, 1, -AF_INT_LIMIT, AF_INT_LIMIT},
    [AF_DT_FLOAT16] = {"float16", 2, 1, -AF_INT_LIMIT, AF_INT_LIMIT},
    [AF_DT_BFLOAT16] = {"bfloat16", 2, 1, -AF_INT_LIMIT, AF_INT_LIMIT},
    [AF_DT_FLOAT64] = {"float64", 8, 1, -AF_INT_LIMIT, AF_INT_LIMIT},
    [AF_DT_INT64] = {"int64", 8, 0, -AF_INT_LIMIT, AF_INT_LIMIT},
    [AF_DT_INT32] = {"int32", 4, 0, INT32_MIN, INT32_MAX},
    [AF_DT_INT16] = {"int16", 2, 0, INT16_MIN, INT16_MAX},
    [AF_DT_INT8] = {"int8", 1, 0, INT8_MIN, INT8_MAX},
    [AF_DT_UINT8] = {"uint8", 1, 0, 0, UINT8_MAX},
    [AF_DT_BOOL] = {"bool", 1, 0, 0, 1},
};

/* torch's other spellings of the same dtypes (torch.float is torch.float32, ...). */
static const struct {
    const char *alias;
    af_dtype dt;
} dtype_alias[] = {
    {"float", AF_DT_FLOAT32}, {"half", AF_DT_FLOAT16}, {"double", AF_DT_FLOAT64},
    {"long", AF_DT_INT64},    {"int", AF_DT_INT32},    {"short", AF_DT_INT16},
};

static int dtype_valid(af_dtype dt)
{
    return (int)dt >= 0 && dt < AF_DT_COUNT;
}

const char *af_dtype_name(af_dtype dt)
{
    return dtype_valid(dt) ? dtype_info[dt].name : "?";
}

int af_dtype_from_name(const char *name)
{
    if (!name)
        return -1;
    if (strncmp(name, "torch.", 6) == 0)
        name += 6;
    for (int i = 0; i < AF_DT_COUNT; i++)
        if (strcmp(name, dtype_info[i].name) == 0)
            return i;
    for (size_t i = 0; i < sizeof dtype_alias / sizeof dtype_alias[0]; i++)
        if (strcmp(name, dtype_alias[i].alias) == 0)
            return (int)dtype_alias[i].dt;
    return -1;
}

size_t af_dtype_size(af_dtype dt)
{
    return dtype_valid(dt) ? dtype_info[dt].size : 0;
}

int af_dtype_is_float(af_dtype dt)
{
    return dtype_valid(dt) && dtype_info[dt].is_float;
}

int af_dtype_value_range(af_dtype dt, int64_t *lo, int64_t *hi)
{
    if (!dtype_valid(dt))
        return -1;
    *lo = dtype_info[dt].lo;
    *hi = dtype_info[dt].hi;
    return 0;
}

int af_dtype_from_serde(int code)
{
    switch (code) {
    case 1:
        return AF_DT_UINT8;
    case 2:
        return AF_DT_INT8;
    case 3:
        return AF_DT_INT16;
    case 4:
        return AF_DT_INT32;
    case 5:
        return AF_DT_INT64;
    case 6:
        return AF_DT_FLOAT16;
    case 7:
        return AF_DT_FLOAT32;
    case 8:
        return AF_DT_FLOAT64;
    case 12:
        return AF_DT_BOOL;
    case 13:
        return AF_DT_BFLOAT16;
    default:
        return -1;
    }
}
