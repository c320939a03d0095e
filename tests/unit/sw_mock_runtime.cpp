// sw_mock_runtime.cpp — a stand-in for the executor, used by test_sw_compile.c to
// check the prelude's synchronising functions (barriers, simd_*, simdgroup_matrix,
// function-scope threadgroup arrays) before and independently of exec.c.
//
// Built by the test with clang++ into its own executable (-rdynamic exports the
// sw_rt_* below to the kernel library it dlopens), so it never clashes with the
// real runtime in gdnbench.  One threadgroup of 64 threads = 2 simdgroups, each
// GPU thread a pthread; barriers are counting barriers on a mutex and a condition
// variable (macOS has no pthread_barrier_t); every lane always takes
// part (mask = all 32 lanes), so each lane can alternate the two exchange banks on
// its own count of syncs.  After a sync each lane reads its own copy of the bank,
// with the memo cleared: the memo is then never shared, and lanes running in
// parallel never write one together.
//   usage: sw_mock_runtime KERNEL.so KERNEL_NAME OUT.bin
// Calls the kernel with buffer(0) = float[4096] and buffer(1) = uint[4096] (both
// zeroed), then writes both buffers to OUT.bin.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_abi.h"

struct mock_barrier {
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    unsigned count = 0, waiting = 0, generation = 0;
};

static void barrier_wait(mock_barrier *b) {
    pthread_mutex_lock(&b->mu);
    unsigned gen = b->generation;
    if (++b->waiting == b->count) {
        b->waiting = 0;
        b->generation++;
        pthread_cond_broadcast(&b->cv);
    } else {
        while (gen == b->generation) pthread_cond_wait(&b->cv, &b->mu);
    }
    pthread_mutex_unlock(&b->mu);
}

static mock_barrier tg_barrier, simd_barrier[2];
static thread_local sw_ids my_ids;
static thread_local size_t tg_offset;
alignas(64) static char tg_arena[32768];
alignas(64) static char simd_slots[2][2][SW_SIMD_WIDTH * SW_SIMD_SLOT_BYTES];  // [simdgroup][bank]
alignas(64) static char mma_log[2][SW_MMA_LOG_BYTES];  // [simdgroup], zeroed as a threadgroup starts
static thread_local int out_bank;
alignas(64) static thread_local char read_copy[SW_SIMD_BANK_SLOTS * SW_SIMD_SLOT_BYTES];
static float fbuf[4096];
static unsigned ubuf[4096];
static sw_entry_fn entry;

static thread_local sw_current my_view;

extern "C" {
#if SW_RT_CURRENT_TLS
__thread sw_current sw_rt_current; /* what the kernel reads instead of calling sw_rt_ids/sw_rt_mma_log */
#endif
const sw_ids *sw_rt_ids(void) { return &my_ids; }
void *sw_rt_tg_alloc(size_t size, size_t align, const char *, int) {
    tg_offset = (tg_offset + align - 1) / align * align;
    void *p = tg_arena + tg_offset;
    tg_offset += size;
    return p;
}
void *sw_rt_tg_alloc_init(size_t size, size_t align, const char *var, int line, const void *init) {
    void *p = sw_rt_tg_alloc(size, align, var, line);
    if (init) memcpy(p, init, size);   /* every thread stores the same value: enough for the mock */
    return p;
}
void sw_rt_threadgroup_barrier(unsigned, int) { barrier_wait(&tg_barrier); }
uint32_t sw_rt_simd_sync(int) {
    barrier_wait(&simd_barrier[my_ids.simdgroup_index_in_threadgroup]);
    memcpy(read_copy, simd_slots[my_ids.simdgroup_index_in_threadgroup][out_bank], SW_SIMD_WIDTH * SW_SIMD_SLOT_BYTES);
    memset(read_copy + SW_SIMD_WIDTH * SW_SIMD_SLOT_BYTES, 0, sizeof(void *));
    out_bank ^= 1;
    return 0xffffffffu;
}
void *sw_rt_simd_slot_out(void) {
    return simd_slots[my_ids.simdgroup_index_in_threadgroup][out_bank] +
           my_ids.thread_index_in_simdgroup * SW_SIMD_SLOT_BYTES;
}
void *sw_rt_simd_slots(void) { return read_copy; }
const void *sw_rt_simd_exchange(const void *value, size_t size, int line, uint32_t *mask, uint32_t *lane) {
    memcpy(sw_rt_simd_slot_out(), value, size);
    *mask = sw_rt_simd_sync(line);
    *lane = my_ids.thread_index_in_simdgroup;
    return read_copy;
}
void *sw_rt_mma_log(uint32_t *lane) {
    *lane = my_ids.thread_index_in_simdgroup;
    return mma_log[my_ids.simdgroup_index_in_threadgroup];
}
void sw_rt_atomic_turn(const void *, int) {} /* one threadgroup: nothing to order */
int sw_rt_atomic_defer(float *, int, float) { return 0; }
void sw_rt_fault(const char *msg, int line) {
    fprintf(stderr, "kernel fault at line %d: %s\n", line, msg);
    exit(3);
}
}

static void *gpu_thread(void *arg) {
    unsigned t = (unsigned)(size_t)arg;
    memset(&my_ids, 0, sizeof my_ids);
    my_ids.thread_position_in_grid[0] = my_ids.thread_position_in_threadgroup[0] = t;
    my_ids.threads_per_threadgroup[0] = my_ids.threads_per_grid[0] = 64;
    for (int d = 1; d < 3; d++) my_ids.threads_per_threadgroup[d] = my_ids.threads_per_grid[d] = 1;
    for (int d = 0; d < 3; d++) my_ids.threadgroups_per_grid[d] = 1;
    my_ids.thread_index_in_threadgroup = t;
    my_ids.thread_index_in_simdgroup = t % 32;
    my_ids.simdgroup_index_in_threadgroup = t / 32;
    my_ids.simdgroups_per_threadgroup = 2;
    my_ids.threads_per_simdgroup = 32;
    my_view.ids = &my_ids;
    my_view.mma_log = mma_log[t / 32];
    my_view.lane = t % 32;
#if SW_RT_CURRENT_TLS
    sw_rt_current = my_view;
#endif
    void *buffers[SW_MAX_BUFFERS] = {fbuf, ubuf};
    void *tg_params[SW_MAX_TG_PARAMS] = {0};
    sw_thread_args args = {buffers, tg_params, &my_ids};
    entry(&args);
    return nullptr;
}

int main(int argc, char **argv) {
    if (argc != 4) return 2;
    void *dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    const sw_kernel_info *k = (const sw_kernel_info *)dlsym(dl, "sw_kernels");
    for (; k && k->name; k++)
        if (strcmp(k->name, argv[2]) == 0) entry = k->entry;
    if (!entry) return 2;
    tg_barrier.count = 64;
    simd_barrier[0].count = 32;
    simd_barrier[1].count = 32;
    pthread_t th[64];
    for (size_t i = 0; i < 64; i++) pthread_create(&th[i], nullptr, gpu_thread, (void *)i);
    for (int i = 0; i < 64; i++) pthread_join(th[i], nullptr);
    FILE *f = fopen(argv[3], "wb");
    if (!f || fwrite(fbuf, sizeof fbuf, 1, f) != 1 || fwrite(ubuf, sizeof ubuf, 1, f) != 1) return 2;
    fclose(f);
    return 0;
}
