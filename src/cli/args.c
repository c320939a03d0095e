/* args.c — value parsers for command-line flags. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"

int args_parse_int(const char *flag, const char *s, int64_t *out, char *err, size_t errlen) {
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!s[0] || *end || errno) {
        snprintf(err, errlen, "--%s '%s' is not an integer", flag, s);
        return -1;
    }
    *out = v;
    return 0;
}

int args_parse_u64(const char *flag, const char *s, uint64_t *out, char *err, size_t errlen) {
    char *end = NULL;
    errno = 0;
    if (s[0] == '-') {
        snprintf(err, errlen, "--%s '%s' must be a non-negative integer", flag, s);
        return -1;
    }
    unsigned long long v = strtoull(s, &end, 0);
    if (!s[0] || *end || errno) {
        snprintf(err, errlen, "--%s '%s' is not a non-negative integer", flag, s);
        return -1;
    }
    *out = v;
    return 0;
}

int args_parse_double(const char *flag, const char *s, double *out, char *err, size_t errlen) {
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (!s[0] || *end || errno || !isfinite(v)) {
        snprintf(err, errlen, "--%s '%s' is not a finite number", flag, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int list_push(const char *flag, int_list *l, int64_t v, char *err, size_t errlen) {
    if (l->n >= ARGS_MAX_LIST) {
        snprintf(err, errlen, "--%s expands to more than %d values: narrow the range", flag, ARGS_MAX_LIST);
        return -1;
    }
    l->v[l->n++] = v;
    return 0;
}

/* One item of a list: "N", "A..B", "A..B:+S" or "A..B:xM". */
static int parse_item(const char *flag, const char *item, int_list *l, char *err, size_t errlen) {
    const char *dots = strstr(item, "..");
    if (!dots) {
        int64_t v;
        if (args_parse_int(flag, item, &v, err, errlen)) return -1;
        return list_push(flag, l, v, err, errlen);
    }
    char a[64], b[64], step[64] = "+1";
    size_t alen = (size_t)(dots - item);
    const char *colon = strchr(dots + 2, ':');
    size_t blen = colon ? (size_t)(colon - dots - 2) : strlen(dots + 2);
    if (alen == 0 || alen >= sizeof a || blen == 0 || blen >= sizeof b || (colon && strlen(colon + 1) >= sizeof step)) {
        snprintf(err, errlen, "--%s '%s' is not a range: use A..B, A..B:+STEP or A..B:xFACTOR", flag, item);
        return -1;
    }
    memcpy(a, item, alen);
    a[alen] = 0;
    memcpy(b, dots + 2, blen);
    b[blen] = 0;
    if (colon) snprintf(step, sizeof step, "%s", colon + 1);
    int64_t lo, hi, by;
    if (args_parse_int(flag, a, &lo, err, errlen) || args_parse_int(flag, b, &hi, err, errlen)) return -1;
    if ((step[0] != '+' && step[0] != 'x') || args_parse_int(flag, step + 1, &by, err, errlen)) {
        snprintf(err, errlen, "--%s '%s': step must be +N or xN", flag, item);
        return -1;
    }
    if (hi < lo || by < (step[0] == 'x' ? 2 : 1) || (step[0] == 'x' && lo < 1)) {
        snprintf(err, errlen, "--%s '%s' is an empty or endless range: need A <= B, +N with N >= 1, xN with N >= 2 and A >= 1",
                 flag, item);
        return -1;
    }
    for (int64_t v = lo; v <= hi; v = step[0] == 'x' ? v * by : v + by) {
        if (list_push(flag, l, v, err, errlen)) return -1;
        if (step[0] == 'x' && v > INT64_MAX / by) break;
    }
    return 0;
}

int args_parse_int_list(const char *flag, const char *s, int_list *out, char *err, size_t errlen) {
    out->n = 0;
    char buf[1024];
    if (strlen(s) >= sizeof buf || !s[0]) {
        snprintf(err, errlen, "--%s: empty or too long value", flag);
        return -1;
    }
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (parse_item(flag, tok, out, err, errlen)) return -1;
    if (out->n == 0) {
        snprintf(err, errlen, "--%s '%s' has no values", flag, s);
        return -1;
    }
    return 0;
}
