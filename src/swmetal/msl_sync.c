/* msl_sync.c — does a kernel library ever synchronise its threads, or use atomics?
 *
 * The executor runs the threads of a kernel that never waits for another thread (no
 * threadgroup or simdgroup barrier, no simd_* or quad_* function, no simdgroup
 * matrix operation) as a plain loop instead of fibers (exec.c run_group_loop).  That
 * is only safe when no call the kernel can make reaches a synchronisation, so the
 * test is deliberately coarse and errs towards fibers: the whole preprocessed
 * translation unit (user headers expanded, macros expanded) must contain no
 * identifier that could name one — any identifier containing "simd", "quad" or
 * "barrier", or starting with "sw_rt_".  The id attribute names that merely contain
 * "simd" are the only exceptions.  A finer test would follow the call graph from each
 * kernel; this one marks a whole library.
 *
 * Likewise a library with no identifier containing "atomic" runs without the
 * bookkeeping that puts device atomics in threadgroup order (atomics.c): a lock per
 * threadgroup, which kernels of microsecond threadgroups (micro.copy) would feel. */
#include <stdlib.h>
#include <string.h>

#include "swmetal/msl_front.h"

static const char *const id_attributes[] = {"thread_index_in_simdgroup", "simdgroup_index_in_threadgroup",
                                            "simdgroups_per_threadgroup", "threads_per_simdgroup"};

/* Whether identifier p[0..n) could name a synchronisation (atomics 0) or an atomic (1). */
static int ident_matches(const char *p, size_t n, int atomics) {
    char id[128];
    if (n >= sizeof id) return 1; /* too long to bother: assume the worst */
    memcpy(id, p, n);
    id[n] = '\0';
    if (atomics) return strstr(id, "atomic") != NULL;
    for (size_t i = 0; i < sizeof id_attributes / sizeof id_attributes[0]; i++)
        if (strcmp(id, id_attributes[i]) == 0) return 0;
    return strstr(id, "simd") || strstr(id, "quad") || strstr(id, "barrier") || strncmp(id, "sw_rt_", 6) == 0;
}

static int text_free_of(const char *text, const char *filename, int atomics) {
    msl_lexed lx;
    char *err = NULL;
    if (msl_lex(text, filename, &lx, &err) != 0) {
        free(err);
        return 0;
    }
    int free_of = 1;
    for (int i = 0; i < lx.ntoks && free_of; i++) {
        const msl_tok *t = &lx.toks[i];
        if (t->kind == MSL_TK_IDENT && ident_matches(lx.text + t->start, (size_t)t->len, atomics)) free_of = 0;
        /* a directive left in the text (#pragma, #error) is not code, but be safe */
        if (t->kind == MSL_TK_DIRECTIVE) {
            char *line = strndup(lx.text + t->start, (size_t)t->len);
            if (!line || (atomics ? strstr(line, "atomic") != NULL
                                  : strstr(line, "simd") || strstr(line, "quad") || strstr(line, "barrier")))
                free_of = 0;
            free(line);
        }
    }
    msl_lexed_free(&lx);
    return free_of;
}

int msl_text_sync_free(const char *text, const char *filename) { return text_free_of(text, filename, 0); }

int msl_text_atomic_free(const char *text, const char *filename) { return text_free_of(text, filename, 1); }
