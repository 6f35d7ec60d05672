/* tensors.c — the tensors of a run, for runtime.c: the case's inputs (the fill, docs/fill.md,
 * and its cache: the values of a seed are made once and copied, on the host and on the
 * device) and the outputs (a summary of each, and their bytes copied into the output arena
 * for the reference process). Through the shim's C ABI only (af_shim). */
#include "runtime_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- inputs ---------------------------------------------------------------------------- */

static uint16_t f32_to_f16_exact(float f)
{
    /* only called with k/64, |k| <= 128: exactly representable, normal or zero */
    uint32_t u;
    memcpy(&u, &f, 4);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    if ((u & 0x7fffffff) == 0)
        return sign;
    int32_t e = (int32_t)((u >> 23) & 0xff) - 127 + 15;
    return (uint16_t)(sign | (uint16_t)(e << 10) | (uint16_t)((u >> 13) & 0x3ff));
}

static void fill_each(void *data, af_dtype dt, int64_t from, int64_t to, const af_input *in,
                      int input, const af_case *c)
{
    /* only the mapping the dtype uses: an integer one divides by the range, a real division
     * per element that a float input has no use for */
    int drawn = c->fill == AF_FILL_RANDOM || c->fill == AF_FILL_WIDE;
    int want_int = !af_dtype_is_float(dt) && dt != AF_DT_BOOL;
    for (int64_t j = from; j < to; j++) {
        int64_t w = drawn ? af_fill_w(c->seed, input, j) : 0;
        double fv = 0;
        int64_t iv = 0;
        if (drawn) {
            if (!want_int)
                fv = af_fill_float(w);
            else
                iv = c->fill == AF_FILL_WIDE ? af_fill_int_wide(in->int_lo, in->int_hi, w)
                                             : af_fill_int(in->int_lo, in->int_hi, w);
        } else {
            fv = c->fill == AF_FILL_ONES ? 1.0 : 0.0;
            iv = c->fill == AF_FILL_ONES ? 1 : 0;
        }
        switch (dt) {
        case AF_DT_FLOAT32:
            ((float *)data)[j] = (float)fv;
            break;
        case AF_DT_FLOAT64:
            ((double *)data)[j] = fv;
            break;
        case AF_DT_FLOAT16:
            ((uint16_t *)data)[j] = f32_to_f16_exact((float)fv);
            break;
        case AF_DT_BFLOAT16: {
            float f = (float)fv;
            uint32_t u;
            memcpy(&u, &f, 4);
            ((uint16_t *)data)[j] = (uint16_t)(u >> 16);
            break;
        }
        case AF_DT_INT64:
            ((int64_t *)data)[j] = iv;
            break;
        case AF_DT_INT32:
            ((int32_t *)data)[j] = (int32_t)iv;
            break;
        case AF_DT_INT16:
            ((int16_t *)data)[j] = (int16_t)iv;
            break;
        case AF_DT_INT8:
            ((int8_t *)data)[j] = (int8_t)iv;
            break;
        case AF_DT_UINT8:
            ((uint8_t *)data)[j] = (uint8_t)iv;
            break;
        case AF_DT_BOOL:
            ((uint8_t *)data)[j] = drawn ? (uint8_t)af_fill_bool(w) : (uint8_t)iv;
            break;
        default:
            break;
        }
    }
}

/* The constant fills are the same bytes as element by element, made faster: zeros are all
 * zero bits in every dtype, ones one element copied out by doubling. */
void af_runtime_fill(void *data, af_dtype dt, int64_t from, int64_t to, const af_input *in,
                     int input, const af_case *c)
{
    size_t esz = af_dtype_size(dt);
    if (to <= from || esz == 0 || (c->fill != AF_FILL_ZEROS && c->fill != AF_FILL_ONES)) {
        fill_each(data, dt, from, to, in, input, c);
        return;
    }
    char *p = (char *)data + (size_t)from * esz;
    size_t n = (size_t)(to - from), done = 1;
    if (c->fill == AF_FILL_ZEROS) {
        memset(p, 0, n * esz);
        return;
    }
    fill_each(data, dt, from, from + 1, in, input, c);
    while (done < n) {
        size_t k = done < n - done ? done : n - done;
        memcpy(p + done * esz, p, k * esz);
        done += k;
    }
}

