/* reference.c — the eager reference process (see aotif/reference.h).
 *
 * Start-up writes the two Python files the tools carry (aotif_ref.py, aotif_fill.py) and the
 * spec as JSON into <package temp dir>/ref/ (0700, the package's private dir), then forks
 * and execs Python on them with stdin and stdout on pipes, stderr to ref/ref.log, and the
 * output arena's memfd left open. Between fork and exec the child only calls dup2, fcntl,
 * prctl, setrlimit and execvp. Each case is one JSON line out and one back; a reply that does
 * not come within the timeout, or an end of file, means the process is gone: it is killed,
 * started again, and the case is answered AF_EAGER_LOST.
 *
 * The first start follows the loader memory (aotif/env.h): with the system libstdc++
 * preloaded when this Python needed it before. A start that dies before its ready line (not
 * one that says why it failed, nor one that times out) is retried once the other way, and
 * when that one comes up the memory learns it. Torch's temp files go into the private dir,
 * its inductor cache into our cache dir (af_env_inductor_cache), and the process dumps no
 * core: a reference that dies is LOST, and a core of a process with a CUDA context
 * takes long to write. */
#include "aotif/reference.h"
#include "aotif/clock.h"
#include "aotif/env.h"
#include "aotif/json.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "aotif/crashfile.h"
#include "aotif/fileio.h"
#include "aotif/result.h"
#include "aotif_fill_py.h"
#include "aotif_ref_py.h"

struct af_ref {
    const af_package *pkg;
    const af_spec *spec;
    char program[4096];
    char dir[4200];
    char python[4096];
    char device[32];
    int arena_fd;
    size_t arena_bytes;
    af_ref_opts opts;
    pid_t pid;
    int to, from; /* pipes: requests, replies */
    char buf[1 << 16];
    size_t len;
    int64_t next_id;
    int restarts;
    char torch_version[64];
    char preload[256]; /* LD_PRELOAD the reference starts with, "" when none */
    int start_died;    /* the last failed start ended before a ready line: a loader failure? */
};

const char *af_ref_program(const af_package *pkg, const char *exported)
{
    if (exported && *exported)
        return exported;
    return pkg->exported_json ? pkg->abspath : NULL;
}

const char *af_ref_verdict(const af_ref_result *r)
{
    return r->eager == AF_EAGER_FAILS ? "EAGER_FAILS_TOO"
           : r->eager == AF_EAGER_OK  ? "AOTI_ONLY"
                                      : "";
}

static int write_text(const char *path, const char *text, af_error *err)
{
    return af_write_atomic(path, text, strlen(text), 0, err);
}

static void ref_kill(af_ref *r)
{
    if (r->to >= 0)
        close(r->to);
    if (r->from >= 0)
        close(r->from);
    r->to = r->from = -1;
    if (r->pid > 0) {
        int st;
        for (int i = 0; i < 50; i++) { /* closing stdin ends its loop: give it 0.5 s */
            if (waitpid(r->pid, &st, WNOHANG) == r->pid) {
                r->pid = 0;
                return;
            }
            usleep(10000);
        }
        kill(r->pid, SIGKILL);
        waitpid(r->pid, &st, 0);
    }
    r->pid = 0;
    r->len = 0;
}

