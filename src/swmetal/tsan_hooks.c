/* tsan_hooks.c — the __tsan_* functions instrumented kernels call (full checks).
 *
 * Kernels compiled with clang -fsanitize=thread but without the TSan runtime call
 * these for every memory access; the gdnbench binary exports them (-rdynamic) and
 * the kernel .so binds to them at dlopen.  Each forwards to sw_checks_on_access
 * (checks.c) with the address of the instrumented instruction (the call into the
 * hook), which the reports map to a .metal line; __tsan_func_entry/exit keep the
 * GPU thread's shadow call stack.  Atomics are performed for real (device memory
 * is shared between workers), always sequentially consistent whatever order the
 * kernel asked for;
 * memcpy/memset/memmove do the copy after checking both ranges.  The signatures are
 * those of LLVM's ThreadSanitizer pass (compiler-rt tsan_interface.h). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "swmetal/checks_internal.h"

/* The call instruction in kernel code that entered the hook (inlined into each). */
#define CALLER() ((const void *)((const char *)__builtin_return_address(0) - 1))

/* Nothing in the program calls these; the prototypes only keep -Wmissing-prototypes
 * style checks quiet and document the ABI. */
void __tsan_read1(void *a);
void __tsan_write1(void *a);
void __tsan_unaligned_read1(const void *a);
void __tsan_unaligned_write1(void *a);
void __tsan_volatile_read1(void *a);
void __tsan_volatile_write1(void *a);
void __tsan_unaligned_volatile_read1(void *a);
void __tsan_unaligned_volatile_write1(void *a);
void __tsan_read1_pc(void *a, void *pc);
void __tsan_write1_pc(void *a, void *pc);
void __tsan_read2(void *a);
void __tsan_write2(void *a);
void __tsan_unaligned_read2(const void *a);
void __tsan_unaligned_write2(void *a);
void __tsan_volatile_read2(void *a);
void __tsan_volatile_write2(void *a);
void __tsan_unaligned_volatile_read2(void *a);
void __tsan_unaligned_volatile_write2(void *a);
void __tsan_read2_pc(void *a, void *pc);
void __tsan_write2_pc(void *a, void *pc);
void __tsan_read4(void *a);
void __tsan_write4(void *a);
void __tsan_unaligned_read4(const void *a);
void __tsan_unaligned_write4(void *a);
void __tsan_volatile_read4(void *a);
void __tsan_volatile_write4(void *a);
void __tsan_unaligned_volatile_read4(void *a);
void __tsan_unaligned_volatile_write4(void *a);
void __tsan_read4_pc(void *a, void *pc);
void __tsan_write4_pc(void *a, void *pc);
void __tsan_read8(void *a);
void __tsan_write8(void *a);
void __tsan_unaligned_read8(const void *a);
void __tsan_unaligned_write8(void *a);
void __tsan_volatile_read8(void *a);
void __tsan_volatile_write8(void *a);
void __tsan_unaligned_volatile_read8(void *a);
void __tsan_unaligned_volatile_write8(void *a);
void __tsan_read8_pc(void *a, void *pc);
void __tsan_write8_pc(void *a, void *pc);
void __tsan_read16(void *a);
void __tsan_write16(void *a);
void __tsan_unaligned_read16(const void *a);
void __tsan_unaligned_write16(void *a);
void __tsan_volatile_read16(void *a);
void __tsan_volatile_write16(void *a);
void __tsan_unaligned_volatile_read16(void *a);
void __tsan_unaligned_volatile_write16(void *a);
void __tsan_read16_pc(void *a, void *pc);
void __tsan_write16_pc(void *a, void *pc);

