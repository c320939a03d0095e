/* test_fiber.c — the hand-written context switch (src/swmetal/fiber.c) keeps what the
 * C ABI says a call keeps, on x86-64 and arm64 alike.
 *
 * probe_call() is assembly: it loads a known pattern into every callee-saved
 * register, calls sw_fiber_switch(from, to), and stores what those registers hold when
 * the call returns.  Main and fiber each switch through it with their own pattern, so
 * a register the switch forgets to save or restore shows as a pattern mismatch (or a
 * crash).  The floating-point rounding mode is set differently on the two sides too,
 * and the fiber's entry checks the stack alignment the ABI promises (16 bytes). */
#include <fenv.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "swmetal/fiber.h"
#include "test.h"

#if !defined(SW_FIBER_UCONTEXT) && (defined(__x86_64__) || defined(__aarch64__))
#define PROBE 1

#if defined(__APPLE__)
#define PROBE_SYM "_probe_call"
#define PROBE_BEGIN ".private_extern " PROBE_SYM "\n" PROBE_SYM ":\n"
#define PROBE_END ""
#else
#define PROBE_SYM "probe_call"
#define PROBE_BEGIN ".globl " PROBE_SYM "\n.hidden " PROBE_SYM "\n.type " PROBE_SYM ", %function\n" PROBE_SYM ":\n"
#define PROBE_END ".size " PROBE_SYM ", .-" PROBE_SYM "\n"
#endif

typedef void (*switch_fn)(sw_fiber *, sw_fiber *);

/* in[] and out[] hold PROBE_REGS values: the callee-saved general registers, then
 * (arm64) the low halves of d8-d15. */
void probe_call(switch_fn fn, sw_fiber *from, sw_fiber *to, const uint64_t *in, uint64_t *out);

#if defined(__x86_64__)
#define PROBE_REGS 6 /* rbx rbp r12 r13 r14 r15 */
/* Seven pushes leave rsp 16-byte aligned at the call, as the ABI wants. */
__asm__(".text\n"
        ".p2align 4\n" PROBE_BEGIN
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    pushq %r8\n"
        "    movq %rdi, %rax\n"
        "    movq %rsi, %rdi\n"
        "    movq %rdx, %rsi\n"
        "    movq 0(%rcx), %rbx\n"
        "    movq 8(%rcx), %rbp\n"
        "    movq 16(%rcx), %r12\n"
        "    movq 24(%rcx), %r13\n"
        "    movq 32(%rcx), %r14\n"
        "    movq 40(%rcx), %r15\n"
        "    callq *%rax\n"
        "    popq %rax\n"
        "    movq %rbx, 0(%rax)\n"
        "    movq %rbp, 8(%rax)\n"
        "    movq %r12, 16(%rax)\n"
        "    movq %r13, 24(%rax)\n"
        "    movq %r14, 32(%rax)\n"
        "    movq %r15, 40(%rax)\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n" PROBE_END);
#else
#define PROBE_REGS 19 /* x19-x28, x29, d8-d15 */
__asm__(".text\n"
        ".p2align 4\n" PROBE_BEGIN
        "    hint #34\n"
        "    sub sp, sp, #176\n"
        "    stp x29, x30, [sp, #0]\n"
        "    stp x19, x20, [sp, #16]\n"
        "    stp x21, x22, [sp, #32]\n"
        "    stp x23, x24, [sp, #48]\n"
        "    stp x25, x26, [sp, #64]\n"
        "    stp x27, x28, [sp, #80]\n"
        "    stp d8, d9, [sp, #96]\n"
        "    stp d10, d11, [sp, #112]\n"
        "    stp d12, d13, [sp, #128]\n"
        "    stp d14, d15, [sp, #144]\n"
        "    str x4, [sp, #160]\n"
        "    mov x9, x0\n"
        "    mov x0, x1\n"
        "    mov x1, x2\n"
        "    ldp x19, x20, [x3, #0]\n"
        "    ldp x21, x22, [x3, #16]\n"
        "    ldp x23, x24, [x3, #32]\n"
        "    ldp x25, x26, [x3, #48]\n"
        "    ldp x27, x28, [x3, #64]\n"
        "    ldr x29, [x3, #80]\n"
        "    ldr d8, [x3, #88]\n"
        "    ldr d9, [x3, #96]\n"
        "    ldr d10, [x3, #104]\n"
        "    ldr d11, [x3, #112]\n"
        "    ldr d12, [x3, #120]\n"
        "    ldr d13, [x3, #128]\n"
        "    ldr d14, [x3, #136]\n"
        "    ldr d15, [x3, #144]\n"
        "    blr x9\n"
        "    ldr x9, [sp, #160]\n"
        "    stp x19, x20, [x9, #0]\n"
        "    stp x21, x22, [x9, #16]\n"
        "    stp x23, x24, [x9, #32]\n"
        "    stp x25, x26, [x9, #48]\n"
        "    stp x27, x28, [x9, #64]\n"
        "    str x29, [x9, #80]\n"
        "    str d8, [x9, #88]\n"
        "    str d9, [x9, #96]\n"
        "    str d10, [x9, #104]\n"
        "    str d11, [x9, #112]\n"
        "    str d12, [x9, #120]\n"
        "    str d13, [x9, #128]\n"
        "    str d14, [x9, #136]\n"
        "    str d15, [x9, #144]\n"
        "    ldp x19, x20, [sp, #16]\n"
        "    ldp x21, x22, [sp, #32]\n"
        "    ldp x23, x24, [sp, #48]\n"
        "    ldp x25, x26, [sp, #64]\n"
        "    ldp x27, x28, [sp, #80]\n"
        "    ldp d8, d9, [sp, #96]\n"
        "    ldp d10, d11, [sp, #112]\n"
        "    ldp d12, d13, [sp, #128]\n"
        "    ldp d14, d15, [sp, #144]\n"
        "    ldp x29, x30, [sp, #0]\n"
        "    add sp, sp, #176\n"
        "    ret\n" PROBE_END);