/* One line from the reference within `timeout` seconds: 1, 0 on timeout, -1 on EOF. */
static int read_line(af_ref *r, double timeout, char **line)
{
    double t_end = af_now_s() + timeout;
    for (;;) {
        char *nl = memchr(r->buf, '\n', r->len);
        if (nl) {
            *nl = '\0';
            *line = r->buf;
            return 1;
        }
        if (r->len >= sizeof r->buf - 1)
            return -1; /* a line longer than any reply: not our reference */
        double left = t_end - af_now_s();
        if (left <= 0)
            return 0;
        struct pollfd p = {r->from, POLLIN, 0};
        int n = poll(&p, 1, (int)(left * 1000) + 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            continue;
        ssize_t got = read(r->from, r->buf + r->len, sizeof r->buf - 1 - r->len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        r->len += (size_t)got;
    }
}

/* Drop the line just returned by read_line. */
static void consume_line(af_ref *r)
{
    char *nl = memchr(r->buf, '\0', r->len);
    size_t used = nl ? (size_t)(nl - r->buf) + 1 : r->len;
    memmove(r->buf, r->buf + used, r->len - used);
    r->len -= used;
}

/* The reference's environment: ours, plus LD_PRELOAD when the plan says so; torch's own temp
 * files go inside the package's private dir, and with it when the tool ends, not into the
 * user's TMPDIR; its inductor cache into ours, kept. The strings live here because the
 * environment af_env_with builds borrows them until the exec. */
typedef struct ref_env {
    char preload[PATH_MAX + 600], tmpdir[4320], cache[PATH_MAX + 64];
    const char *sets[4];
} ref_env;

/* The environment for the exec, built before fork (execve takes it): malloc'ed, the caller
 * frees the array alone. NULL when out of memory. */
static char **ref_environ(const af_ref *r, ref_env *e)
{
    int ns = 0;
    memset(e->sets, 0, sizeof e->sets);
    snprintf(e->tmpdir, sizeof e->tmpdir, "TMPDIR=%s/tmp", r->dir);
    if (af_env_inductor_cache(e->cache, sizeof e->cache))
        e->sets[ns++] = e->cache;
    if (mkdir(e->tmpdir + 7, 0700) == 0 || errno == EEXIST)
        e->sets[ns++] = e->tmpdir;
    if (r->preload[0] && af_env_preload(r->preload, e->preload, sizeof e->preload) == 0)
        e->sets[ns++] = e->preload;
    return af_env_with(NULL, e->sets);
}

static void close_spawn_fds(const int in[2], const int out[2], int logfd)
{
    close(in[0]), close(in[1]), close(out[0]), close(out[1]);
    if (logfd >= 0)
        close(logfd);
}

/* The child, between fork and exec: async-signal-safe calls only. core: the core-size
 * limit to set (none dumped), NULL to leave it. */
static _Noreturn void exec_child(const af_ref *r, const int in[2], const int out[2], int logfd,
                                 char *const argv[], char *const envp[], const struct rlimit *core)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(in[0], 0);
    dup2(out[1], 1);
    if (logfd >= 0)
        dup2(logfd, 2);
    if (r->arena_fd >= 0)
        fcntl(r->arena_fd, F_SETFD, 0); /* inherited by Python, which maps it */
    if (core)
        setrlimit(RLIMIT_CORE, core); /* a system call, no library state */
    execvpe(r->python, argv, envp);
    _exit(127);
}

/* The started reference's first line: {"ready": true, "torch": VERSION}, or why it did not
 * come up (and whether it died before saying so: r->start_died). */
static int wait_ready(af_ref *r, af_error *err)
{
    char *line;
    int got = read_line(r, 300.0, &line);
    cJSON *js = got == 1 ? cJSON_Parse(line) : NULL;
    const cJSON *ready = cJSON_GetObjectItemCaseSensitive(js, "ready");
    if (!cJSON_IsTrue(ready)) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(js, "error");
        /* our script's own {"ready": false, "error"} means Python and torch came up; no
         * answer in time is no loader crash either */
        r->start_died = got != 0 && !cJSON_IsString(e);
        af_error_set(err, AF_E_RUNTIME, "reference (%s): %s", r->python,
                     cJSON_IsString(e) ? e->valuestring
                     : got == 0        ? "no answer within 300 s"
                                : "it exited at start-up (is torch importable? see ref.log)");
        cJSON_Delete(js);
        ref_kill(r);
        return -1;
    }
    const cJSON *tv = cJSON_GetObjectItemCaseSensitive(js, "torch");
    if (cJSON_IsString(tv))
        snprintf(r->torch_version, sizeof r->torch_version, "%s", tv->valuestring);
    cJSON_Delete(js);
    consume_line(r);
    return 0;
}

