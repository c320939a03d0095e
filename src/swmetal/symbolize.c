/* symbolize.c — code address -> .metal file and line, through an external symbolizer
 * reading the kernel library's line tables (symbolize.h).
 *
 * llvm-symbolizer is asked for JSON (--output-style=JSON, one object per address
 * with every inlined frame, innermost first); atos (macOS fallback) prints one line
 * per frame ending in "(file:line)".  Addresses are handed over relative to the
 * object's load base (dladdr), which is what the line tables of a shared object
 * hold on ELF and Mach-O alike; atos gets the absolute address and the base. */
#include "swmetal/symbolize.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/embedded.h"
#include "core/file.h"

extern char **environ;

enum { SYM_NONE = 0, SYM_LLVM, SYM_ATOS };

typedef struct cached_loc {
    char *object;          /* dladdr's file name of the library */
    uintptr_t offset;      /* address - load base */
    sw_srcloc loc;
} cached_loc;

typedef struct source_text {
    char *object;          /* library path it was registered for; NULL = read from disk */
    char *file;            /* name as the line tables give it ("./" stripped) */
    char *text;            /* NULL: could not be read */
} source_text;

static struct {
    pthread_mutex_t mu;
    pthread_once_t once;
    int kind;
    char tool[512];
    char problem[600];
    cached_loc *cache;
    int ncache, capcache;
    source_text *sources;
    int nsources, capsources;
} sym = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_ONCE_INIT, SYM_NONE, "", "", NULL, 0, 0, NULL, 0, 0};

/* ---- processes ---- */

/* Runs argv with stdout into out_path (stderr dropped).  Returns the exit status or -1. */
static int run_to_file(char *const argv[], const char *out_path) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_path ? out_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return -1;
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The whole file, or NULL when it cannot be read. */
static char *slurp(const char *path) {
    file_text ft;
    file_read_all(path, FILE_NO_LIMIT, 0, &ft, NULL, 0);
    return ft.data;
}

static int tool_runs(const char *name) {
    char *argv[] = {(char *)name, "--version", NULL};
    return run_to_file(argv, NULL) == 0;
}

static void find_tool(void) {
    const char *env = getenv("GDNBENCH_SYMBOLIZER");
    if (env && *env) {
        if (tool_runs(env)) {
            snprintf(sym.tool, sizeof sym.tool, "%s", env);
            sym.kind = strstr(env, "atos") ? SYM_ATOS : SYM_LLVM;
        } else {
            snprintf(sym.problem, sizeof sym.problem,
                     "GDNBENCH_SYMBOLIZER=%s does not run; source lines need llvm-symbolizer", env);
        }
        return;
    }
    static const char *const names[] = {"llvm-symbolizer-19", "llvm-symbolizer-18", "llvm-symbolizer-17",
                                        "llvm-symbolizer",
#ifdef __APPLE__
                                        "/opt/homebrew/opt/llvm/bin/llvm-symbolizer",
                                        "/usr/local/opt/llvm/bin/llvm-symbolizer",
#endif
                                        NULL};
    for (int i = 0; names[i]; i++) {
        if (tool_runs(names[i])) {
            snprintf(sym.tool, sizeof sym.tool, "%s", names[i]);
            sym.kind = SYM_LLVM;
            return;
        }
    }
#ifdef __APPLE__
    if (access("/usr/bin/atos", X_OK) == 0) {
        snprintf(sym.tool, sizeof sym.tool, "/usr/bin/atos");
        sym.kind = SYM_ATOS;
        return;
    }
#endif
    snprintf(sym.problem, sizeof sym.problem,
             "no llvm-symbolizer found to map kernel code to .metal lines "
             "(apt-get install llvm-19, or brew install llvm; or set GDNBENCH_SYMBOLIZER)");
}

const char *sw_symbolizer_name(void) {
    pthread_once(&sym.once, find_tool);
    return sym.kind == SYM_NONE ? NULL : sym.tool;
}

