/* symbolize.c — ELF symbol lookup, demangling and signature keys; see aotif/symbolize.h.
 *
 * Lookup. A module's file is mmap'ed read-only once. Its section headers give .symtab (the
 * full table, locals included; libtorch_cpu.so and the model .so keep one) or, in a
 * stripped file, .dynsym (exports only). The sized function symbols are copied into an
 * array sorted by start address; a lookup is a binary search for the last start at or below
 * the address, then a short walk back in case an enclosing symbol overlaps a smaller one.
 * Symbol values and the offsets the crash handler records are both link-time virtual
 * addresses (PC minus load bias), so no segment arithmetic is needed here: that is done once,
 * in the handler, from the loader's own view of the load bias. Every offset and size read
 * from the file is checked against the file's length before use: a package is trusted input
 * but a truncated or half-extracted .so must give "no symbol", not a crash of the tool.
 * libtorch_cpu.so has about 500 000 symbols: the index costs a few MB and tens of ms, once.
 *
 * Keys. The signature wants the name of the function, not of this instance of it: the same
 * bug reached through another template instance, another clone (.isra, .constprop, .cold,
 * an OpenMP body ._omp_fn.N) or another instruction set's copy of an ATen kernel
 * (at::native::AVX2:: vs AVX512::) is the same bug. */
#include "aotif/symbolize.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* libstdc++'s demangler (cxxabi.h is C++ only): malloc'ed result, status 0 on success */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

#define MAX_MODULES 64
#define WALK_BACK 64 /* enclosing symbols looked at below the nearest start */

typedef struct func_sym {
    uint64_t start, size;
    uint32_t name; /* offset into the string table */
    uint8_t rank;  /* tie-break at one address: GLOBAL 0, WEAK 1, LOCAL 2 */
} func_sym;

typedef struct sym_module {
    char *path;
    int ok;        /* parsed; otherwise every lookup fails */
    char why[160]; /* why not */
    void *map;
    size_t map_len;
    const char *strtab;
    size_t strtab_len;
    func_sym *syms;
    size_t n_syms;
} sym_module;

struct af_symbolizer {
    char *model_path; /* as the worker's loader reported it */
    char *model_label;
    char self[PATH_MAX]; /* our own executable, whose frames are the harness */
    sym_module mods[MAX_MODULES];
    int n_mods;
};

af_symbolizer *af_symbolizer_new(const char *model_path, const char *model_label, af_error *err)
{
    af_symbolizer *s = calloc(1, sizeof *s);
    if (!s)
        goto fail;
    if (model_path && !(s->model_path = strdup(model_path)))
        goto fail;
    if (!(s->model_label = strdup(model_label ? model_label : "model.so")))
        goto fail;
    /* the crash handler names the main program by this same link */
    ssize_t n = readlink("/proc/self/exe", s->self, sizeof s->self - 1);
    s->self[n > 0 ? n : 0] = '\0';
    return s;
fail:
    af_symbolizer_free(s);
    af_error_set(err, AF_E_INTERNAL, "out of memory for the symbolizer");
    return NULL;
}

void af_symbolizer_free(af_symbolizer *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n_mods; i++) {
        sym_module *m = &s->mods[i];
        if (m->map)
            munmap(m->map, m->map_len);
        free(m->syms);
        free(m->path);
    }
    free(s->model_path);
    free(s->model_label);
    free(s);
}

/* ---- ELF ------------------------------------------------------------------------------- */

/* Whether [off, off + len) lies inside a file of `size` bytes, without overflow. */
static int in_file(uint64_t off, uint64_t len, size_t size)
{
    return off <= size && len <= size - off;
}

static int sym_cmp(const void *a, const void *b)
{
    const func_sym *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->size != y->size) /* the larger one last: found first by the walk back */
        return x->size < y->size ? -1 : 1;
    return x->name < y->name ? -1 : x->name > y->name;
}

