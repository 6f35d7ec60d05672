/* aoti-run — describe a package, or run one case of it in a worker and say what happened.
 *
 *   aoti-run PKG --describe [--json]
 *   aoti-run PKG --shape n=0 [--shape seq=7] [--seed N] [--fill zeros] [--repeat N] [--json]
 *   aoti-run PKG --case crash.bin
 *
 * Exit status: 0 the case ran fine, 1 the case failed (any class but OK), 2 usage or bad
 * input. With --repeat N the case runs N times in fresh workers and the exit status says
 * whether the first run failed; the output says how many runs gave the same signature. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "aotif/args.h"
#include "aotif/crashfile.h"
#include "aotif/interrupt.h"
#include "aotif/json.h"
#include "aotif/package.h"
#include "aotif/reference.h"
#include "aotif/spec.h"
#include "aotif/where.h"
#include "aotif/worker.h"

static void usage(FILE *f)
{
    fputs("usage: aoti-run PKG.pt2 [options]\n"
          "  --describe            print the package's shape spec and exit\n"
          "  --shape NAME=VALUE    set a symbol (Dim name or symbol name); repeatable\n"
          "  --case FILE           run the case of a crash file (aoti-fuzz output)\n"
          "  --fill MODE           random (default), zeros, ones, wide (--beyond-contract)\n"
          "  --seed N              fill seed (default 0)\n"
          "  --repeat N            run N times, each in a fresh worker; report reproducibility\n"
          "  --json                machine-readable output\n"
          "  --model NAME          model inside the package (default: model)\n"
          "  --spec FILE           shape spec file (overrides the package's)\n"
          "  --exported FILE       the model's torch.export.save file: its declared ranges,\n"
          "                        input names and index value ranges (the contract)\n"
          "  --eager               also run the exported program eagerly on the case (the\n"
          "                        reference): eager's verdict on a failure (AOTI_ONLY or\n"
          "                        EAGER_FAILS_TOO), output comparison on success (MISMATCH)\n"
          "  --rtol X --atol Y     comparison tolerances (default: torch.testing.assert_close's)\n"
          "  --beyond-contract     allow sizes below a declared minimum and the wide fill\n"
          "                        (index values past their valid range)\n"
          "  --device DEV          cpu, cuda, cuda:N (default: the package's device)\n"
          "  --torch-lib DIR       directory holding libtorch.so\n"
          "  --timeout SECONDS     per run (default 30)\n"
          "  --max-input-bytes N   refuse cases with larger inputs (default 1 GiB)\n"
          "  --check-inputs        set AOTI_RUNTIME_CHECK_INPUTS=1 in the worker\n"
          "  --mem-limit BYTES     CPU worker memory headroom (default 8 GiB; 'none': no limit);\n"
          "                        over it is OOM\n"
          "  --max-entry-bytes N   refuse packages with a larger entry (default 4 GiB)\n"
          "  --no-zygote           every worker loads libtorch itself\n"
          "  --no-triage           no CUDA_LAUNCH_BLOCKING re-run after a device fault\n"
          "  -v, --verbose         show the worker's stderr\n"
          "A .pt2 holds native code that this tool loads and runs: only use trusted packages.\n",
          f);
}

static void print_describe_json(const af_package *pkg, const af_spec *spec)
{
    cJSON *o = cJSON_CreateObject();
    af_json_add_path(o, "package", pkg->path);
    cJSON_AddStringToObject(o, "sha256", pkg->sha256);
    cJSON_AddStringToObject(o, "model", pkg->model);
    cJSON_AddStringToObject(o, "device", pkg->device);
    cJSON_AddStringToObject(o, "compute_capability", pkg->compute_capability);
    cJSON_AddStringToObject(o, "cpu_isa", pkg->cpu_isa);
    cJSON_AddStringToObject(o, "spec_source", af_spec_source_name(spec->source));
    cJSON_AddStringToObject(o, "contract_source", spec->contract_src);
    cJSON_AddBoolToObject(o, "contract_known", af_spec_contract_known(spec));
    cJSON *gaps = cJSON_AddArrayToObject(o, "contract_gaps");
    for (int k = 0; k < spec->n_syms; k++) {
        if (!af_spec_gap(spec, k))
            continue;
        cJSON *g = cJSON_CreateObject();
        cJSON_AddStringToObject(g, "symbol", spec->syms[k].name);
        cJSON_AddStringToObject(g, "dim", spec->syms[k].dim_name);
        cJSON_AddNumberToObject(g, "declared_min", (double)spec->syms[k].decl_min);
        cJSON_AddNumberToObject(g, "compiled_min", (double)spec->syms[k].compiled_min);
        cJSON_AddNumberToObject(g, "declared_max", (double)spec->syms[k].decl_max);
        cJSON_AddNumberToObject(g, "compiled_max", (double)spec->syms[k].compiled_max);
        cJSON_AddItemToArray(gaps, g);
    }
    char *st = af_spec_to_json(spec);
    cJSON *sj = st ? cJSON_Parse(st) : NULL;
    free(st);
    if (sj)
        cJSON_AddItemToObject(o, "spec", sj);
    char *txt = af_json_print(o, 1);
    puts(txt);
    free(txt);
    cJSON_Delete(o);
}

int main(int argc, char **argv)
{
    enum {
        O_DESCRIBE = 256,
        O_SHAPE,
        O_CASE,
        O_FILL,
        O_SEED,
        O_REPEAT,
        O_JSON,
        O_MODEL,
        O_SPEC,
        O_DEVICE,
        O_TORCH,
        O_TIMEOUT,
        O_MAXBYTES,
        O_CHECK,
        O_NOZYG,
        O_MEMLIMIT,
        O_MAXENTRY,
        O_NOTRIAGE,
        O_EXPORTED,
        O_BEYOND,
        O_EAGER,
        O_RTOL,
        O_ATOL
    };
    static const struct option longopts[] = {
        {"describe", no_argument, 0, O_DESCRIBE},
        {"shape", required_argument, 0, O_SHAPE},
        {"case", required_argument, 0, O_CASE},
        {"fill", required_argument, 0, O_FILL},
        {"seed", required_argument, 0, O_SEED},
        {"repeat", required_argument, 0, O_REPEAT},
        {"json", no_argument, 0, O_JSON},
        {"model", required_argument, 0, O_MODEL},
        {"spec", required_argument, 0, O_SPEC},
        {"exported", required_argument, 0, O_EXPORTED},
        {"beyond-contract", no_argument, 0, O_BEYOND},
        {"eager", no_argument, 0, O_EAGER},
        {"rtol", required_argument, 0, O_RTOL},
        {"atol", required_argument, 0, O_ATOL},
        {"device", required_argument, 0, O_DEVICE},
        {"torch-lib", required_argument, 0, O_TORCH},
        {"timeout", required_argument, 0, O_TIMEOUT},
        {"max-input-bytes", required_argument, 0, O_MAXBYTES},
        {"check-inputs", no_argument, 0, O_CHECK},
        {"mem-limit", required_argument, 0, O_MEMLIMIT},
        {"no-triage", no_argument, 0, O_NOTRIAGE},
        {"max-entry-bytes", required_argument, 0, O_MAXENTRY},
        {"no-zygote", no_argument, 0, O_NOZYG},
        {"verbose", no_argument, 0, 'v'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    int describe = 0, json = 0;
    int64_t repeat = 1, seed = 0;
    const char *shapes[AF_MAX_SYMS * 2];
    int n_shapes = 0;
    const char *case_file = NULL, *fill = NULL, *spec_file = NULL, *exported = NULL;
    int beyond = 0, eager = 0, n_tol = 0;
    af_ref_opts ropts = {0};
    af_package_opts popts = {0};
    af_worker_opts wopts = {0};
    wopts.triage = 1; /* device faults get a blocking-launch re-run that can name the kernel */
    int seed_given = 0;
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
        switch (opt) {
        case O_DESCRIBE:
            describe = 1;
            break;
        case O_SHAPE:
            if (n_shapes == (int)(sizeof shapes / sizeof shapes[0])) {
                fprintf(stderr, "aoti-run: too many --shape options\n");
                return 2;
            }
            shapes[n_shapes++] = optarg;
            break;
        case O_CASE:
            case_file = optarg;
            break;
        case O_FILL:
            fill = optarg;
            break;
        case O_SEED:
            if (af_parse_i64(optarg, &seed) || seed < 0) {
                fprintf(stderr, "aoti-run: --seed wants a non-negative integer, got '%s'\n",
                        optarg);
                return 2;
            }
            seed_given = 1;
            break;
        case O_REPEAT:
            if (af_parse_i64(optarg, &repeat) || repeat < 1 || repeat > 100000) {
                fprintf(stderr, "aoti-run: --repeat wants an integer in 1..100000, got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case O_JSON:
            json = 1;
            break;
        case O_MODEL:
            popts.model = optarg;
            break;
        case O_SPEC:
            spec_file = optarg;
            break;
        case O_EXPORTED:
            exported = optarg;
            break;
        case O_BEYOND:
            beyond = 1;
            break;
        case O_EAGER:
            eager = 1;
            break;
        case O_RTOL:
        case O_ATOL:
            if (af_parse_nonneg(optarg, opt == O_RTOL ? &ropts.rtol : &ropts.atol)) {
                fprintf(stderr, "aoti-run: %s wants a finite number >= 0, got '%s'\n",
                        opt == O_RTOL ? "--rtol" : "--atol", optarg);
                return 2;
            }
            n_tol++;
            break;
        case O_DEVICE:
            wopts.device = optarg;
            break;
        case O_TORCH:
            wopts.torch_lib = optarg;
            break;
        case O_TIMEOUT: {
            if (af_parse_seconds(optarg, &wopts.timeout_s) != 0) {
                fprintf(stderr, "aoti-run: --timeout wants seconds > 0, got '%s'\n", optarg);
                return 2;
            }
            break;
        }
        case O_MAXBYTES:
            if (af_parse_bytes(optarg, &wopts.max_input_bytes)) {
                fprintf(
                    stderr,
                    "aoti-run: --max-input-bytes wants a byte count (K/M/G suffixes), got '%s'\n",
                    optarg);
                return 2;
            }
            break;
        case O_CHECK:
            wopts.check_inputs = 1;
            break;
        case O_MEMLIMIT:
            if (af_parse_mem_limit(optarg, &wopts.mem_limit_bytes)) {
                fprintf(stderr,
                        "aoti-run: --mem-limit wants a byte count (K/M/G suffixes) or 'none', got "
                        "'%s'\n",
                        optarg);
                return 2;
            }
            break;
        case O_MAXENTRY:
            if (af_parse_bytes(optarg, &popts.max_entry_bytes)) {
                fprintf(
                    stderr,
                    "aoti-run: --max-entry-bytes wants a byte count (K/M/G suffixes), got '%s'\n",
                    optarg);
                return 2;
            }
            break;
        case O_NOZYG:
            wopts.no_zygote = 1;
            break;
        case O_NOTRIAGE:
            wopts.triage = 0;
            break;
        case 'v':
            wopts.verbose = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            fprintf(stderr, "aoti-run: unknown or incomplete option '%s' (see --help)\n",
                    argv[optind - 1]);
            return 2;
        }
    }
    if (optind + 1 != argc && !(case_file && optind == argc)) {
        fprintf(stderr, optind >= argc ? "aoti-run: missing the package (aoti-run PKG.pt2 ...)\n"
                                       : "aoti-run: one package at a time\n");
        return 2;
    }
    if (case_file && (n_shapes || fill || seed_given)) {
        fprintf(stderr, "aoti-run: --case already fixes the shapes, fill and seed\n");
        return 2;
    }
    if (n_tol == 1) {
        fprintf(stderr, "aoti-run: give --rtol and --atol together\n");
        return 2;
    }

    af_error err = {0};
    af_crash crash;
    static char crash_pkg[4096];
    const char *pkg_path = optind < argc ? argv[optind] : NULL;
    if (case_file) {
        if (af_crash_read(case_file, &crash, &err) != 0) {
            fprintf(stderr, "aoti-run: %s\n", err.message);
            return 2;
        }
        if (!pkg_path) {
            af_crash_package_path(&crash, case_file, crash_pkg, sizeof crash_pkg);
            pkg_path = crash_pkg;
        }
        if (!popts.model)
            popts.model = crash.model;
        if (!wopts.device)
            wopts.device = crash.device; /* where the case ran */
    }
    /* SIGINT/SIGTERM remove the package's temp dir, outside any signal handler */
    if (af_interrupt_start(NULL) != 0) {
        fprintf(stderr, "aoti-run: cannot start the signal thread\n");
        return 1;
    }
    af_package *pkg = af_package_open(pkg_path, &popts, &err);
    af_interrupt_set_package(pkg);
    if (!pkg) {
        fprintf(stderr, "aoti-run: %s\n", err.message);
        return af_error_exit_code(&err);
    }
    int rc = 2;
    af_pool *pool = NULL;
    af_ref *ref = NULL;
    af_ref_result rr;
    memset(&rr, 0, sizeof rr);
    static af_spec spec;
    if (case_file && !exported && !spec_file && crash.exported[0])
        exported = crash.exported; /* the contract the crash was found under */
    if (spec_file && exported) {
        fprintf(stderr, "aoti-run: --spec and --exported both state the contract: give one\n");
        rc = 2;
        goto out;
    }
    if (af_package_spec(pkg, spec_file, exported, &spec, &err) != 0) {
        fprintf(stderr, "aoti-run: %s\n", err.message);
        rc = af_error_exit_code(&err);
        goto out;
    }
    if (beyond || (case_file && crash.beyond_contract))
        af_spec_widen_beyond_contract(&spec);
    if (case_file && strcmp(crash.package_sha256, pkg->sha256) != 0)
        fprintf(stderr,
                "aoti-run: warning: %s changed since the crash was recorded (sha256 %.12s, "
                "was %.12s)\n",
                pkg->path, pkg->sha256, crash.package_sha256);
    if (describe) {
        if (json) {
            print_describe_json(pkg, &spec);
        } else {
            printf("package: %s\nsha256:  %s\nmodel:   %s\ndevice:  %s%s%s\n", pkg->path,
                   pkg->sha256, pkg->model, pkg->device,
                   pkg->compute_capability[0] ? ", compute capability " : "",
                   pkg->compute_capability);
            if (pkg->cpu_isa[0])
                printf("cpu isa: %s\n", pkg->cpu_isa);
            printf("spec:    from %s\n", af_spec_source_name(spec.source));
            af_spec_print(&spec, stdout);
        }
        rc = 0;
        goto out;
    }

    af_case c;
    af_case_init(&c, &spec);
    if (case_file) {
        if (af_crash_to_case(&crash, &spec, &c, &err) != 0) {
            fprintf(stderr, "aoti-run: %s\n", err.message);
            rc = 2;
            goto out;
        }
    } else {
        for (int i = 0; i < spec.n_syms; i++) { /* a typical size unless told otherwise */
            int64_t v = 8;
            if (v < spec.syms[i].compiled_min)
                v = spec.syms[i].compiled_min;
            if (v > spec.syms[i].compiled_max)
                v = spec.syms[i].compiled_max;
            c.values[i] = v;
        }
        for (int i = 0; i < n_shapes; i++)
            if (af_case_assign(&spec, &c, shapes[i], &err) != 0) {
                fprintf(stderr, "aoti-run: --shape %s: %s\n", shapes[i], err.message);
                rc = 2;
                goto out;
            }
        if (fill) {
            int f = af_fill_from_name(fill);
            if (f < 0) {
                fprintf(stderr, "aoti-run: --fill wants random, zeros or ones, got '%s'\n", fill);
                rc = 2;
                goto out;
            }
            c.fill = (af_fill)f;
        }
        c.seed = (uint64_t)seed;
    }
    if (af_case_check(&spec, &c, &err) != 0) {
        fprintf(stderr, "aoti-run: %s\n", err.message);
        rc = 2;
        goto out;
    }
    char cs[512], vwhy[384];
    af_case_str(&spec, &c, cs, sizeof cs);
    af_ctv verdict = af_case_verdict(&spec, &c, vwhy, sizeof vwhy);

    ropts.have_tol = n_tol == 2;
    if (case_file && crash.cls == AF_RES_MISMATCH) {
        eager = 1;                               /* a mismatch is only seen against the reference */
        if (!ropts.have_tol && crash.have_tol) { /* compare as it was found */
            ropts.have_tol = 1;
            ropts.rtol = crash.rtol;
            ropts.atol = crash.atol;
        }
    }
    const char *program = af_ref_program(pkg, exported);
    if (eager && !program) {
        fprintf(stderr, "aoti-run: --eager needs the exported program: a unified archive, or "
                        "--exported FILE\n");
        rc = 2;
        goto out;
    }
    if (eager)
        wopts.arena_bytes = AF_ARENA_DEFAULT_BYTES;
    pool = af_pool_start(pkg, &spec, &wopts, &err);
    if (!pool) {
        fprintf(stderr, "aoti-run: %s\n", err.message);
        rc = af_error_exit_code(&err);
        goto out;
    }
    if (eager) {
        ropts.device = wopts.device;
        ref = af_ref_start(pkg, &spec, program, pool, &ropts, &err);
        if (!ref) {
            fprintf(stderr, "aoti-run: %s\n", err.message);
            rc = 1;
            goto out;
        }
    }
    af_result first, r;
    int64_t same = 0;
    for (int64_t k = 0; k < repeat; k++) {
        if (k > 0)
            af_pool_recycle(pool); /* every run in a fresh worker, as --repeat promises */
        if (af_pool_run(pool, &c, k == 0 ? &first : &r, &err) != 0) {
            fprintf(stderr, "aoti-run: %s\n", err.message);
            rc = 1;
            goto out;
        }
        if (k == 0 && ref) {
            /* the reference: eager's verdict on a failure, a value check on success */
            int ok = first.cls == AF_RES_OK;
            if ((ok ? af_ref_check(pool, ref, &spec, &c, &first, &rr, &err)
                    : af_ref_run(ref, &c, 0, &rr, &err)) != 0) {
                fprintf(stderr, "aoti-run: reference: %s\n", err.message);
                rc = 1;
                goto out;
            }
        }
        const af_result *cur = k == 0 ? &first : &r;
        if (k == 0 || strcmp(cur->signature, first.signature) == 0)
            same++;
    }
    if (json) {
        char *rj = af_result_to_json(&first);
        cJSON *o = rj ? cJSON_Parse(rj) : cJSON_CreateObject();
        free(rj);
        cJSON_AddStringToObject(o, "case", cs);
        cJSON_AddStringToObject(o, "fill", af_fill_name(c.fill));
        cJSON_AddItemToObject(o, "seed", af_json_uint(c.seed)); /* exact beyond 2^53 */
        cJSON_AddBoolToObject(o, "below_compiled_lower_bound", af_case_below_compiled(&spec, &c));
        cJSON_AddStringToObject(o, "contract", af_ctv_name(verdict));
        cJSON_AddStringToObject(o, "contract_note", vwhy);
        if (ref) {
            cJSON *e = cJSON_AddObjectToObject(o, "eager");
            cJSON_AddStringToObject(e, "result",
                                    rr.eager == AF_EAGER_OK      ? "ok"
                                    : rr.eager == AF_EAGER_FAILS ? "error"
                                                                 : "lost");
            cJSON_AddStringToObject(e, "error_type", rr.error_type);
            cJSON_AddStringToObject(e, "error", rr.error);
            cJSON_AddStringToObject(e, "verdict",
                                    first.cls == AF_RES_OK ? "" : af_ref_verdict(&rr));
            cJSON_AddStringToObject(e, "compare",
                                    !rr.compared  ? "skipped"
                                    : rr.mismatch ? "mismatch"
                                                  : "match");
            cJSON_AddStringToObject(e, "detail", rr.detail);
            cJSON_AddNumberToObject(e, "max_abs", rr.max_abs);
            cJSON_AddNumberToObject(e, "max_rel", rr.max_rel);
        }
        af_where_finding wfind;
        if (first.cls != AF_RES_OK && first.cls != AF_RES_MISMATCH &&
            af_where_finding_from_result(&first, &wfind)) {
            /* where it failed, from the package's sources (where.h); kept off the stack */
            af_where *w = calloc(1, sizeof *w);
            if (w && af_where_from_package(pkg, &spec, &wfind, w, NULL) == 0)
                af_where_add_json(o, "where", w, &spec);
            free(w);
        }
        cJSON_AddNumberToObject(o, "runs", (double)repeat);
        af_pool_stats ps;
        af_pool_get_stats(pool, &ps);
        cJSON_AddNumberToObject(o, "workers_started", (double)ps.spawns);
        cJSON_AddNumberToObject(o, "same_signature", (double)same);
        char *txt = af_json_print(o, 1);
        puts(txt);
        free(txt);
        cJSON_Delete(o);
    } else {
        printf("case: %s (fill %s, seed %" PRIu64 ")\ncontract: %s\n", cs, af_fill_name(c.fill),
               c.seed, vwhy);
        af_result_print(&first, stdout);
        if (ref) {
            if (rr.eager == AF_EAGER_LOST)
                printf("eager: no answer (%s)\n", rr.detail);
            else if (rr.eager == AF_EAGER_FAILS)
                printf("eager: fails too: %s: %s\n", rr.error_type, rr.error);
            else
                printf("eager: runs%s%s\n",
                       rr.compared ? (rr.mismatch ? "; outputs differ" : "; outputs match") : "",
                       rr.compared ? "" : (rr.detail[0] ? "" : ""));
            if (first.cls != AF_RES_OK && rr.eager != AF_EAGER_LOST)
                printf("verdict: %s\n", af_ref_verdict(&rr));
        }
        if (repeat > 1)
            printf("reproduced: %lld/%lld runs gave this signature\n", (long long)same,
                   (long long)repeat);
    }
    rc = first.cls == AF_RES_OK ? 0 : 1;
out:
    af_ref_stop(ref);
    af_pool_stop(pool);
    af_interrupt_set_package(NULL);
    af_package_close(pkg);
    return rc;
}