const char *sw_symbolize_problem(void) {
    pthread_mutex_lock(&sym.mu);
    const char *p = sym.problem;
    pthread_mutex_unlock(&sym.mu);
    return p;
}

/* ---- sources ---- */

static const char *strip_dot(const char *f) {
    while (f[0] == '.' && f[1] == '/') f += 2;
    return f;
}

static const char *base_name(const char *f) {
    const char *s = strrchr(f, '/');
    return s ? s + 1 : f;
}

/* The prelude's own headers (every file compile.c writes into the cache's
 * prelude-<hash>/ directory): frames there are library code, not the user's.  The
 * directory is checked too, so a user's header of the same name stays the user's. */
static int is_prelude_file(const char *f) {
    const char *b = base_name(f);
    if (b != f) {
        const char *dir = b - 1;
        while (dir > f && dir[-1] != '/') dir--;
        if (strncmp(dir, "prelude-", 8) != 0) return 0;
    }
    if (strcmp(b, "sw_abi.h") == 0) return 1;
    static const char prefix[] = "src/swmetal/prelude/";
    for (const embedded_file *e = embedded_files; e->path; e++)
        if (strncmp(e->path, prefix, sizeof prefix - 1) == 0 && strcmp(e->path + sizeof prefix - 1, b) == 0)
            return 1;
    return 0;
}

static source_text *add_source(const char *object, const char *file, char *text) {
    if (sym.nsources == sym.capsources) {
        int cap = sym.capsources ? sym.capsources * 2 : 16;
        source_text *ns = realloc(sym.sources, sizeof *ns * (size_t)cap);
        if (!ns) {
            free(text);
            return NULL;
        }
        sym.sources = ns;
        sym.capsources = cap;
    }
    source_text *s = &sym.sources[sym.nsources];
    s->object = object ? strdup(object) : NULL;
    s->file = strdup(file);
    s->text = text;
    if ((object && !s->object) || !s->file) {
        free(s->object);
        free(s->file);
        free(s->text);
        return NULL;
    }
    sym.nsources++;
    return s;
}

/* Caller holds sym.mu.  Adds (so_path, file, a copy of text) unless known. */
static void register_one(const char *so_path, const char *file, const char *text, size_t len) {
    file = strip_dot(file);
    for (int i = 0; i < sym.nsources; i++) {
        source_text *s = &sym.sources[i];
        if (s->object && strcmp(s->object, so_path) == 0 && strcmp(s->file, file) == 0) return;
    }
    char *copy = malloc(len + 1);
    if (!copy) return;
    memcpy(copy, text, len);
    copy[len] = 0;
    add_source(so_path, file, copy);
}

/* One file's lines out of a text with `#line N "FILE"` markers. */
typedef struct marked_file {
    char name[1024];
    const char **line;       /* [n]: start of line k+1 in the text, NULL = none */
    int n, cap;
} marked_file;

/* `#line N "FILE"`: returns N and copies FILE into name, else 0. */
static int line_marker(const char *p, char *name, size_t n) {
    while (*p == ' ' || *p == '\t') p++;
    if (strncmp(p, "#line ", 6) != 0) return 0;
    char *end;
    long ln = strtol(p + 6, &end, 10);
    while (*end == ' ') end++;
    if (ln <= 0 || *end != '"') return 0;
    size_t k = 0;
    for (end++; *end && *end != '"' && *end != '\n' && k + 1 < n; end++) name[k++] = *end;
    name[k] = 0;
    return *end == '"' ? (int)ln : 0;
}

/* Caller holds sym.mu.  A text that msl_include.c expanded holds its headers
 * between `#line` markers (and -D lines in front): each file named there gets its
 * own lines back, so a finding in a header, or after one, quotes the right text. */
