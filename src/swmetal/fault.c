/* fault.c — hardware faults in kernel code, and the watchdog's stop.  A worker's
 * signal handler (on its alternate stack) records the signal, the address and the
 * faulting instruction, and jumps back to the worker's scheduler context (pool.c),
 * which reports the fault as a finding: an out-of-bounds access into a buffer's or
 * the arena's guard page, a fiber's stack overflow, a wild address, a division trap.
 * Signals outside kernel code go to whoever handled them before.  The watchdog
 * (pool.c) signals the workers of a dispatch that ran too long: the handler samples
 * where the running thread is and, when told to stop, leaves kernel code the same
 * way — only from the kernel library's own code, never from the executor's, which
 * may hold a lock. */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#ifdef __APPLE__
#include <mach-o/loader.h>
#include <sys/ucontext.h>
#else
#include <link.h>
#include <ucontext.h>
#endif

#include "swmetal/exec_internal.h"

static const char *signal_what(int sig, int code) {
    switch (sig) {
    case SIGFPE:
        return code == FPE_INTDIV ? "integer division by zero" : "arithmetic exception";
    case SIGILL:
    case SIGTRAP:
        return "trap instruction (__builtin_trap or unreachable code reached)";
    case SIGBUS:
        return "bus error (misaligned or unmapped access)";
    default:
        return "invalid memory access";
    }
}

/* A fault at addr: an out-of-bounds access (a buffer's guard page, the arena's), a
 * stack overflow, or a wild address. */
void sw_fault_report(sw_worker *w) {
    sw_raw_finding f;
    memset(&f, 0, sizeof f);
    char what[300] = "";
    const uint8_t *addr = w->fault_addr;
    int acc = w->fault_write < 0 ? SW_ACC_NONE : w->fault_write ? SW_ACC_WRITE : SW_ACC_READ;
    f.kind = DEV_FIND_FAULT;
    f.buffer = -1;
    f.fatal = 1;
    if (w->fault_sig == SIGSEGV || w->fault_sig == SIGBUS) {
        const sw_dispatch *d = w->job->d;
        int found = 0;
        for (int i = 0; i < SW_MAX_BUFFERS && !found; i++) {
            const sw_exec_binding *b = &d->buf[i];
            if (!b->ptr || !b->map_lo || addr < b->map_lo || addr >= b->map_hi) continue;
            found = 1;
            f.memory = SW_MEM_DEVICE;
            f.buffer = i;
            f.has_range = 1;
            f.offset_lo = addr >= b->data ? (int64_t)(addr - b->data) : -(int64_t)(b->data - addr);
            f.offset_hi = f.offset_lo + 1;
            f.length = b->length;
            if (addr >= b->data + b->length || addr < b->data) {
                f.kind = DEV_FIND_OOB;
                if (b->is_bytes) snprintf(what, sizeof what, "setBytes data");
            } else {
                snprintf(what, sizeof what, "access fault inside the buffer");
            }
        }
        if (!found && addr >= w->arena_map && addr < w->arena_map + w->arena_map_size) {
            found = 1;
            f.kind = DEV_FIND_OOB;
            f.memory = SW_MEM_THREADGROUP;
            f.has_range = 1;
            f.offset_lo = (int64_t)(addr - w->arena);
            f.offset_hi = f.offset_lo + 1;
            f.length = SW_TG_MEM_LIMIT;
            snprintf(what, sizeof what, "past the %d-byte threadgroup memory", SW_TG_MEM_LIMIT);
        }
        for (int i = 0; i < w->nstacks && !found; i++) {
            const uint8_t *lo = w->stacks[i].map, *hi = w->stacks[i].base;
            if (addr < lo || addr >= hi) continue;
            found = 1;
            snprintf(what, sizeof what, "stack overflow in a GPU thread (each has %d KB of stack)",
                     SW_FIBER_STACK_BYTES / 1024);
        }
        if (!found)
            snprintf(what, sizeof what, "invalid memory access at address %p (not in any bound buffer)",
                     (const void *)addr);
    } else {
        snprintf(what, sizeof what, "%s", signal_what(w->fault_sig, w->fault_code));
        acc = SW_ACC_NONE;
    }
    f.detail = what;
    f.nsides = 1;
    f.side[0] = sw_access_of(w->fault_thread, w, w->fault_pc, acc, 0, 0);
    sw_findings_add(w->job, w, &f);
}

