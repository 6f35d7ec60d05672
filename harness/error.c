/* error.c — filling af_error; see aotif/error.h. */
#include "aotif/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int af_error_set(af_error *err, af_errcode code, const char *fmt, ...)
{
    if (!err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->code = code;
    err->sys_errno = 0;
    return -1;
}

int af_error_sys(af_error *err, const char *fmt, ...)
{
    int saved = errno;
    if (!err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    size_t n = strlen(err->message);
    snprintf(err->message + n, sizeof err->message - n, ": %s", strerror(saved));
    err->code = AF_E_IO;
    err->sys_errno = saved;
    errno = saved;
    return -1;
}

void af_error_clear(af_error *err)
{
    if (err) {
        err->code = AF_OK;
        err->sys_errno = 0;
        err->message[0] = '\0';
    }
}

int af_error_exit_code(const af_error *err)
{
    if (!err)
        return 1;
    switch (err->code) {
    case AF_E_USAGE:
    case AF_E_INPUT:
        return 2;
    default:
        return 1;
    }
}