static int parse_elf(sym_module *m)
{
    const unsigned char *f = m->map;
    size_t size = m->map_len;
    if (size < sizeof(Elf64_Ehdr) || memcmp(f, ELFMAG, SELFMAG) != 0) {
        snprintf(m->why, sizeof m->why, "not an ELF file");
        return -1;
    }
    if (f[EI_CLASS] != ELFCLASS64 ||
        f[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB)) {
        snprintf(m->why, sizeof m->why, "not a 64-bit ELF file of this machine's byte order");
        return -1;
    }
    Elf64_Ehdr eh;
    memcpy(&eh, f, sizeof eh); /* copies: the map gives no alignment promise we rely on */
    if (eh.e_shentsize != sizeof(Elf64_Shdr) ||
        !in_file(eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr), size)) {
        snprintf(m->why, sizeof m->why, "section headers outside the file (truncated?)");
        return -1;
    }
    /* .symtab if present (locals too), else .dynsym */
    Elf64_Shdr tab = {0}, str = {0};
    int found = 0;
    for (int want = SHT_SYMTAB; !found && want; want = want == SHT_SYMTAB ? SHT_DYNSYM : 0) {
        for (unsigned i = 0; i < eh.e_shnum; i++) {
            Elf64_Shdr sh;
            memcpy(&sh, f + eh.e_shoff + (uint64_t)i * sizeof sh, sizeof sh);
            if (sh.sh_type != (unsigned)want || sh.sh_size == 0)
                continue;
            Elf64_Shdr st;
            if (sh.sh_link >= eh.e_shnum)
                continue;
            memcpy(&st, f + eh.e_shoff + (uint64_t)sh.sh_link * sizeof st, sizeof st);
            if (sh.sh_entsize != sizeof(Elf64_Sym) || !in_file(sh.sh_offset, sh.sh_size, size) ||
                st.sh_type != SHT_STRTAB || !in_file(st.sh_offset, st.sh_size, size))
                continue;
            tab = sh, str = st, found = 1;
            break;
        }
    }
    if (!found) {
        snprintf(m->why, sizeof m->why, "no readable symbol table");
        return -1;
    }
    m->strtab = (const char *)f + str.sh_offset;
    m->strtab_len = str.sh_size;
    size_t n = tab.sh_size / sizeof(Elf64_Sym);
    m->syms = malloc(sizeof *m->syms * (n ? n : 1));
    if (!m->syms) {
        snprintf(m->why, sizeof m->why, "out of memory for %zu symbols", n);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        Elf64_Sym es;
        memcpy(&es, f + tab.sh_offset + i * sizeof es, sizeof es);
        int type = ELF64_ST_TYPE(es.st_info), bind = ELF64_ST_BIND(es.st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || es.st_shndx == SHN_UNDEF ||
            es.st_size == 0 || es.st_name == 0 || es.st_name >= m->strtab_len ||
            !memchr(m->strtab + es.st_name, '\0', m->strtab_len - es.st_name))
            continue;
        func_sym *y = &m->syms[m->n_syms++];
        y->start = es.st_value;
        y->size = es.st_size;
        y->name = es.st_name;
        y->rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
    }
    qsort(m->syms, m->n_syms, sizeof *m->syms, sym_cmp);
    return 0;
}

static sym_module *module_get(af_symbolizer *s, const char *path)
{
    for (int i = 0; i < s->n_mods; i++)
        if (strcmp(s->mods[i].path, path) == 0)
            return &s->mods[i];
    if (s->n_mods == MAX_MODULES)
        return NULL;
    sym_module *m = &s->mods[s->n_mods];
    memset(m, 0, sizeof *m);
    if (!(m->path = strdup(path)))
        return NULL;
    s->n_mods++;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
        snprintf(m->why, sizeof m->why, "cannot open it as a regular file");
        if (fd >= 0)
            close(fd);
        return m;
    }
    m->map_len = (size_t)st.st_size;
    m->map = mmap(NULL, m->map_len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m->map == MAP_FAILED) {
        m->map = NULL;
        snprintf(m->why, sizeof m->why, "cannot map it");
        return m;
    }
    m->ok = parse_elf(m) == 0;
    return m;
}