/* The faulting instruction and whether it wrote, from the signal context. */
static void fault_context(void *ucv, const void **pc, int *write) {
    *pc = NULL;
    *write = -1;
#if defined(__APPLE__) && defined(__aarch64__)
    ucontext_t *uc = ucv;
#ifdef __darwin_arm_thread_state64_get_pc
    *pc = (const void *)__darwin_arm_thread_state64_get_pc(uc->uc_mcontext->__ss);
#else
    *pc = (const void *)uc->uc_mcontext->__ss.__pc;
#endif
    *write = (uc->uc_mcontext->__es.__esr >> 6) & 1; /* ESR_ELx.WnR of a data abort */
#elif defined(__APPLE__) && defined(__x86_64__)
    ucontext_t *uc = ucv;
    *pc = (const void *)uc->uc_mcontext->__ss.__rip;
    *write = (uc->uc_mcontext->__es.__err >> 1) & 1;
#elif defined(__linux__) && defined(__x86_64__)
    ucontext_t *uc = ucv;
    *pc = (const void *)uc->uc_mcontext.gregs[REG_RIP];
    *write = (int)((uc->uc_mcontext.gregs[REG_ERR] >> 1) & 1); /* page-fault error code bit 1: write */
#elif defined(__linux__) && defined(__aarch64__)
    ucontext_t *uc = ucv;
    *pc = (const void *)uc->uc_mcontext.pc;
    /* The kernel appends an esr_context record (magic "ESR\x01") to the signal
     * frame's __reserved area for data aborts; its WnR bit says write.  Records are
     * {u32 magic, u32 size} headers ending with magic 0. */
    const uint8_t *rec = (const uint8_t *)uc->uc_mcontext.__reserved;
    const uint8_t *end = rec + sizeof uc->uc_mcontext.__reserved;
    while (rec + 8 <= end) {
        uint32_t magic, size;
        memcpy(&magic, rec, 4);
        memcpy(&size, rec + 4, 4);
        if (magic == 0 || size < 8 || rec + size > end) break;
        if (magic == 0x45535201u && size >= 16) {
            uint64_t esr;
            memcpy(&esr, rec + 8, 8);
            *write = (int)((esr >> 6) & 1);
            break;
        }
        rec += size;
    }
#else
    (void)ucv;
#endif
}

uintptr_t sw_fault_context_sp(void *ucv) {
#if defined(__APPLE__) && defined(__aarch64__)
    return (uintptr_t)((ucontext_t *)ucv)->uc_mcontext->__ss.__sp;
#elif defined(__APPLE__) && defined(__x86_64__)
    return (uintptr_t)((ucontext_t *)ucv)->uc_mcontext->__ss.__rsp;
#elif defined(__linux__) && defined(__x86_64__)
    return (uintptr_t)((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RSP];
#elif defined(__linux__) && defined(__aarch64__)
    return (uintptr_t)((ucontext_t *)ucv)->uc_mcontext.sp;
#else
    (void)ucv;
    return 0;
#endif
}

/* It reads the raw words of a stack it does not own (the frame of a hook the signal
 * interrupted), redzones of a sanitized build included: not itself instrumented. */
__attribute__((no_sanitize("address")))
const void *sw_fault_kernel_pc(const sw_worker *w, const void *pc, uintptr_t sp) {
    const sw_job *job = w->job;
    if (!job || !job->kcode_hi || ((uintptr_t)pc >= job->kcode_lo && (uintptr_t)pc < job->kcode_hi)) return pc;
    if (!sp) return NULL;
    /* 64 words: a hook's or a math function's frame; never past the fiber's stack */
    uintptr_t top = sp + 64 * sizeof(uintptr_t);
    for (int i = 0; i < w->nstacks; i++) {
        uintptr_t lo = (uintptr_t)w->stacks[i].base, hi = lo + w->stacks[i].size;
        if (sp >= lo && sp < hi && top > hi) top = hi;
    }
    for (uintptr_t a = (sp + sizeof(uintptr_t) - 1) & ~(uintptr_t)(sizeof(uintptr_t) - 1);
         a + sizeof(uintptr_t) <= top; a += sizeof(uintptr_t)) {
        uintptr_t v = *(const uintptr_t *)a;
        if (v > job->kcode_lo && v < job->kcode_hi) return (const void *)(v - 1);
    }
    return NULL;
}

#ifdef __APPLE__
/* The __TEXT segment of the image whose header dladdr finds: it starts at the header. */
int sw_fault_code_range(const void *fn, uintptr_t *lo, uintptr_t *hi) {
    Dl_info info;
    if (!fn || !dladdr(fn, &info) || !info.dli_fbase) return -1;
    const struct mach_header_64 *mh = info.dli_fbase;
    if (mh->magic != MH_MAGIC_64) return -1;
    const uint8_t *at = (const uint8_t *)(mh + 1);
    for (uint32_t i = 0; i < mh->ncmds; i++) {
        const struct load_command *lc = (const struct load_command *)at;
        if (lc->cmd == LC_SEGMENT_64) {
            const struct segment_command_64 *seg = (const struct segment_command_64 *)at;
            if (strncmp(seg->segname, "__TEXT", sizeof seg->segname) == 0) {
                *lo = (uintptr_t)mh;
                *hi = *lo + (uintptr_t)seg->vmsize;
                return 0;
            }
        }
        at += lc->cmdsize;
    }
    return -1;
}
#else
typedef struct code_query {
    uintptr_t pc, lo, hi;
} code_query;

/* The object whose segments hold q->pc: the hull of its executable segments. */
static int code_of_object(struct dl_phdr_info *info, size_t size, void *arg) {
    code_query *q = arg;
    (void)size;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    int holds = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uintptr_t a = (uintptr_t)(info->dlpi_addr + ph->p_vaddr), b = a + ph->p_memsz;
        if (q->pc >= a && q->pc < b) holds = 1;
        if (!(ph->p_flags & PF_X)) continue;
        if (a < lo) lo = a;
        if (b > hi) hi = b;
    }
    if (!holds || hi <= lo) return 0;
    q->lo = lo;
    q->hi = hi;
    return 1;
}

