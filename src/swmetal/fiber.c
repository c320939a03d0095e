/* fiber.c — the context switch under the software device's GPU threads.
 *
 * The hand-written switch saves only what the C ABI says a call preserves:
 *   x86-64 SysV: rbx, rbp, r12-r15, MXCSR and the x87 control word, rsp;
 *   arm64 AAPCS64: x19-x29, x30 (return address), d8-d15, FPCR, sp.
 * Everything else is caller-saved, so the compiler already spilled it around the call.
 * The floating-point control registers (MXCSR/x87 CW, FPCR: rounding mode, flush to
 * zero) are per fiber, so one GPU thread's mode never leaks into another's.
 * A new fiber's stack is laid out as if it had been switched out inside a trampoline
 * that calls entry(arg); the first switch-in "returns" into that trampoline.
 *
 * Under the address sanitizer every switch is announced with
 * __sanitizer_start_switch_fiber / __sanitizer_finish_switch_fiber so it keeps
 * tracking the right stack. */
#include "swmetal/fiber.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define SW_FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SW_FIBER_ASAN 1
#endif
#endif

#ifdef SW_FIBER_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#ifndef MAP_STACK
#define MAP_STACK 0
#endif
#ifndef MAP_NORESERVE
#define MAP_NORESERVE 0
#endif

int sw_stack_alloc(sw_stack *st, size_t size) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size = (size + page - 1) / page * page;
    size_t map_size = size + page;
    void *map = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE,
                     -1, 0);
    if (map == MAP_FAILED) return -1;
    if (mprotect(map, page, PROT_NONE) != 0) {
        int e = errno;
        munmap(map, map_size);
        errno = e;
        return -1;
    }
    st->map = map;
    st->map_size = map_size;
    st->base = (char *)map + page;
    st->size = size;
    return 0;
}

void sw_stack_reset(sw_stack *st) {
#ifdef SW_FIBER_ASAN
    __asan_unpoison_memory_region(st->base, st->size);
#endif
    (void)st;
}

void sw_stack_free(sw_stack *st) {
    if (st->map) munmap(st->map, st->map_size);
    memset(st, 0, sizeof *st);
}

#ifndef SW_FIBER_UCONTEXT

/* void sw_fiber_raw_switch(void **save_sp, void *load_sp) */
void sw_fiber_raw_switch(void **save_sp, void *load_sp);
void sw_fiber_trampoline(void);

#if defined(__APPLE__)
#define SW_SYM(name) "_" #name
#define SW_FUNC_BEGIN(name) ".private_extern " SW_SYM(name) "\n" SW_SYM(name) ":\n"
#define SW_FUNC_END(name) ""
#else
#define SW_SYM(name) #name
#define SW_FUNC_BEGIN(name)                                                                                      \
    ".globl " #name "\n.hidden " #name "\n.type " #name ", %function\n" #name ":\n"
#define SW_FUNC_END(name) ".size " #name ", .-" #name "\n"
#endif

#if defined(__x86_64__)
/* MXCSR and the x87 control word are reloaded only when the fiber switched to saved
 * different ones: ldmxcsr and fldcw cost more than the rest of a switch, and fibers
 * of one kernel never change them.  Each is read back at the size it was stored
 * (one 8-byte load of both would wait for a failed store forward). */
__asm__(".text\n"
        ".p2align 4\n" SW_FUNC_BEGIN(sw_fiber_raw_switch)
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    subq $8, %rsp\n"
        "    stmxcsr (%rsp)\n"
        "    fnstcw 4(%rsp)\n"
        "    movl (%rsp), %eax\n"
        "    movzwl 4(%rsp), %ecx\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    cmpl (%rsp), %eax\n"
        "    jne 2f\n"
        "    cmpw 4(%rsp), %cx\n"
        "    je 1f\n"
        "2:\n"
        "    ldmxcsr (%rsp)\n"
        "    fldcw 4(%rsp)\n"
        "1:\n"
        "    addq $8, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n" SW_FUNC_END(sw_fiber_raw_switch)
        ".p2align 4\n" SW_FUNC_BEGIN(sw_fiber_trampoline)
        "    movq %r12, %rdi\n"
        "    callq *%r13\n"
        "    ud2\n" SW_FUNC_END(sw_fiber_trampoline));

