/* gdn_recurrence_f64_body.h — the per-target body of gdn_recurrence_f64.c.
 *
 * Not a header of its own: gdn_recurrence_f64.c includes it once per vector width,
 * after defining
 *   F64_SFX   the suffix of the names defined here (avx512, avx2, generic)
 *   F64_VL    doubles per vector: 8, 4 or 2.  A block of state rows is two vectors
 *             (2 F64_VL rows)
 *   F64_MT    tokens per register block of d and o (1, 2, 4 or 8)
 *   F64_MC    state columns per register block of the update (1 to 8)
 *   F64_GT    token rows per register block of the Gram products (1, 2 or 4)
 *   F64_ATTR  the attributes of the entry point (a target, or nothing)
 * and defines rows_job_<F64_SFX>, the whole job (see rows_job_fn).  The vectors are
 * as wide as the target's registers because GCC turns wider generic vectors into
 * slow piecewise code; the register blocks are named variables, not arrays, because
 * compilers do not all keep small arrays of vectors in registers.  A block of
 * F64_MT tokens holds 2 F64_MT vectors of sums, beside the two vectors of state it
 * streams and the broadcast. */

#define F64_CAT2(a, b) a##_##b
#define F64_CAT(a, b) F64_CAT2(a, b)
#define F64_FN(name) F64_CAT(name, F64_SFX)
#define F64_V F64_FN(vd)
#define RB (2 * F64_VL) /* state rows per block */

typedef double F64_V __attribute__((vector_size(8 * F64_VL)));
typedef float F64_FN(vf) __attribute__((vector_size(4 * F64_VL)));
typedef uint32_t F64_FN(vu) __attribute__((vector_size(4 * F64_VL)));
typedef uint16_t F64_FN(vh) __attribute__((vector_size(2 * F64_VL)));

F64_INLINE void F64_FN(ld)(F64_V *v, const double *p) { memcpy(v, p, sizeof *v); }
F64_INLINE void F64_FN(st)(double *p, const F64_V *v) { memcpy(p, v, sizeof *v); }

/* dst[i] = x * src[i] for a row of n elements of a bf16, f32 or f64 view (other
 * dtypes through gdn_load_f64); bf16 and f32 convert a vector at a time. */
F64_INLINE void F64_FN(load_row)(gdn_view v, int64_t off, int64_t n, double x, double *dst) {
    int64_t i = 0;
    if (v.dt == DT_BF16) {
        const uint16_t *src = (const uint16_t *)v.data + off;
        for (; i + F64_VL <= n; i += F64_VL) {
            F64_FN(vh) hv;
            F64_FN(vf) f;
            memcpy(&hv, src + i, sizeof hv);
            F64_FN(vu) u = __builtin_convertvector(hv, F64_FN(vu)) << 16;
            memcpy(&f, &u, sizeof f);
            F64_V dv = x * __builtin_convertvector(f, F64_V);
            F64_FN(st)(dst + i, &dv);
        }
        for (; i < n; i++) dst[i] = x * bf16_to_f32(src[i]);
    } else if (v.dt == DT_F32) {
        const float *src = (const float *)v.data + off;
        for (; i + F64_VL <= n; i += F64_VL) {
            F64_FN(vf) f;
            memcpy(&f, src + i, sizeof f);
            F64_V dv = x * __builtin_convertvector(f, F64_V);
            F64_FN(st)(dst + i, &dv);
        }
        for (; i < n; i++) dst[i] = x * src[i];
    } else {
        gdn_load_f64(v, off, n, 1, n, dst);
        for (; i < n; i++) dst[i] *= x;
    }
}

/* Repeats X(i) for i = 0..7, and X(i, j) for j = 0..7; the register blocks guard
 * each with i < their size, a constant, so the compiler keeps what is used. */
#define F64_REP(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define F64_REPJ(X, i) X(i, 0) X(i, 1) X(i, 2) X(i, 3) X(i, 4) X(i, 5) X(i, 6) X(i, 7)
#define F64_REP4(X) X(0) X(1) X(2) X(3)
#define F64_DECL(i) F64_V a##i##_0 = {0}, a##i##_1 = {0};

