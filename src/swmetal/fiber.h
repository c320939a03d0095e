/* fiber.h — user-mode context switching for the software Metal device.
 *
 * Every GPU thread of a threadgroup runs on its own fiber; the worker thread's own
 * stack runs the scheduler.  The switch is hand-written assembly on x86-64 (SysV) and
 * arm64 (AAPCS64) and falls back to ucontext elsewhere (or with -DSW_FIBER_UCONTEXT).
 *
 * Life of a fiber: sw_fiber_prepare() points it at a stack and an entry function;
 * the first sw_fiber_switch() into it calls entry(arg).  The entry must never return:
 * it ends by switching away with sw_fiber_switch_final() and is then re-prepared (the
 * stack is reused) or dropped.  Stacks come from sw_stack_alloc (mmap, guard page
 * below), allocated once per worker and reused for every threadgroup. */
#ifndef GDN_SW_FIBER_H
#define GDN_SW_FIBER_H

#include <stddef.h>

#if !defined(SW_FIBER_UCONTEXT) && !defined(__x86_64__) && !defined(__aarch64__)
#define SW_FIBER_UCONTEXT 1
#endif

#ifdef SW_FIBER_UCONTEXT
#include <ucontext.h>
#endif

typedef struct sw_stack {
    void *map;          /* whole mapping, guard page included */
    size_t map_size;
    void *base;         /* lowest usable byte (just above the guard page) */
    size_t size;        /* usable bytes */
} sw_stack;

typedef struct sw_fiber {
#ifdef SW_FIBER_UCONTEXT
    ucontext_t uc;
#else
    void *sp;           /* saved stack pointer; callee-saved state lives on the stack */
#endif
    /* Stack bounds, for the address sanitizer's fiber annotations.  The worker's own
     * (scheduler) fiber learns its bounds on the first switch back. */
    const void *stack_base;
    size_t stack_size;
    void *asan_fake_stack;
} sw_fiber;

typedef void (*sw_fiber_entry)(void *arg);

/* Maps `size` usable bytes (rounded up to pages) with a PROT_NONE guard page below.
 * Returns 0, or -1 with errno set. */
int sw_stack_alloc(sw_stack *st, size_t size);
void sw_stack_free(sw_stack *st);

/* After a fiber on `st` was abandoned mid-run (a fault): clears what the address
 * sanitizer still believes about frames that never returned.  A no-op otherwise. */
void sw_stack_reset(sw_stack *st);

/* Makes `f` start entry(arg) on `st` at its next switch-in. */
void sw_fiber_prepare(sw_fiber *f, const sw_stack *st, sw_fiber_entry entry, void *arg);

/* Initialises the fiber that stands for the calling OS thread's own stack. */
void sw_fiber_init_native(sw_fiber *f);

/* Saves the current context into `from` and resumes `to`.  Returns when someone
 * switches back to `from`. */
void sw_fiber_switch(sw_fiber *from, sw_fiber *to);

/* Like sw_fiber_switch, for a fiber that will never be resumed (its entry is done). */
void sw_fiber_switch_final(sw_fiber *from, sw_fiber *to) __attribute__((noreturn));

/* Must be the first call in every fiber entry (completes the sanitizer handshake). */
void sw_fiber_entered(sw_fiber *self, sw_fiber *from);

/* Tell the address sanitizer (if any) that control left `from` for `to` by other
 * means than sw_fiber_switch (a siglongjmp out of a signal handler). */
void sw_fiber_note_jump(sw_fiber *to);
void sw_fiber_note_landed(void);

#endif