void __tsan_read1(void *a) { sw_checks_on_access(a, 1, 0, 0, CALLER()); }
void __tsan_write1(void *a) { sw_checks_on_access(a, 1, 1, 0, CALLER()); }
void __tsan_unaligned_read1(const void *a) { sw_checks_on_access(a, 1, 0, 0, CALLER()); }
void __tsan_unaligned_write1(void *a) { sw_checks_on_access(a, 1, 1, 0, CALLER()); }
void __tsan_volatile_read1(void *a) { sw_checks_on_access(a, 1, 0, 0, CALLER()); }
void __tsan_volatile_write1(void *a) { sw_checks_on_access(a, 1, 1, 0, CALLER()); }
void __tsan_unaligned_volatile_read1(void *a) { sw_checks_on_access(a, 1, 0, 0, CALLER()); }
void __tsan_unaligned_volatile_write1(void *a) { sw_checks_on_access(a, 1, 1, 0, CALLER()); }
void __tsan_read1_pc(void *a, void *pc) { sw_checks_on_access(a, 1, 0, 0, pc); }
void __tsan_write1_pc(void *a, void *pc) { sw_checks_on_access(a, 1, 1, 0, pc); }
void __tsan_read2(void *a) { sw_checks_on_access(a, 2, 0, 0, CALLER()); }
void __tsan_write2(void *a) { sw_checks_on_access(a, 2, 1, 0, CALLER()); }
void __tsan_unaligned_read2(const void *a) { sw_checks_on_access(a, 2, 0, 0, CALLER()); }
void __tsan_unaligned_write2(void *a) { sw_checks_on_access(a, 2, 1, 0, CALLER()); }
void __tsan_volatile_read2(void *a) { sw_checks_on_access(a, 2, 0, 0, CALLER()); }
void __tsan_volatile_write2(void *a) { sw_checks_on_access(a, 2, 1, 0, CALLER()); }
void __tsan_unaligned_volatile_read2(void *a) { sw_checks_on_access(a, 2, 0, 0, CALLER()); }
void __tsan_unaligned_volatile_write2(void *a) { sw_checks_on_access(a, 2, 1, 0, CALLER()); }
void __tsan_read2_pc(void *a, void *pc) { sw_checks_on_access(a, 2, 0, 0, pc); }
void __tsan_write2_pc(void *a, void *pc) { sw_checks_on_access(a, 2, 1, 0, pc); }
void __tsan_read4(void *a) { sw_checks_on_access(a, 4, 0, 0, CALLER()); }
void __tsan_write4(void *a) { sw_checks_on_access(a, 4, 1, 0, CALLER()); }
void __tsan_unaligned_read4(const void *a) { sw_checks_on_access(a, 4, 0, 0, CALLER()); }
void __tsan_unaligned_write4(void *a) { sw_checks_on_access(a, 4, 1, 0, CALLER()); }
void __tsan_volatile_read4(void *a) { sw_checks_on_access(a, 4, 0, 0, CALLER()); }
void __tsan_volatile_write4(void *a) { sw_checks_on_access(a, 4, 1, 0, CALLER()); }
void __tsan_unaligned_volatile_read4(void *a) { sw_checks_on_access(a, 4, 0, 0, CALLER()); }
void __tsan_unaligned_volatile_write4(void *a) { sw_checks_on_access(a, 4, 1, 0, CALLER()); }
void __tsan_read4_pc(void *a, void *pc) { sw_checks_on_access(a, 4, 0, 0, pc); }
void __tsan_write4_pc(void *a, void *pc) { sw_checks_on_access(a, 4, 1, 0, pc); }
void __tsan_read8(void *a) { sw_checks_on_access(a, 8, 0, 0, CALLER()); }
void __tsan_write8(void *a) { sw_checks_on_access(a, 8, 1, 0, CALLER()); }
void __tsan_unaligned_read8(const void *a) { sw_checks_on_access(a, 8, 0, 0, CALLER()); }
void __tsan_unaligned_write8(void *a) { sw_checks_on_access(a, 8, 1, 0, CALLER()); }
void __tsan_volatile_read8(void *a) { sw_checks_on_access(a, 8, 0, 0, CALLER()); }
void __tsan_volatile_write8(void *a) { sw_checks_on_access(a, 8, 1, 0, CALLER()); }
void __tsan_unaligned_volatile_read8(void *a) { sw_checks_on_access(a, 8, 0, 0, CALLER()); }
void __tsan_unaligned_volatile_write8(void *a) { sw_checks_on_access(a, 8, 1, 0, CALLER()); }
void __tsan_read8_pc(void *a, void *pc) { sw_checks_on_access(a, 8, 0, 0, pc); }
void __tsan_write8_pc(void *a, void *pc) { sw_checks_on_access(a, 8, 1, 0, pc); }
void __tsan_read16(void *a) { sw_checks_on_access(a, 16, 0, 0, CALLER()); }
void __tsan_write16(void *a) { sw_checks_on_access(a, 16, 1, 0, CALLER()); }
void __tsan_unaligned_read16(const void *a) { sw_checks_on_access(a, 16, 0, 0, CALLER()); }
void __tsan_unaligned_write16(void *a) { sw_checks_on_access(a, 16, 1, 0, CALLER()); }
void __tsan_volatile_read16(void *a) { sw_checks_on_access(a, 16, 0, 0, CALLER()); }
void __tsan_volatile_write16(void *a) { sw_checks_on_access(a, 16, 1, 0, CALLER()); }
void __tsan_unaligned_volatile_read16(void *a) { sw_checks_on_access(a, 16, 0, 0, CALLER()); }
void __tsan_unaligned_volatile_write16(void *a) { sw_checks_on_access(a, 16, 1, 0, CALLER()); }
void __tsan_read16_pc(void *a, void *pc) { sw_checks_on_access(a, 16, 0, 0, pc); }
void __tsan_write16_pc(void *a, void *pc) { sw_checks_on_access(a, 16, 1, 0, pc); }

