/* version.h — the tool's version, written into every JSON report (tool.version)
 * and printed by --version.  GDNBENCH_GIT_SHA comes from the Makefile
 * (`git rev-parse --short HEAD`), empty when not built from a git checkout. */
#ifndef GDN_VERSION_H
#define GDN_VERSION_H

#define GDNBENCH_VERSION "0.1.0"

#ifndef GDNBENCH_GIT_SHA
#define GDNBENCH_GIT_SHA ""
#endif

#endif
