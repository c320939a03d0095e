/* kcase.h — kernel case files: one launch (or a short sequence) of any MSL kernel with
 * its buffers, expected outputs and tolerances (../shared/spec/case.md, `"case": 1`).
 *
 * The model here is what a case says, checked: every key known, every value of the
 * right JSON type and range, names and paths resolved.  It knows nothing of devices:
 * the runner binds it to a compiled kernel (parameter names, struct layouts) and runs
 * it.  A case comes from a JSON file (kc_parse / kc_load) or from the flag form
 * (kcase_flags.h) and goes back to JSON (kc_to_json, `--print-case`), so the two forms
 * are one thing.  Every error is one line "WHERE: KEY.PATH: what is wrong; the fix".
 *
 * Ownership: a kc_case owns every string and array in it; kc_free frees it all. */
#ifndef GDN_KCASE_H
#define GDN_KCASE_H

#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"

/* The element types a case names (spec order). */
typedef enum kc_dtype {
    KC_F32 = 0, KC_F16, KC_BF16, KC_I8, KC_U8, KC_I16, KC_U16, KC_I32, KC_U32, KC_I64, KC_U64, KC_BOOL,
    KC_NDTYPES
} kc_dtype;

const char *kc_dtype_name(kc_dtype t);         /* "float32", ... */
size_t kc_dtype_size(kc_dtype t);
int kc_dtype_parse(const char *s, kc_dtype *out); /* 0, or -1 for a name not in the list */
int kc_dtype_is_float(kc_dtype t);
/* The list of names, for messages: "float32 float16 ... bool". */
const char *kc_dtype_list(void);
/* A tensor file's dtype as a case dtype (f64 has none: -1). */
int kc_dtype_from_tensor(dtype t, kc_dtype *out);
/* Element i of raw data of type t as a double, and a double stored as type t (floats
 * rounded to nearest even, integers saturated, bool as v != 0). */
double kc_load(kc_dtype t, const void *base, size_t i);
void kc_store(kc_dtype t, void *base, size_t i, double v);
/* 1 when v is a value type t holds exactly (integers in range and whole; bools 0/1;
 * any finite or infinite or NaN number for floats). */
int kc_value_fits(kc_dtype t, double v);

typedef enum kc_init {
    KC_INIT_ZEROS = 0,
    KC_INIT_POISON,      /* a pattern no kernel writes by chance: unwritten elements are counted */
    KC_INIT_FILL,        /* a[0] */
    KC_INIT_ARANGE,      /* a[0] + i * a[1] */
    KC_INIT_UNIFORM,     /* in [a[0], a[1]) */
    KC_INIT_NORMAL       /* mean a[0], std a[1] */
} kc_init;

/* Where a buffer's contents come from. */
typedef enum kc_source_kind {
    KC_BUF_ARRAY = 0,    /* dtype + shape + init */
    KC_BUF_FILE,         /* .npy / .npz / .safetensors (dtype and shape from the file) */
    KC_BUF_VALUE,        /* a scalar or an array, bound with setBytes */
    KC_BUF_STRUCT        /* a `constant Struct &` from field names */
} kc_source_kind;

typedef enum kc_expect_kind {
    KC_EXPECT_NONE = 0,
    KC_EXPECT_FILE,
    KC_EXPECT_VALUE,
    KC_EXPECT_BACKEND    /* another backend's result of the same case ("sw") */
} kc_expect_kind;

/* Bits of kc_expect.has: which tolerances the case gives. */
enum { KC_TOL_ATOL = 1, KC_TOL_RTOL = 2, KC_TOL_REL_L2 = 4, KC_TOL_ULP = 8 };

typedef struct kc_values {
    double *v;
    int n;
    int is_array;        /* 1: written as a JSON array (even of one element) */
} kc_values;

typedef struct kc_expect {
    kc_expect_kind kind;
    char *file, *tensor;  /* FILE: path as written, and the member of an .npz/.safetensors */
    kc_values value;      /* VALUE: one value (broadcast) or one per element */
    char *backend;        /* BACKEND: "sw" */
    double atol, rtol, rel_l2, ulp;
    unsigned has;         /* KC_TOL_* given */
} kc_expect;

/* A "struct" field: numbers, a nested struct (a JSON object of its fields), or an
 * array of structs (a JSON array of such objects). */
typedef enum kc_field_kind { KC_FIELD_VALUES = 0, KC_FIELD_STRUCT, KC_FIELD_STRUCTS } kc_field_kind;

/* Nested structs deeper than this are refused when parsed. */
#define KC_MAX_FIELD_DEPTH 8

typedef struct kc_field {
    char *name;           /* NULL for an element of an array of structs */
    kc_field_kind kind;
    kc_values value;      /* KC_FIELD_VALUES */
    struct kc_field *sub; /* STRUCT: its fields; STRUCTS: its elements (each a STRUCT) */
    int nsub;
} kc_field;