/* The first numel random-fill values of input i for the case's seed, on the host. */
static const void *cached_fill(af_runtime *rt, const af_case *c, int i, int64_t numel)
{
    fill_cache *fc = &rt->cache[i];
    const af_input *in = &rt->spec->inputs[i];
    size_t esz = af_dtype_size(in->dtype);
    if (!fc->valid || fc->seed != c->seed) {
        fc->valid = 1;
        fc->seed = c->seed;
        fc->numel = 0;
        fc->dev_numel = 0;
    }
    if (numel > fc->numel) {
        int64_t cap = fc->numel ? fc->numel : 1024;
        while (cap < numel)
            cap *= 2;
        void *p = realloc(fc->host, (size_t)cap * esz);
        if (!p)
            return NULL;
        fc->host = p;
        af_runtime_fill(p, in->dtype, fc->numel, cap, in, i, c);
        fc->numel = cap;
    }
    return fc->host;
}

/* The same values on the device: uploaded when the cached prefix grows, else reused. */
static void *cached_fill_device(af_runtime *rt, const af_case *c, int i, int64_t numel)
{
    fill_cache *fc = &rt->cache[i];
    const af_input *in = &rt->spec->inputs[i];
    const void *host = cached_fill(rt, c, i, numel);
    if (!host)
        return NULL;
    if (fc->dev_numel < numel || !fc->dev) {
        if (fc->dev)
            af_shim.delete_tensor(fc->dev);
        fc->dev = NULL;
        int64_t sz[1] = {fc->numel}, st[1] = {1};
        if (af_shim.empty_strided(1, sz, st, af_shim.dtype[in->dtype], af_shim.dev_cuda,
                                  rt->device_idx, &fc->dev))
            return fc->dev = NULL, NULL;
        void *d = NULL;
        af_shim.get_data_ptr(fc->dev, &d);
        if (af_cuda_copy(rt->cu, d, host, (size_t)fc->numel * af_dtype_size(in->dtype), 1) != 0)
            return NULL;
        fc->dev_numel = fc->numel;
    }
    void *d = NULL;
    af_shim.get_data_ptr(fc->dev, &d);
    return d;
}

int af_tensors_make_input(af_runtime *rt, const af_case *c, int i, tensor_t *out, af_error *err)
{
    const af_input *in = &rt->spec->inputs[i];
    int64_t sizes[AF_MAX_RANK], strides[AF_MAX_RANK], numel = 1;
    for (int d = 0; d < in->rank; d++)
        sizes[d] = af_case_dim(rt->spec, c, i, d);
    for (int d = in->rank - 1; d >= 0; d--) {
        strides[d] = numel;
        numel *= sizes[d] > 0 ? sizes[d] : 1;
    }
    for (int d = 0; d < in->rank; d++)
        if (sizes[d] == 0)
            numel = 0;
    int32_t dt = af_shim.dtype[in->dtype];
    tensor_t host = NULL;
    if (rt->cuda && (c->fill == AF_FILL_ZEROS || c->fill == AF_FILL_ONES)) {
        /* constant fills straight on the device, no host round trip */
        if (af_shim.empty_strided(in->rank, sizes, strides, dt, af_shim.dev_cuda, rt->device_idx,
                                  out) != 0)
            goto oom;
        void *dptr = NULL;
        af_shim.get_data_ptr(*out, &dptr);
        if (numel == 0 ||
            af_cuda_memset_value(rt->cu, dptr, in->dtype, numel, c->fill == AF_FILL_ONES) == 0)
            return 0;
        af_shim.delete_tensor(*out);
        *out = NULL;
    }
    size_t bytes = (size_t)numel * af_dtype_size(in->dtype);
    if (rt->cuda && c->fill == AF_FILL_RANDOM && numel) {
        void *src = cached_fill_device(rt, c, i, numel);
        if (src) {
            if (af_shim.empty_strided(in->rank, sizes, strides, dt, af_shim.dev_cuda,
                                      rt->device_idx, out) != 0)
                goto oom;
            void *dptr = NULL;
            af_shim.get_data_ptr(*out, &dptr);
            if (af_cuda_copy(rt->cu, dptr, src, bytes, 0) == 0)
                return 0;
            af_shim.delete_tensor(*out);
            *out = NULL;
        }
    }
    if (af_shim.empty_strided(in->rank, sizes, strides, dt, af_shim.dev_cpu, 0, &host) != 0)
        goto oom;
    void *data = NULL;
    af_shim.get_data_ptr(host, &data);
    if (numel) {
        const void *src = c->fill == AF_FILL_RANDOM ? cached_fill(rt, c, i, numel) : NULL;
        if (src)
            memcpy(data, src, bytes);
        else
            af_runtime_fill(data, in->dtype, 0, numel, in, i, c);
    }
    if (!rt->cuda) {
        *out = host;
        return 0;
    }
    if (af_shim.empty_strided(in->rank, sizes, strides, dt, af_shim.dev_cuda, rt->device_idx,
                              out) != 0) {
        af_shim.delete_tensor(host);
        goto oom;
    }
    int rc = af_shim.copy_(*out, host, 0);
    af_shim.delete_tensor(host);
    if (rc != 0)
        return af_error_set(err, AF_E_RUNTIME, "copying input %d to the device failed", i);
    return 0;
oom:
    *out = NULL;
    return 1; /* caller reports OOM */
}