static int register_marked(const char *so_path, const char *file, const char *text) {
    enum { MAX_FILES = 64 };
    marked_file *files = calloc(MAX_FILES, sizeof *files);
    if (!files) return -1;
    int nfiles = 1, cur = 0, ln = 1, ok = 1;
    snprintf(files[0].name, sizeof files[0].name, "%s", strip_dot(file));
    for (const char *p = text; *p && ok;) {
        const char *nl = strchr(p, '\n');
        char name[1024];
        int m = line_marker(p, name, sizeof name);
        if (m) {
            const char *nm = strip_dot(name);
            for (cur = 0; cur < nfiles && strcmp(files[cur].name, nm) != 0; cur++) {}
            if (cur == nfiles) {
                if (nfiles == MAX_FILES) break;
                snprintf(files[nfiles++].name, sizeof files[0].name, "%s", nm);
            }
            ln = m;
        } else {
            marked_file *f = &files[cur];
            if (ln > f->cap) {
                int cap = ln * 2 + 64;
                const char **nl2 = realloc(f->line, sizeof *nl2 * (size_t)cap);
                if (!nl2) {
                    ok = 0;
                    break;
                }
                for (int k = f->cap; k < cap; k++) nl2[k] = NULL;
                f->line = nl2;
                f->cap = cap;
            }
            f->line[ln - 1] = p;
            if (ln > f->n) f->n = ln;
            ln++;
        }
        p = nl ? nl + 1 : p + strlen(p);
    }
    for (int i = 0; i < nfiles; i++) {
        marked_file *f = &files[i];
        size_t len = 0;
        for (int k = 0; ok && k < f->n; k++) len += (f->line[k] ? strcspn(f->line[k], "\n") : 0) + 1;
        char *t = ok ? malloc(len + 1) : NULL;
        if (t) {
            size_t at = 0;
            for (int k = 0; k < f->n; k++) {
                size_t l = f->line[k] ? strcspn(f->line[k], "\n") : 0;
                if (l) memcpy(t + at, f->line[k], l);
                at += l;
                t[at++] = '\n';
            }
            t[at] = 0;
            register_one(so_path, f->name, t, at);
            free(t);
        }
        free(f->line);
    }
    free(files);
    return ok ? 0 : -1;
}

void sw_symbolize_register(const char *so_path, const char *file, const char *text) {
    if (!so_path || !file || !text) return;
    pthread_mutex_lock(&sym.mu);
    if (!strstr(text, "#line ") || register_marked(so_path, file, text) != 0)
        register_one(so_path, file, text, strlen(text));
    pthread_mutex_unlock(&sym.mu);
}

void sw_symbolize_unregister(const char *so_path) {
    if (!so_path) return;
    pthread_mutex_lock(&sym.mu);
    for (int i = 0; i < sym.nsources;) {
        source_text *s = &sym.sources[i];
        if (s->object && strcmp(s->object, so_path) == 0) {
            free(s->object);
            free(s->file);
            free(s->text);
            sym.sources[i] = sym.sources[--sym.nsources];
        } else {
            i++;
        }
    }
    /* A later library may be loaded at the same path: forget its addresses too. */
    for (int i = 0; i < sym.ncache;) {
        if (strcmp(sym.cache[i].object, so_path) == 0) {
            free(sym.cache[i].object);
            sym.cache[i] = sym.cache[--sym.ncache];
        } else {
            i++;
        }
    }
    pthread_mutex_unlock(&sym.mu);
}

/* Caller holds sym.mu.  The text of file as library `object` sees it. */
static const char *source_of(const char *object, const char *file) {
    file = strip_dot(file);
    source_text *by_name = NULL;
    for (int i = 0; i < sym.nsources; i++) {
        source_text *s = &sym.sources[i];
        if (strcmp(s->file, file) != 0) continue;
        if (s->object && object && strcmp(s->object, object) == 0) return s->text;
        if (!by_name || (by_name->object && !s->object)) by_name = s;
    }
    if (by_name) return by_name->text;
    source_text *s = add_source(NULL, file, slurp(file));
    return s ? s->text : NULL;
}

