/* front_cache.h — the MSL front end's result for a source, kept in the compile
 * cache so that a warm run does no front-end work (front_cache.c), for compile.c.
 *
 * Two kinds of entry, both written under a temporary name and renamed into place
 * and both framed by a length and a checksum that a reader verifies before it
 * trusts a byte (a truncated or corrupt entry is a miss, removed, and rebuilt):
 *   fe-<key>.front   what sw_library_create computes before any clang run: the
 *                    parsed and rewritten unit (msl_front.h), the sync/atomic
 *                    verdicts and the lanes rewrite (or why there is none).  The key
 *                    hashes the expanded source (so the included headers and -D
 *                    definitions), its file name, the compiler that runs clang -E,
 *                    the settings that decide the lanes rewrite and the front end's
 *                    own identity (SW_FRONT_ID, a hash of its sources set by the
 *                    Makefile: a changed front end never reads an old entry).
 *   vk-<alias>.vkey  the variant key (compile.c's hash of a variant's C++) that a
 *                    front-end entry and a variant signature lead to, so that a
 *                    variant already built is found without generating its C++.
 * A build without SW_FRONT_ID (a compile outside the Makefile) keeps no entries. */
#ifndef GDN_SW_FRONT_CACHE_H
#define GDN_SW_FRONT_CACHE_H

#include "swmetal/msl_front.h"

/* What the front end computed for a library. */
typedef struct sw_front_result {
    msl_unit unit;             /* emit_range and atomic_free included */
    int sync_free, atomic_free;
    char *lanes_text;          /* msl_lanes_rewrite's text, or NULL */
    char *lanes_why;           /* why not, or NULL */
} sw_front_result;

/* 1 when entries are kept: a build with SW_FRONT_ID and GDNBENCH_SW_FRONT_CACHE
 * not "0". */
int sw_front_cache_enabled(void);

/* The key (64 hex digits) of the front end's result for this expanded source.
 * `settings` names whatever else of this process changes the result (compile.c:
 * lanes on or off, the per-kernel threshold); cc_path and cc_version the compiler
 * of the clang -E step. */
void sw_front_key(const char *expanded, const char *filename, const char *settings, const char *cc_path,
                  const char *cc_version, char hex[65]);

/* Reads the entry of `key` into *out (owned by the caller: msl_unit_free and free).
 * Returns 1, or 0 (out zeroed) when there is none or it did not verify; one that
 * did not verify is removed. */
int sw_front_load(const char *cache, const char *key, sw_front_result *out);

/* Writes the entry of `key` (best effort: the cache may be read-only or full). */
void sw_front_store(const char *cache, const char *key, const sw_front_result *r);

/* The variant key stored for `alias` into vkey: 1, or 0 when none (or not verified). */
int sw_alias_load(const char *cache, const char *alias, char vkey[65]);
void sw_alias_store(const char *cache, const char *alias, const char *vkey);

#endif
