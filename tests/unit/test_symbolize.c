/* test_symbolize.c — ELF symbol lookup (on this test binary and on libc / libstdc++ as
 * loaded), robustness to truncated and broken files, demangling, signature keys, and the
 * composition of SIGNAL signatures from frames. */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "af_test.h"
#include "aotif/result.h"
#include "aotif/symbolize.h"

/* Local (static) functions are in .symtab only: dladdr, which reads .dynsym, cannot name
 * them. noinline + used keep them real functions with a size. */
static __attribute__((noinline, used)) int local_helper(int x)
{
    return x * 3 + (x > 7 ? local_helper(x - 1) : 1);
}

static __attribute__((noinline, used)) int local_other(int x)
{
    return x ^ 0x5a;
}

typedef struct find {
    uintptr_t addr;
    char path[4096];
    uintptr_t bias;
    int found;
} find;

static int find_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    find *f = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && f->addr >= lo && f->addr < lo + ph->p_memsz) {
            if (info->dlpi_name && info->dlpi_name[0])
                snprintf(f->path, sizeof f->path, "%s", info->dlpi_name);
            else {
                ssize_t n = readlink("/proc/self/exe", f->path, sizeof f->path - 1);
                f->path[n > 0 ? n : 0] = '\0';
            }
            f->bias = info->dlpi_addr;
            f->found = 1;
            return 1;
        }
    }
    return 0;
}

