/* aotif/dtype.h — the tensor dtypes aoti-fuzz runs: their names, element sizes and value
 * ranges, and the codes torch's serialized ExportedProgram gives them.
 *
 * Every function takes a dtype (or a name or code) by value and returns a number or a
 * static string: nothing to free. A value outside the enum gets "?", size 0, not a float. */
#ifndef AOTIF_DTYPE_H
#define AOTIF_DTYPE_H

#include <stddef.h>
#include <stdint.h>

typedef enum af_dtype {
    AF_DT_FLOAT32 = 0,
    AF_DT_FLOAT16,
    AF_DT_BFLOAT16,
    AF_DT_FLOAT64,
    AF_DT_INT64,
    AF_DT_INT32,
    AF_DT_INT16,
    AF_DT_INT8,
    AF_DT_UINT8,
    AF_DT_BOOL,
    AF_DT_COUNT
} af_dtype;

const char *af_dtype_name(af_dtype dt);   /* "float32", ... (static) */
int af_dtype_from_name(const char *name); /* -1 if unknown; accepts "torch.float32" too */
size_t af_dtype_size(af_dtype dt);
int af_dtype_is_float(af_dtype dt);
/* The values a stated integer range for dt must fit, inclusive (+-AF_INT_LIMIT for int64
 * and the floats). 0, or -1 when dt is no dtype. */
int af_dtype_value_range(af_dtype dt, int64_t *lo, int64_t *hi);
/* The dtype of a ScalarType code of the serialized ExportedProgram
 * (torch/_export/serde/schema.py); -1 when it is not one aoti-fuzz runs. */
int af_dtype_from_serde(int code);

#endif