int af_symbolizer_lookup(af_symbolizer *s, const char *path, uint64_t vaddr, const char **name,
                         uint64_t *func_off, af_error *err)
{
    sym_module *m = module_get(s, path);
    if (!m)
        return af_error_set(err, AF_E_INTERNAL, "%s: too many modules or out of memory", path);
    if (!m->ok)
        return af_error_set(err, AF_E_INPUT, "%s: %s", path, m->why);
    size_t lo = 0, hi = m->n_syms; /* first index with start > vaddr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->syms[mid].start <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo, k = 0; i > 0 && k < WALK_BACK; i--, k++) {
        const func_sym *y = &m->syms[i - 1];
        if (vaddr - y->start < y->size) {
            /* among symbols at this one address, the best ranked comes first */
            size_t j = i - 1;
            while (j > 0 && m->syms[j - 1].start == y->start &&
                   vaddr - m->syms[j - 1].start < m->syms[j - 1].size)
                j--;
            *name = m->strtab + m->syms[j].name;
            if (func_off)
                *func_off = vaddr - m->syms[j].start;
            return 0;
        }
    }
    return af_error_set(err, AF_E_INPUT, "%s: no function symbol covers 0x%llx", path,
                        (unsigned long long)vaddr);
}

/* ---- names ----------------------------------------------------------------------------- */

int af_demangle(const char *sym, char *out, size_t len)
{
    if (!len)
        return -1;
    int status = -1;
    char *d = strncmp(sym, "_Z", 2) == 0 ? __cxa_demangle(sym, NULL, NULL, &status) : NULL;
    snprintf(out, len, "%s", d && status == 0 ? d : sym);
    free(d);
    return d && status == 0 ? 0 : -1;
}

static int ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The length of an operator's name starting at "operator" in s: "operator()" and
 * "operator<" must not be taken for a parameter list or a template. */
static size_t operator_len(const char *s)
{
    size_t i = 8; /* "operator" */
    if (s[i] == ' ' &&
        (strncmp(s + i + 1, "new", 3) == 0 || strncmp(s + i + 1, "delete", 6) == 0)) {
        i += s[i + 1] == 'n' ? 4 : 7;
        if (strncmp(s + i, "[]", 2) == 0)
            i += 2;
    } else if (strncmp(s + i, "()", 2) == 0) {
        i += 2;
    } else {
        while (s[i] && strchr("+-*/%^&|~!=<>,[]", s[i]))
            i++;
    }
    return i;
}

void af_symbol_key(const char *name, char *out, size_t len)
{
    char d[1024];
    if (!len)
        return;
    af_demangle(name, d, sizeof d);
    /* a '.' is never part of a C or C++ name: what follows is a clone suffix, either raw
     * (cpp_fused_x._omp_fn.0) or as the demangler prints it ("f(int) [clone .cold]") */
    char *dot = strchr(d, '.');
    if (dot) {
        *dot = '\0';
        char *clone = strstr(d, " [clone ");
        if (clone)
            *clone = '\0';
    }
    size_t o = 0;
    int angle = 0;
    for (const char *p = d; *p && o + 1 < len;) {
        if (strncmp(p, "(anonymous namespace)::", 23) == 0) {
            p += 23;
        } else if (strncmp(p, "operator", 8) == 0 && (p == d || !ident_char(p[-1])) &&
                   !ident_char(p[8])) {
            size_t k = operator_len(p);
            for (size_t j = 0; !angle && j < k && o + 1 < len; j++)
                out[o++] = p[j]; /* inside a template argument it goes with the rest */
            p += k;
        } else if (*p == '<') {
            angle++, p++;
        } else if (*p == '>') {
            if (angle)
                angle--;
            p++;
        } else if (angle) {
            p++;
        } else if (*p == '(') {
            break; /* the outermost function's parameters, and whatever is local to it */
        } else {
            out[o++] = *p++;
        }
    }
    while (o > 0 && out[o - 1] == ' ')
        o--;
    out[o] = '\0';
    /* a template function's demangling starts with its return type: drop up to the last
     * space that is not inside "operator new" / "operator delete" */
    for (char *sp = strrchr(out, ' '); sp;
         sp = sp > out ? memrchr(out, ' ', (size_t)(sp - out)) : NULL) {
        if (sp - out >= 8 && strncmp(sp - 8, "operator", 8) == 0)
            continue;
        memmove(out, sp + 1, strlen(sp + 1) + 1);
        break;
    }
    /* ATen compiles each CPU kernel once per instruction set, in a namespace named after it
     * (at::native::AVX2::, AVX512::, DEFAULT::, ...), and picks one at run time: the same bug
     * on another CPU is the same bug */
    static const char *const isa[] = {"::DEFAULT::", "::AVX2::",   "::AVX512::", "::VSX::",
                                      "::ZVECTOR::", "::SVE128::", "::SVE256::", "::NEON::"};
    for (size_t i = 0; i < sizeof isa / sizeof isa[0]; i++)
        for (char *q; (q = strstr(out, isa[i]));)
            memmove(q + 2, q + strlen(isa[i]), strlen(q + strlen(isa[i])) + 1);
}