static void line_of(const char *text, int line, char *buf, size_t n) {
    buf[0] = 0;
    if (!text || line <= 0 || n == 0) return;
    const char *p = text;
    for (int l = 1; l < line && p; l++) {
        p = strchr(p, '\n');
        if (p) p++;
    }
    if (!p) return;
    while (*p == ' ' || *p == '\t') p++;
    size_t len = strcspn(p, "\r\n");
    while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t')) len--;
    if (len >= n) {
        if (n < 4) return;
        len = n - 4;
        memcpy(buf, p, len);
        memcpy(buf + len, "...", 4);
        return;
    }
    memcpy(buf, p, len);
    buf[len] = 0;
}

void sw_source_line(const char *so_path, const char *file, int line, char *buf, size_t n) {
    if (n) buf[0] = 0;
    if (!file || !*file || n == 0) return;
    pthread_mutex_lock(&sym.mu);
    line_of(source_of(so_path, file), line, buf, n);
    pthread_mutex_unlock(&sym.mu);
}

void sw_symbolize_main_file(const void *pc, char *buf, size_t n) {
    if (n) buf[0] = 0;
    Dl_info info;
    if (!pc || !dladdr(pc, &info) || !info.dli_fname) return;
    pthread_mutex_lock(&sym.mu);
    for (int i = 0; i < sym.nsources; i++) {
        if (sym.sources[i].object && strcmp(sym.sources[i].object, info.dli_fname) == 0) {
            snprintf(buf, n, "%s", sym.sources[i].file);
            break;
        }
    }
    pthread_mutex_unlock(&sym.mu);
}

/* ---- the address cache ---- */

static cached_loc *cache_find(const char *object, uintptr_t off) {
    for (int i = 0; i < sym.ncache; i++)
        if (sym.cache[i].offset == off && strcmp(sym.cache[i].object, object) == 0) return &sym.cache[i];
    return NULL;
}

static cached_loc *cache_add(const char *object, uintptr_t off) {
    if (sym.ncache == sym.capcache) {
        int cap = sym.capcache ? sym.capcache * 2 : 64;
        cached_loc *nc = realloc(sym.cache, sizeof *nc * (size_t)cap);
        if (!nc) return NULL;
        sym.cache = nc;
        sym.capcache = cap;
    }
    cached_loc *c = &sym.cache[sym.ncache];
    memset(c, 0, sizeof *c);
    c->object = strdup(object);
    if (!c->object) return NULL;
    c->offset = off;
    sym.ncache++;
    return c;
}

/* Picks the innermost frame outside the prelude among frames (file, line, col). */
typedef struct frame {
    const char *file;
    int line, column;
} frame;

static void choose_frame(const frame *fr, int n, sw_srcloc *out) {
    int pick = -1, any = -1, file_only = -1;
    for (int i = 0; i < n; i++) {
        if (!fr[i].file || !fr[i].file[0]) continue;
        if (fr[i].line <= 0) {
            /* Code the compiler merged from several lines has line 0: keep its file. */
            if (file_only < 0 && !is_prelude_file(fr[i].file)) file_only = i;
            continue;
        }
        if (any < 0) any = i;
        if (!is_prelude_file(fr[i].file)) {
            pick = i;
            break;
        }
    }
    memset(out, 0, sizeof *out);
    if (pick < 0 && any < 0) {
        if (file_only >= 0) snprintf(out->file, sizeof out->file, "%s", strip_dot(fr[file_only].file));
        return;
    }
    int k = pick >= 0 ? pick : any;
    snprintf(out->file, sizeof out->file, "%s", strip_dot(fr[k].file));
    out->line = fr[k].line;
    out->column = fr[k].column;
    out->in_prelude = pick < 0;
}

