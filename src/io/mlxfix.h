/* mlxfix.h — mlx-native fixture sets: PREFIX_meta.json plus raw little-endian .bin files.
 *
 * A set is the meta.json (parameters such as B, T, H, K, scale, seed; an "inputs" and
 * an "outputs" table name -> {shape, dtype, file}; a "tolerance" object with keys
 * like "o_atol") and one headerless .bin per tensor, next to the meta.json.
 *
 * What lands in the io_set:
 *   - tensors named by their table key ("q", "g_log_decay", "final_state"), role
 *     INPUT or OUTPUT; an output whose key is also an input is named "<key>_ref";
 *   - meta: every top-level number ("B" -> "1", "scale" -> "0.0883..."), boolean
 *     ("true"/"false") and string ("seed" -> "0x00C0FFEE"), and every entry of the
 *     "tolerance" object under its own key ("o_atol" -> "0.005").
 * A meta.json without inputs/outputs tables (chunk_tri_solve_invert) is read by file
 * name: PREFIX_input_NAME.bin are inputs, PREFIX_NAME_ref.bin outputs; such files are
 * f32 (mlx-native writes untabled sets only for f32 kernels), shaped [B,T,H,BT] when
 * those parameters exist and match the byte count, else flat.
 * Each .bin must hold exactly numel * dtype size bytes. */
#ifndef GDN_IO_MLXFIX_H
#define GDN_IO_MLXFIX_H

#include "io/io_util.h"

#define MLXFIX_MAX_META (16u << 20)

/* Where a set's .bin files come from: a directory, or a table in memory (tests, fuzzing). */
typedef struct mlxfix_files {
    void *ctx;
    /* Opens `file` (a plain name, no directory); -1 with err set when absent. */
    int (*open)(void *ctx, const char *file, io_src *src, char *err, size_t errlen);
    /* Every file name there, malloc'd (free with io_free_names); -1 on error. */
    int (*list)(void *ctx, char ***names, int *n);
} mlxfix_files;

typedef struct mlxfix_mem_file {
    const char *name;
    const void *data;
    size_t len;
} mlxfix_mem_file;

typedef struct mlxfix_mem_table {
    const mlxfix_mem_file *files;
    int n;
} mlxfix_mem_table;

mlxfix_files mlxfix_mem_files(const mlxfix_mem_table *table);

/* Parses meta.json text (len bytes); meta_name is its path (for messages and the
 * prefix: "dir/x_meta.json" -> "x").  On error the set is left untouched. */
int mlxfix_parse(const char *json, size_t len, const char *meta_name, const mlxfix_files *files, io_set *out,
                 char *err, size_t errlen);
/* A PREFIX_meta.json on disk; the .bin files are looked up in its directory. */
int mlxfix_read(const char *meta_path, io_set *out, char *err, size_t errlen);
/* DIR/PREFIX_meta.json. */
int mlxfix_read_prefix(const char *dir, const char *prefix, io_set *out, char *err, size_t errlen);
/* The prefixes of every *_meta.json in dir, sorted (free with io_free_names); 0 with
 * *n == 0 when none. */
int mlxfix_list_sets(const char *dir, char ***prefixes, int *n, char *err, size_t errlen);

#endif