/* ---- what names no bug ----------------------------------------------------------------- */

/* modules of the C and C++ runtimes, the loader, OpenMP, allocators and sanitizers */
static const char *const noise_modules[] = {
    "libc.so",    "libc-",       "libpthread",  "ld-linux",    "ld64.so", "ld.so",
    "libdl.so",   "libdl-",      "librt.so",    "libm.so",     "libm-",   "libgcc_s",
    "libstdc++",  "libc++",      "libgomp",     "libiomp",     "libomp",  "linux-vdso",
    "linux-gate", "libjemalloc", "libtcmalloc", "libmimalloc", "libasan", "libubsan",
    "libtsan",    "libclang_rt",
};

/* functions (keys) that allocate, free, trampoline or drive loops for the real code */
static const char *const noise_exact[] = {
    "malloc",
    "free",
    "calloc",
    "realloc",
    "posix_memalign",
    "aligned_alloc",
    "memalign",
    "valloc",
    "pvalloc",
    "cfree",
    "operator new",
    "operator new[]",
    "operator delete",
    "operator delete[]",
    "__restore_rt",
    "__kernel_rt_sigreturn",
    "c10::alloc_cpu",
    "c10::free_cpu",
    "c10::function_ref::callback_fn",
    "at::internal::serial_for_each",
    "at::TensorIteratorBase::serial_for_each",
    "at::TensorIteratorBase::for_each",
    "at::internal::invoke_parallel",
    "at::parallel_for",
    "at::internal::parallel_for",
    "at::parallel_reduce",
    "at::internal::lazy_init_num_threads",
};

static const char *const noise_prefix[] = {
    "std::_Function_handler::",
    "std::function::",
    "std::__invoke",
    "std::invoke",
    "c10::DefaultCPUAllocator::",
    "c10::CPUCachingAllocator::",
    "c10::ProfiledCPUMemoryReporter::",
    "c10::InefficientStdFunctionContext::",
    "c10::detail::deleteNothing",
    "c10::memset_junk",
};

int af_frame_is_noise(const char *module, const char *key)
{
    if (module)
        for (size_t i = 0; i < sizeof noise_modules / sizeof noise_modules[0]; i++)
            if (strncmp(module, noise_modules[i], strlen(noise_modules[i])) == 0)
                return 1;
    if (!key || !*key)
        return 1;
    for (size_t i = 0; i < sizeof noise_exact / sizeof noise_exact[0]; i++)
        if (strcmp(key, noise_exact[i]) == 0)
            return 1;
    for (size_t i = 0; i < sizeof noise_prefix / sizeof noise_prefix[0]; i++)
        if (strncmp(key, noise_prefix[i], strlen(noise_prefix[i])) == 0)
            return 1;
    return 0;
}

/* ---- frames ---------------------------------------------------------------------------- */

/* Split a frame: its module's file name, and its function text ("" when unnamed). */
static void frame_parts(const char *frame, char *mod, size_t mlen, char *fn, size_t flen)
{
    const char *bang = strchr(frame, '!');
    const char *plus = NULL;
    for (const char *p = frame; (p = strstr(p, "+0x")); p++)
        plus = p;
    const char *mend = bang ? bang : plus ? plus : NULL;
    mod[0] = fn[0] = '\0';
    if (mend) {
        const char *mb = frame;
        for (const char *p = frame; p < mend; p++)
            if (*p == '/')
                mb = p + 1;
        snprintf(mod, mlen, "%.*s", (int)(mend - mb), mb);
    }
    if (bang) {
        const char *fend = plus && plus > bang ? plus : bang + strlen(bang);
        snprintf(fn, flen, "%.*s", (int)(fend - bang - 1), bang + 1);
    }
}

