/* binding_type.c — a kernel parameter's type as the compiled kernel spells it
 * (sw::type_name's "[T = const __global float *]") read as MSL: the element type
 * (half, bfloat, uint, float4, a struct's name), the address space and whether the
 * kernel may write through it.  `gdnbench compile` lists bindings with it and the
 * device's pipeline reflection (objc_reflection.c) answers MTLArgument from it. */
#include <stdio.h>
#include <string.h>

#include "swmetal/swmetal.h"

static void replace_all(char *s, size_t n, const char *from, const char *to) {
    size_t fl = strlen(from), tl = strlen(to);
    for (char *p = s; (p = strstr(p, from)) != NULL;) {
        size_t rest = strlen(p + fl);
        if ((size_t)(p - s) + tl + rest + 1 > n) return;
        memmove(p + tl, p + fl, rest + 1);
        memcpy(p, to, tl);
        p += tl;
    }
}

/* Appends the vector width to the first word of out that is not a qualifier (the
 * scalar element type). */
static void vector_after_scalar(char *out, size_t n, char digit) {
    static const char *const quals[] = {"const", "volatile", "__global", "__global_device", "__local", NULL};
    size_t len = strlen(out);
    if (len + 2 > n) return;
    for (char *w = out; *w;) {
        while (*w == ' ') w++;
        size_t wl = strcspn(w, " *&");
        if (!wl) break;
        int qual = 0;
        for (int i = 0; quals[i] && !qual; i++) qual = strlen(quals[i]) == wl && !strncmp(w, quals[i], wl);
        if (!qual) {
            memmove(w + wl + 1, w + wl, strlen(w + wl) + 1);
            w[wl] = digit;
            return;
        }
        w += wl;
    }
}

/* The type inside "... [T = TYPE]" (sw::type_name's __PRETTY_FUNCTION__) in MSL
 * spelling: half, bfloat, uint, float4 instead of _Float16, __bf16, unsigned int,
 * float __attribute__((ext_vector_type(4))). */
void swmtl_type_clean(const char *pretty, char *out, size_t n) {
    const char *t = pretty ? strstr(pretty, "[T = ") : NULL;
    if (!t) {
        snprintf(out, n, "%s", pretty ? pretty : "");
        return;
    }
    t += 5;
    size_t len = strlen(t);
    if (len && t[len - 1] == ']') len--;
    snprintf(out, n, "%.*s", (int)len, t);
    static const char *const map[][2] = {{"metal::", ""},          {"_Float16", "half"},
                                         {"__bf16", "bfloat"},      {"unsigned int", "uint"},
                                         {"unsigned short", "ushort"}, {"unsigned char", "uchar"},
                                         {"unsigned long", "ulong"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) replace_all(out, n, map[i][0], map[i][1]);
    for (char *p; (p = strstr(out, " __attribute__((ext_vector_type(")) != NULL;) {
        char *q = p + strlen(" __attribute__((ext_vector_type(");
        char digit = *q;
        char *end = strstr(q, ")))");
        if (!end) break;
        if (p > out && (p[-1] == '*' || p[-1] == '&')) {
            /* clang prints a vector pointee's attribute after the '*': "float __global *
             * __attribute__((ext_vector_type(2)))" is a float2 pointer */
            memmove(p, end + 3, strlen(end + 3) + 1);
            vector_after_scalar(out, n, digit);
            continue;
        }
        p[0] = digit;
        memmove(p + 1, end + 3, strlen(end + 3) + 1);
    }
}

/* Removes every whole-word occurrence of w from s. */
static void drop_word(char *s, const char *w) {
    size_t wl = strlen(w);
    for (char *p = s; (p = strstr(p, w)) != NULL;) {
        int left = p == s || p[-1] == ' ' || p[-1] == '(' || p[-1] == '*' || p[-1] == '&';
        int right = p[wl] == 0 || p[wl] == ' ' || p[wl] == '*' || p[wl] == '&';
        if (left && right) memmove(p, p + wl, strlen(p + wl) + 1);
        else p += wl;
    }
}

static void squeeze_spaces(char *s) {
    char *o = s;
    for (char *p = s; *p; p++)
        if (!(*p == ' ' && (o == s || o[-1] == ' '))) *o++ = *p;
    while (o > s && o[-1] == ' ') o--;
    *o = 0;
}

/* The parameter type as the compiler spells it ("__global const float *",
 * "const __global_device Params &") -> element type, address space, access. */
void swmtl_binding_describe(const sw_binding *b, swmtl_binding_type *v) {
    char clean[160];
    swmtl_type_clean(b->type, clean, sizeof clean);
    const char *t = clean;
    int pointer = strchr(t, '*') != NULL, reference = strchr(t, '&') != NULL;
    v->space = strstr(t, "__global_device") ? "constant"
               : strstr(t, "__global")      ? "device"
               : strstr(t, "__local")       ? "threadgroup"
                                            : (b->kind == SW_BIND_BUFFER ? "constant" : "thread");
    char ty[160];
    snprintf(ty, sizeof ty, "%s", t);
    /* the pointee's qualifiers come before the last '*' / '&' */
    char *last = strrchr(ty, '*');
    if (!last) last = strrchr(ty, '&');
    int pointee_const = 0;
    if (last) {
        *last = 0;
        pointee_const = strstr(ty, "const") != NULL;
    } else {
        pointee_const = 1;   /* a value is a copy: read only */
    }
    static const char *quals[] = {"__global_device", "__global", "__local", "const", "volatile", "restrict",
                                  "__restrict", NULL};
    for (int i = 0; quals[i]; i++) drop_word(ty, quals[i]);
    for (char *p = ty; *p; p++)
        if (*p == '*' || *p == '&') *p = ' ';
    squeeze_spaces(ty);
    snprintf(v->element, sizeof v->element, "%s", ty[0] && b->type ? ty : "?");
    v->read_only = pointee_const || strcmp(v->space, "constant") == 0 || (!pointer && !reference);
    v->pointer = pointer;
}
