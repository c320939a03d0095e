/* report_load.c — loading report files and directories (see report_load.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/io_util.h"
#include "report/jsonschema.h"
#include "report/report_json.h"
#include "report/report_load.h"

static int push_item(report_set *s, const cJSON *rec, const char *file) {
    if (s->n == s->cap) {
        int cap = s->cap ? s->cap * 2 : 16;
        report_item *items = realloc(s->items, sizeof *items * (size_t)cap);
        if (!items) return -1;
        s->items = items;
        s->cap = cap;
    }
    s->items[s->n++] = (report_item){rec, file};
    return 0;
}

static int check_record(const cJSON *rec, const char *file, int index, char *err, size_t errlen) {
    char where[32] = "";
    if (index >= 0) snprintf(where, sizeof where, " (record %d)", index);
    if (!cJSON_IsObject(rec)) {
        snprintf(err, errlen, "%s%s: not a gdnbench report record (expected a JSON object)", file, where);
        return -1;
    }
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(rec, "schema");
    if (!cJSON_IsNumber(schema)) {
        snprintf(err, errlen, "%s%s: no \"schema\" key: not a gdnbench JSON report", file, where);
        return -1;
    }
    if (schema->valuedouble != REPORT_SCHEMA_VERSION) {
        snprintf(err, errlen, "%s%s: report schema %g, but this gdnbench reads schema %d (use the gdnbench that wrote it)",
                 file, where, schema->valuedouble, REPORT_SCHEMA_VERSION);
        return -1;
    }
    if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(rec, "op"))) {
        snprintf(err, errlen, "%s%s: record without an \"op\"", file, where);
        return -1;
    }
    return 0;
}

static int load_file(report_set *s, const char *path, char *err, size_t errlen) {
    cJSON *doc = json_read_file(path, err, errlen);
    if (!doc) return -1;
    if (s->ndocs == s->docs_cap) {
        int cap = s->docs_cap ? s->docs_cap * 2 : 8;
        cJSON **docs = realloc(s->docs, sizeof *docs * (size_t)cap);
        char **files = docs ? realloc(s->files, sizeof *files * (size_t)cap) : NULL;
        if (docs) s->docs = docs;
        if (files) s->files = files;
        if (!docs || !files) {
            cJSON_Delete(doc);
            snprintf(err, errlen, "%s: out of memory", path);
            return -1;
        }
        s->docs_cap = cap;
    }
    char *name = strdup(path);
    if (!name) {
        cJSON_Delete(doc);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    s->docs[s->ndocs] = doc;
    s->files[s->ndocs] = name;
    s->ndocs++;

    if (cJSON_IsArray(doc)) {
        int i = 0;
        const cJSON *rec;
        cJSON_ArrayForEach(rec, doc) {
            if (check_record(rec, path, i++, err, errlen)) return -1;
            if (push_item(s, rec, name)) {
                snprintf(err, errlen, "%s: out of memory", path);
                return -1;
            }
        }
        return 0;
    }
    if (check_record(doc, path, -1, err, errlen)) return -1;
    if (push_item(s, doc, name)) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    return 0;
}

int report_set_load(report_set *s, const char *path, char *err, size_t errlen) {
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) return load_file(s, path, err, errlen);

    char **names = NULL;
    int n = 0;
    int listed = io_list_dir(path, ".json", &names, &n);
    if (listed == -1) {
        snprintf(err, errlen, "%s: cannot read the directory: %s", path, strerror(errno));
        return -1;
    }
    if (listed != 0) {
        snprintf(err, errlen, "%s: out of memory listing the directory", path);
        return -1;
    }
    int rc = 0;
    if (n == 0) {
        snprintf(err, errlen, "%s: no *.json report files in this directory", path);
        rc = -1;
    }
    io_sort_names(names, n);
    for (int i = 0; i < n && rc == 0; i++) {
        char *file = io_path_join(path, names[i], "");
        if (!file) {
            snprintf(err, errlen, "%s: out of memory listing the directory", path);
            rc = -1;
            break;
        }
        rc = load_file(s, file, err, errlen);
        free(file);
    }
    io_free_names(names, n);
    return rc;
}

void report_set_free(report_set *s) {
    for (int i = 0; i < s->ndocs; i++) {
        cJSON_Delete(s->docs[i]);
        free(s->files[i]);
    }
    free(s->docs);
    free(s->files);
    free(s->items);
    memset(s, 0, sizeof *s);
}

static const cJSON *field(const cJSON *obj, const char *a, const char *b) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(obj, a);
    if (b) x = cJSON_IsObject(x) ? cJSON_GetObjectItemCaseSensitive(x, b) : NULL;
    return x;
}

const char *rj_str(const cJSON *obj, const char *a, const char *b, const char *fallback) {
    const cJSON *x = field(obj, a, b);
    return cJSON_IsString(x) ? x->valuestring : fallback;
}

double rj_num(const cJSON *obj, const char *a, const char *b, double fallback) {
    const cJSON *x = field(obj, a, b);
    return cJSON_IsNumber(x) ? x->valuedouble : fallback;
}

void rj_shape_str(const cJSON *rec, char *out, size_t n) {
    out[0] = 0;
    size_t len = 0;
    const cJSON *dim;
    cJSON_ArrayForEach(dim, cJSON_GetObjectItemCaseSensitive(rec, "shape")) {
        if (!cJSON_IsNumber(dim)) continue; /* dtypes */
        int w = snprintf(out + len, n - len, "%s%s=%.17g", len ? " " : "", dim->string, dim->valuedouble);
        if (w < 0 || (size_t)w >= n - len) break;
        len += (size_t)w;
    }
}