void af_signature_frames(const af_result *r, char *out, size_t len)
{
    char keys[3][160], mod[AF_FRAME_LEN], fn[AF_FRAME_LEN], key[160];
    int n = 0, nf = r->n_frames < AF_MAX_FRAMES ? r->n_frames : AF_MAX_FRAMES;
    int model_at = -1;
    if (!len)
        return;
    out[0] = '\0';
    for (int i = 0; i < nf && model_at < 0; i++) {
        frame_parts(r->frames[i], mod, sizeof mod, fn, sizeof fn);
        af_symbol_key(fn, key, sizeof key);
        if ((r->frame_flags[i] & AF_FRAME_MODEL) && fn[0] && !af_frame_is_noise(mod, key))
            model_at = i;
    }
    for (int i = 0; i < nf && n < 3; i++) {
        frame_parts(r->frames[i], mod, sizeof mod, fn, sizeof fn);
        if (!fn[0] || (r->frame_flags[i] & AF_FRAME_SELF))
            continue;
        af_symbol_key(fn, key, sizeof key);
        if (af_frame_is_noise(mod, key))
            continue;
        int repeat = n && strcmp(key, keys[n - 1]) == 0;
        if (!repeat && (i == model_at || n < 2 || model_at < i))
            snprintf(keys[n++], sizeof keys[0], "%s", key);
        /* else: a repeat, or the last place is kept for the model's frame below */
        if (i == model_at)
            break;
    }
    size_t o = 0;
    for (int k = 0; k < n && o < len; k++)
        o += (size_t)snprintf(out + o, len - o, k ? " / %s" : "%s", keys[k]);
    if (n || !nf)
        return;
    /* nothing named: the module alone still tells a model crash from a libtorch one */
    int at = 0;
    for (int i = 0; i < nf; i++)
        if (r->frame_flags[i] & AF_FRAME_MODEL) {
            at = i;
            break;
        }
    frame_parts(r->frames[at], mod, sizeof mod, fn, sizeof fn);
    snprintf(out, len, "%s", mod);
}

/* Parse a raw frame "<path>+0x<hex>" into path and vaddr; -1 for a bare "0x<PC>". */
static int raw_frame(const char *frame, char *path, size_t plen, uint64_t *vaddr)
{
    const char *plus = NULL;
    for (const char *p = frame; (p = strstr(p, "+0x")); p++)
        plus = p;
    if (!plus || plus == frame || (size_t)(plus - frame) >= plen)
        return -1;
    char *end;
    unsigned long long v = strtoull(plus + 3, &end, 16);
    if (*end)
        return -1;
    snprintf(path, plen, "%.*s", (int)(plus - frame), frame);
    *vaddr = v;
    return 0;
}

void af_symbolize_frames(af_symbolizer *s, af_result *r)
{
    int nf = r->n_frames < AF_MAX_FRAMES ? r->n_frames : AF_MAX_FRAMES;
    for (int i = 0; i < nf; i++) {
        char path[AF_FRAME_LEN];
        uint64_t vaddr;
        if (r->frame_flags[i] || strchr(r->frames[i], '!') ||
            raw_frame(r->frames[i], path, sizeof path, &vaddr) != 0)
            continue;
        unsigned char flags = 0;
        const char *label = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        if (s && s->model_path && strcmp(path, s->model_path) == 0)
            flags |= AF_FRAME_MODEL, label = s->model_label;
        else if (s && s->self[0] && strcmp(path, s->self) == 0)
            flags |= AF_FRAME_SELF;
        const char *name = NULL;
        uint64_t off = 0;
        /* a return address points after its call, maybe past its function's end */
        uint64_t at = i > 0 && vaddr > 0 ? vaddr - 1 : vaddr;
        char disp[AF_FRAME_LEN], dem[1024];
        if (s && af_symbolizer_lookup(s, path, at, &name, &off, NULL) == 0) {
            off += vaddr - at;
            af_demangle(name, dem, sizeof dem);
            char tail[24];
            int tl = snprintf(tail, sizeof tail, "+0x%llx", (unsigned long long)off);
            int room = (int)sizeof disp - (int)strlen(label) - 1 - tl - 1;
            if (room < 8)
                room = 8;
            if ((int)strlen(dem) > room) /* cut the demangled text, keep the offset */
                snprintf(disp, sizeof disp, "%s!%.*s...%s", label, room - 3, dem, tail);
            else
                snprintf(disp, sizeof disp, "%s!%s%s", label, dem, tail);
        } else {
            snprintf(disp, sizeof disp, "%s+0x%llx", label, (unsigned long long)vaddr);
        }
        memcpy(r->frames[i], disp, sizeof disp);
        r->frame_flags[i] = flags | AF_FRAME_SYMBOLIZED;
    }
}