/* The initial frame, lowest address first, exactly as sw_fiber_raw_switch pops it. */
typedef struct x86_initial_frame {
    uint32_t mxcsr;
    uint16_t fpu_cw, pad;
    uint64_t r15, r14, r13, r12, rbx, rbp;
    uint64_t ret;
} x86_initial_frame;

static void *initial_sp(const sw_stack *st, sw_fiber_entry entry, void *arg) {
    uintptr_t top = ((uintptr_t)st->base + st->size) & ~(uintptr_t)15;
    /* After `ret` pops the trampoline address rsp must be 16-byte aligned, so that
     * the trampoline's call enters entry() with the ABI's rsp % 16 == 8. */
    uintptr_t ret_slot = top - 24;
    x86_initial_frame *fr = (x86_initial_frame *)(ret_slot - offsetof(x86_initial_frame, ret));
    memset(fr, 0, sizeof *fr);
    uint32_t mxcsr;
    uint16_t cw;
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(cw));
    fr->mxcsr = mxcsr;
    fr->fpu_cw = cw;
    fr->r12 = (uint64_t)(uintptr_t)arg;
    fr->r13 = (uint64_t)(uintptr_t)entry;
    fr->ret = (uint64_t)(uintptr_t)sw_fiber_trampoline;
    return fr;
}

#elif defined(__aarch64__)
/* The frame is 176 bytes, a multiple of 16 as sp must stay.  FPCR is written only when
 * it differs: on some cores a write to it serialises the pipeline.  `hint #34` is
 * BTI c (a no-op without branch protection), so a binary built with
 * -mbranch-protection=standard may reach these through an indirect branch. */
__asm__(".text\n"
        ".p2align 4\n" SW_FUNC_BEGIN(sw_fiber_raw_switch)
        "    hint #34\n"
        "    sub sp, sp, #176\n"
        "    stp x19, x20, [sp, #0]\n"
        "    stp x21, x22, [sp, #16]\n"
        "    stp x23, x24, [sp, #32]\n"
        "    stp x25, x26, [sp, #48]\n"
        "    stp x27, x28, [sp, #64]\n"
        "    stp x29, x30, [sp, #80]\n"
        "    stp d8, d9, [sp, #96]\n"
        "    stp d10, d11, [sp, #112]\n"
        "    stp d12, d13, [sp, #128]\n"
        "    stp d14, d15, [sp, #144]\n"
        "    mrs x9, fpcr\n"
        "    str x9, [sp, #160]\n"
        "    mov x2, sp\n"
        "    str x2, [x0]\n"
        "    mov sp, x1\n"
        "    ldp x19, x20, [sp, #0]\n"
        "    ldp x21, x22, [sp, #16]\n"
        "    ldp x23, x24, [sp, #32]\n"
        "    ldp x25, x26, [sp, #48]\n"
        "    ldp x27, x28, [sp, #64]\n"
        "    ldp x29, x30, [sp, #80]\n"
        "    ldp d8, d9, [sp, #96]\n"
        "    ldp d10, d11, [sp, #112]\n"
        "    ldp d12, d13, [sp, #128]\n"
        "    ldp d14, d15, [sp, #144]\n"
        "    ldr x10, [sp, #160]\n"
        "    cmp x9, x10\n"
        "    b.eq 1f\n"
        "    msr fpcr, x10\n"
        "1:\n"
        "    add sp, sp, #176\n"
        "    ret\n" SW_FUNC_END(sw_fiber_raw_switch)
        ".p2align 4\n" SW_FUNC_BEGIN(sw_fiber_trampoline)
        "    hint #34\n"
        "    mov x0, x19\n"
        "    blr x20\n"
        "    brk #0\n" SW_FUNC_END(sw_fiber_trampoline));

/* The initial frame, lowest address first, exactly as sw_fiber_raw_switch loads it.
 * x29 = 0 ends the frame chain for debuggers and unwinders at the trampoline. */
typedef struct arm64_initial_frame {
    uint64_t x19, x20, x21, x22, x23, x24, x25, x26, x27, x28, x29, x30;
    uint64_t d[8];
    uint64_t fpcr, pad;
} arm64_initial_frame;

_Static_assert(sizeof(arm64_initial_frame) == 176, "the frame sw_fiber_raw_switch pushes");