void __tsan_init(void);
void __tsan_func_entry(void *pc);
void __tsan_func_exit(void);
void __tsan_read_range(void *a, unsigned long n);
void __tsan_write_range(void *a, unsigned long n);
void __tsan_vptr_update(void **vptr, void *val);
void __tsan_vptr_read(void **vptr);
void *__tsan_memcpy(void *dst, const void *src, unsigned long n);
void *__tsan_memmove(void *dst, const void *src, unsigned long n);
void *__tsan_memset(void *dst, int c, unsigned long n);
void __tsan_atomic_thread_fence(int mo);
void __tsan_atomic_signal_fence(int mo);

/* Called by each instrumented module's constructor: nothing to set up. */
void __tsan_init(void) {}
/* Function entry/exit would feed a shadow call stack; reports do without. */
void __tsan_func_entry(void *pc) { sw_checks_on_call((const char *)pc - 1); }
void __tsan_func_exit(void) { sw_checks_on_return(); }
void __tsan_read_range(void *a, unsigned long n) { sw_checks_on_access(a, n, 0, 0, CALLER()); }
void __tsan_write_range(void *a, unsigned long n) { sw_checks_on_access(a, n, 1, 0, CALLER()); }
void __tsan_vptr_update(void **vptr, void *val) { sw_checks_on_access(vptr, sizeof *vptr, 1, 0, CALLER()); }
void __tsan_vptr_read(void **vptr) { sw_checks_on_access(vptr, sizeof *vptr, 0, 0, CALLER()); }

void *__tsan_memcpy(void *dst, const void *src, unsigned long n) {
    sw_checks_on_access(src, n, 0, 0, CALLER());
    sw_checks_on_access(dst, n, 1, 0, CALLER());
    return memcpy(dst, src, n);
}

void *__tsan_memmove(void *dst, const void *src, unsigned long n) {
    sw_checks_on_access(src, n, 0, 0, CALLER());
    sw_checks_on_access(dst, n, 1, 0, CALLER());
    return memmove(dst, src, n);
}

void *__tsan_memset(void *dst, int c, unsigned long n) {
    sw_checks_on_access(dst, n, 1, 0, CALLER());
    return memset(dst, c, n);
}

void __tsan_atomic_thread_fence(int mo) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
void __tsan_atomic_signal_fence(int mo) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }

/* 8-bit atomics */
uint8_t __tsan_atomic8_load(const volatile uint8_t *a, int mo);
void __tsan_atomic8_store(volatile uint8_t *a, uint8_t v, int mo);
uint8_t __tsan_atomic8_exchange(volatile uint8_t *a, uint8_t v, int mo);
uint8_t __tsan_atomic8_fetch_add(volatile uint8_t *a, uint8_t v, int mo);
uint8_t __tsan_atomic8_fetch_sub(volatile uint8_t *a, uint8_t v, int mo);
uint8_t __tsan_atomic8_fetch_and(volatile uint8_t *a, uint8_t v, int mo);
uint8_t __tsan_atomic8_fetch_or(volatile uint8_t *a, uint8_t v, int mo);
uint8_t __tsan_atomic8_fetch_xor(volatile uint8_t *a, uint8_t v, int mo);
uint8_t __tsan_atomic8_fetch_nand(volatile uint8_t *a, uint8_t v, int mo);
int __tsan_atomic8_compare_exchange_strong(volatile uint8_t *a, uint8_t *c, uint8_t v, int mo, int fmo);
int __tsan_atomic8_compare_exchange_weak(volatile uint8_t *a, uint8_t *c, uint8_t v, int mo, int fmo);
uint8_t __tsan_atomic8_compare_exchange_val(volatile uint8_t *a, uint8_t c, uint8_t v, int mo, int fmo);

uint8_t __tsan_atomic8_load(const volatile uint8_t *a, int mo) {
    sw_checks_on_access((const void *)a, 1, 0, 1, CALLER());
    return __atomic_load_n(a, __ATOMIC_SEQ_CST);
}

void __tsan_atomic8_store(volatile uint8_t *a, uint8_t v, int mo) {
    sw_checks_on_access((const void *)a, 1, 1, 1, CALLER());
    __atomic_store_n(a, v, __ATOMIC_SEQ_CST);
}

uint8_t __tsan_atomic8_exchange(volatile uint8_t *a, uint8_t v, int mo) {
    sw_checks_on_access((const void *)a, 1, 1, 1, CALLER());
    return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);
}

uint8_t __tsan_atomic8_fetch_add(volatile uint8_t *a, uint8_t v, int mo) {
    sw_checks_on_access((const void *)a, 1, 1, 1, CALLER());
    return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);
}

uint8_t __tsan_atomic8_fetch_sub(volatile uint8_t *a, uint8_t v, int mo) {
    sw_checks_on_access((const void *)a, 1, 1, 1, CALLER());
    return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST);
}

uint8_t __tsan_atomic8_fetch_and(volatile uint8_t *a, uint8_t v, int mo) {
    sw_checks_on_access((const void *)a, 1, 1, 1, CALLER());
    return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST);
}

uint8_t __tsan_atomic8_fetch_or(volatile uint8_t *a, uint8_t v, int mo) {
    sw_checks_on_access((const void *)a, 1, 1, 1, CALLER());
    return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST);
}

uint8_t __tsan_atomic8_fetch_xor(volatile uint8_t *a, uint8_t v, int mo) {
    sw_checks_on_access((const void *)a, 1, 1, 1, CALLER());
    return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST);
}

uint8_t __tsan_atomic8_fetch_nand(volatile uint8_t *a, uint8_t v, int mo) {
    sw_checks_on_access((const void *)a, 1, 1, 1, CALLER());
    return __atomic_fetch_nand(a, v, __ATOMIC_SEQ_CST);
}