/* The module file and link-time address of a code address in this process. */
static int where(const void *addr, char *path, size_t len, uint64_t *vaddr)
{
    find f = {0};
    f.addr = (uintptr_t)addr;
    dl_iterate_phdr(find_module, &f);
    if (!f.found)
        return -1;
    snprintf(path, len, "%s", f.path);
    *vaddr = (uint64_t)(f.addr - f.bias);
    return 0;
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

static int spit(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* Turn every SHT_SYMTAB section header of an ELF image into SHT_NULL: a stripped file. */
static int drop_symtab(unsigned char *b, size_t len)
{
    Elf64_Ehdr eh;
    int n = 0;
    if (len < sizeof eh)
        return 0;
    memcpy(&eh, b, sizeof eh);
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        size_t at = eh.e_shoff + (size_t)i * sizeof(Elf64_Shdr);
        Elf64_Shdr sh;
        if (at + sizeof sh > len)
            break;
        memcpy(&sh, b + at, sizeof sh);
        if (sh.sh_type == SHT_SYMTAB) {
            sh.sh_type = SHT_NULL;
            memcpy(b + at, &sh, sizeof sh);
            n++;
        }
    }
    return n;
}

static void key_is(const char *name, const char *want)
{
    char k[256];
    af_symbol_key(name, k, sizeof k);
    if (strcmp(k, want) != 0)
        fprintf(stderr, "key of %s\n", name);
    CHECK_STR(k, want);
}

static void frame(af_result *r, const char *text, unsigned flags)
{
    snprintf(r->frames[r->n_frames], sizeof r->frames[0], "%s", text);
    r->frame_flags[r->n_frames++] = (unsigned char)(flags | AF_FRAME_SYMBOLIZED);
}

static void no_address(const char *sig)
{
    CHECK(strstr(sig, "0x") == NULL);
    CHECK(strstr(sig, "_Z") == NULL);
}

int main(void)
{
    char path[4096], self[4096], tmpl[] = "/tmp/af-symbolize-XXXXXX";
    uint64_t va, off = 99;
    const char *name = NULL;
    af_error err = {0};
    CHECK(mkdtemp(tmpl) != NULL);
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    self[sl > 0 ? sl : 0] = '\0';

    /* ---- lookup: a local function of this (PIE) binary, through .symtab ---- */
    af_symbolizer *s = af_symbolizer_new(NULL, NULL, &err);
    CHECK(s != NULL);
    CHECK(where((void *)local_helper, path, sizeof path, &va) == 0);
    CHECK_STR(path, self);
    Dl_info di;
    CHECK(!dladdr((void *)local_helper, &di) || !di.dli_sname ||
          strcmp(di.dli_sname, "local_helper") != 0); /* .dynsym does not know it */
    CHECK_EQ_INT(af_symbolizer_lookup(s, path, va, &name, &off, &err), 0);
    CHECK_STR(name, "local_helper");
    CHECK_EQ_INT(off, 0);
    CHECK_EQ_INT(af_symbolizer_lookup(s, path, va + 5, &name, &off, &err), 0);
    CHECK_STR(name, "local_helper");
    CHECK_EQ_INT(off, 5);
    CHECK(where((void *)local_other, path, sizeof path, &va) == 0);
    CHECK_EQ_INT(af_symbolizer_lookup(s, path, va + 1, &name, &off, &err), 0);
    CHECK_STR(name, "local_other");
    CHECK_EQ_INT(off, 1);
    CHECK(where((void *)main, path, sizeof path, &va) == 0);
    CHECK_EQ_INT(af_symbolizer_lookup(s, path, va, &name, NULL, &err), 0);
    CHECK_STR(name, "main");
    /* an address past every function, and address 0 */
    CHECK_EQ_INT(af_symbolizer_lookup(s, path, ~0ULL - 16, &name, &off, &err), -1);
    CHECK_EQ_INT(af_symbolizer_lookup(s, path, 0, &name, &off, &err), -1);

    /* ---- .dynsym where the file has no .symtab: libc and a stripped copy of it ---- */
    void *gp = dlsym(RTLD_DEFAULT, "getpid");
    CHECK(gp != NULL);
    CHECK(where(gp, path, sizeof path, &va) == 0);
    CHECK_EQ_INT(af_symbolizer_lookup(s, path, va + 1, &name, &off, &err), 0);
    CHECK(dlsym(RTLD_DEFAULT, name) == gp); /* an alias of getpid, whichever it picked */
    CHECK_EQ_INT(off, 1);
    size_t len = 0;
    unsigned char *img = slurp(path, &len);
    CHECK(img != NULL);
    char copy[4200];
    if (img) {
        drop_symtab(img, len);
        snprintf(copy, sizeof copy, "%s/libc-stripped.so", tmpl);
        CHECK(spit(copy, img, len) == 0);
        CHECK_EQ_INT(af_symbolizer_lookup(s, copy, va, &name, &off, &err), 0);
        CHECK(dlsym(RTLD_DEFAULT, name) == gp);
        free(img);
    }
    /* a stripped copy of this binary: the local function is gone, no wrong name instead */
    img = slurp(self, &len);
    CHECK(img != NULL);
    if (img) {
        CHECK(where((void *)local_helper, path, sizeof path, &va) == 0);
        CHECK(drop_symtab(img, len) == 1);
        snprintf(copy, sizeof copy, "%s/self-stripped", tmpl);
        CHECK(spit(copy, img, len) == 0);
        name = NULL;
        if (af_symbolizer_lookup(s, copy, va, &name, &off, &err) == 0)
            CHECK(strcmp(name, "local_helper") != 0);
        free(img);
    }

    /* ---- broken files: truncated at every interesting length, garbage, missing ---- */
    img = slurp(self, &len);
    CHECK(img != NULL);
    if (img) {
        CHECK(where((void *)local_helper, path, sizeof path, &va) == 0);
        size_t cuts[] = {0, 4, 63, 64, 65, 4096, len / 2, len - 64, len - 1};
        for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
            snprintf(copy, sizeof copy, "%s/cut-%zu", tmpl, i);
            CHECK(spit(copy, img, cuts[i]) == 0);
            af_error e2 = {0};
            CHECK_EQ_INT(af_symbolizer_lookup(s, copy, va, &name, &off, &e2), -1);
            CHECK(e2.message[0] != '\0');
        }
        /* section headers pointing past the end, and a symbol table pointing past the end */
        Elf64_Ehdr eh;
        memcpy(&eh, img, sizeof eh);
        unsigned char *bad = malloc(len);
        memcpy(bad, img, len);
        eh.e_shoff = (Elf64_Off)len - 8;
        memcpy(bad, &eh, sizeof eh);
        snprintf(copy, sizeof copy, "%s/bad-shoff", tmpl);
        CHECK(spit(copy, bad, len) == 0);
        CHECK_EQ_INT(af_symbolizer_lookup(s, copy, va, &name, &off, &err), -1);
        memcpy(bad, img, len);
        memcpy(&eh, img, sizeof eh);
        for (unsigned i = 0; i < eh.e_shnum; i++) {
            Elf64_Shdr sh;
            memcpy(&sh, bad + eh.e_shoff + i * sizeof sh, sizeof sh);
            if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) {
                sh.sh_offset = (Elf64_Off)len - 16;
                memcpy(bad + eh.e_shoff + i * sizeof sh, &sh, sizeof sh);
            }
        }
        snprintf(copy, sizeof copy, "%s/bad-symtab", tmpl);
        CHECK(spit(copy, bad, len) == 0);
        CHECK_EQ_INT(af_symbolizer_lookup(s, copy, va, &name, &off, &err), -1);
        free(bad);
        free(img);
    }
    snprintf(copy, sizeof copy, "%s/garbage.so", tmpl);
    CHECK(spit(copy, "this is not an ELF file at all, just words; this is not an ELF file", 68) ==
          0);
    CHECK_EQ_INT(af_symbolizer_lookup(s, copy, 0x10, &name, &off, &err), -1);
    CHECK(strstr(err.message, "not an ELF") != NULL);
    CHECK_EQ_INT(af_symbolizer_lookup(s, "/nonexistent/libnope.so", 0x10, &name, &off, &err), -1);
    CHECK_EQ_INT(af_symbolizer_lookup(s, tmpl, 0x10, &name, &off, &err), -1); /* a directory */
    af_symbolizer_free(s);

    /* ---- demangling, from a real C++ library's symbol table ---- */
    char buf[1024];
    void *term = dlsym(RTLD_DEFAULT, "_ZSt9terminatev");
    CHECK(term != NULL);
    s = af_symbolizer_new(NULL, NULL, NULL);
    if (term && where(term, path, sizeof path, &va) == 0) {
        CHECK_EQ_INT(af_symbolizer_lookup(s, path, va, &name, &off, &err), 0);
        CHECK_EQ_INT(af_demangle(name, buf, sizeof buf), 0);
        CHECK_STR(buf, "std::terminate()");
    }
    CHECK_EQ_INT(af_demangle("_ZN5torch12aot_inductor16AOTInductorModel8run_"
                             "implEPP16AtenTensorOpaqueS4_PvP23AOTIProxyExecutorOpaque",
                             buf, sizeof buf),
                 0);
    CHECK_STR(buf, "torch::aot_inductor::AOTInductorModel::run_impl(AtenTensorOpaque**, "
                   "AtenTensorOpaque**, void*, AOTIProxyExecutorOpaque*)");
    CHECK_EQ_INT(af_demangle("cpp_fused_add_0", buf, sizeof buf), -1);
    CHECK_STR(buf, "cpp_fused_add_0");
    CHECK_EQ_INT(af_demangle("_Znotmangled", buf, sizeof buf), -1);
    CHECK_STR(buf, "_Znotmangled");

    /* ---- keys: the function, not this instance of it ---- */
    key_is("_ZN5torch12aot_inductor16AOTInductorModel8run_implEPP16AtenTensorOpaqueS4_"
           "PvP23AOTIProxyExecutorOpaque",
           "torch::aot_inductor::AOTInductorModel::run_impl");
    key_is("cpp_fused_add_mean_mul_select_0", "cpp_fused_add_mean_mul_select_0");
    key_is("cpp_fused_add_mean_mul_select_0._omp_fn.0", "cpp_fused_add_mean_mul_select_0");
    key_is("cpp_fused_add_mean_mul_select_0.cold", "cpp_fused_add_mean_mul_select_0");
    key_is("_ZN2at6native9copy_implERNS_6TensorERKS1_b.isra.0", "at::native::copy_impl");
    key_is("at::native::copy_impl(at::Tensor&, at::Tensor const&, bool) [clone .isra.0]",
           "at::native::copy_impl");
    key_is("void c10::function_ref<void (char**, long const*, long, "
           "long)>::callback_fn<at::native::AVX2::"
           "VectorizedLoop2d<at::native::AVX2::direct_copy_kernel(at::TensorIteratorBase&)::{"
           "lambda()#3}> >"
           "(long, char**, long const*, long, long)",
           "c10::function_ref::callback_fn");
    key_is("at::native::AVX2::direct_copy_kernel(at::TensorIteratorBase&)",
           "at::native::direct_copy_kernel");
    key_is("at::native::AVX512::direct_copy_kernel(at::TensorIteratorBase&)",
           "at::native::direct_copy_kernel");
    key_is("at::native::foo(at::TensorIteratorBase&)::{lambda()#1}::operator()() const",
           "at::native::foo");
    key_is("at::Tensor::operator[](long) const", "at::Tensor::operator[]");
    key_is("c10::IValue::operator()()", "c10::IValue::operator()");
    key_is("std::ostream& std::operator<< <std::char_traits<char> >(std::ostream&, char const*)",
           "std::operator<<");
    key_is("operator delete(void*, unsigned long)", "operator delete");
    key_is("operator new[](unsigned long)", "operator new[]");
    key_is("(anonymous namespace)::helper(int)", "helper");
    key_is("torch::autograd::VariableType::(anonymous namespace)::clone(c10::DispatchKeySet, "
           "at::Tensor const&)",
           "torch::autograd::VariableType::clone");
    key_is("std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(int const*, int "
           "const&)",
           "std::vector::_M_realloc_insert");
    key_is("", "");

    /* ---- what names no bug ---- */
    CHECK(af_frame_is_noise("libc.so.6", "memcpy"));
    CHECK(af_frame_is_noise("ld-linux-x86-64.so.2", "_dl_fixup"));
    CHECK(af_frame_is_noise("libgomp.so.1", "GOMP_parallel"));
    CHECK(af_frame_is_noise("libstdc++.so.6", "__cxa_throw"));
    CHECK(af_frame_is_noise("libc10.so", "c10::alloc_cpu"));
    CHECK(af_frame_is_noise("libc10.so", "c10::DefaultCPUAllocator::allocate"));
    CHECK(af_frame_is_noise("libtorch_cpu.so", "operator new"));
    CHECK(af_frame_is_noise("libtorch_cpu.so", "malloc"));
    CHECK(af_frame_is_noise("libtorch_cpu.so", "c10::function_ref::callback_fn"));
    CHECK(af_frame_is_noise("libtorch_cpu.so", ""));
    CHECK(!af_frame_is_noise("libc10.so", "c10::TensorImpl::numel"));
    CHECK(!af_frame_is_noise("model.so", "cpp_fused_add_0"));
    CHECK(!af_frame_is_noise("libtorch_cpu.so", "at::native::copy_impl"));

    /* ---- signatures ---- */
    af_result a, b;
    const unsigned M = AF_FRAME_MODEL, S = AF_FRAME_SELF;
    /* a kernel of the model at the top: the kernel alone (its callers are the fixed chain) */
    memset(&a, 0, sizeof a);
    a.cls = AF_RES_SIGNAL, a.signo = SIGSEGV;
    frame(&a, "model.so!cpp_fused_add_mean_mul_select_0+0x6a", M);
    frame(&a,
          "model.so!torch::aot_inductor::AOTInductorModel::run_impl(AtenTensorOpaque**, "
          "AtenTensorOpaque**, void*, AOTIProxyExecutorOpaque*)+0x29c",
          M);
    frame(&a, "model.so!AOTInductorModelContainerRun+0x328", M);
    frame(&a, "aoti-run!af_runtime_run+0x8b8", S);
    frame(&a, "libc.so.6!__libc_start_main+0x85", 0);
    af_result_sign(&a);
    CHECK_STR(a.signature, "SIGNAL: SIGSEGV @ cpp_fused_add_mean_mul_select_0");
    /* the same bug at another offset in the kernel and in its caller */
    b = a;
    snprintf(b.frames[0], sizeof b.frames[0], "model.so!cpp_fused_add_mean_mul_select_0+0x91");
    snprintf(b.frames[1], sizeof b.frames[1],
             "model.so!torch::aot_inductor::AOTInductorModel::run_impl(AtenTensorOpaque**, "
             "AtenTensorOpaque**, void*, AOTIProxyExecutorOpaque*)+0x839");
    af_result_sign(&b);
    CHECK_STR(a.signature, b.signature);
    /* another kernel: another bug */
    snprintf(b.frames[0], sizeof b.frames[0], "model.so!cpp_fused_add_cat_mean_mul_select_0+0x6a");
    af_result_sign(&b);
    CHECK_STR(b.signature, "SIGNAL: SIGSEGV @ cpp_fused_add_cat_mean_mul_select_0");
    /* an OpenMP body: on the team's first thread (under the kernel) and on another thread
     * (no model caller at all) the same signature */
    memset(&a, 0, sizeof a);
    a.cls = AF_RES_SIGNAL, a.signo = SIGSEGV;
    frame(&a, "model.so!cpp_fused_sum_1._omp_fn.0+0x40", M);
    frame(&a, "libgomp.so.1!GOMP_parallel+0x46", 0);
    frame(&a, "model.so!cpp_fused_sum_1+0x80", M);
    frame(&a, "model.so!torch::aot_inductor::AOTInductorModel::run_impl(AtenTensorOpaque**)+0x10",
          M);
    af_result_sign(&a);
    memset(&b, 0, sizeof b);
    b.cls = AF_RES_SIGNAL, b.signo = SIGSEGV;
    frame(&b, "model.so!cpp_fused_sum_1._omp_fn.0+0x52", M);
    frame(&b, "libgomp.so.1+0x1d0b2", 0);
    frame(&b, "libc.so.6!start_thread+0xf2", 0);
    frame(&b, "libc.so.6!clone3+0x2c", 0);
    af_result_sign(&b);
    CHECK_STR(a.signature, "SIGNAL: SIGSEGV @ cpp_fused_sum_1");
    CHECK_STR(a.signature, b.signature);
    /* a libtorch op under the model: the top two names and the model's frame; loop
     * plumbing, allocator and runtime frames left out; the extra inlined loop level of
     * another shape changes nothing */
    memset(&a, 0, sizeof a);
    a.cls = AF_RES_SIGNAL, a.signo = SIGSEGV;
    frame(&a,
          "libtorch_cpu.so!void c10::function_ref<void (char**, long const*, long, "
          "long)>::callback_fn<at::native::AVX2::VectorizedLoop2d<...> >(long, char**, long "
          "const*, long, long)+0xe8",
          0);
    frame(&a,
          "libtorch_cpu.so!at::TensorIteratorBase::serial_for_each(c10::function_ref<void (char**, "
          "long const*, long, long)>, at::Range) const+0x1d0",
          0);
    frame(&a,
          "libtorch_cpu.so!at::TensorIteratorBase::for_each(c10::function_ref<void (char**, long "
          "const*, long, long)>, long)+0x14f",
          0);
    frame(&a, "libtorch_cpu.so!at::native::AVX2::direct_copy_kernel(at::TensorIteratorBase&)+0xe1",
          0);
    frame(&a,
          "libtorch_cpu.so!at::native::copy_impl(at::Tensor&, at::Tensor const&, bool) [clone "
          ".isra.0]+0x582",
          0);
    frame(&a, "libtorch_cpu.so!at::native::copy_(at::Tensor&, at::Tensor const&, bool)+0x30", 0);
    frame(&a, "libtorch_cpu.so!aoti_torch_cpu_addmm_out+0xd7", 0);
    frame(&a,
          "model.so!_ZN5torch12aot_inductor16AOTInductorModel8run_implEPP16AtenTensorOpaqueS4_"
          "PvP23AOTIProxyExecutorOpaque+0x3959",
          M);
    frame(&a, "model.so!AOTInductorModelContainerRun+0x328", M);
    af_result_sign(&a);
    CHECK_STR(a.signature,
              "SIGNAL: SIGSEGV @ at::native::direct_copy_kernel / at::native::copy_impl / "
              "torch::aot_inductor::AOTInductorModel::run_impl");
    no_address(a.signature);
    memset(&b, 0, sizeof b);
    b.cls = AF_RES_SIGNAL, b.signo = SIGSEGV;
    for (int i = 0; i < a.n_frames; i++) {
        frame(&b, a.frames[i], a.frame_flags[i] & ~AF_FRAME_SYMBOLIZED);
        if (i == 0)
            frame(&b,
                  "libtorch_cpu.so!at::internal::serial_for_each(c10::ArrayRef<long>, "
                  "c10::ArrayRef<long>, char**, unsigned long, c10::function_ref<void (char**, "
                  "long const*, long, long)>, at::Range)+0x26c",
                  0);
    }
    af_result_sign(&b);
    CHECK_STR(a.signature, b.signature);
    /* the model's frame deep below three named ones takes the third place; a model frame
     * repeating the name above it (a kernel under its own OpenMP body) ends the list too */
    memset(&a, 0, sizeof a);
    a.cls = AF_RES_SIGNAL, a.signo = SIGSEGV;
    frame(&a, "libtorch_cpu.so!at::native::f1()+0x1", 0);
    frame(&a, "libtorch_cpu.so!at::native::f2()+0x1", 0);
    frame(&a, "libtorch_cpu.so!at::native::f3()+0x1", 0);
    frame(&a, "libtorch_cpu.so!at::native::f4()+0x1", 0);
    frame(&a, "model.so!cpp_fused_k_0+0x10", M);
    frame(&a, "model.so!torch::aot_inductor::AOTInductorModel::run_impl()+0x10", M);
    af_result_sign(&a);
    CHECK_STR(a.signature, "SIGNAL: SIGSEGV @ at::native::f1 / at::native::f2 / cpp_fused_k_0");
    memset(&a, 0, sizeof a);
    a.cls = AF_RES_SIGNAL, a.signo = SIGSEGV;
    frame(&a, "libc.so.6!memcpy+0x1", 0);
    frame(&a, "libtorch_cpu.so!cpp_fused_k_0+0x1", 0);
    frame(&a, "model.so!cpp_fused_k_0._omp_fn.0+0x10", M);
    frame(&a, "model.so!torch::aot_inductor::AOTInductorModel::run_impl()+0x10", M);
    af_result_sign(&a);
    CHECK_STR(a.signature, "SIGNAL: SIGSEGV @ cpp_fused_k_0");
    /* a free that aborts: libc, allocator and harness frames say nothing */
    memset(&a, 0, sizeof a);
    a.cls = AF_RES_SIGNAL, a.signo = SIGABRT;
    frame(&a, "libc.so.6!pthread_kill+0x11c", 0);
    frame(&a, "libc.so.6!raise+0x12", 0);
    frame(&a, "libc.so.6!abort+0xd3", 0);
    frame(&a, "libc.so.6+0x8b6b6", 0);
    frame(&a, "libc.so.6!free+0x6e", 0);
    frame(&a, "libc10.so!c10::free_cpu(void*)+0x9", 0);
    frame(&a, "libtorch_cpu.so!operator delete(void*)+0x9", 0);
    frame(&a, "libtorch_cpu.so!at::native::resize_bytes_cpu(c10::StorageImpl*, unsigned long)+0x40",
          0);
    frame(&a, "model.so!torch::aot_inductor::AOTInductorModel::run_impl(AtenTensorOpaque**)+0x10",
          M);
    frame(&a, "test_worker!af_runtime_run+0x8b8", S);
    af_result_sign(&a);
    CHECK_STR(a.signature, "SIGNAL: SIGABRT @ at::native::resize_bytes_cpu / "
                           "torch::aot_inductor::AOTInductorModel::run_impl");
    /* nothing named: the module, without an offset; the model's module first */
    memset(&a, 0, sizeof a);
    a.cls = AF_RES_SIGNAL, a.signo = SIGSEGV;
    frame(&a, "libtorch_cpu.so+0x76ba028", 0);
    frame(&a, "0x7f0012345678", 0);
    af_result_sign(&a);
    CHECK_STR(a.signature, "SIGNAL: SIGSEGV @ libtorch_cpu.so");
    frame(&a, "model.so+0x3959", M);
    af_result_sign(&a);
    CHECK_STR(a.signature, "SIGNAL: SIGSEGV @ model.so");
    /* raw frames the tool never symbolized still give no offset */
    memset(&a, 0, sizeof a);
    a.cls = AF_RES_SIGNAL, a.signo = SIGFPE;
    a.n_frames = 2;
    snprintf(a.frames[0], sizeof a.frames[0], "/tmp/aotif.x/model/abc.wrapper.so+0x1234");
    snprintf(a.frames[1], sizeof a.frames[1], "0x7f0012345678");
    af_result_sign(&a);
    CHECK_STR(a.signature, "SIGNAL: SIGFPE @ abc.wrapper.so");
    memset(&a, 0, sizeof a);
    a.cls = AF_RES_SIGNAL, a.signo = SIGSEGV;
    frame(&a, "0x7f0012345678", 0);
    af_result_sign(&a);
    CHECK_STR(a.signature, "SIGNAL: SIGSEGV");
    a.n_frames = 0;
    af_result_sign(&a);
    CHECK_STR(a.signature, "SIGNAL: SIGSEGV");

    /* ---- af_symbolize_frames: raw frames of this binary, as the handler writes them ---- */
    memset(&a, 0, sizeof a);
    a.cls = AF_RES_SIGNAL, a.signo = SIGSEGV;
    CHECK(where((void *)local_helper, path, sizeof path, &va) == 0);
    snprintf(a.frames[0], sizeof a.frames[0], "%s+0x%llx", path, (unsigned long long)va + 2);
    CHECK(where((void *)local_other, path, sizeof path, &va) == 0);
    snprintf(a.frames[1], sizeof a.frames[1], "%s+0x%llx", path, (unsigned long long)va + 3);
    snprintf(a.frames[2], sizeof a.frames[2], "0xdeadbeef");
    snprintf(a.frames[3], sizeof a.frames[3], "/nonexistent/libgone.so+0x10");
    a.n_frames = 4;
    b = a;
    af_symbolize_frames(s, &a);
    const char *base = strrchr(self, '/') + 1;
    char want[512];
    snprintf(want, sizeof want, "%s!local_helper+0x2", base);
    CHECK_STR(a.frames[0], want);
    CHECK_EQ_INT(a.frame_flags[0], AF_FRAME_SELF | AF_FRAME_SYMBOLIZED);
    snprintf(want, sizeof want, "%s!local_other+0x3", base); /* looked up at +2, shown at +3 */
    CHECK_STR(a.frames[1], want);
    CHECK_STR(a.frames[2], "0xdeadbeef");
    CHECK_STR(a.frames[3], "libgone.so+0x10");
    af_result_sign(&a); /* our own frames never give a name; with no other, the module */
    snprintf(want, sizeof want, "SIGNAL: SIGSEGV @ %s", base);
    CHECK_STR(a.signature, want);
    af_symbolizer_free(s);
    /* the same frames, this binary standing in for the model .so */
    s = af_symbolizer_new(self, "model.so", NULL);
    af_symbolize_frames(s, &b);
    CHECK_STR(b.frames[0], "model.so!local_helper+0x2");
    CHECK(b.frame_flags[0] & AF_FRAME_MODEL);
    af_result_sign(&b);
    CHECK_STR(b.signature, "SIGNAL: SIGSEGV @ local_helper");
    /* symbolizing twice changes nothing */
    af_result c = b;
    af_symbolize_frames(s, &c);
    CHECK_STR(c.frames[0], b.frames[0]);
    af_symbolizer_free(s);
    af_symbolizer_free(NULL);

    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpl);
    CHECK(system(cmd) == 0);
    TEST_MAIN_END();
}
