/* lanes.c — the lanes rewrite: the C++ of a library whose simdgroups run as
 * 32-wide data (prelude/sw_lanes.h) instead of 32 fibers.
 *
 * Why: a kernel whose lanes meet at simd_sum every few instructions spends most
 * of its time switching fibers, and its per-lane scalar code cannot use the host's
 * vector units.  Run a simdgroup's lanes together and both costs go: a reduction is
 * a loop over an array, and the lanes' arithmetic is a 32-wide loop clang
 * vectorises.  This is whole-function vectorisation (ISPC, POCL) done on the
 * source, with the C++ type system as the safety net:
 *
 *   1. Uniformity.  A local or parameter is *varying* when its value can differ
 *      between the lanes of a simdgroup: it is seeded by the per-lane id attributes
 *      (thread_index_in_simdgroup, thread_position_in_grid, ...) and spreads through
 *      assignments, calls (argument -> parameter, and back for pointer/reference
 *      parameters), returns, and assignments under control flow whose condition is
 *      varying.  Each use of a local is resolved to its declaration (scopes), and
 *      variables are tracked flow-insensitively (a fixpoint over the whole
 *      library), so the result errs only toward "varying".
 *   2. Rewrite.  Varying declarations become ::sw::lv::vary<T>; every subscript
 *      becomes ::sw::lv::ld/st (gather, masked scatter); casts become
 *      ::sw::lv::cast; ?:, && and || take lambdas so that each side runs only for
 *      the lanes that evaluate it; if/loops with varying conditions run under an
 *      execution mask (branch, loop); break, continue and return under varying
 *      control retire lanes (brk, cnt, fn<R>::ret).  Uniform conditions are wrapped
 *      in ::sw::lv::u(), which does not compile for a varying value.
 *   3. Safety.  Wherever the analysis is wrong about a value, the C++ does not
 *      compile (a vary<T> cannot become a T, nor a condition); the device then runs
 *      the library's fibers as before (compile.c).  Anything this pre-pass does not
 *      understand (atomics, quad functions, lambdas, goto, a varying switch, a
 *      barrier under varying control, ...) makes the library ineligible up front,
 *      with the reason kept for GDNBENCH_SW_DEBUG; so does a library with no simd
 *      function or simdgroup matrix (needs_collectives).
 *
 *   Threadgroup memory (the front end's function-scope declarations and
 *   [[threadgroup(n)]] pointers) is uniform storage, like device memory.  A
 *   threadgroup_barrier is the simdgroup's: exec.c runs each simdgroup of such a
 *   library on a fiber of its own, and the barrier must be reached under uniform
 *   control (in the kernel, or in a helper no varying control calls).  A
 *   simdgroup_matrix is uniform (sw_lanes.h keeps one 8x8 value); its
 *   thread_elements() is varying.
 *
 *   4. One difference from fibers, by design: simd functions called in divergent
 *      code whose lanes meet again at a later simd call.  Lanes reconverge at the
 *      end of the if or loop, as a GPU does (`if (lane >= 16) y = simd_sum(x);
 *      out = simd_sum(y);` adds 32 lanes the second time); the fiber executor
 *      resolves the lanes waiting at the lowest lane's call site first and may
 *      combine fewer.  gdnbench validate therefore runs every schedule on fibers
 *      (test_sw_lanes.c pins both results).
 *
 * The rewrite keeps every token's line: output is the input's tokens in order with
 * the whitespace (and line markers) between them, plus inserted text; only a
 * compound assignment through a subscript repeats its base and index.
 *
 * The phases: lanes_parse.c (functions and statements), lanes_uniform.c (1),
 * lanes_emit.c and lanes_emit_expr.c (2), sharing lanes.h.  This file runs them
 * (msl_lanes_rewrite) and keeps the first reason a library is refused. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swmetal/lanes.h"

void lv_reject(lanes *L, int at, const char *fmt, ...) {
    if (L->why[0]) return;
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (at >= 0 && at < L->c.ntoks) {
        int line = 1;
        for (int k = 0; k < L->c.toks[at].start; k++) line += L->text[k] == '\n';
        snprintf(L->why, sizeof L->why, "%s (text line %d)", msg, line);
    } else {
        snprintf(L->why, sizeof L->why, "%s", msg);
    }
}

int lv_push_int(int **a, int *n, int *cap, int v) {
    if (*n == *cap) {
        int c = *cap ? *cap * 2 : 16;
        int *p = realloc(*a, sizeof *p * (size_t)c);
        if (!p) return -1;
        *a = p;
        *cap = c;
    }
    (*a)[(*n)++] = v;
    return 0;
}

char *msl_lanes_rewrite(const msl_unit *u, char **why) {
    lanes L;
    memset(&L, 0, sizeof L);
    L.text = u->text;
    L.u = u;
    char *err = NULL;
    char *result = NULL;
    *why = NULL;
    if (lv_lex(&L, &err) != 0) {
        msl_lexed_free(&L.c);
        free(L.decl);
        *why = err;
        return NULL;
    }
    lv_collect_names(&L);
    if (lv_scan_unsupported(&L) != 0 || lv_needs_collectives(&L) != 0) goto done;
    if (lv_find_functions(&L) != 0) {
        lv_reject(&L, -1, "could not find the functions"); /* (unless it said why) */
        goto done;
    }
    for (int fi = 0; fi < L.nfns && !L.why[0]; fi++) {
        L.cur_fn = fi;
        int next;
        L.fns[fi].body = lv_parse_stmt(&L, L.fns[fi].body_open, L.fns[fi].body_close + 1, &next);
        if (L.fns[fi].body < 0 && !L.why[0]) lv_reject(&L, L.fns[fi].body_open, "could not parse the body");
        if (L.why[0]) break;
        lv_resolve_function(&L, &L.fns[fi]);
        lv_note_mem_names(&L, &L.fns[fi]);
    }
    if (L.why[0]) goto done;
    lv_uniformity(&L);
    if (L.why[0]) goto done;
    /* same-name overloads and instantiations share one verdict per parameter */
    for (int fi = 0; fi < L.nfns; fi++) {
        lv_fn *f = &L.fns[fi];
        lv_emit_function(&L, f);
        if (L.why[0]) goto done;
    }
    lv_out_gap(&L, (int)strlen(L.text));
    result = msl_buf_take(&L.out);
    if (!result) lv_reject(&L, -1, "out of memory");
done:
    if (!result) {
        free(L.out.p);
        *why = strdup(L.why[0] ? L.why : "not rewritten");
    }
    for (int fi = 0; fi < L.nfns; fi++) {
        free(L.fns[fi].params);
        free(L.fns[fi].vnames);
        free(L.fns[fi].mem);
        free(L.fns[fi].locals);
    }
    free(L.fns);
    free(L.st);
    msl_lexed_free(&L.c);
    free(L.decl);
    free(L.types);
    free(L.tmpl);
    return result;
}

