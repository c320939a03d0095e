/* validate_pattern.c — where the bad elements of an output are, in the words a
 * kernel author needs to find the bug (issue 7 point 4).
 *
 * Outputs of the GDN ops have fixed layouts named by their tensor names (kernels.md):
 * g_cumsum [B,T,H]; A, Ai [B,T,H,C] (C = column j inside the chunk); w [B,T,H,K];
 * u, v_new, o [B,T,H,V]; h [B,N,H,V,K] (N = chunk); final, state_out [B,H,V,K].
 * The classifier looks at the set of bad elements along each axis:
 *   - the tail: only tokens of the last, partial chunk (a dropped or mis-masked tail);
 *   - one chunk / every chunk but the first (state carried between chunks);
 *   - one head, some heads (GQA mapping, a head stride), one batch;
 *   - the diagonal / above the diagonal of a chunk's [T, C] tile (strict vs non-strict
 *     causal mask);
 *   - a sub-range of V or K (one tile of a tiled loop);
 *   - every element, or scattered (races, rounding).
 * Several facets combine: "one head (h=1 of 2), the tail (t >= 64)". */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/validate.h"

static const struct {
    const char *names; /* comma list of tensor names */
    int ndim;
    const char *axes[5];
} layouts[] = {
    {"g_cumsum,gc,g", 3, {"B", "T", "H"}},
    {"A,Ai", 4, {"B", "T", "H", "C"}},
    {"w", 4, {"B", "T", "H", "K"}},
    {"u,v_new,o,output", 4, {"B", "T", "H", "V"}},
    {"h", 5, {"B", "N", "H", "V", "K"}},
    {"final,state_out", 4, {"B", "H", "V", "K"}},
};

static const char *fallback_axes[TENSOR_MAX_DIMS] = {"d0", "d1", "d2", "d3", "d4", "d5"};