/* --- outputs --------------------------------------------------------------------------- */

/* The af_dtype of torch's dtype code, -1 when it is none of ours. */
static int dtype_of(int32_t code)
{
    for (int k = 0; k < AF_DT_COUNT; k++)
        if (af_shim.dtype[k] == code)
            return k;
    return -1;
}

/* float32 and float64 by their bits (exponent all ones: NaN with a mantissa, else an
 * infinity), the finite values summed in four running sums (the loop vectorizes; the sum
 * is a summary, its last bits depend on the order); the 16-bit floats one by one. */
#define COUNT_BY_BITS(T, U, EXP, MAN)                                                              \
    do {                                                                                           \
        const T *f = data;                                                                         \
        const U *u = data;                                                                         \
        double s[4] = {0, 0, 0, 0};                                                                \
        int64_t nan = 0, inf = 0, j = 0;                                                           \
        for (; j + 4 <= numel; j += 4)                                                             \
            for (int k = 0; k < 4; k++) {                                                          \
                U b = u[j + k];                                                                    \
                int nonfinite = (b & (EXP)) == (EXP), man = (b & (MAN)) != 0;                      \
                nan += nonfinite & man;                                                            \
                inf += nonfinite & !man;                                                           \
                s[k] += nonfinite ? 0.0 : (double)f[j + k];                                        \
            }                                                                                      \
        for (; j < numel; j++) {                                                                   \
            U b = u[j];                                                                            \
            int nonfinite = (b & (EXP)) == (EXP), man = (b & (MAN)) != 0;                          \
            nan += nonfinite & man;                                                                \
            inf += nonfinite & !man;                                                               \
            s[0] += nonfinite ? 0.0 : (double)f[j];                                                \
        }                                                                                          \
        o->n_nan += nan;                                                                           \
        o->n_inf += inf;                                                                           \
        o->sum += (s[0] + s[1]) + (s[2] + s[3]);                                                   \
    } while (0)

void af_tensors_count_values(const void *data, af_dtype dt, int64_t numel, af_output_summary *o)
{
    if (dt == AF_DT_FLOAT32) {
        COUNT_BY_BITS(float, uint32_t, 0x7f800000u, 0x007fffffu);
        return;
    }
    if (dt == AF_DT_FLOAT64) {
        COUNT_BY_BITS(double, uint64_t, 0x7ff0000000000000ull, 0x000fffffffffffffull);
        return;
    }
    if (dt != AF_DT_FLOAT16 && dt != AF_DT_BFLOAT16)
        return;
    int bf = dt == AF_DT_BFLOAT16;
    uint16_t emask = bf ? 0x7f80 : 0x7c00, mmask = bf ? 0x007f : 0x03ff;
    for (int64_t j = 0; j < numel; j++) {
        uint16_t h = ((const uint16_t *)data)[j];
        if ((h & emask) == emask) {
            if (h & mmask)
                o->n_nan++;
            else
                o->n_inf++;
            continue;
        }
        uint32_t f32 = bf ? (uint32_t)h << 16 : 0;
        if (!bf) { /* fp16 -> fp32, normal and subnormal */
            uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
            if (e)
                f32 = sign | ((e + 112) << 23) | (m << 13);
            else {
                float sub = (float)m / 16777216.0f; /* m * 2^-24 */
                memcpy(&f32, &sub, 4);
                f32 |= sign;
            }
        }
        float fv;
        memcpy(&fv, &f32, 4);
        o->sum += fv;
    }
}

