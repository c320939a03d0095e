/* gdn_pipeline_ref.c — the chunked forward pipeline as a chain of the stage references.
 *
 * PARITY keeps every intermediate in its ABI dtype (q/k after l2norm bf16, g_cumsum
 * f32, A f32, Ai f32, w/u bf16, h/v_new bf16): exactly what a Metal pipeline of one
 * dispatch per stage hands from stage to stage.  F64 keeps them in double (the
 * chunked algorithm in exact-ish arithmetic; it agrees with the f64 recurrence to
 * ~1e-12). */
#include <stdlib.h>

#include "ref/gdn_ref.h"

enum { PL_QN, PL_KN, PL_GC, PL_A, PL_AI, PL_W, PL_U, PL_H, PL_VN, PL_N };

int gdn_chunk_pipeline_ref(ref_kind kind, gdn_shape s, int l2norm, gdn_view q, gdn_view k, gdn_view v, gdn_view g,
                           gdn_view beta, gdn_view h0, double scale, gdn_sink o, gdn_sink final) {
    int is64 = kind == REF_F64;
    dtype bf = is64 ? DT_F64 : DT_BF16, f32 = is64 ? DT_F64 : DT_F32;
    struct {
        const char *name;
        dtype dt;
        int ndim;
        int64_t shape[5];
    } spec[PL_N] = {
        [PL_QN] = {"q_l2", bf, 4, {s.B, s.T, s.Hg, s.K}},
        [PL_KN] = {"k_l2", bf, 4, {s.B, s.T, s.Hg, s.K}},
        [PL_GC] = {"g_cumsum", f32, 3, {s.B, s.T, s.H}},
        [PL_A] = {"A", f32, 4, {s.B, s.T, s.H, s.BT}},
        [PL_AI] = {"Ai", f32, 4, {s.B, s.T, s.H, s.BT}},
        [PL_W] = {"w", bf, 4, {s.B, s.T, s.H, s.K}},
        [PL_U] = {"u", bf, 4, {s.B, s.T, s.H, s.V}},
        [PL_H] = {"h", bf, 5, {s.B, s.NT, s.H, s.V, s.K}},
        [PL_VN] = {"v_new", bf, 4, {s.B, s.T, s.H, s.V}},
    };
    tensor *t[PL_N] = {0};
    int rc = -1;
    for (int i = 0; i < PL_N; i++) {
        if ((i == PL_QN || i == PL_KN) && !l2norm) continue;
        t[i] = tensor_new(spec[i].name, spec[i].dt, spec[i].ndim, spec[i].shape);
        if (!t[i]) goto done;
    }
    if (l2norm) {
        if (gdn_l2norm_ref(kind, q, gdn_sink_tensor(t[PL_QN]), s.B * s.T * s.Hg, s.K)) goto done;
        if (gdn_l2norm_ref(kind, k, gdn_sink_tensor(t[PL_KN]), s.B * s.T * s.Hg, s.K)) goto done;
        q = gdn_view_tensor(t[PL_QN]);
        k = gdn_view_tensor(t[PL_KN]);
    }
    gdn_view gc = gdn_view_tensor(t[PL_GC]);
    if (gdn_cumsum_view_ref(kind, s, g, gdn_sink_tensor(t[PL_GC]))) goto done;
    if (gdn_kkt_ref(kind, s, k, beta, gc, gdn_sink_tensor(t[PL_A]))) goto done;
    if (gdn_solve_tril_ref(kind, s, gdn_view_tensor(t[PL_A]), gdn_sink_tensor(t[PL_AI]))) goto done;
    if (gdn_wy_ref(kind, s, k, v, beta, gc, gdn_view_tensor(t[PL_AI]), gdn_sink_tensor(t[PL_W]),
                   gdn_sink_tensor(t[PL_U])))
        goto done;
    if (gdn_chunk_h_ref(kind, s, k, gdn_view_tensor(t[PL_W]), gdn_view_tensor(t[PL_U]), gc, h0,
                        gdn_sink_tensor(t[PL_H]), gdn_sink_tensor(t[PL_VN]), final))
        goto done;
    if (gdn_chunk_o_ref(kind, s, q, k, gdn_view_tensor(t[PL_VN]), gdn_view_tensor(t[PL_H]), gc, scale, o)) goto done;
    rc = 0;
done:
    for (int i = 0; i < PL_N; i++) tensor_free(t[i]);
    return rc;
}
