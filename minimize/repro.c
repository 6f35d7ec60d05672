/* repro.c — the case as text for the three writers (repro_internal.h), and writing their
 * files; see repro.h for what is written and why.
 *
 * The module is split by what it makes: quote.c (quoting and printable text), repro_py.c
 * (repro.py), repro_sh.c (repro.sh), report.c (report.md), proc.c (running a script with a
 * time limit) and recheck.c (running the written scripts again and judging them). This file
 * holds what the writers share, so that a shape or a case reads the same in all three, and
 * the atomic writes of their outputs. */
#include "repro_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "aotif/fileio.h"

/* --- what the case looks like --------------------------------------------------------- */

const char *af_repro_sym_label(const af_symbol *s)
{
    return s->dim_name[0] ? s->dim_name : s->name;
}

/* "(0, 16)" / "(0,)" / "()": a Python tuple of the input's sizes under case c. */
void af_repro_shape_tuple(const af_spec *spec, const af_case *c, int i, char *buf, size_t len)
{
    size_t o = 0;
    const af_input *in = &spec->inputs[i];
    o += (size_t)snprintf(buf, len, "(");
    for (int d = 0; d < in->rank && o < len; d++)
        o += (size_t)snprintf(buf + o, len - o, "%s%" PRId64, d ? ", " : "",
                              af_case_dim(spec, c, i, d));
    if (o < len)
        snprintf(buf + o, len - o, in->rank == 1 ? ",)" : ")");
}

/* "(n, 16)" / "(2*n + 1, 4)": the declared shape, with Dim names where known. */
void af_repro_shape_symbolic(const af_spec *spec, int i, char *buf, size_t len)
{
    size_t o = 0;
    const af_input *in = &spec->inputs[i];
    char name[AF_NAME_MAX];
    o += (size_t)snprintf(buf, len, "(");
    for (int d = 0; d < in->rank && o < len; d++) {
        const af_dim *dim = &in->dims[d];
        const char *sep = d ? ", " : "";
        if (dim->sym < 0) {
            o += (size_t)snprintf(buf + o, len - o, "%s%" PRId64, sep, dim->b);
            continue;
        }
        af_text_doc(af_repro_sym_label(&spec->syms[dim->sym]), name, sizeof name);
        if (dim->a == 1)
            o += (size_t)snprintf(buf + o, len - o, "%s%s", sep, name);
        else
            o += (size_t)snprintf(buf + o, len - o, "%s%" PRId64 "*%s", sep, dim->a, name);
        if (o < len && dim->b)
            o += (size_t)snprintf(buf + o, len - o, " %c %" PRId64, dim->b < 0 ? '-' : '+',
                                  dim->b < 0 ? -dim->b : dim->b);
    }
    if (o < len)
        snprintf(buf + o, len - o, in->rank == 1 ? ",)" : ")");
}

/* "x (0, 16), y (0, 16)" in printable ASCII. */
void af_repro_inputs_line(const af_spec *spec, const af_case *c, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < spec->n_inputs && o < len; i++) {
        char name[AF_NAME_MAX], shape[256];
        af_repro_shape_tuple(spec, c, i, shape, sizeof shape);
        o += (size_t)snprintf(buf + o, len - o, "%s%s %s", i ? ", " : "",
                              af_text_doc(spec->inputs[i].name, name, sizeof name), shape);
    }
}

/* "n=0 m=0" in printable ASCII. */
void af_repro_case_line(const af_spec *spec, const af_case *c, char *buf, size_t len)
{
    char raw[1024];
    af_case_str(spec, c, raw, sizeof raw);
    af_text_doc(raw, buf, len);
}

const char *af_repro_device(const af_repro_info *info)
{
    return info->device && *info->device ? info->device : info->pkg->device;
}

/* --- writing -------------------------------------------------------------------------------- */

static int write_text(const char *dir, const char *name, char *text, af_error *err)
{
    char path[PATH_MAX];
    if (!text)
        return af_error_set(err, AF_E_IO, "out of memory writing %s", name);
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) {
        free(text);
        return af_error_set(err, AF_E_USAGE, "output path too long: %s/%s", dir, name);
    }
    int rc = af_write_atomic(path, text, strlen(text), 0, err);
    free(text);
    return rc;
}

int af_repro_write_scripts(const char *dir, const af_repro_info *info, af_error *err)
{
    if (write_text(dir, "repro.py", af_repro_py_text(info), err) != 0 ||
        write_text(dir, "repro.sh", af_repro_sh_text(info), err) != 0)
        return -1;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/repro.sh", dir);
    if (chmod(path, 0755) != 0)
        return af_error_sys(err, "chmod %s", path);
    return 0;
}

int af_repro_write_report(const char *dir, const af_repro_info *info, af_error *err)
{
    return write_text(dir, "report.md", af_repro_report_text(info), err);
}