static void *initial_sp(const sw_stack *st, sw_fiber_entry entry, void *arg) {
    uintptr_t top = ((uintptr_t)st->base + st->size) & ~(uintptr_t)15;
    arm64_initial_frame *fr = (arm64_initial_frame *)(top - sizeof(arm64_initial_frame));
    memset(fr, 0, sizeof *fr);
    uint64_t fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    fr->x19 = (uint64_t)(uintptr_t)arg;
    fr->x20 = (uint64_t)(uintptr_t)entry;
    fr->x30 = (uint64_t)(uintptr_t)sw_fiber_trampoline;
    fr->fpcr = fpcr;
    return fr;
}
#endif

void sw_fiber_prepare(sw_fiber *f, const sw_stack *st, sw_fiber_entry entry, void *arg) {
    f->sp = initial_sp(st, entry, arg);
    f->stack_base = st->base;
    f->stack_size = st->size;
    f->asan_fake_stack = NULL;
}

static void raw_switch(sw_fiber *from, sw_fiber *to) { sw_fiber_raw_switch(&from->sp, to->sp); }

#else /* ucontext fallback */

/* makecontext passes int arguments only: split pointers into two 32-bit halves. */
static void uc_trampoline(unsigned entry_lo, unsigned entry_hi, unsigned arg_lo, unsigned arg_hi) {
    uintptr_t e = (uintptr_t)entry_lo | ((uintptr_t)entry_hi << 16 << 16);
    uintptr_t a = (uintptr_t)arg_lo | ((uintptr_t)arg_hi << 16 << 16);
    ((sw_fiber_entry)e)((void *)a);
    abort(); /* entries never return */
}

void sw_fiber_prepare(sw_fiber *f, const sw_stack *st, sw_fiber_entry entry, void *arg) {
    getcontext(&f->uc);
    f->uc.uc_stack.ss_sp = st->base;
    f->uc.uc_stack.ss_size = st->size;
    f->uc.uc_link = NULL;
    uintptr_t e = (uintptr_t)entry, a = (uintptr_t)arg;
    makecontext(&f->uc, (void (*)(void))uc_trampoline, 4, (unsigned)(e & 0xffffffffu), (unsigned)(e >> 16 >> 16),
                (unsigned)(a & 0xffffffffu), (unsigned)(a >> 16 >> 16));
    f->stack_base = st->base;
    f->stack_size = st->size;
    f->asan_fake_stack = NULL;
}

static void raw_switch(sw_fiber *from, sw_fiber *to) { swapcontext(&from->uc, &to->uc); }

#endif

void sw_fiber_init_native(sw_fiber *f) { memset(f, 0, sizeof *f); }

void sw_fiber_switch(sw_fiber *from, sw_fiber *to) {
#ifdef SW_FIBER_ASAN
    __sanitizer_start_switch_fiber(&from->asan_fake_stack, to->stack_base, to->stack_size);
#endif
    raw_switch(from, to);
#ifdef SW_FIBER_ASAN
    __sanitizer_finish_switch_fiber(from->asan_fake_stack, NULL, NULL);
#endif
}

void sw_fiber_switch_final(sw_fiber *from, sw_fiber *to) {
#ifdef SW_FIBER_ASAN
    __sanitizer_start_switch_fiber(NULL, to->stack_base, to->stack_size);
#endif
    raw_switch(from, to);
    abort(); /* a finished fiber is never resumed */
}

void sw_fiber_entered(sw_fiber *self, sw_fiber *from) {
#ifdef SW_FIBER_ASAN
    const void *bottom = NULL;
    size_t size = 0;
    __sanitizer_finish_switch_fiber(NULL, &bottom, &size);
    /* The first switch tells us where the switching (native) stack lies. */
    if (from && !from->stack_base) {
        from->stack_base = bottom;
        from->stack_size = size;
    }
#endif
    (void)self;
    (void)from;
}

void sw_fiber_note_jump(sw_fiber *to) {
#ifdef SW_FIBER_ASAN
    __sanitizer_start_switch_fiber(NULL, to->stack_base, to->stack_size);
#endif
    (void)to;
}

void sw_fiber_note_landed(void) {
#ifdef SW_FIBER_ASAN
    __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
}