static int ref_spawn(af_ref *r, af_error *err)
{
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
        return af_error_sys(err, "reference: pipe");
    char script[4300], spec[4300], logp[4300], fdarg[32], bytesarg[32];
    snprintf(script, sizeof script, "%s/aotif_ref.py", r->dir);
    snprintf(spec, sizeof spec, "%s/spec.json", r->dir);
    snprintf(logp, sizeof logp, "%s/ref.log", r->dir);
    snprintf(fdarg, sizeof fdarg, "%d", r->arena_fd);
    snprintf(bytesarg, sizeof bytesarg, "%zu", r->arena_bytes);
    int logfd = open(logp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    ref_env env;
    char **envp = ref_environ(r, &env);
    struct rlimit core;
    int have_core = getrlimit(RLIMIT_CORE, &core) == 0;
    core.rlim_cur = 0;
    r->start_died = 0;
    if (!envp) {
        close_spawn_fds(in, out, logfd);
        return af_error_set(err, AF_E_IO, "out of memory");
    }
    char *argv[] = {r->python, "-u",       script,    "--program",  r->program, "--spec",
                    spec,      "--device", r->device, "--arena-fd", fdarg,      "--arena-bytes",
                    bytesarg,  NULL};
    pid_t pid = fork();
    if (pid < 0) {
        close_spawn_fds(in, out, logfd);
        free(envp);
        return af_error_sys(err, "reference: fork");
    }
    if (pid == 0)
        exec_child(r, in, out, logfd, argv, envp, have_core ? &core : NULL);
    free(envp);
    close(in[0]);
    close(out[1]);
    if (logfd >= 0)
        close(logfd);
    r->pid = pid;
    r->to = in[1];
    r->from = out[0];
    r->len = 0;
    return wait_ready(r, err);
}

af_ref *af_ref_start(const af_package *pkg, const af_spec *spec, const char *program,
                     const af_pool *pool, const af_ref_opts *opts, af_error *err)
{
    if (!program)
        return af_error_set(err, AF_E_USAGE, "reference: no exported program"), NULL;
    af_ref *r = calloc(1, sizeof *r);
    if (!r)
        return af_error_set(err, AF_E_IO, "out of memory"), NULL;
    r->pkg = pkg;
    r->spec = spec;
    r->to = r->from = -1;
    r->arena_fd = -1;
    if (opts)
        r->opts = *opts;
    if (r->opts.timeout_s <= 0)
        r->opts.timeout_s = 120.0;
    if (!realpath(program, r->program))
        snprintf(r->program, sizeof r->program, "%s", program);
    const char *py = r->opts.python ? r->opts.python : getenv("AOTI_FUZZ_PYTHON");
    snprintf(r->python, sizeof r->python, "%s", py && *py ? py : "python3");
    const char *dev = r->opts.device && *r->opts.device ? r->opts.device : pkg->device;
    snprintf(r->device, sizeof r->device, "%s", strcmp(dev, "cuda") == 0 ? "cuda:0" : dev);
    if (pool)
        af_pool_arena(pool, &r->arena_fd, &r->arena_bytes);
    snprintf(r->dir, sizeof r->dir, "%s/ref", pkg->tmpdir);
    char path[4300];
    char *spec_json = af_spec_to_json(spec);
    if (mkdir(r->dir, 0700) != 0 && errno != EEXIST) {
        af_error_sys(err, "reference: mkdir %s", r->dir);
        goto fail;
    }
    if (!spec_json) {
        af_error_set(err, AF_E_IO, "out of memory");
        goto fail;
    }
    snprintf(path, sizeof path, "%s/aotif_ref.py", r->dir);
    if (write_text(path, af_aotif_ref_py, err) != 0)
        goto fail;
    snprintf(path, sizeof path, "%s/aotif_fill.py", r->dir);
    if (write_text(path, af_aotif_fill_py, err) != 0)
        goto fail;
    snprintf(path, sizeof path, "%s/spec.json", r->dir);
    if (write_text(path, spec_json, err) != 0)
        goto fail;
    free(spec_json);
    spec_json = NULL;
    signal(SIGPIPE, SIG_IGN); /* a dead reference shows as EPIPE on write */
    /* A Python whose loader dies on a model built by a newer system gcc than torch (seen on
     * the H200 image) starts with the system C++ runtime preloaded: the memory says whether
     * this one did before; a start that dies is tried once the other way. */
    af_loader_plan plan;
    af_loader_plan_for(r->python, &plan);
    snprintf(r->preload, sizeof r->preload, "%s", plan.first);
    af_error first = {0};
    if (ref_spawn(r, &first) != 0) {
        af_error again = {0};
        int retry = r->start_died && plan.can_retry;
        if (retry)
            snprintf(r->preload, sizeof r->preload, "%s", plan.retry);
        if (!retry || ref_spawn(r, &again) != 0) {
            if (err)
                *err = first; /* the first start's failure is the one to read */
            goto fail;
        }
        af_loader_remember(&plan, r->preload, r->torch_version, first.message, NULL);
    }
    return r;
fail:
    free(spec_json);
    free(r);
    return NULL;
}

static void copy_str(const cJSON *o, const char *key, char *dst, size_t len)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsString(v))
        snprintf(dst, len, "%s", v->valuestring);
}