int __tsan_atomic8_compare_exchange_strong(volatile uint8_t *a, uint8_t *c, uint8_t v, int mo, int fmo) {
    sw_checks_on_access((const void *)a, 1, 1, 1, CALLER());
    return __atomic_compare_exchange_n(a, c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

int __tsan_atomic8_compare_exchange_weak(volatile uint8_t *a, uint8_t *c, uint8_t v, int mo, int fmo) {
    sw_checks_on_access((const void *)a, 1, 1, 1, CALLER());
    return __atomic_compare_exchange_n(a, c, v, 1, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

uint8_t __tsan_atomic8_compare_exchange_val(volatile uint8_t *a, uint8_t c, uint8_t v, int mo, int fmo) {
    sw_checks_on_access((const void *)a, 1, 1, 1, CALLER());
    __atomic_compare_exchange_n(a, &c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return c;
}

/* 16-bit atomics */
uint16_t __tsan_atomic16_load(const volatile uint16_t *a, int mo);
void __tsan_atomic16_store(volatile uint16_t *a, uint16_t v, int mo);
uint16_t __tsan_atomic16_exchange(volatile uint16_t *a, uint16_t v, int mo);
uint16_t __tsan_atomic16_fetch_add(volatile uint16_t *a, uint16_t v, int mo);
uint16_t __tsan_atomic16_fetch_sub(volatile uint16_t *a, uint16_t v, int mo);
uint16_t __tsan_atomic16_fetch_and(volatile uint16_t *a, uint16_t v, int mo);
uint16_t __tsan_atomic16_fetch_or(volatile uint16_t *a, uint16_t v, int mo);
uint16_t __tsan_atomic16_fetch_xor(volatile uint16_t *a, uint16_t v, int mo);
uint16_t __tsan_atomic16_fetch_nand(volatile uint16_t *a, uint16_t v, int mo);
int __tsan_atomic16_compare_exchange_strong(volatile uint16_t *a, uint16_t *c, uint16_t v, int mo, int fmo);
int __tsan_atomic16_compare_exchange_weak(volatile uint16_t *a, uint16_t *c, uint16_t v, int mo, int fmo);
uint16_t __tsan_atomic16_compare_exchange_val(volatile uint16_t *a, uint16_t c, uint16_t v, int mo, int fmo);

uint16_t __tsan_atomic16_load(const volatile uint16_t *a, int mo) {
    sw_checks_on_access((const void *)a, 2, 0, 1, CALLER());
    return __atomic_load_n(a, __ATOMIC_SEQ_CST);
}

void __tsan_atomic16_store(volatile uint16_t *a, uint16_t v, int mo) {
    sw_checks_on_access((const void *)a, 2, 1, 1, CALLER());
    __atomic_store_n(a, v, __ATOMIC_SEQ_CST);
}

uint16_t __tsan_atomic16_exchange(volatile uint16_t *a, uint16_t v, int mo) {
    sw_checks_on_access((const void *)a, 2, 1, 1, CALLER());
    return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);
}

uint16_t __tsan_atomic16_fetch_add(volatile uint16_t *a, uint16_t v, int mo) {
    sw_checks_on_access((const void *)a, 2, 1, 1, CALLER());
    return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);
}

uint16_t __tsan_atomic16_fetch_sub(volatile uint16_t *a, uint16_t v, int mo) {
    sw_checks_on_access((const void *)a, 2, 1, 1, CALLER());
    return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST);
}

uint16_t __tsan_atomic16_fetch_and(volatile uint16_t *a, uint16_t v, int mo) {
    sw_checks_on_access((const void *)a, 2, 1, 1, CALLER());
    return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST);
}

uint16_t __tsan_atomic16_fetch_or(volatile uint16_t *a, uint16_t v, int mo) {
    sw_checks_on_access((const void *)a, 2, 1, 1, CALLER());
    return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST);
}

uint16_t __tsan_atomic16_fetch_xor(volatile uint16_t *a, uint16_t v, int mo) {
    sw_checks_on_access((const void *)a, 2, 1, 1, CALLER());
    return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST);
}

uint16_t __tsan_atomic16_fetch_nand(volatile uint16_t *a, uint16_t v, int mo) {
    sw_checks_on_access((const void *)a, 2, 1, 1, CALLER());
    return __atomic_fetch_nand(a, v, __ATOMIC_SEQ_CST);
}