typedef struct kc_buffer {
    char *name;           /* the kernel's parameter name (the key in "buffers") */
    int index;            /* "index": n binds at [[buffer(n)]]; -1: by name */
    kc_source_kind kind;
    int has_dtype, has_shape;
    kc_dtype dtype;
    int ndim;
    int64_t shape[TENSOR_MAX_DIMS];
    int has_init;         /* 0: the runner picks (poison for what the kernel writes, else zeros) */
    kc_init init;
    double init_arg[2];
    char *file, *tensor;  /* KC_BUF_FILE: path as written, member name (.npz/.safetensors) */
    kc_values value;      /* KC_BUF_VALUE */
    kc_field *fields;     /* KC_BUF_STRUCT, in the order written */
    int nfields;
    kc_expect expect;
    int readonly;
} kc_buffer;

typedef struct kc_constant {
    char *name;           /* a constant's name, or NULL when given by index */
    int index;            /* [[function_constant(n)]], or -1 when given by name */
    char *value;          /* "true", "false" or a number as written */
} kc_constant;

typedef enum kc_dispatch_mode { KC_DISPATCH_THREADGROUPS = 0, KC_DISPATCH_GRID } kc_dispatch_mode;

#define KC_MAX_TGMEM 8

typedef struct kc_dispatch {
    kc_dispatch_mode mode;
    uint32_t size[3];     /* threads (GRID) or threadgroups (THREADGROUPS) */
    uint32_t tg[3];       /* threads per threadgroup */
    int ntgmem;
    struct {
        int index;
        uint32_t bytes;
    } tgmem[KC_MAX_TGMEM];
} kc_dispatch;

typedef struct kc_bind {
    char *param, *buffer;
} kc_bind;

/* One launch: the case's own function/dispatch, or one entry of "dispatches". */
typedef struct kc_launch {
    char *function;
    kc_constant *constants;
    int nconstants;
    kc_dispatch dispatch;
    kc_bind *binds;       /* "bind": parameter -> buffer of the case */
    int nbinds;
} kc_launch;

typedef struct kc_define {
    char *name, *value;
} kc_define;

/* MLX's mx.fast.metal_kernel form, as written (the signature is generated elsewhere). */
typedef struct kc_template_arg {
    char *name;
    int kind;             /* 0 dtype name, 1 integer, 2 boolean */
    char *dtype;          /* kind 0 */
    int64_t ivalue;       /* kind 1 and 2 */
} kc_template_arg;

typedef struct kc_mlx {
    char *name, *source, *header;
    char **input_names, **output_names;
    int ninputs, noutputs;
    kc_template_arg *tmpl;
    int ntmpl;
    int ensure_row_contiguous, atomic_outputs;
} kc_mlx;

typedef struct kc_case {
    char *name;
    char *path;           /* the case file ("" for the flag form) */
    char *dir;            /* what relative paths are relative to */
    char *source_path;    /* "source": a path as written, or NULL */
    char *source_text;    /* "source": {"text": ...}, or NULL */
    char **includes;
    int nincludes;
    kc_define *defines;
    int ndefines;
    kc_launch *launches;
    int nlaunches;
    int sequence;         /* 1: written as "dispatches" */
    kc_buffer *bufs;
    int nbufs;
    kc_mlx *mlx;          /* "mlx_metal_kernel", or NULL */
} kc_case;

/* Parses a case from JSON text; name is what messages call it (the file's path), dir
 * what relative paths are relative to.  NULL with a one-line err. Touches no file. */
kc_case *kc_parse(const char *text, size_t len, const char *name, const char *dir, char *err, size_t errlen);
/* Reads and parses a case file. */
kc_case *kc_load_file(const char *path, char *err, size_t errlen);
void kc_free(kc_case *c);

/* The case as JSON text (malloc'd, ends in a newline): what `--print-case` prints and
 * kc_parse reads back to the same case. NULL when memory runs out. */
char *kc_to_json(const kc_case *c);

/* Finds a buffer by name; -1 if none. */
int kc_find_buffer(const kc_case *c, const char *name);
/* A path of the case resolved against its directory (malloc'd). */
char *kc_path(const kc_case *c, const char *rel);

/* Case helpers the parser and the flag form share. */
kc_case *kc_case_new(const char *name, const char *path, const char *dir);
kc_buffer *kc_add_buffer(kc_case *c, const char *name);   /* NULL on out of memory */
kc_launch *kc_add_launch(kc_case *c);
char *kc_strdup(const char *s);
/* A C identifier of at most 63 bytes (parameter, field, constant and macro names). */
int kc_is_identifier(const char *s);

#endif