int af_ref_run(af_ref *r, const af_case *c, int compare, af_ref_result *out, af_error *err)
{
    memset(out, 0, sizeof *out);
    if (!r->pid) {
        if (ref_spawn(r, err) != 0)
            return -1;
    }
    cJSON *req = cJSON_CreateObject();
    int64_t id = ++r->next_id;
    cJSON_AddNumberToObject(req, "id", (double)id);
    cJSON *vals = cJSON_AddArrayToObject(req, "values");
    for (int k = 0; k < c->n_syms; k++)
        cJSON_AddItemToArray(vals, cJSON_CreateNumber((double)c->values[k]));
    cJSON_AddStringToObject(req, "fill", af_fill_name(c->fill));
    char seed[32];
    snprintf(seed, sizeof seed, "%" PRIu64, c->seed);
    cJSON_AddStringToObject(req, "seed", seed);
    cJSON_AddBoolToObject(req, "compare", compare);
    if (r->opts.have_tol) {
        cJSON_AddNumberToObject(req, "rtol", r->opts.rtol);
        cJSON_AddNumberToObject(req, "atol", r->opts.atol);
    }
    char *text = af_json_print(req, 0);
    cJSON_Delete(req);
    if (!text)
        return af_error_set(err, AF_E_IO, "out of memory");
    size_t n = strlen(text);
    text[n] = '\n';
    int ok = af_write_all(r->to, text, n + 1) == 0;
    free(text);
    char *line = NULL;
    int got = ok ? read_line(r, r->opts.timeout_s, &line) : -1;
    cJSON *js = got == 1 ? cJSON_Parse(line) : NULL;
    if (got == 1)
        consume_line(r);
    const cJSON *jid = cJSON_GetObjectItemCaseSensitive(js, "id");
    if (!js || !cJSON_IsNumber(jid) || (int64_t)jid->valuedouble != id) {
        out->eager = AF_EAGER_LOST;
        snprintf(out->detail, sizeof out->detail, "the reference process %s; restarted",
                 got == 0 ? "gave no answer in time" : "died on this case");
        cJSON_Delete(js);
        ref_kill(r);
        r->restarts++;
        return 0;
    }
    const cJSON *eager = cJSON_GetObjectItemCaseSensitive(js, "eager");
    out->eager =
        cJSON_IsString(eager) && !strcmp(eager->valuestring, "ok") ? AF_EAGER_OK : AF_EAGER_FAILS;
    copy_str(js, "error_type", out->error_type, sizeof out->error_type);
    copy_str(js, "error", out->error, sizeof out->error);
    copy_str(js, "kind", out->kind, sizeof out->kind);
    copy_str(js, "detail", out->detail, sizeof out->detail);
    const cJSON *cmp = cJSON_GetObjectItemCaseSensitive(js, "compare");
    out->compared = cJSON_IsString(cmp) && strcmp(cmp->valuestring, "skipped") != 0;
    out->mismatch = out->compared && !strcmp(cmp->valuestring, "mismatch");
    const cJSON *v;
    if ((v = cJSON_GetObjectItemCaseSensitive(js, "output")) && cJSON_IsNumber(v))
        out->output = v->valueint;
    if ((v = cJSON_GetObjectItemCaseSensitive(js, "max_abs")) && cJSON_IsNumber(v))
        out->max_abs = v->valuedouble;
    if ((v = cJSON_GetObjectItemCaseSensitive(js, "max_rel")) && cJSON_IsNumber(v))
        out->max_rel = v->valuedouble;
    if ((v = cJSON_GetObjectItemCaseSensitive(js, "eager_seconds")) && cJSON_IsNumber(v))
        out->seconds = v->valuedouble;
    cJSON_Delete(js);
    return 0;
}