int __tsan_atomic16_compare_exchange_strong(volatile uint16_t *a, uint16_t *c, uint16_t v, int mo, int fmo) {
    sw_checks_on_access((const void *)a, 2, 1, 1, CALLER());
    return __atomic_compare_exchange_n(a, c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

int __tsan_atomic16_compare_exchange_weak(volatile uint16_t *a, uint16_t *c, uint16_t v, int mo, int fmo) {
    sw_checks_on_access((const void *)a, 2, 1, 1, CALLER());
    return __atomic_compare_exchange_n(a, c, v, 1, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

uint16_t __tsan_atomic16_compare_exchange_val(volatile uint16_t *a, uint16_t c, uint16_t v, int mo, int fmo) {
    sw_checks_on_access((const void *)a, 2, 1, 1, CALLER());
    __atomic_compare_exchange_n(a, &c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return c;
}

/* 32-bit atomics */
uint32_t __tsan_atomic32_load(const volatile uint32_t *a, int mo);
void __tsan_atomic32_store(volatile uint32_t *a, uint32_t v, int mo);
uint32_t __tsan_atomic32_exchange(volatile uint32_t *a, uint32_t v, int mo);
uint32_t __tsan_atomic32_fetch_add(volatile uint32_t *a, uint32_t v, int mo);
uint32_t __tsan_atomic32_fetch_sub(volatile uint32_t *a, uint32_t v, int mo);
uint32_t __tsan_atomic32_fetch_and(volatile uint32_t *a, uint32_t v, int mo);
uint32_t __tsan_atomic32_fetch_or(volatile uint32_t *a, uint32_t v, int mo);
uint32_t __tsan_atomic32_fetch_xor(volatile uint32_t *a, uint32_t v, int mo);
uint32_t __tsan_atomic32_fetch_nand(volatile uint32_t *a, uint32_t v, int mo);
int __tsan_atomic32_compare_exchange_strong(volatile uint32_t *a, uint32_t *c, uint32_t v, int mo, int fmo);
int __tsan_atomic32_compare_exchange_weak(volatile uint32_t *a, uint32_t *c, uint32_t v, int mo, int fmo);
uint32_t __tsan_atomic32_compare_exchange_val(volatile uint32_t *a, uint32_t c, uint32_t v, int mo, int fmo);

uint32_t __tsan_atomic32_load(const volatile uint32_t *a, int mo) {
    sw_checks_on_access((const void *)a, 4, 0, 1, CALLER());
    return __atomic_load_n(a, __ATOMIC_SEQ_CST);
}

void __tsan_atomic32_store(volatile uint32_t *a, uint32_t v, int mo) {
    sw_checks_on_access((const void *)a, 4, 1, 1, CALLER());
    __atomic_store_n(a, v, __ATOMIC_SEQ_CST);
}

uint32_t __tsan_atomic32_exchange(volatile uint32_t *a, uint32_t v, int mo) {
    sw_checks_on_access((const void *)a, 4, 1, 1, CALLER());
    return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);
}

uint32_t __tsan_atomic32_fetch_add(volatile uint32_t *a, uint32_t v, int mo) {
    sw_checks_on_access((const void *)a, 4, 1, 1, CALLER());
    return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);
}

uint32_t __tsan_atomic32_fetch_sub(volatile uint32_t *a, uint32_t v, int mo) {
    sw_checks_on_access((const void *)a, 4, 1, 1, CALLER());
    return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST);
}

uint32_t __tsan_atomic32_fetch_and(volatile uint32_t *a, uint32_t v, int mo) {
    sw_checks_on_access((const void *)a, 4, 1, 1, CALLER());
    return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST);
}

uint32_t __tsan_atomic32_fetch_or(volatile uint32_t *a, uint32_t v, int mo) {
    sw_checks_on_access((const void *)a, 4, 1, 1, CALLER());
    return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST);
}

uint32_t __tsan_atomic32_fetch_xor(volatile uint32_t *a, uint32_t v, int mo) {
    sw_checks_on_access((const void *)a, 4, 1, 1, CALLER());
    return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST);
}

uint32_t __tsan_atomic32_fetch_nand(volatile uint32_t *a, uint32_t v, int mo) {
    sw_checks_on_access((const void *)a, 4, 1, 1, CALLER());
    return __atomic_fetch_nand(a, v, __ATOMIC_SEQ_CST);
}