/* One llvm-symbolizer run for the offsets of one object. */
static int run_llvm(const char *object, const uintptr_t *offs, int n, sw_srcloc *locs) {
    char tmp[] = "/tmp/gdnbench-sym-XXXXXX";
    int fd = mkstemp(tmp);
    if (fd < 0) return -1;
    close(fd);
    char obj_arg[4200];
    snprintf(obj_arg, sizeof obj_arg, "--obj=%s", object);
    char **argv = calloc((size_t)n + 6, sizeof *argv);
    char *addrs = malloc((size_t)n * 24);
    if (!argv || !addrs) {
        free(argv);
        free(addrs);
        unlink(tmp);
        return -1;
    }
    int a = 0;
    argv[a++] = sym.tool;
    argv[a++] = obj_arg;
    argv[a++] = "--inlining";
    argv[a++] = "--output-style=JSON";
    for (int i = 0; i < n; i++) {
        snprintf(addrs + (size_t)i * 24, 24, "0x%llx", (unsigned long long)offs[i]);
        argv[a++] = addrs + (size_t)i * 24;
    }
    argv[a] = NULL;
    int rc = run_to_file(argv, tmp);
    free(argv);
    free(addrs);
    char *out = rc == 0 ? slurp(tmp) : NULL;
    unlink(tmp);
    if (!out) return -1;
    /* One JSON array of address objects, or one object per line (versions differ). */
    cJSON *doc = cJSON_Parse(out);
    int nobj = doc && cJSON_IsArray(doc) ? cJSON_GetArraySize(doc) : 0;
    char *line = out;
    for (int k = 0; k < n; k++) {
        cJSON *item = NULL, *own = NULL;
        if (doc && cJSON_IsArray(doc)) {
            item = k < nobj ? cJSON_GetArrayItem(doc, k) : NULL;
        } else {
            while (line && *line == '\n') line++;
            char *end = line ? strchr(line, '\n') : NULL;
            if (end) *end = 0;
            own = line && *line ? cJSON_Parse(line) : NULL;
            if (own && cJSON_IsArray(own)) item = cJSON_GetArrayItem(own, 0);
            else item = own;
            line = end ? end + 1 : NULL;
        }
        cJSON *frames = item ? cJSON_GetObjectItemCaseSensitive(item, "Symbol") : NULL;
        frame fr[16];
        int nf = 0;
        cJSON *f;
        cJSON_ArrayForEach(f, frames) {
            if (nf == 16) break;
            cJSON *file = cJSON_GetObjectItemCaseSensitive(f, "FileName");
            cJSON *ln = cJSON_GetObjectItemCaseSensitive(f, "Line");
            cJSON *col = cJSON_GetObjectItemCaseSensitive(f, "Column");
            fr[nf].file = cJSON_IsString(file) ? file->valuestring : NULL;
            fr[nf].line = cJSON_IsNumber(ln) ? ln->valueint : 0;
            fr[nf].column = cJSON_IsNumber(col) ? col->valueint : 0;
            nf++;
        }
        choose_frame(fr, nf, &locs[k]);
        cJSON_Delete(own);
    }
    cJSON_Delete(doc);
    free(out);
    return 0;
}

/* atos: one run per address (its output has no separator between addresses). */
static int run_atos(const char *object, uintptr_t base, const uintptr_t *offs, int n, sw_srcloc *locs) {
    for (int k = 0; k < n; k++) {
        char tmp[] = "/tmp/gdnbench-sym-XXXXXX";
        int fd = mkstemp(tmp);
        if (fd < 0) return -1;
        close(fd);
        char load[32], addr[32];
        snprintf(load, sizeof load, "0x%llx", (unsigned long long)base);
        snprintf(addr, sizeof addr, "0x%llx", (unsigned long long)(base + offs[k]));
        char *argv[] = {sym.tool, "-o", (char *)object, "-l", load, "-i", addr, NULL};
        int rc = run_to_file(argv, tmp);
        char *out = rc == 0 ? slurp(tmp) : NULL;
        unlink(tmp);
        frame fr[16];
        char files[16][256];
        int nf = 0;
        for (char *l = out; l && *l && nf < 16;) {
            char *end = strchr(l, '\n');
            if (end) *end = 0;
            /* "... (file.metal:111)" */
            char *open = strrchr(l, '(');
            char *colon = open ? strrchr(open, ':') : NULL;
            if (open && colon && colon > open + 1) {
                size_t len = (size_t)(colon - open - 1);
                if (len >= sizeof files[nf]) len = sizeof files[nf] - 1;
                memcpy(files[nf], open + 1, len);
                files[nf][len] = 0;
                fr[nf].file = files[nf];
                fr[nf].line = atoi(colon + 1);
                fr[nf].column = 0;
                nf++;
            }
            l = end ? end + 1 : NULL;
        }
        choose_frame(fr, nf, &locs[k]);
        free(out);
    }
    return 0;
}