int af_ref_restarts(const af_ref *r)
{
    return r ? r->restarts : 0;
}

const char *af_ref_preload(const af_ref *r)
{
    return r ? r->preload : "";
}

const char *af_ref_torch_version(const af_ref *r)
{
    return r ? r->torch_version : "";
}

void af_ref_stop(af_ref *r)
{
    if (!r)
        return;
    ref_kill(r);
    free(r);
}

int af_ref_check(af_pool *pool, af_ref *ref, const af_spec *spec, const af_case *c, af_result *r,
                 af_ref_result *rr, af_error *err)
{
    memset(rr, 0, sizeof *rr);
    if (af_pool_run_outputs(pool, c, r, err) != 0)
        return -1;
    if (r->cls != AF_RES_OK)
        return 0; /* it failed this time: the caller judges that failure */
    if (af_ref_run(ref, c, 1, rr, err) != 0)
        return -1;
    if (rr->eager != AF_EAGER_OK || !rr->mismatch)
        return 0;
    char sc[256];
    af_case_shape_class(spec, c, sc, sizeof sc);
    r->cls = AF_RES_MISMATCH;
    if (!strcmp(rr->kind, "value"))
        snprintf(r->message, sizeof r->message,
                 "output %d value (%s)\nmax abs error %.4g, max rel error %.4g; %s", rr->output, sc,
                 rr->max_abs, rr->max_rel, rr->detail);
    else
        snprintf(r->message, sizeof r->message, "output %d %s (%s)\n%s", rr->output, rr->kind, sc,
                 rr->detail);
    af_result_sign(r);
    return 0;
}

void af_ref_to_crash(const af_ref_result *r, const char *why, af_crash *cr)
{
    if (!r) {
        snprintf(cr->eager, sizeof cr->eager, "NOT_RUN");
        snprintf(cr->eager_error, sizeof cr->eager_error, "%s", why ? why : "");
    } else if (r->eager == AF_EAGER_LOST) {
        snprintf(cr->eager, sizeof cr->eager, "LOST");
        snprintf(cr->eager_error, sizeof cr->eager_error, "%s", r->detail);
    } else {
        snprintf(cr->eager, sizeof cr->eager, "%s", af_ref_verdict(r));
        if (r->eager == AF_EAGER_FAILS)
            snprintf(cr->eager_error, sizeof cr->eager_error, "%s: %s", r->error_type, r->error);
        else
            cr->eager_error[0] = '\0';
    }
}
