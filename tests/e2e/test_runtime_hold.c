/* test_runtime_hold.c — af_runtime_hold_tensors on real example packages, in this process:
 * a worker posts its answer and frees the run's tensors after it, while the tool reads it.
 *   - off (the default, and what bench/'s in-process loop runs): nothing is left after a run;
 *   - on: a run leaves its outputs held, af_runtime_release frees them, and a run that starts
 *     with tensors still held frees those first (the count does not grow run after run);
 *   - the results with and without holding are the same, summary for summary.
 * Exit 77 when no example package or no libtorch is here. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../fuzz/encode.c"
#include "../../fuzz/mutate.c" /* af_seed_typical: the fuzzer's typical case */
#include "af_test.h"
#include "aotif/package.h"
#include "aotif/runtime.h"
#include "aotif/worker.h"
#include "runtime_internal.h"

static void same_result(const af_result *a, const af_result *b)
{
    CHECK_EQ_INT(a->cls, b->cls);
    CHECK_STR(a->signature, b->signature);
    CHECK_EQ_INT(a->n_outputs, b->n_outputs);
    for (int i = 0; i < a->n_outputs && i < b->n_outputs; i++) {
        CHECK_EQ_INT(a->outputs[i].rank, b->outputs[i].rank);
        CHECK_EQ_INT(a->outputs[i].numel, b->outputs[i].numel);
        CHECK(a->outputs[i].sum == b->outputs[i].sum);
    }
}

/* One package, in a child (a model that crashes takes only the child): 0 passed, 77 not
 * runnable here, else failed. */
static int check_package(const char *path, const char *torch_dir)
{
    af_error err = {0};
    af_package *pkg = af_package_open(path, NULL, &err);
    if (!pkg) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        return 1;
    }
    static af_spec spec;
    if (af_package_spec(pkg, NULL, NULL, &spec, &err) != 0) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        return 1;
    }
    if (af_torch_load(torch_dir, 0, &err) != 0) {
        fprintf(stderr, "libtorch: %s\n", err.message);
        return 77;
    }
    af_runtime *rt = af_runtime_open(pkg, &spec, "cpu", &err);
    if (!rt) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        return 1;
    }
    af_case c;
    af_case_init(&c, &spec);
    for (int k = 0; k < spec.n_syms; k++) /* 8 where the range allows: a case that runs OK */
        c.values[k] = af_seed_typical(&spec.syms[k]);
    static af_result plain, held, again;
    CHECK_EQ_INT(af_runtime_run(rt, &c, &plain, &err), 0);
    CHECK_EQ_INT(plain.cls, AF_RES_OK);
    CHECK(plain.n_outputs >= 1);
    CHECK_EQ_INT((int)rt->n_held, 0); /* off: freed before the run returned */

    af_runtime_hold_tensors(rt, 1);
    CHECK_EQ_INT(af_runtime_run(rt, &c, &held, &err), 0);
    same_result(&plain, &held);
    size_t n = rt->n_held;
    CHECK(n >= (size_t)plain.n_outputs); /* the outputs at least (Run takes the inputs) */
    CHECK(n <= rt->n_inputs + rt->n_outputs);
    CHECK_EQ_INT(af_runtime_run(rt, &c, &again, &err), 0); /* the last run's, freed first */
    same_result(&plain, &again);
    CHECK_EQ_INT((int)rt->n_held, (int)n);
    af_runtime_release(rt);
    CHECK_EQ_INT((int)rt->n_held, 0);
    af_runtime_release(rt); /* nothing held: nothing to do */
    CHECK_EQ_INT((int)rt->n_held, 0);

    CHECK_EQ_INT(af_runtime_run(rt, &c, &again, &err), 0);
    CHECK(rt->n_held > 0);
    af_runtime_close(rt); /* frees what is still held */
    af_package_close(pkg);
    return af_test_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_runtime_hold EXAMPLES_DIR\n");
        return 2;
    }
    char torch_dir[4096];
    af_error err = {0};
    if (af_find_torch_lib(NULL, torch_dir, sizeof torch_dir, &err) != 0) {
        fprintf(stderr, "skipped: %s\n", err.message);
        return 77;
    }
    /* models with one output (healthy) and several layers of kernels (bert_encoder) */
    const char *names[] = {"healthy", "bert_encoder", "conv_pool"};
    int ran = 0;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.pt2", argv[1], names[k]);
        if (access(path, R_OK) != 0)
            continue;
        pid_t pid = fork();
        if (pid == 0)
            _exit(check_package(path, torch_dir));
        int st = 0;
        waitpid(pid, &st, 0);
        int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
        if (rc == 77)
            return 77;
        if (rc != 0)
            fprintf(stderr, "FAIL %s (exit status %d)\n", names[k], rc);
        CHECK_EQ_INT(rc, 0);
        ran++;
    }
    if (!ran) {
        fprintf(stderr, "skipped: no example package in %s (run corpus/build.py)\n", argv[1]);
        return 77;
    }
    TEST_MAIN_END();
}