int rj_samples(const cJSON *rec, double **out, int *n) {
    *out = NULL;
    *n = 0;
    const cJSON *arr = field(rec, "timing", "samples");
    int count = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0;
    if (count == 0) return 0;
    double *v = malloc(sizeof(double) * (size_t)count);
    if (!v) return -1;
    int k = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, arr) if (cJSON_IsNumber(x)) v[k++] = x->valuedouble;
    *out = v;
    *n = k;
    return 0;
}

int rj_marked(const cJSON *rec, char *out, size_t n) {
    if (n) out[0] = 0;
    if (!cJSON_IsTrue(field(rec, "environment", "marked"))) return 0;
    size_t len = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, field(rec, "environment", "marks")) {
        if (!cJSON_IsString(m) || len >= n) continue;
        int w = snprintf(out + len, n - len, "%s%s", len ? "; " : "", m->valuestring);
        if (w > 0) len += (size_t)w;
    }
    if (len == 0 && n) snprintf(out, n, "marked");
    return 1;
}

/* The fields of `environment` that move timings: thermal pressure, Low Power Mode
 * and the power source. */
static const struct {
    const char *key, *label;
} machine_state_fields[] = {
    {"thermal_state_before", "thermal state before the runs"},
    {"thermal_state_after", "thermal state after the runs"},
    {"low_power_mode", "Low Power Mode"},
    {"power_source", "power source"},
};

static void state_value(const cJSON *x, char *out, size_t n) {
    if (cJSON_IsString(x))
        snprintf(out, n, "%s", x->valuestring);
    else if (cJSON_IsBool(x))
        snprintf(out, n, "%s", cJSON_IsTrue(x) ? "on" : "off");
    else
        snprintf(out, n, "unknown");
}

int rj_machine_differs(const cJSON *a, const cJSON *b, const char *name_a, const char *name_b, char *why, size_t n,
                       int *unknown) {
    if (n) why[0] = 0;
    *unknown = 0;
    int differs = 0;
    size_t len = 0;
    for (size_t i = 0; i < sizeof machine_state_fields / sizeof machine_state_fields[0]; i++) {
        const cJSON *x = field(a, "environment", machine_state_fields[i].key);
        const cJSON *y = field(b, "environment", machine_state_fields[i].key);
        int known_x = cJSON_IsString(x) || cJSON_IsBool(x), known_y = cJSON_IsString(y) || cJSON_IsBool(y);
        if (known_x != known_y) *unknown = 1;
        if (!known_x || !known_y) continue;
        char vx[32], vy[32];
        state_value(x, vx, sizeof vx);
        state_value(y, vy, sizeof vy);
        if (strcmp(vx, vy) == 0) continue;
        differs = 1;
        if (len < n) {
            int w = snprintf(why + len, n - len, "%s%s %s in %s, %s in %s", len ? "; " : "",
                             machine_state_fields[i].label, vx, name_a, vy, name_b);
            if (w > 0) len += (size_t)w;
        }
    }
    return differs;
}