static int name_in(const char *name, const char *list) {
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

void validate_axes(const tensor *t, const char *axes[TENSOR_MAX_DIMS]) {
    for (int i = 0; i < TENSOR_MAX_DIMS; i++) axes[i] = fallback_axes[i];
    for (size_t k = 0; k < sizeof layouts / sizeof layouts[0]; k++) {
        if (layouts[k].ndim != t->ndim || !name_in(t->name, layouts[k].names)) continue;
        for (int i = 0; i < t->ndim; i++) axes[i] = layouts[k].axes[i];
        return;
    }
}

int64_t validate_chunk_len(const op_desc *op, const int64_t *dim) {
    int i = op_dim_index(op, "BT");
    return i >= 0 && dim[i] > 0 ? dim[i] : 64;
}

/* Lower-case coordinate name: "t", "h"; the chunk column C is "j". */
static void coord_name(const char *axis, char *buf, size_t n) {
    if (strcmp(axis, "C") == 0) snprintf(buf, n, "j");
    else if (strcmp(axis, "N") == 0) snprintf(buf, n, "chunk");
    else {
        snprintf(buf, n, "%s", axis);
        for (char *p = buf; *p; p++)
            if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
    }
}

void validate_coord_str(const tensor *t, int64_t i, char *buf, size_t n) {
    const char *axes[TENSOR_MAX_DIMS];
    int64_t coord[TENSOR_MAX_DIMS];
    validate_axes(t, axes);
    tensor_unravel(t, i, coord);
    size_t len = (size_t)snprintf(buf, n, "(");
    for (int d = 0; d < t->ndim && len < n; d++) {
        char cn[16];
        coord_name(axes[d], cn, sizeof cn);
        len += (size_t)snprintf(buf + len, n - len, "%s%s=%lld", d ? ", " : "", cn, (long long)coord[d]);
    }
    if (len < n) snprintf(buf + len, n - len, ")");
}

typedef struct facets {
    char *buf;
    size_t n, len;
} facets;

static void add_facet(facets *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_facet(facets *f, const char *fmt, ...) {
    if (f->len >= f->n) return;
    if (f->len) f->len += (size_t)snprintf(f->buf + f->len, f->n - f->len, ", ");
    if (f->len >= f->n) return;
    va_list ap;
    va_start(ap, fmt);
    f->len += (size_t)vsnprintf(f->buf + f->len, f->n - f->len, fmt, ap);
    va_end(ap);
}

/* Describes which indices of an axis of size n hold bad elements (hits[i] > 0),
 * unless every live one does (live[i]: the reference is non-zero somewhere at that
 * index, or something is bad there — column 63 of A is always zero and says nothing). */
static void axis_facet(facets *f, const char *axis, const int64_t *hits, const unsigned char *live, int64_t n,
                       int64_t nbad) {
    int64_t cnt = 0, nlive = 0, lo = -1, hi = -1;
    for (int64_t i = 0; i < n; i++) {
        nlive += live[i] != 0;
        if (hits[i]) {
            cnt++;
            if (lo < 0) lo = i;
            hi = i;
        }
    }
    /* A subset means something only when its indices hold several bad elements each:
     * two stray elements always sit at "some" indices of every axis. */
    if (cnt == nlive || cnt == 0 || nlive <= 1 || nbad < 2 * cnt) return;
    int contiguous = hi - lo + 1 == cnt;
    /* Most of an axis with holes is noise (the largest errors of a rounding bug), not
     * a tile or a head: only contiguous ranges and small sets are worth saying. */
    if (!contiguous && cnt > nlive / 2) return;
    char cn[16];
    coord_name(axis, cn, sizeof cn);
    const char *word = strcmp(axis, "H") == 0 ? "head" : strcmp(axis, "B") == 0 ? "batch" : NULL;
    char what[24];
    snprintf(what, sizeof what, "%s%s%s", word ? word : "", word ? "s " : "", cn);
    if (cnt == 1) {
        if (word) add_facet(f, "one %s (%s=%lld of %lld)", word, cn, (long long)lo, (long long)n);
        else add_facet(f, "only %s=%lld (of %lld)", cn, (long long)lo, (long long)n);
    } else if (contiguous) {
        add_facet(f, "%s=%lld..%lld of %lld", what, (long long)lo, (long long)hi, (long long)n);
    } else {
        char list[64] = "";
        size_t len = 0;
        int shown = 0;
        for (int64_t i = 0; i < n && shown < 4; i++)
            if (hits[i]) len += (size_t)snprintf(list + len, sizeof list - len, "%s%lld", shown++ ? "," : "", (long long)i);
        add_facet(f, "%s in {%s%s} (%lld of %lld)", what, list, cnt > 4 ? ",..." : "", (long long)cnt, (long long)n);
    }
}

/* Facets of the token or chunk axis: the tail, one chunk, all but the first chunk.
 * Chunks that are not live (reference all zero, nothing bad) do not count. */
static void chunk_facet(facets *f, const int64_t *chunk_hits, const unsigned char *live, int64_t nchunks, int64_t T,
                        int64_t bt, int is_token_axis) {
    int64_t bad = 0, lo = -1, nlive = 0;
    for (int64_t c = 0; c < nchunks; c++) {
        nlive += live[c] != 0;
        if (chunk_hits[c]) {
            bad++;
            if (lo < 0) lo = c;
        }
    }
    if (bad == 0 || nlive <= 1 || bad == nlive) return;
    int64_t nbad = 0;
    for (int64_t c = 0; c < nchunks; c++) nbad += chunk_hits[c];
    if (nbad < 2 * bad) return; /* stray elements, see axis_facet */
    int partial_tail = is_token_axis && T % bt != 0;
    if (bad == 1 && lo == nchunks - 1 && partial_tail)
        add_facet(f, "the tail (last partial chunk, t >= %lld)", (long long)((nchunks - 1) * bt));
    else if (bad == 1)
        add_facet(f, "one chunk (chunk %lld of %lld%s)", (long long)lo, (long long)nchunks,
                  lo == nchunks - 1 ? ", the last" : "");
    else if (bad == nlive - 1 && !chunk_hits[0])
        add_facet(f, "every chunk but the first (state carried between chunks)");
    else
        add_facet(f, "%lld of %lld chunks", (long long)bad, (long long)nlive);
}

/* Where the bad elements of a mask lie: per index of every axis and per chunk, the
 * bad ones (hits) and those that say anything (live: not a zero of the reference). */
typedef struct tally {
    int at, ac, an;            /* the T, C (column in a chunk) and N (chunk) axes; -1: none */
    int64_t nchunks;
    int64_t *hits[TENSOR_MAX_DIMS];
    unsigned char *live[TENSOR_MAX_DIMS];
    int64_t *chunk_hits;
    unsigned char *chunk_live;
    int64_t on_diag, above, nlive; /* diagonal relation inside a chunk: j vs i = t mod BT */
} tally;

static void tally_free(tally *ty) {
    for (int d = 0; d < TENSOR_MAX_DIMS; d++) {
        free(ty->hits[d]);
        free(ty->live[d]);
    }
    free(ty->chunk_hits);
    free(ty->chunk_live);
}

/* The axes of t and room for its counts; -1 when out of memory. */
static int tally_init(tally *ty, const tensor *t, const char *const *axes, int64_t bt) {
    memset(ty, 0, sizeof *ty);
    ty->at = ty->ac = ty->an = -1;
    for (int d = 0; d < t->ndim; d++) {
        if (strcmp(axes[d], "T") == 0) ty->at = d;
        if (strcmp(axes[d], "C") == 0) ty->ac = d;
        if (strcmp(axes[d], "N") == 0) ty->an = d;
    }
    ty->nchunks = ty->at >= 0 ? (t->shape[ty->at] + bt - 1) / bt : ty->an >= 0 ? t->shape[ty->an] : 0;
    ty->chunk_hits = ty->nchunks ? calloc((size_t)ty->nchunks, sizeof(int64_t)) : NULL;
    ty->chunk_live = ty->nchunks ? calloc((size_t)ty->nchunks, 1) : NULL;
    int ok = !ty->nchunks || (ty->chunk_hits && ty->chunk_live);
    for (int d = 0; d < t->ndim && ok; d++) {
        ty->hits[d] = calloc((size_t)t->shape[d], sizeof(int64_t));
        ty->live[d] = calloc((size_t)t->shape[d], 1);
        ok = ty->hits[d] && ty->live[d];
    }
    return ok ? 0 : -1;
}

static void tally_count(tally *ty, const tensor *t, const unsigned char *mask, const double *ref, int64_t bt) {
    int64_t coord[TENSOR_MAX_DIMS];
    for (int64_t i = 0, numel = tensor_numel(t); i < numel; i++) {
        if (!mask[i] && ref && ref[i] == 0) continue;
        tensor_unravel(t, i, coord);
        int64_t chunk = ty->at >= 0 ? coord[ty->at] / bt : ty->an >= 0 ? coord[ty->an] : 0;
        if (ty->nchunks) ty->chunk_live[chunk] = 1;
        for (int d = 0; d < t->ndim; d++) ty->live[d][coord[d]] = 1;
        ty->nlive++;
        if (!mask[i]) continue;
        for (int d = 0; d < t->ndim; d++) ty->hits[d][coord[d]]++;
        if (ty->nchunks) ty->chunk_hits[chunk]++;
        if (ty->at >= 0 && ty->ac >= 0) {
            int64_t row = coord[ty->at] % bt, col = coord[ty->ac];
            ty->on_diag += col == row;
            ty->above += col > row;
        }
    }
}

/* The facets the counts show: the diagonal, the chunks, each other axis; failing
 * all, how much of the tensor and how spread. */
static void describe_tally(facets *f, const tally *ty, const tensor *t, const char *const *axes, int64_t nbad,
                           int64_t bt) {
    int at = ty->at, ac = ty->ac;
    if (at >= 0 && ac >= 0) {
        if (ty->on_diag == nbad) add_facet(f, "the diagonal (j == i in the chunk)");
        else if (ty->above == nbad) add_facet(f, "above the diagonal (j > i: the causal mask)");
        else if (ty->on_diag + ty->above == nbad) add_facet(f, "on and above the diagonal (j >= i: the causal mask)");
    }
    if (ty->nchunks)
        chunk_facet(f, ty->chunk_hits, ty->chunk_live, ty->nchunks, at >= 0 ? t->shape[at] : 0, bt, at >= 0);
    for (int d = 0; d < t->ndim; d++) {
        if (d == at || d == ty->an) continue; /* described by chunks */
        if (d == ac && f->len) continue;      /* described by the diagonal */
        axis_facet(f, axes[d], ty->hits[d], ty->live[d], t->shape[d], nbad);
    }
    if (f->len) return;
    /* Fractions of the live elements: half of A is zero by construction. */
    int64_t numel = tensor_numel(t), nlive = ty->nlive;
    double frac = (double)nbad / (double)(nlive ? nlive : 1);
    const char *of = nlive < numel ? " of the non-zero ones" : "";
    if (nbad >= nlive)
        snprintf(f->buf, f->n, "every element%s", nlive < numel ? " where the reference is non-zero" : "");
    else if (frac > 0.5)
        snprintf(f->buf, f->n, "most elements (%.0f%%%s), spread over every axis", 100 * frac, of);
    else
        snprintf(f->buf, f->n, "scattered (%lld of %lld %selements, %.2g%%, no axis pattern)", (long long)nbad,
                 (long long)nlive, nlive < numel ? "non-zero " : "", 100 * frac);
}

void validate_pattern(const tensor *t, const unsigned char *mask, const double *ref, int64_t bt, char *buf, size_t n) {
    facets f = {buf, n, 0};
    buf[0] = 0;
    int64_t numel = tensor_numel(t), nbad = 0;
    for (int64_t i = 0; i < numel; i++) nbad += mask[i] != 0;
    if (nbad == 0) {
        snprintf(buf, n, "none");
        return;
    }
    if (nbad == numel) {
        snprintf(buf, n, "every element");
        return;
    }
    if (nbad == 1) {
        snprintf(buf, n, "a single element");
        return;
    }
    const char *axes[TENSOR_MAX_DIMS];
    validate_axes(t, axes);
    tally ty;
    if (tally_init(&ty, t, axes, bt) == 0) {
        tally_count(&ty, t, mask, ref, bt);
        describe_tally(&f, &ty, t, axes, nbad, bt);
    } else {
        snprintf(buf, n, "(out of memory for the pattern)");
    }
    tally_free(&ty);
}
