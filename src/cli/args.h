/* args.h — parsing of flag values: integers, comma lists and ranges, doubles.
 *
 * A dimension flag may take a single value, a comma list (`1,63,64`) or ranges
 * (`64..4096:x2` doubles, `1..130:+1` steps, `a..b` steps by one), mixed in one
 * list (cli.md).  Every parser returns 0 or -1 with a one-line message naming the
 * flag. */
#ifndef GDN_ARGS_H
#define GDN_ARGS_H

#include <stddef.h>
#include <stdint.h>

#define ARGS_MAX_LIST 4096

typedef struct int_list {
    int n;
    int64_t v[ARGS_MAX_LIST];
} int_list;

int args_parse_int(const char *flag, const char *s, int64_t *out, char *err, size_t errlen);
int args_parse_int_list(const char *flag, const char *s, int_list *out, char *err, size_t errlen);
int args_parse_double(const char *flag, const char *s, double *out, char *err, size_t errlen);
int args_parse_u64(const char *flag, const char *s, uint64_t *out, char *err, size_t errlen);

#endif
