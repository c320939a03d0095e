/* lsan_suppress.c — leak-sanitizer suppressions the whole program needs.
 *
 * GNU libobjc allocates its class and selector tables (from its load-time
 * constructor __objc_exec_class, and when we register classes) and never frees
 * them; under `make check` LeakSanitizer would report them in every process.  The
 * default fast unwinder cannot walk past libobjc's frames, so the suppression names
 * the module.  Objects of the software device are calloc'd by our own code and
 * stay covered.  The sanitizer runtime looks this function up by name; in normal
 * builds nobody calls it. */
const char *__lsan_default_suppressions(void);

const char *__lsan_default_suppressions(void) { return "leak:libobjc.so\n"; }

/* Keep the per-process "Suppressions used" table out of the test output. */
const char *__lsan_default_options(void);

const char *__lsan_default_options(void) { return "print_suppressions=0"; }
