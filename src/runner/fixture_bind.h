/* fixture_bind.h — running an op on recorded inputs (--fixture PATH [--map F=B]).
 *
 * A plan says which fixture tensor goes to which buffer of the op: --map FILE_NAME=
 * BUFFER first, then the buffer's own name and its alternative names (io/fixture.h).
 * Tensors bound to nothing are listed ("ignored: ...").  The shape comes from the
 * fixture's parameters (metadata) and, for every dimension that is an axis of a
 * buffer (op_desc.shapes), from the shapes of the tensors bound; two sources that
 * disagree are an error naming both.  A flag that contradicts the fixture is an
 * error; a dimension nothing fixes keeps its flag or default, and the plan says so.
 * Inputs must then have the buffers' shapes; f32/f16 data for a bf16 buffer is
 * rounded to nearest even (bf16/f16 for an f32 buffer widened exactly), and the
 * record says so.  Outputs the fixture carries become an extra check, reference
 * "fixture", with the op's f64 tolerances (or the fixture's own). */
#ifndef GDN_FIXTURE_BIND_H
#define GDN_FIXTURE_BIND_H

#include "io/fixture.h"
#include "ops/op.h"
#include "runner/record.h"

#define FIXTURE_MAX_MAPS 32

/* --map FILE_NAME=BUFFER */
typedef struct fixture_map {
    char from[TENSOR_NAME_MAX];
    char to[TENSOR_NAME_MAX];
} fixture_map;

typedef enum fixture_dim_source {
    FIXDIM_NONE = 0,   /* no parameter or tensor fixes it: the flag or the default */
    FIXDIM_META,       /* a parameter of the fixture (metadata) */
    FIXDIM_TENSOR,     /* an axis of a tensor's shape */
} fixture_dim_source;

typedef struct fixture_plan {
    int tensor_of[OP_MAX_BUFS];        /* fixture index of the tensor bound to buffer i, -1 none */
    int64_t dim[OP_MAX_DIMS];          /* valid where dim_source != FIXDIM_NONE */
    fixture_dim_source dim_source[OP_MAX_DIMS];
    char dim_from[OP_MAX_DIMS][TENSOR_NAME_MAX]; /* the tensor (or parameter) that fixed it */
    char ignored[512];                 /* "x, y": tensors bound to no buffer, "" when none */
    int nignored;
} fixture_plan;

/* Parses "FILE_NAME=BUFFER" into m.  Returns 0 or -1 with err set. */
int fixture_map_parse(const char *val, fixture_map *m, char *err, size_t errlen);

/* Builds the plan of fixture f for op.  Returns 0, or -1 with a one-line error (a
 * --map naming no tensor of the file or no buffer of the op, a tensor whose rank is
 * not its buffer's, two tensors that disagree on a dimension). */
int fixture_plan_make(const fixture *f, const op_desc *op, const fixture_map *maps, int nmaps, fixture_plan *p,
                      char *err, size_t errlen);

/* Copies the bound tensors into every BUF_IN/BUF_INOUT tensor of the case (and
 * adds each conversion to notes), checks that every bound output has its
 * buffer's shape.  Returns 0, or -1 with a one-line error naming the file and the
 * tensor. */
int fixture_bind_inputs(const fixture *f, const fixture_plan *p, op_case *c, rec_fixture *notes, char *err,
                        size_t errlen);

/* Fills notes' path, format, ignored and unfixed (dims: the case's values) from the plan. */
void fixture_plan_notes(const fixture *f, const fixture_plan *p, const op_desc *op, const int64_t *dim,
                        rec_fixture *notes);

/* Appends to rec one check per output the fixture has an expected value for, with
 * the fixture's tolerances (else the op's f64 tolerances; --atol/--rtol override).
 * Returns 1 if all of them pass. */
int fixture_check_outputs(const fixture *f, const fixture_plan *p, const op_case *c, int has_atol, double atol,
                          int has_rtol, double rtol, run_record *rec);

#endif