/* G[t][j] = X_t . k_j for the rows t in [t0, t0 + F64_GT) and the nv vectors of j
 * from vector j0 on: F64_GT token rows against up to four vectors of kT. */
F64_INLINE void F64_FN(gram_block)(const double *X, const double *kT, int64_t K, double *G, int64_t t0, int64_t j0,
                                   int nv) {
#define F64_GDECL(i) F64_V g##i##_0 = {0}, g##i##_1 = {0}, g##i##_2 = {0}, g##i##_3 = {0};
    F64_REP4(F64_GDECL)
    for (int64_t c = 0; c < K; c++) {
        F64_V k0 = {0}, k1 = {0}, k2 = {0}, k3 = {0};
        const double *kc = kT + c * F64_TOKENS + j0 * F64_VL;
        F64_FN(ld)(&k0, kc);
        if (nv > 1) F64_FN(ld)(&k1, kc + F64_VL);
        if (nv > 2) F64_FN(ld)(&k2, kc + 2 * F64_VL);
        if (nv > 3) F64_FN(ld)(&k3, kc + 3 * F64_VL);
#define F64_GACC(i)                                                                                                    \
    if (i < F64_GT) {                                                                                                  \
        double x = X[(t0 + i) * K + c];                                                                                \
        g##i##_0 += x * k0;                                                                                            \
        if (nv > 1) g##i##_1 += x * k1;                                                                                \
        if (nv > 2) g##i##_2 += x * k2;                                                                                \
        if (nv > 3) g##i##_3 += x * k3;                                                                                \
    }
        F64_REP4(F64_GACC)
    }
#define F64_GST(i)                                                                                                     \
    if (i < F64_GT) {                                                                                                  \
        double *g = G + (t0 + i) * F64_TOKENS + j0 * F64_VL;                                                           \
        F64_FN(st)(g, &g##i##_0);                                                                                      \
        if (nv > 1) F64_FN(st)(g + F64_VL, &g##i##_1);                                                                 \
        if (nv > 2) F64_FN(st)(g + 2 * F64_VL, &g##i##_2);                                                             \
        if (nv > 3) F64_FN(st)(g + 3 * F64_VL, &g##i##_3);                                                             \
    }
    F64_REP4(F64_GST)
#undef F64_GDECL
#undef F64_GACC
#undef F64_GST
}

/* Only j <= t is used, so rows t0.. stop at the vector holding j = t0 + F64_GT - 1. */
F64_INLINE void F64_FN(gram)(const double *X, const double *kT, int64_t K, int64_t nt8, double *G) {
    for (int64_t t0 = 0; t0 < nt8; t0 += F64_GT) {
        int64_t nvec = (t0 + F64_GT + F64_VL - 1) / F64_VL;
        for (int64_t j0 = 0; j0 < nvec; j0 += 4) {
            switch (nvec - j0) {
            case 1: F64_FN(gram_block)(X, kT, K, G, t0, j0, 1); break;
            case 2: F64_FN(gram_block)(X, kT, K, G, t0, j0, 2); break;
            case 3: F64_FN(gram_block)(X, kT, K, G, t0, j0, 3); break;
            default: F64_FN(gram_block)(X, kT, K, G, t0, j0, 4); break;
            }
        }
    }
}

/* The sums block_d and block_o start from, for the register block of tokens
 * t0..t0+F64_MT: a<i> = scl[t] (S x_t) + sum_{j < jend} coef(t, j) d_j, the state
 * block streamed column by column and d token by token.  Uses K, T, S, w, t0. */
#define F64_ACC_SX(i)                                                                                                  \
    if (i < F64_MT) {                                                                                                  \
        double xi = x[i * K + c];                                                                                      \
        a##i##_0 += xi * s0, a##i##_1 += xi * s1;                                                                      \
    }
#define F64_SCALE(i)                                                                                                   \
    if (i < F64_MT) a##i##_0 *= scl[t0 + i], a##i##_1 *= scl[t0 + i];
#define F64_ACC_D(i)                                                                                                   \
    if (i < F64_MT) {                                                                                                  \
        double cij = coef[(t0 + i) * T + j];                                                                           \
        a##i##_0 += cij * d0, a##i##_1 += cij * d1;                                                                    \
    }
#define F64_SUMS(X, SCL, COEF, JEND)                                                                                   \
    {                                                                                                                  \
        const double *x = (X) + t0 * K, *scl = (SCL), *coef = (COEF);                                                  \
        for (int64_t c = 0; c < K; c++) {                                                                              \
            F64_V s0, s1;                                                                                              \
            F64_FN(ld)(&s0, S + c * RB), F64_FN(ld)(&s1, S + c * RB + F64_VL);                                         \
            F64_REP(F64_ACC_SX)                                                                                        \
        }                                                                                                              \
        F64_REP(F64_SCALE)                                                                                             \
        for (int64_t j = 0; j < (JEND); j++) {                                                                         \
            F64_V d0, d1;                                                                                              \
            F64_FN(ld)(&d0, w->d + j * RB), F64_FN(ld)(&d1, w->d + j * RB + F64_VL);                                   \
            F64_REP(F64_ACC_D)                                                                                         \
        }                                                                                                              \
    }

/* Block rb, step 1: d_t for every token of the tile, F64_MT tokens at a time:
 * sums = beta_t A_t S k_t + the earlier register blocks' m(t,j) d_j, then the
 * substitution within the register block, in registers.  Also e(n,t) d_t, the
 * weight of k_t in the update. */
F64_INLINE void F64_FN(block_d)(const f64_tile *w, const double *S, int64_t rb, int64_t nt8) {
    int64_t K = w->K, T = F64_TOKENS;
    for (int64_t t0 = 0; t0 < nt8; t0 += F64_MT) {
        F64_REP(F64_DECL)
        F64_SUMS(w->k, w->ka, w->m, t0)
#define F64_SUB(i, j)                                                                                                  \
    if (j < i) a##i##_0 -= mrow[j] * a##j##_0, a##i##_1 -= mrow[j] * a##j##_1;
#define F64_SOLVE(i)                                                                                                   \
    if (i < F64_MT) {                                                                                                  \
        const double *mrow = w->m + (t0 + i) * T + t0, *bv = w->bv + (t0 + i) * w->Rp + rb * RB;                       \
        F64_V b0, b1;                                                                                                      \
        F64_FN(ld)(&b0, bv), F64_FN(ld)(&b1, bv + F64_VL);                                                             \
        a##i##_0 = b0 - a##i##_0, a##i##_1 = b1 - a##i##_1;                                                            \
        F64_REPJ(F64_SUB, i)                                                                                           \
        F64_FN(st)(w->d + (t0 + i) * RB, &a##i##_0), F64_FN(st)(w->d + (t0 + i) * RB + F64_VL, &a##i##_1);             \
        F64_V e0 = w->e[t0 + i] * a##i##_0, e1 = w->e[t0 + i] * a##i##_1;                                              \
        F64_FN(st)(w->de + (t0 + i) * RB, &e0), F64_FN(st)(w->de + (t0 + i) * RB + F64_VL, &e1);                       \
    }
        F64_REP(F64_SOLVE)
#undef F64_SUB
#undef F64_SOLVE
    }
}

/* Block rb, step 2: o_t = scale A_t S q_t + sum_{j <= t} p(t,j) d_j, F64_MT tokens
 * at a time (p is zero above the diagonal, so the register block takes its last
 * j's whole), into out[t * ldo]. */
F64_INLINE void F64_FN(block_o)(const f64_tile *w, const double *S, int64_t nt8, double *out, int64_t ldo) {
    int64_t K = w->K, T = F64_TOKENS;
    for (int64_t t0 = 0; t0 < nt8; t0 += F64_MT) {
        F64_REP(F64_DECL)
        F64_SUMS(w->q, w->qa, w->p, t0 + F64_MT)
#define F64_STORE(i)                                                                                                   \
    if (i < F64_MT) F64_FN(st)(out + (t0 + i) * ldo, &a##i##_0), F64_FN(st)(out + (t0 + i) * ldo + F64_VL, &a##i##_1);
        F64_REP(F64_STORE)
#undef F64_STORE
    }
}
#undef F64_SUMS
#undef F64_ACC_SX
#undef F64_SCALE
#undef F64_ACC_D

/* Block rb, step 3: column c of the block becomes A_n S[c] + sum_t k_t[c] e(n,t) d_t,
 * mc columns at a time. */
F64_INLINE void F64_FN(block_update_cols)(const f64_tile *w, double *S, int64_t c0, double An, int64_t nt8, int mc) {
    F64_REP(F64_DECL)
#define F64_LOAD(i)                                                                                                    \
    if (i < mc) {                                                                                                      \
        F64_FN(ld)(&a##i##_0, S + (c0 + i) * RB), F64_FN(ld)(&a##i##_1, S + (c0 + i) * RB + F64_VL);                   \
        a##i##_0 *= An, a##i##_1 *= An;                                                                                \
    }
    F64_REP(F64_LOAD)
#undef F64_LOAD
    for (int64_t t = 0; t < nt8; t++) {
        F64_V d0, d1;
        F64_FN(ld)(&d0, w->de + t * RB), F64_FN(ld)(&d1, w->de + t * RB + F64_VL);
        const double *x = w->k + t * w->K + c0;
#define F64_ACC(i)                                                                                                     \
    if (i < mc) a##i##_0 += x[i] * d0, a##i##_1 += x[i] * d1;
        F64_REP(F64_ACC)
#undef F64_ACC
    }
#define F64_STORE(i)                                                                                                   \
    if (i < mc) F64_FN(st)(S + (c0 + i) * RB, &a##i##_0), F64_FN(st)(S + (c0 + i) * RB + F64_VL, &a##i##_1);
    F64_REP(F64_STORE)
#undef F64_STORE
}

F64_INLINE void F64_FN(block_update)(const f64_tile *w, double *S, double An, int64_t nt8) {
    int64_t c = 0;
    for (; c + F64_MC <= w->K; c += F64_MC) F64_FN(block_update_cols)(w, S, c, An, nt8, F64_MC);
    for (; c < w->K; c++) F64_FN(block_update_cols)(w, S, c, An, nt8, 1);
}

/* One value head h over the tile at t0 (nt tokens, nt8 with the padding): its
 * decays, m and p, beta v; then every row block through the three steps. */
F64_INLINE void F64_FN(head_tile)(const gdn_recurrence_args *a, f64_tile *w, double *Sh, int64_t b, int64_t h,
                                  int64_t v0, int64_t t0, int64_t nt, int64_t nt8) {
    gdn_shape s = a->s;
    int64_t K = w->K, R = w->R, T = F64_TOKENS;
    int64_t soff = (b * s.T + t0) * s.H + h, voff = ((b * s.T + t0) * s.H + h) * s.V + v0;
    if (t0 + T < s.T) {
        int64_t nn = s.T - t0 - T < T ? s.T - t0 - T : T;
        gdn_prefetch_rows(a->v, voff + T * s.H * s.V, s.H * s.V, nn, R);
    }
    f64_decays(a, w, soff, nt, nt8);
    for (int64_t t = 0; t < nt8; t++) {
        double *bv = w->bv + t * w->Rp;
        if (t < nt) F64_FN(load_row)(a->v, voff + t * s.H * s.V, R, w->beta[t], bv);
        else memset(bv, 0, sizeof(double) * (size_t)R);
    }
    /* o straight into the output when it is f64 and the rows fill the blocks */
    int direct = a->o.dt == DT_F64 && R == w->Rp && nt == nt8;
    double *out = direct ? (double *)a->o.data + voff : w->o;
    int64_t ldo = direct ? s.H * s.V : w->Rp;
    double An = w->A[nt8 - 1];
    for (int64_t rb = 0; rb < w->Rp / RB; rb++) {
        double *S = Sh + rb * K * RB;
        F64_FN(block_d)(w, S, rb, nt8);
        F64_FN(block_o)(w, S, nt8, out + rb * RB, ldo);
        F64_FN(block_update)(w, S, An, nt8);
    }
    if (!direct)
        for (int64_t t = 0; t < nt; t++) gdn_store_f64(a->o, voff + t * s.H * s.V, 0, 1, R, w->o + t * w->Rp);
}

/* The states of the job's heads in (dir 0) or out (dir 1) through buf, F64_TOKENS
 * rows at a time. */
F64_INLINE void F64_FN(move_states)(const gdn_recurrence_args *a, f64_tile *w, int64_t b, const int64_t *heads,
                                    int64_t nh, int64_t v0, double *buf, int dir) {
    int64_t K = w->K, R = w->R, T = F64_TOKENS, Ssize = w->Rp * K;
    for (int64_t hi = 0; hi < nh; hi++) {
        int64_t state_off = ((b * a->s.H + heads[hi]) * a->s.V + v0) * K;
        double *Sh = w->S + hi * Ssize;
        for (int64_t r0 = 0; r0 < R; r0 += T) {
            int64_t n = R - r0 < T ? R - r0 : T;
            if (dir == 0) gdn_load_f64(a->h0, state_off + r0 * K, K, n, K, buf);
            for (int64_t r = r0; r < r0 + n; r++) {
                double *col = Sh + (r / RB) * K * RB + r % RB, *row = buf + (r - r0) * K;
                for (int64_t c = 0; c < K; c++) {
                    if (dir == 0) col[c * RB] = row[c];
                    else row[c] = col[c * RB];
                }
            }
            if (dir == 1) gdn_store_f64(a->final, state_off + r0 * K, K, n, K, buf);
        }
    }
}

F64_ATTR static int F64_FN(rows_job)(const gdn_recurrence_args *a, int64_t b, int64_t kh, const int64_t *heads,
                                     int64_t nh, int64_t v0, int64_t R) {
    gdn_shape s = a->s;
    int64_t K = s.K, T = F64_TOKENS;
    f64_tile w = {.K = K, .R = R, .Rp = (R + RB - 1) / RB * RB};
    void *block = f64_scratch(&w, nh);
    if (!block) return -1;
    int64_t Ssize = w.Rp * K;
    F64_FN(move_states)(a, &w, b, heads, nh, v0, w.k, 0);
    for (int64_t t0 = 0; t0 < s.T; t0 += T) {
        int64_t nt = s.T - t0 < T ? s.T - t0 : T, nt8 = (nt + 7) & ~(int64_t)7;
        int64_t qoff = ((b * s.T + t0) * s.Hg + kh) * K, qstride = s.Hg * K;
        if (t0 + T < s.T) {
            int64_t nn = s.T - t0 - T < T ? s.T - t0 - T : T;
            gdn_prefetch_rows(a->k, qoff + T * qstride, qstride, nn, K);
            gdn_prefetch_rows(a->q, qoff + T * qstride, qstride, nn, K);
        }
        /* the last tile: tokens nt..nt8 are padding (zero k, q, v and beta, a = 1) */
        for (int64_t t = 0; t < nt; t++) {
            F64_FN(load_row)(a->k, qoff + t * qstride, K, 1, w.k + t * K);
            F64_FN(load_row)(a->q, qoff + t * qstride, K, 1, w.q + t * K);
        }
        f64_tile_keys(a, &w, nt, nt8);
        F64_FN(gram)(w.k, w.kT, K, nt8, w.gk);
        F64_FN(gram)(w.q, w.kT, K, nt8, w.gq);
        for (int64_t hi = 0; hi < nh; hi++) F64_FN(head_tile)(a, &w, w.S + hi * Ssize, b, heads[hi], v0, t0, nt, nt8);
    }
    F64_FN(move_states)(a, &w, b, heads, nh, v0, w.k, 1);
    free(block);
    return 0;
}

#undef F64_REP
#undef F64_REPJ
#undef F64_REP4
#undef F64_DECL
#undef F64_V
#undef RB
#undef F64_FN
#undef F64_CAT
#undef F64_CAT2
#undef F64_SFX
#undef F64_VL
#undef F64_MT
#undef F64_MC
#undef F64_GT
#undef F64_ATTR