#endif
#endif /* hand-written switch */

#ifdef PROBE
static sw_fiber main_fiber, probe_fiber;
static uint64_t main_in[PROBE_REGS], main_out[PROBE_REGS], fiber_in[PROBE_REGS], fiber_out[PROBE_REGS];
static int fiber_rounds_ok, fiber_round_mode_ok, fiber_aligned, fiber_entry_arg_ok;

static void fill_pattern(uint64_t *v, uint64_t seed) {
    for (int i = 0; i < PROBE_REGS; i++) v[i] = (seed * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)i << 40) ^ (uint64_t)i;
}

static void probe_entry(void *arg) {
    sw_fiber_entered(&probe_fiber, &main_fiber);
    fiber_entry_arg_ok = arg == (void *)&probe_fiber;
    /* The frame address is 16-byte aligned exactly when the stack was at entry (on
     * x86-64 rbp = entry rsp - 8, which must be 8 mod 16; on arm64 sp itself). */
    fiber_aligned = ((uintptr_t)__builtin_frame_address(0) & 15) == 0;
    fesetround(FE_UPWARD);
    int ok = 1, mode_ok = 1;
    for (int r = 0; r < 3; r++) {
        fill_pattern(fiber_in, 1000 + (uint64_t)r);
        probe_call(sw_fiber_switch, &probe_fiber, &main_fiber, fiber_in, fiber_out);
        ok &= memcmp(fiber_in, fiber_out, sizeof fiber_in) == 0;
        mode_ok &= fegetround() == FE_UPWARD;
    }
    fiber_rounds_ok = ok;
    fiber_round_mode_ok = mode_ok;
    sw_fiber_switch_final(&probe_fiber, &main_fiber);
}

TEST(fiber_switch_keeps_callee_saved_registers_and_fp_mode) {
    sw_stack st;
    CHECK(sw_stack_alloc(&st, 64 * 1024) == 0);
    int old_mode = fegetround();
    sw_fiber_init_native(&main_fiber);
    sw_fiber_prepare(&probe_fiber, &st, probe_entry, &probe_fiber);
    fesetround(FE_TOWARDZERO);
    /* Round 0 starts the fiber; rounds 1-3 resume it after each of its switches back. */
    for (int r = 0; r < 4; r++) {
        fill_pattern(main_in, 1 + (uint64_t)r);
        probe_call(sw_fiber_switch, &main_fiber, &probe_fiber, main_in, main_out);
        for (int i = 0; i < PROBE_REGS; i++)
            CHECK_MSG(main_in[i] == main_out[i], "round %d: register slot %d changed across the switch: %#llx -> %#llx",
                      r, i, (unsigned long long)main_in[i], (unsigned long long)main_out[i]);
        CHECK_MSG(fegetround() == FE_TOWARDZERO, "round %d: the fiber's rounding mode leaked into main", r);
    }
    fesetround(old_mode);
    CHECK(fiber_entry_arg_ok);
    CHECK_MSG(fiber_aligned, "the fiber's entry ran on a stack not 16-byte aligned");
    CHECK_MSG(fiber_rounds_ok, "a callee-saved register of the fiber changed while it was switched out");
    CHECK_MSG(fiber_round_mode_ok, "main's rounding mode leaked into the fiber");
    sw_stack_free(&st);
}

#else
TEST(fiber_switch_keeps_callee_saved_registers_and_fp_mode) {
    SKIP("this build uses the ucontext fallback, not the hand-written switch");
}
#endif

/* Stacks are whole pages of the running system (4 KiB on x86-64 and most arm64 Linux,
 * 16 KiB on Apple arm64) with an inaccessible page below. */
TEST(fiber_stack_is_page_rounded_with_guard_below) {
    long page = sysconf(_SC_PAGESIZE);
    sw_stack st;
    CHECK(sw_stack_alloc(&st, 1000) == 0);
    CHECK_EQ_INT(st.size, page);
    CHECK((char *)st.base == (char *)st.map + page);
    CHECK_EQ_INT(st.map_size, 2 * page);
    CHECK_EQ_INT((uintptr_t)st.base % (uintptr_t)page, 0);
    sw_stack_free(&st);
}