void af_tensors_summarize(af_runtime *rt, tensor_t t, af_output_summary *o)
{
    int64_t dim = 0, *sizes = NULL, *strides = NULL, numel = 0;
    int32_t dt = -1, devt = -1;
    *o = (af_output_summary){0};
    af_shim.get_dim(t, &dim);
    af_shim.get_sizes(t, &sizes);
    af_shim.get_strides(t, &strides);
    af_shim.get_numel(t, &numel);
    af_shim.get_dtype(t, &dt);
    af_shim.get_device_type(t, &devt);
    o->rank = (int)dim;
    for (int d = 0; d < dim && d < 8; d++)
        o->sizes[d] = sizes[d];
    o->numel = numel;
    int adt = dtype_of(dt);
    if (adt < 0 || !af_dtype_is_float((af_dtype)adt) || numel == 0)
        return;
    int contiguous = 1;
    int64_t expect = 1;
    for (int64_t d = dim - 1; d >= 0; d--) {
        if (sizes[d] != 1 && strides[d] != expect)
            contiguous = 0;
        expect *= sizes[d];
    }
    tensor_t view = t, copy = NULL;
    if (devt != af_shim.dev_cpu || !contiguous) {
        int64_t cs[8], n = 1;
        if (dim > 8) /* before cs[] is written: output rank is bounded nowhere else */
            return;
        for (int64_t d = dim - 1; d >= 0; d--) {
            cs[d] = n;
            n *= sizes[d];
        }
        if (af_shim.empty_strided(dim, sizes, cs, dt, af_shim.dev_cpu, 0, &copy) != 0)
            return;
        if (af_shim.copy_(copy, t, 0) != 0) {
            af_shim.delete_tensor(copy);
            return;
        }
        view = copy;
    }
    void *data = NULL;
    af_shim.get_data_ptr(view, &data);
    if (data)
        af_tensors_count_values(data, (af_dtype)adt, numel, o);
    if (copy)
        af_shim.delete_tensor(copy);
}

void af_runtime_dump_to(af_runtime *rt, void *arena, size_t cap)
{
    rt->dump = arena;
    rt->dump_cap = cap;
}

/* The arena's layout is in runtime.h: contiguous CPU bytes per output. */
void af_tensors_dump(af_runtime *rt, tensor_t *outputs, size_t n)
{
    af_arena_header *h = rt->dump;
    if (!h || rt->dump_cap < sizeof *h)
        return;
    h->magic = 0;
    h->n_outputs = (uint32_t)n;
    h->complete = n <= AF_MAX_OUTPUTS;
    size_t off = (sizeof *h + 63) & ~(size_t)63;
    for (size_t i = 0; i < n && i < AF_MAX_OUTPUTS; i++) {
        af_arena_entry *e = &h->e[i];
        memset(e, 0, sizeof *e);
        e->dtype = -1;
        int64_t dim = 0, *sizes = NULL, numel = 0;
        int32_t dt = -1;
        af_shim.get_dim(outputs[i], &dim);
        af_shim.get_sizes(outputs[i], &sizes);
        af_shim.get_numel(outputs[i], &numel);
        af_shim.get_dtype(outputs[i], &dt);
        if (dim > 8 || dim < 0) { /* checked before any use of the 8-slot arrays */
            h->complete = 0;
            continue;
        }
        e->rank = (int32_t)dim;
        for (int d = 0; d < dim; d++)
            e->sizes[d] = sizes[d];
        e->dtype = dtype_of(dt);
        if (e->dtype < 0) {
            h->complete = 0;
            continue;
        }
        size_t bytes = (size_t)numel * af_dtype_size((af_dtype)e->dtype);
        if (off + bytes > rt->dump_cap) {
            h->complete = 0;
            continue;
        }
        e->offset = (int64_t)off;
        e->nbytes = (int64_t)bytes;
        if (bytes) {
            int64_t cs[8], m = 1;
            for (int64_t d = dim - 1; d >= 0; d--) {
                cs[d] = m;
                m *= sizes[d];
            }
            tensor_t dst = NULL;
            if (af_shim.create_from_blob((char *)h + off, dim, sizes, cs, 0, dt, af_shim.dev_cpu, 0,
                                         &dst) != 0 ||
                af_shim.copy_(dst, outputs[i], 0) != 0)
                h->complete = 0;
            if (dst)
                af_shim.delete_tensor(dst);
        }
        off = (off + bytes + 63) & ~(size_t)63;
    }
    __atomic_store_n(&h->magic, AF_ARENA_MAGIC, __ATOMIC_RELEASE);
}
