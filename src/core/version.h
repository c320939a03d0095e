/* version.h — the tool's version and the commit it was built from, written into
 * every JSON report (tool.version, tool.git_sha) and printed by --version.
 *
 * Both are set by the Makefile on src/core/version.c only, so a new commit
 * rebuilds one object.  The version is GDNBENCH_DEFAULT_VERSION unless a packager
 * passes GDNBENCH_VERSION=...; the sha is `git rev-parse --short HEAD` in a git
 * checkout, GDNBENCH_GIT_SHA=... when given, and "" otherwise (a source archive):
 * the report then says null, never a made-up value. */
#ifndef GDN_VERSION_H
#define GDN_VERSION_H

#define GDNBENCH_DEFAULT_VERSION "0.1.0"

extern const char gdnbench_version[];
extern const char gdnbench_git_sha[]; /* "" when unknown */

#endif