int sw_symbolize(const uintptr_t *pcs, int n, sw_srcloc *out) {
    pthread_once(&sym.once, find_tool);
    memset(out, 0, sizeof *out * (size_t)(n > 0 ? n : 0));
    if (n <= 0) return 0;
    Dl_info *info = calloc((size_t)n, sizeof *info);
    int *todo = calloc((size_t)n, sizeof *todo);
    uintptr_t *offs = calloc((size_t)n, sizeof *offs);
    sw_srcloc *locs = calloc((size_t)n, sizeof *locs);
    int rc = 0;
    if (!info || !todo || !offs || !locs) {
        rc = -1;
        goto out;
    }
    /* Only kernel libraries: an address in gdnbench itself (the executor calling a
     * kernel entry) has no .metal line. */
    Dl_info self;
    const void *self_base = dladdr((const void *)&sw_symbolize, &self) ? self.dli_fbase : NULL;
    for (int i = 0; i < n; i++)
        if (!pcs[i] || !dladdr((const void *)pcs[i], &info[i]) || !info[i].dli_fname ||
            info[i].dli_fbase == self_base)
            info[i].dli_fname = NULL;
    pthread_mutex_lock(&sym.mu);
    for (int i = 0; i < n; i++) {
        if (!info[i].dli_fname) continue;
        uintptr_t off = pcs[i] - (uintptr_t)info[i].dli_fbase;
        cached_loc *c = cache_find(info[i].dli_fname, off);
        if (c) out[i] = c->loc;
        else todo[i] = 1;
    }
    /* One symbolizer run per object with uncached addresses. */
    for (int i = 0; i < n; i++) {
        if (!todo[i]) continue;
        const char *object = info[i].dli_fname;
        int m = 0;
        int *idx = calloc((size_t)n, sizeof *idx);
        if (!idx) {
            rc = -1;
            break;
        }
        for (int j = i; j < n; j++) {
            if (!todo[j] || strcmp(info[j].dli_fname, object) != 0) continue;
            uintptr_t off = pcs[j] - (uintptr_t)info[j].dli_fbase;
            int dup = 0;
            for (int k = 0; k < m && !dup; k++) dup = offs[k] == off;
            if (!dup) offs[m++] = off;
            idx[j] = 1;
        }
        int ok = -1;
        if (sym.kind == SYM_LLVM) ok = run_llvm(object, offs, m, locs);
        else if (sym.kind == SYM_ATOS) ok = run_atos(object, (uintptr_t)info[i].dli_fbase, offs, m, locs);
        if (ok != 0) {
            if (sym.kind != SYM_NONE)
                snprintf(sym.problem, sizeof sym.problem, "%.200s failed on %.300s; source lines are unknown",
                         sym.tool, object);
            rc = -1;
        }
        for (int k = 0; k < m; k++) {
            if (ok == 0 && locs[k].line > 0)
                line_of(source_of(object, locs[k].file), locs[k].line, locs[k].text, sizeof locs[k].text);
            cached_loc *c = ok == 0 ? cache_add(object, offs[k]) : NULL;
            if (c) c->loc = locs[k];
        }
        for (int j = i; j < n; j++) {
            if (!idx[j]) continue;
            uintptr_t off = pcs[j] - (uintptr_t)info[j].dli_fbase;
            for (int k = 0; k < m; k++)
                if (offs[k] == off) out[j] = locs[k];
            todo[j] = 0;
        }
        free(idx);
    }
    pthread_mutex_unlock(&sym.mu);
out:
    free(info);
    free(todo);
    free(offs);
    free(locs);
    return rc;
}