int __tsan_atomic32_compare_exchange_strong(volatile uint32_t *a, uint32_t *c, uint32_t v, int mo, int fmo) {
    sw_checks_on_access((const void *)a, 4, 1, 1, CALLER());
    return __atomic_compare_exchange_n(a, c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

int __tsan_atomic32_compare_exchange_weak(volatile uint32_t *a, uint32_t *c, uint32_t v, int mo, int fmo) {
    sw_checks_on_access((const void *)a, 4, 1, 1, CALLER());
    return __atomic_compare_exchange_n(a, c, v, 1, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

uint32_t __tsan_atomic32_compare_exchange_val(volatile uint32_t *a, uint32_t c, uint32_t v, int mo, int fmo) {
    sw_checks_on_access((const void *)a, 4, 1, 1, CALLER());
    __atomic_compare_exchange_n(a, &c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return c;
}

/* 64-bit atomics */
uint64_t __tsan_atomic64_load(const volatile uint64_t *a, int mo);
void __tsan_atomic64_store(volatile uint64_t *a, uint64_t v, int mo);
uint64_t __tsan_atomic64_exchange(volatile uint64_t *a, uint64_t v, int mo);
uint64_t __tsan_atomic64_fetch_add(volatile uint64_t *a, uint64_t v, int mo);
uint64_t __tsan_atomic64_fetch_sub(volatile uint64_t *a, uint64_t v, int mo);
uint64_t __tsan_atomic64_fetch_and(volatile uint64_t *a, uint64_t v, int mo);
uint64_t __tsan_atomic64_fetch_or(volatile uint64_t *a, uint64_t v, int mo);
uint64_t __tsan_atomic64_fetch_xor(volatile uint64_t *a, uint64_t v, int mo);
uint64_t __tsan_atomic64_fetch_nand(volatile uint64_t *a, uint64_t v, int mo);
int __tsan_atomic64_compare_exchange_strong(volatile uint64_t *a, uint64_t *c, uint64_t v, int mo, int fmo);
int __tsan_atomic64_compare_exchange_weak(volatile uint64_t *a, uint64_t *c, uint64_t v, int mo, int fmo);
uint64_t __tsan_atomic64_compare_exchange_val(volatile uint64_t *a, uint64_t c, uint64_t v, int mo, int fmo);

uint64_t __tsan_atomic64_load(const volatile uint64_t *a, int mo) {
    sw_checks_on_access((const void *)a, 8, 0, 1, CALLER());
    return __atomic_load_n(a, __ATOMIC_SEQ_CST);
}

void __tsan_atomic64_store(volatile uint64_t *a, uint64_t v, int mo) {
    sw_checks_on_access((const void *)a, 8, 1, 1, CALLER());
    __atomic_store_n(a, v, __ATOMIC_SEQ_CST);
}

uint64_t __tsan_atomic64_exchange(volatile uint64_t *a, uint64_t v, int mo) {
    sw_checks_on_access((const void *)a, 8, 1, 1, CALLER());
    return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);
}

uint64_t __tsan_atomic64_fetch_add(volatile uint64_t *a, uint64_t v, int mo) {
    sw_checks_on_access((const void *)a, 8, 1, 1, CALLER());
    return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);
}

uint64_t __tsan_atomic64_fetch_sub(volatile uint64_t *a, uint64_t v, int mo) {
    sw_checks_on_access((const void *)a, 8, 1, 1, CALLER());
    return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST);
}

uint64_t __tsan_atomic64_fetch_and(volatile uint64_t *a, uint64_t v, int mo) {
    sw_checks_on_access((const void *)a, 8, 1, 1, CALLER());
    return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST);
}

uint64_t __tsan_atomic64_fetch_or(volatile uint64_t *a, uint64_t v, int mo) {
    sw_checks_on_access((const void *)a, 8, 1, 1, CALLER());
    return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST);
}

uint64_t __tsan_atomic64_fetch_xor(volatile uint64_t *a, uint64_t v, int mo) {
    sw_checks_on_access((const void *)a, 8, 1, 1, CALLER());
    return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST);
}

uint64_t __tsan_atomic64_fetch_nand(volatile uint64_t *a, uint64_t v, int mo) {
    sw_checks_on_access((const void *)a, 8, 1, 1, CALLER());
    return __atomic_fetch_nand(a, v, __ATOMIC_SEQ_CST);
}

int __tsan_atomic64_compare_exchange_strong(volatile uint64_t *a, uint64_t *c, uint64_t v, int mo, int fmo) {
    sw_checks_on_access((const void *)a, 8, 1, 1, CALLER());
    return __atomic_compare_exchange_n(a, c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

int __tsan_atomic64_compare_exchange_weak(volatile uint64_t *a, uint64_t *c, uint64_t v, int mo, int fmo) {
    sw_checks_on_access((const void *)a, 8, 1, 1, CALLER());
    return __atomic_compare_exchange_n(a, c, v, 1, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

uint64_t __tsan_atomic64_compare_exchange_val(volatile uint64_t *a, uint64_t c, uint64_t v, int mo, int fmo) {
    sw_checks_on_access((const void *)a, 8, 1, 1, CALLER());
    __atomic_compare_exchange_n(a, &c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return c;
}
