/* af_test.h — the tiny assertion kit of the unit tests: each CHECK that fails prints
 * where and why and makes the test exit 1. */
#ifndef AF_TEST_H
#define AF_TEST_H
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 in a build under AddressSanitizer (some timings and limits differ there) */
#if defined(__SANITIZE_ADDRESS__)
#define AF_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AF_UNDER_ASAN 1
#endif
#endif
#ifndef AF_UNDER_ASAN
#define AF_UNDER_ASAN 0
#endif

static int af_test_failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
            af_test_failures++;                                                                    \
        }                                                                                          \
    } while (0)
#define CHECK_EQ_INT(a, b)                                                                         \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_) {                                                                            \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, #b,  \
                    a_, b_);                                                                       \
            af_test_failures++;                                                                    \
        }                                                                                          \
    } while (0)
#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                                   \
            fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, #a,  \
                    #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)");                                   \
            af_test_failures++;                                                                    \
        }                                                                                          \
    } while (0)
#define TEST_MAIN_END()                                                                            \
    do {                                                                                           \
        if (af_test_failures) {                                                                    \
            fprintf(stderr, "%d check(s) failed\n", af_test_failures);                             \
            return 1;                                                                              \
        }                                                                                          \
        printf("all checks passed\n");                                                             \
        return 0;                                                                                  \
    } while (0)
#endif
