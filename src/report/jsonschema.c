/* jsonschema.c — the JSON Schema subset validator (see jsonschema.h).
 *
 * The walk carries the instance path ("$.check[0].pass") for messages and the
 * schema location ("#/$defs/check/properties/pass") for schema errors.  Errors are
 * counted; only the first is kept as text.  anyOf validates each branch into a
 * scratch context and, when all fail, reports the branch that got deepest into the
 * instance — the one the author most likely meant. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/file.h"
#include "report/jsonschema.h"

#define PATH_MAX_LEN 512
#define MAX_REF_DEPTH 64

typedef struct vctx {
    const cJSON *root;
    int nerr;
    int schema_error;       /* set: the schema is unusable; nerr is meaningless */
    char first[512];        /* first error message */
    int first_depth;        /* path depth of the first error (for anyOf) */
    int first_is_type;      /* first error was "wrong type/value here" */
    int ref_depth;
} vctx;

static int path_depth(const char *path) {
    int d = 0;
    for (const char *p = path; *p; p++)
        if (*p == '.' || *p == '[') d++;
    return d;
}

static void fail(vctx *c, const char *path, int is_type, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void fail(vctx *c, const char *path, int is_type, const char *fmt, ...) {
    if (c->nerr++ > 0 || c->schema_error) return;
    va_list ap;
    va_start(ap, fmt);
    char msg[400];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(c->first, sizeof c->first, "%s: %s", path, msg);
    c->first_depth = path_depth(path);
    c->first_is_type = is_type;
}

static void schema_fail(vctx *c, const char *where, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void schema_fail(vctx *c, const char *where, const char *fmt, ...) {
    if (c->schema_error) return;
    c->schema_error = 1;
    va_list ap;
    va_start(ap, fmt);
    char msg[400];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(c->first, sizeof c->first, "schema %s: %s", where, msg);
}

static const char *type_of(const cJSON *v) {
    if (cJSON_IsNull(v)) return "null";
    if (cJSON_IsBool(v)) return "boolean";
    if (cJSON_IsNumber(v)) return "number";
    if (cJSON_IsString(v)) return "string";
    if (cJSON_IsArray(v)) return "array";
    if (cJSON_IsObject(v)) return "object";
    return "invalid";
}

static int is_type(const cJSON *v, const char *t) {
    if (strcmp(t, "integer") == 0) {
        if (!cJSON_IsNumber(v)) return 0;
        double d = v->valuedouble;
        return isfinite(d) && floor(d) == d;
    }
    return strcmp(type_of(v), t) == 0;
}

/* Short text of an instance value for messages: "\"abc\"", "12", "object". */
static void describe(const cJSON *v, char *out, size_t n) {
    if (cJSON_IsString(v))
        snprintf(out, n, "\"%.60s\"", v->valuestring);
    else if (cJSON_IsNumber(v))
        snprintf(out, n, "%.17g", v->valuedouble);
    else if (cJSON_IsBool(v))
        snprintf(out, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else
        snprintf(out, n, "%s", type_of(v));
}

/* Resolves "#" or "#/a/b" (JSON pointer, ~0 and ~1 escapes) in the root schema. */
static const cJSON *resolve_ref(const cJSON *root, const char *ref) {
    if (ref[0] != '#') return NULL;
    const cJSON *node = root;
    const char *p = ref + 1;
    while (*p == '/') {
        p++;
        char token[128];
        size_t n = 0;
        while (*p && *p != '/' && n + 1 < sizeof token) {
            if (p[0] == '~' && p[1] == '1') {
                token[n++] = '/';
                p += 2;
            } else if (p[0] == '~' && p[1] == '0') {
                token[n++] = '~';
                p += 2;
            } else {
                token[n++] = *p++;
            }
        }
        token[n] = 0;
        if (cJSON_IsArray(node)) {
            char *end;
            long idx = strtol(token, &end, 10);
            if (*end || idx < 0) return NULL;
            node = cJSON_GetArrayItem(node, (int)idx);
        } else {
            node = cJSON_GetObjectItemCaseSensitive(node, token);
        }
        if (!node) return NULL;
    }
    return *p ? NULL : node;
}

static size_t utf8_length(const char *s) {
    size_t n = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80) n++;
    return n;
}

static void validate(vctx *c, const cJSON *schema, const char *where, const cJSON *inst, const char *path);

static void child_where(char *out, const char *where, const char *a, const char *b) {
    if (b)
        snprintf(out, PATH_MAX_LEN, "%s/%s/%s", where, a, b);
    else
        snprintf(out, PATH_MAX_LEN, "%s/%s", where, a);
}

/* Instance path of a member: "$.key", or "$[\"odd key\"]" for keys that are not
 * plain identifiers. */
static void member_path(char *out, const char *path, const char *key) {
    int plain = key[0] != 0;
    for (const char *k = key; *k; k++)
        if (!(*k == '_' || (*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || (*k >= '0' && *k <= '9')))
            plain = 0;
    if (plain)
        snprintf(out, PATH_MAX_LEN, "%s.%s", path, key);
    else
        snprintf(out, PATH_MAX_LEN, "%s[\"%s\"]", path, key);
}

static void check_type(vctx *c, const cJSON *kw, const char *where, const cJSON *inst, const char *path) {
    static const char *const names[] = {"null", "boolean", "number", "integer", "string", "array", "object"};
    char want[128] = "";
    int ok = 0;
    int count = cJSON_IsArray(kw) ? cJSON_GetArraySize(kw) : 1;
    for (int i = 0; i < count; i++) {
        const cJSON *t = cJSON_IsArray(kw) ? cJSON_GetArrayItem(kw, i) : kw;
        int known = 0;
        for (size_t k = 0; cJSON_IsString(t) && k < sizeof names / sizeof names[0]; k++)
            if (strcmp(t->valuestring, names[k]) == 0) known = 1;
        if (!known) {
            schema_fail(c, where, "\"type\" must be a type name or an array of them");
            return;
        }
        if (is_type(inst, t->valuestring)) ok = 1;
        size_t len = strlen(want);
        snprintf(want + len, sizeof want - len, "%s%s", i == 0 ? "" : " or ", t->valuestring);
    }
    if (!ok) fail(c, path, 1, "expected %s, got %s", want, type_of(inst));
}

static void check_enum(vctx *c, const cJSON *kw, const char *where, const cJSON *inst, const char *path) {
    if (!cJSON_IsArray(kw)) {
        schema_fail(c, where, "\"enum\" must be an array");
        return;
    }
    const cJSON *opt;
    cJSON_ArrayForEach(opt, kw) if (cJSON_Compare(opt, inst, 1)) return;
    char got[80], list[200] = "";
    describe(inst, got, sizeof got);
    cJSON_ArrayForEach(opt, kw) {
        char one[80];
        describe(opt, one, sizeof one);
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", one);
    }
    fail(c, path, 1, "%s is not one of %s", got, list);
}

static void check_object(vctx *c, const cJSON *schema, const char *where, const cJSON *inst, const char *path) {
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
    const cJSON *required = cJSON_GetObjectItemCaseSensitive(schema, "required");
    const cJSON *additional = cJSON_GetObjectItemCaseSensitive(schema, "additionalProperties");
    if (props && !cJSON_IsObject(props)) schema_fail(c, where, "\"properties\" must be an object");
    if (required && !cJSON_IsArray(required)) schema_fail(c, where, "\"required\" must be an array");
    if (additional && !cJSON_IsBool(additional) && !cJSON_IsObject(additional))
        schema_fail(c, where, "\"additionalProperties\" must be a boolean or a schema");
    if (c->schema_error || !cJSON_IsObject(inst)) return;

    const cJSON *req;
    cJSON_ArrayForEach(req, required) {
        if (!cJSON_IsString(req)) {
            schema_fail(c, where, "\"required\" must list strings");
            return;
        }
        if (!cJSON_GetObjectItemCaseSensitive(inst, req->valuestring))
            fail(c, path, 0, "missing required key \"%s\"", req->valuestring);
    }
    const cJSON *member;
    cJSON_ArrayForEach(member, inst) {
        char sub_path[PATH_MAX_LEN], sub_where[PATH_MAX_LEN];
        member_path(sub_path, path, member->string);
        const cJSON *ps = props ? cJSON_GetObjectItemCaseSensitive(props, member->string) : NULL;
        if (ps) {
            child_where(sub_where, where, "properties", member->string);
            validate(c, ps, sub_where, member, sub_path);
        } else if (cJSON_IsFalse(additional)) {
            fail(c, path, 0, "unexpected key \"%s\"", member->string);
        } else if (cJSON_IsObject(additional)) {
            child_where(sub_where, where, "additionalProperties", NULL);
            validate(c, additional, sub_where, member, sub_path);
        }
    }
}

static void check_array(vctx *c, const cJSON *schema, const char *where, const cJSON *inst, const char *path) {
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(schema, "items");
    const cJSON *min_items = cJSON_GetObjectItemCaseSensitive(schema, "minItems");
    const cJSON *max_items = cJSON_GetObjectItemCaseSensitive(schema, "maxItems");
    if (items && !cJSON_IsObject(items) && !cJSON_IsBool(items)) schema_fail(c, where, "\"items\" must be a schema");
    if ((min_items && !cJSON_IsNumber(min_items)) || (max_items && !cJSON_IsNumber(max_items)))
        schema_fail(c, where, "\"minItems\"/\"maxItems\" must be numbers");
    if (c->schema_error || !cJSON_IsArray(inst)) return;
    int n = cJSON_GetArraySize(inst);
    if (min_items && n < min_items->valuedouble)
        fail(c, path, 0, "has %d items, fewer than the minimum %g", n, min_items->valuedouble);
    if (max_items && n > max_items->valuedouble)
        fail(c, path, 0, "has %d items, more than the maximum %g", n, max_items->valuedouble);
    if (!items) return;
    char sub_where[PATH_MAX_LEN];
    child_where(sub_where, where, "items", NULL);
    int i = 0;
    const cJSON *el;
    cJSON_ArrayForEach(el, inst) {
        char sub_path[PATH_MAX_LEN];
        snprintf(sub_path, sizeof sub_path, "%s[%d]", path, i++);
        if (cJSON_IsFalse(items))
            fail(c, sub_path, 0, "no items allowed here");
        else if (cJSON_IsObject(items))
            validate(c, items, sub_where, el, sub_path);
    }
}

static void check_any_of(vctx *c, const cJSON *kw, const char *where, const cJSON *inst, const char *path) {
    if (!cJSON_IsArray(kw) || cJSON_GetArraySize(kw) == 0) {
        schema_fail(c, where, "\"anyOf\" must be a non-empty array of schemas");
        return;
    }
    vctx best = {0};
    int have_best = 0, i = 0;
    const cJSON *branch;
    cJSON_ArrayForEach(branch, kw) {
        vctx sub = {.root = c->root, .ref_depth = c->ref_depth};
        char sub_where[PATH_MAX_LEN];
        char idx[16];
        snprintf(idx, sizeof idx, "%d", i++);
        child_where(sub_where, where, "anyOf", idx);
        validate(&sub, branch, sub_where, inst, path);
        if (sub.schema_error) {
            schema_fail(c, where, "%s", sub.first + 7); /* drop the "schema " prefix */
            return;
        }
        if (sub.nerr == 0) return;
        int score = 2 * sub.first_depth + !sub.first_is_type;
        int best_score = 2 * best.first_depth + !best.first_is_type;
        if (!have_best || score > best_score) {
            best = sub;
            have_best = 1;
        }
    }
    /* Re-emit the chosen branch's first error as ours, counted as one error. */
    if (c->nerr++ == 0) {
        memcpy(c->first, best.first, sizeof c->first);
        c->first_depth = best.first_depth;
        c->first_is_type = best.first_is_type;
    }
}

static const char *const known_keywords[] = {
    "$schema", "$id", "$defs", "$comment", "title", "description", "$ref", "type", "enum", "const",
    "properties", "required", "additionalProperties", "items", "minItems", "maxItems", "minimum",
    "minLength", "maxLength", "anyOf",
};

static void validate(vctx *c, const cJSON *schema, const char *where, const cJSON *inst, const char *path) {
    if (c->schema_error) return;
    if (cJSON_IsBool(schema)) {
        if (cJSON_IsFalse(schema)) fail(c, path, 0, "not allowed here");
        return;
    }
    if (!cJSON_IsObject(schema)) {
        schema_fail(c, where, "a schema must be an object or a boolean");
        return;
    }
    const cJSON *kw;
    cJSON_ArrayForEach(kw, schema) {
        int known = 0;
        for (size_t k = 0; k < sizeof known_keywords / sizeof known_keywords[0]; k++)
            if (strcmp(kw->string, known_keywords[k]) == 0) known = 1;
        if (!known) {
            schema_fail(c, where, "keyword \"%s\" is not supported by this validator", kw->string);
            return;
        }
    }

    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(schema, "$ref");
    if (ref) {
        const cJSON *target = cJSON_IsString(ref) ? resolve_ref(c->root, ref->valuestring) : NULL;
        if (!target) {
            schema_fail(c, where, "$ref %s does not resolve in this document",
                        cJSON_IsString(ref) ? ref->valuestring : "(not a string)");
            return;
        }
        if (++c->ref_depth > MAX_REF_DEPTH) {
            schema_fail(c, where, "$ref chain deeper than %d (a cycle?)", MAX_REF_DEPTH);
            return;
        }
        validate(c, target, ref->valuestring, inst, path);
        c->ref_depth--;
    }

    const cJSON *type = cJSON_GetObjectItemCaseSensitive(schema, "type");
    if (type) {
        int before = c->nerr;
        check_type(c, type, where, inst, path);
        /* A value of the wrong type makes every other keyword's message noise. */
        if (c->nerr > before || c->schema_error) return;
    }
    const cJSON *en = cJSON_GetObjectItemCaseSensitive(schema, "enum");
    if (en) check_enum(c, en, where, inst, path);
    const cJSON *cst = cJSON_GetObjectItemCaseSensitive(schema, "const");
    if (cst && !cJSON_Compare(cst, inst, 1)) {
        char got[80], want[80];
        describe(inst, got, sizeof got);
        describe(cst, want, sizeof want);
        fail(c, path, 1, "%s is not the required value %s", got, want);
    }

    const cJSON *minimum = cJSON_GetObjectItemCaseSensitive(schema, "minimum");
    if (minimum && !cJSON_IsNumber(minimum)) schema_fail(c, where, "\"minimum\" must be a number");
    if (minimum && cJSON_IsNumber(minimum) && cJSON_IsNumber(inst) && inst->valuedouble < minimum->valuedouble)
        fail(c, path, 0, "%.17g is below the minimum %.17g", inst->valuedouble, minimum->valuedouble);

    const cJSON *min_len = cJSON_GetObjectItemCaseSensitive(schema, "minLength");
    const cJSON *max_len = cJSON_GetObjectItemCaseSensitive(schema, "maxLength");
    if ((min_len && !cJSON_IsNumber(min_len)) || (max_len && !cJSON_IsNumber(max_len)))
        schema_fail(c, where, "\"minLength\"/\"maxLength\" must be numbers");
    if (cJSON_IsString(inst) && !c->schema_error) {
        size_t len = utf8_length(inst->valuestring);
        if (min_len && (double)len < min_len->valuedouble)
            fail(c, path, 0, "string of length %zu is shorter than the minimum %g", len, min_len->valuedouble);
        if (max_len && (double)len > max_len->valuedouble)
            fail(c, path, 0, "string of length %zu is longer than the maximum %g", len, max_len->valuedouble);
    }

    check_object(c, schema, where, inst, path);
    check_array(c, schema, where, inst, path);
    const cJSON *any = cJSON_GetObjectItemCaseSensitive(schema, "anyOf");
    if (any) check_any_of(c, any, where, inst, path);
}

int json_schema_validate(const cJSON *schema, const cJSON *instance, char *err, size_t errlen) {
    vctx c = {.root = schema};
    validate(&c, schema, "#", instance, "$");
    if (c.schema_error) {
        snprintf(err, errlen, "%s", c.first);
        return -1;
    }
    if (c.nerr == 1)
        snprintf(err, errlen, "%s", c.first);
    else if (c.nerr > 1)
        snprintf(err, errlen, "%s (and %d more)", c.first, c.nerr - 1);
    else if (errlen)
        err[0] = 0;
    return c.nerr;
}

cJSON *json_read_file(const char *path, char *err, size_t errlen) {
    file_text ft;
    switch (file_read_all(path, FILE_NO_LIMIT, 0, &ft, err, errlen)) {
    case FILE_OK: break;
    case FILE_OUT_OF_MEMORY: snprintf(err, errlen, "%s: out of memory reading the file", path); return NULL;
    case FILE_READ_ERROR: snprintf(err, errlen, "%s: read error", path); return NULL;
    default: return NULL; /* cannot open: file_read_all said so */
    }
    char *buf = ft.data;
    size_t len = ft.len;
    if (strlen(buf) != len) {
        free(buf);
        snprintf(err, errlen, "%s: not a JSON file (contains NUL bytes)", path);
        return NULL;
    }
    cJSON *doc = cJSON_ParseWithLength(buf, len);
    if (!doc) {
        const char *at = cJSON_GetErrorPtr();
        long line = 1;
        for (const char *p = buf; at && p < at && *p; p++)
            if (*p == '\n') line++;
        snprintf(err, errlen, "%s: not valid JSON (near line %ld)", path, line);
    }
    free(buf);
    return doc;
}