int sw_fault_code_range(const void *fn, uintptr_t *lo, uintptr_t *hi) {
    code_query q = {(uintptr_t)fn, 0, 0};
    if (!fn || !dl_iterate_phdr(code_of_object, &q)) return -1;
    *lo = q.lo;
    *hi = q.hi;
    return 0;
}
#endif

void sw_fault_report_timeout(sw_job *job, sw_worker *const *workers, int n) {
    char what[200];
    snprintf(what, sizeof what, "still running after %g s (--sw-timeout SECONDS); its threads were running here",
             job->d->timeout_s);
    sw_raw_finding f;
    memset(&f, 0, sizeof f);
    f.kind = DEV_FIND_TIMEOUT;
    f.buffer = -1;
    f.fatal = 1;
    f.detail = what;
    int any = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < workers[i]->nsamples && k < SW_WATCH_SAMPLES; k++) {
            f.nsides = 1;
            f.side[0] = workers[i]->samples[k];
            sw_findings_add(job, NULL, &f);
            any = 1;
        }
    if (any) return;
    snprintf(what, sizeof what,
             "still running after %g s (--sw-timeout SECONDS); no thread was in the kernel's code when sampled",
             job->d->timeout_s);
    f.nsides = 0;
    sw_findings_add(job, NULL, &f);
}

/* The watchdog's signal: where the running thread is (kernel code only), and at
 * SW_WATCH_STOP out of it to the worker's landing site. */
static void watchdog_signal(sw_worker *w, void *uc) {
    sw_job *job = w->job;
    int stage = job ? atomic_load(&job->watchdog) : SW_WATCH_OFF;
    if (stage == SW_WATCH_OFF || !w->cur) return;
    const void *pc;
    int write;
    fault_context(uc, &pc, &write);
    /* In the full checks' hooks (or a function the kernel called): sampled at the
     * kernel's call, but stopped only in the kernel's own code */
    const void *at = sw_fault_kernel_pc(w, pc, sw_fault_context_sp(uc));
    if (!at) return;
    sw_range_sync_thread(w);
    if (w->nsamples < SW_WATCH_SAMPLES) {
        w->samples[w->nsamples] = sw_access_of(w->cur, w, at, SW_ACC_NONE, 0, 0);
        w->nsamples = w->nsamples + 1;
    }
    if (stage != SW_WATCH_STOP || at != pc) return;
    w->fault_thread = w->cur;
    sw_set_current(w, NULL);
    if (!w->group.looping) sw_fiber_note_jump(&w->sched);
    siglongjmp(w->fault_jmp, 3);
}

static struct sigaction old_actions[64];
static const int fault_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SW_WATCHDOG_SIGNAL};

static void fault_handler(int sig, siginfo_t *si, void *uc) {
    sw_worker *w = sw_tls_worker;
    if (sig == SW_WATCHDOG_SIGNAL) {
        if (w) {
            watchdog_signal(w, uc);
            return;
        }
        struct sigaction *old = &old_actions[sig];
        if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction) old->sa_sigaction(sig, si, uc);
        else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) old->sa_handler(sig);
        return; /* its default action is to ignore it */
    }
    if (w && w->cur) {
        sw_range_sync_thread(w);
        w->fault_sig = sig;
        w->fault_code = si->si_code;
        w->fault_addr = si->si_addr;
        w->fault_thread = w->cur;
        const void *pc;
        int write;
        fault_context(uc, &pc, &write);
        w->fault_pc = pc;
        w->fault_write = sig == SIGSEGV || sig == SIGBUS ? write : -1;
        sw_set_current(w, NULL);
        if (!w->group.looping) sw_fiber_note_jump(&w->sched);
        siglongjmp(w->fault_jmp, 1);
    }
    /* Not kernel code: hand over to whoever handled this before us, or die. */
    struct sigaction *old = &old_actions[sig];
    if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction) {
        old->sa_sigaction(sig, si, uc);
        return;
    }
    if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
        return;
    }
    signal(sig, SIG_DFL);
    /* Returning re-executes the faulting instruction under the default action. */
}

void sw_fault_install_handlers(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fault_handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof fault_signals / sizeof fault_signals[0]; i++)
        sigaction(fault_signals[i], &sa, &old_actions[fault_signals[i]]);
}
