// sw_sync.h — MSL barriers, simd-group functions, atomics and simdgroup_matrix for
// the software device's prelude (included by metal_stdlib.h).
//
// Simd-group collectives use the exchange pattern of sw_abi.h: each lane writes its
// outgoing slot, sw_rt_simd_sync() returns the mask of lanes present, and each lane
// reads what it needs from the slots that sync published (one sync per collective:
// the executor alternates slot banks, so the next collective's writes cannot reach
// a bank someone still reads).
// Reductions and prefix scans combine lanes in ascending lane order, so every lane
// gets bit-identical results and a run is reproducible (Apple's hardware order is
// unspecified; float sums may differ from a GPU in the last bits).
#ifndef GDN_SW_SYNC_H
#define GDN_SW_SYNC_H

namespace metal {

// ---- barriers ----
enum class mem_flags : unsigned {
    mem_none = 0,
    mem_device = 1,
    mem_threadgroup = 2,
    mem_texture = 4,
    mem_threadgroup_imageblock = 8,
    mem_object_data = 16,
};
constexpr mem_flags operator|(mem_flags a, mem_flags b) { return (mem_flags)((unsigned)a | (unsigned)b); }
constexpr mem_flags operator&(mem_flags a, mem_flags b) { return (mem_flags)((unsigned)a & (unsigned)b); }

// A device-memory fence makes the group's recorded float atomics visible to plain
// loads and stores after it: the group takes its turn and applies them (sw_abi.h).
// A library with no atomics (SW_ATOMIC_FREE, msl_emit.c) has nothing to apply.
inline void sw_device_fence(mem_flags flags) {
#ifndef SW_ATOMIC_FREE
    if ((unsigned)flags & (unsigned)mem_flags::mem_device) sw_rt_atomic_turn(nullptr, 0);
#else
    (void)flags;
#endif
}
#ifdef SW_LANES
// The lanes build's barrier (sw_lanes.h): it keeps the simdgroup's lane state across
// the switch to the other simdgroups' fibers.
inline void sw_lv_threadgroup_barrier(unsigned flags, int line);
#endif
inline void threadgroup_barrier(mem_flags flags, int line = __builtin_LINE()) {
    sw_device_fence(flags);
#ifdef SW_LANES
    sw_lv_threadgroup_barrier((unsigned)flags, line);
#else
    sw_rt_threadgroup_barrier((unsigned)flags, line);
#endif
}
inline void simdgroup_barrier(mem_flags flags, int line = __builtin_LINE()) {
    sw_device_fence(flags);
    sw_rt_simd_sync(line);
}

// ---- simd-group functions ----
// The calling thread's ids without a call where the platform allows (sw_abi.h).
inline const sw_ids *sw_ids_here() {
#if SW_RT_CURRENT_TLS
    return sw_rt_current.ids;
#else
    return sw_rt_ids();
#endif
}
inline uint sw_lane() { return sw_ids_here()->thread_index_in_simdgroup; }

// Writes x to this lane's outgoing slot, syncs, and calls read(mask, lane, slots)
// on the slots the sync published.
template <class T, class R> inline auto sw_simd_exchange(const T &x, int line, R read) {
    static_assert(sizeof(T) <= SW_SIMD_SLOT_BYTES, "simd-group value larger than an exchange slot");
    uint32_t mask, lane;
    const char *slots = static_cast<const char *>(sw_rt_simd_exchange(&x, sizeof(T), line, &mask, &lane));
    return read(mask, lane, slots);
}
template <class T> inline T sw_slot_value(const char *slots, uint lane) {
    T v;
    __builtin_memcpy(&v, slots + lane * SW_SIMD_SLOT_BYTES, sizeof(T));
    return v;
}

// Fold the values of lanes in `mask` (below `upto`, exclusive, or all when upto=32)
// with op into acc, starting from the lowest lane; acc keeps its value when no lane
// takes part (any = false).  The lane's value is copied here and the fold is kept in
// acc, not returned: x86-64 passes an 8-byte vector (float2, half4) across a call as
// a double, which would make the copy a double load and the loop's value a double
// between casts, and the counting variant's canonical optimiser (ir_target.h) would
// then unroll this loop otherwise than from an arm64 front end (recurrent's
// simd_sum(float2): tests/cli/test_ir_canonical.sh).
template <class T, class Op>
inline void sw_simd_fold(const char *slots, uint32_t mask, uint upto, T &acc, bool &any, Op op) {
    any = false;
    for (uint l = 0; l < upto && l < 32; l++) {
        if (!(mask >> l & 1u)) continue;
        T v;
        __builtin_memcpy(&v, slots + l * SW_SIMD_SLOT_BYTES, sizeof(T));
        acc = any ? op(acc, v) : v;
        any = true;
    }
}

// The result every lane of a sync shares, computed once: the first lane to read
// stores it in the bank's memo (sw_abi.h) under `tag`, the others copy it.
template <class T, class F> inline T sw_simd_memo_body(const char *slots, const void *tag, F compute) {
    static_assert(sizeof(T) <= SW_SIMD_SLOT_BYTES, "simd-group value larger than the memo");
    char *memo = const_cast<char *>(slots) + SW_SIMD_WIDTH * SW_SIMD_SLOT_BYTES;
    const void *have;
    __builtin_memcpy(&have, memo, sizeof have);
    T r;
    if (have == tag) {
        __builtin_memcpy(&r, memo + SW_SIMD_SLOT_BYTES, sizeof(T));
        return r;
    }
    r = compute();
    __builtin_memcpy(memo + SW_SIMD_SLOT_BYTES, &r, sizeof(T));
    __builtin_memcpy(memo, &tag, sizeof tag);
    return r;
}
template <class T, class F> inline T sw_simd_memo(const char *slots, const void *tag, F compute) {
#ifdef SW_COUNT
    // which lane computes the shared result depends on the order lanes resume in: the
    // counting variant counts none of it (count.h)
    sw_rt_cnt_pause(1);
    T r = sw_simd_memo_body<T>(slots, tag, compute);
    sw_rt_cnt_pause(-1);
    return r;
#else
    return sw_simd_memo_body<T>(slots, tag, compute);
#endif
}

// Bitwise ops of simd_and/or/xor; on floating-point values (Metal's builtins take
// them: MLX's bf16 simd_xor goes through float) they act on the bit pattern.
template <class T, class F> inline T sw_bitwise(T a, T b, F op) {
    if constexpr (sw_is_float_scalar<T>) {
        typedef std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>> U;
        return __builtin_bit_cast(T, (U)op(__builtin_bit_cast(U, a), __builtin_bit_cast(U, b)));
    } else {
        return op(a, b);
    }
}

#define SW_SIMD_REDUCE(NAME, OP)                                                                                   \
    template <class T> inline T NAME(T x, int line = __builtin_LINE()) {                                           \
        static const char tag = 0;                                                                                 \
        return sw_simd_exchange(x, line, [](uint32_t mask, uint, const char *slots) {                              \
            return sw_simd_memo<T>(slots, &tag, [&] {                                                              \
                bool any;                                                                                          \
                T r = T();                                                                                         \
                sw_simd_fold(slots, mask, 32, r, any, [](T a, T b) { return OP; });                                \
                return r;                                                                                          \
            });                                                                                                    \
        });                                                                                                        \
    }
SW_SIMD_REDUCE(simd_sum, a + b)
SW_SIMD_REDUCE(simd_product, a * b)
SW_SIMD_REDUCE(simd_max, max(a, b))
SW_SIMD_REDUCE(simd_min, min(a, b))
SW_SIMD_REDUCE(simd_and, sw_bitwise(a, b, [](auto x, auto y) { return x & y; }))
SW_SIMD_REDUCE(simd_or, sw_bitwise(a, b, [](auto x, auto y) { return x | y; }))
SW_SIMD_REDUCE(simd_xor, sw_bitwise(a, b, [](auto x, auto y) { return x ^ y; }))
#undef SW_SIMD_REDUCE

#define SW_SIMD_PREFIX(NAME, OP, INCLUSIVE, IDENTITY)                                                              \
    template <class T> inline T NAME(T x, int line = __builtin_LINE()) {                                           \
        return sw_simd_exchange(x, line, [](uint32_t mask, uint lane, const char *slots) {                         \
            bool any;                                                                                              \
            T r = T();                                                                                             \
            sw_simd_fold(slots, mask, lane + (INCLUSIVE), r, any, [](T a, T b) { return OP; });                    \
            return any ? r : T(IDENTITY);                                                                          \
        });                                                                                                        \
    }
SW_SIMD_PREFIX(simd_prefix_inclusive_sum, a + b, 1, 0)
SW_SIMD_PREFIX(simd_prefix_exclusive_sum, a + b, 0, 0)
SW_SIMD_PREFIX(simd_prefix_inclusive_product, a * b, 1, 1)
SW_SIMD_PREFIX(simd_prefix_exclusive_product, a * b, 0, 1)
#undef SW_SIMD_PREFIX

// Lane `src` if it takes part, else the caller's own value (undefined on a GPU).
template <class T> inline T sw_simd_read(const char *slots, uint32_t mask, uint src, uint lane) {
    return sw_slot_value<T>(slots, (src < 32 && (mask >> src & 1u)) ? src : lane);
}
template <class T, class I> inline T simd_shuffle(T x, I src, int line = __builtin_LINE()) {
    uint s = (uint)src;
    return sw_simd_exchange(x, line, [s](uint32_t mask, uint lane, const char *slots) { return sw_simd_read<T>(slots, mask, s, lane); });
}
template <class T, class I> inline T simd_broadcast(T x, I src, int line = __builtin_LINE()) {
    return simd_shuffle(x, src, line);
}
template <class T, class I> inline T simd_shuffle_xor(T x, I m, int line = __builtin_LINE()) {
    uint mm = (uint)m;
    return sw_simd_exchange(x, line,
                            [mm](uint32_t mask, uint lane, const char *slots) { return sw_simd_read<T>(slots, mask, (lane ^ mm) & 31u, lane); });
}
// The upper `delta` lanes keep their own value (MSL).
template <class T, class I> inline T simd_shuffle_down(T x, I delta, int line = __builtin_LINE()) {
    uint d = (uint)delta;
    return sw_simd_exchange(x, line, [d](uint32_t mask, uint lane, const char *slots) {
        return lane + d < 32 ? sw_simd_read<T>(slots, mask, lane + d, lane) : sw_slot_value<T>(slots, lane);
    });
}
// The lower `delta` lanes keep their own value.
template <class T, class I> inline T simd_shuffle_up(T x, I delta, int line = __builtin_LINE()) {
    uint d = (uint)delta;
    return sw_simd_exchange(x, line, [d](uint32_t mask, uint lane, const char *slots) {
        return lane >= d ? sw_simd_read<T>(slots, mask, lane - d, lane) : sw_slot_value<T>(slots, lane);
    });
}
template <class T, class I> inline T simd_shuffle_rotate_down(T x, I delta, int line = __builtin_LINE()) {
    uint d = (uint)delta;
    return sw_simd_exchange(x, line,
                            [d](uint32_t mask, uint lane, const char *slots) { return sw_simd_read<T>(slots, mask, (lane + d) & 31u, lane); });
}
template <class T, class I> inline T simd_shuffle_rotate_up(T x, I delta, int line = __builtin_LINE()) {
    uint d = (uint)delta;
    return sw_simd_exchange(x, line,
                            [d](uint32_t mask, uint lane, const char *slots) { return sw_simd_read<T>(slots, mask, (lane - d) & 31u, lane); });
}
template <class T> inline T simd_broadcast_first(T x, int line = __builtin_LINE()) {
    return sw_simd_exchange(x, line, [](uint32_t mask, uint lane, const char *slots) {
        return sw_simd_read<T>(slots, mask, mask ? (uint)__builtin_ctz(mask) : lane, lane);
    });
}

// simd_shuffle_and_fill_down/up: the simdgroup is cut into segments of `modulo`
// lanes (default 32); within a segment, lane i reads data from lane i + delta (down)
// or i - delta (up), and where that falls outside the segment, filling_data from
// the lane it wraps to.
template <class T> struct sw_fill_pair {
    T data, fill;
};
template <class T> inline T sw_simd_fill(T data, T fill, int delta, uint modulo, int line) {
    static_assert(2 * sizeof(T) <= SW_SIMD_SLOT_BYTES, "simd-group value larger than an exchange slot");
    sw_fill_pair<T> mine = {data, fill};
    return sw_simd_exchange(mine, line, [delta, modulo](uint32_t mask, uint lane, const char *slots) {
        uint m = modulo == 0 || modulo > 32 ? 32u : modulo;
        uint seg = lane / m * m;
        int i = (int)(lane % m) + delta;
        bool wrapped = i < 0 || i >= (int)m;
        uint src = seg + (uint)((i % (int)m + (int)m) % (int)m);
        if (src >= 32 || !(mask >> src & 1u)) src = lane;
        sw_fill_pair<T> p = sw_slot_value<sw_fill_pair<T>>(slots, src);
        return wrapped ? p.fill : p.data;
    });
}
template <class T, class D, class M>
inline T simd_shuffle_and_fill_down(T data, T filling_data, D delta, M modulo, int line = __builtin_LINE()) {
    return sw_simd_fill(data, filling_data, (int)(uint)delta, (uint)modulo, line);
}
template <class T, class D>
inline T simd_shuffle_and_fill_down(T data, T filling_data, D delta, int line = __builtin_LINE()) {
    return sw_simd_fill(data, filling_data, (int)(uint)delta, 32u, line);
}
template <class T, class D, class M>
inline T simd_shuffle_and_fill_up(T data, T filling_data, D delta, M modulo, int line = __builtin_LINE()) {
    return sw_simd_fill(data, filling_data, -(int)(uint)delta, (uint)modulo, line);
}
template <class T, class D>
inline T simd_shuffle_and_fill_up(T data, T filling_data, D delta, int line = __builtin_LINE()) {
    return sw_simd_fill(data, filling_data, -(int)(uint)delta, 32u, line);
}

// ---- quad-group functions: groups of 4 consecutive lanes of a simdgroup ----
inline uint sw_quad_src(uint32_t mask, uint lane, uint q) {
    uint src = (lane & ~3u) | (q & 3u);
    return (mask >> src & 1u) ? src : lane;
}
template <class T, class I> inline T quad_shuffle(T x, I q, int line = __builtin_LINE()) {
    uint qq = (uint)q;
    return sw_simd_exchange(x, line, [qq](uint32_t mask, uint lane, const char *slots) {
        return sw_slot_value<T>(slots, sw_quad_src(mask, lane, qq));
    });
}
template <class T, class I> inline T quad_broadcast(T x, I q, int line = __builtin_LINE()) {
    return quad_shuffle(x, q, line);
}
template <class T, class I> inline T quad_shuffle_xor(T x, I m, int line = __builtin_LINE()) {
    uint mm = (uint)m;
    return sw_simd_exchange(x, line, [mm](uint32_t mask, uint lane, const char *slots) {
        return sw_slot_value<T>(slots, sw_quad_src(mask, lane, (lane ^ mm) & 3u));
    });
}
// The upper `delta` lanes of the quad keep their own value (as simd_shuffle_down).
template <class T, class I> inline T quad_shuffle_down(T x, I delta, int line = __builtin_LINE()) {
    uint d = (uint)delta;
    return sw_simd_exchange(x, line, [d](uint32_t mask, uint lane, const char *slots) {
        uint q = lane & 3u;
        return q + d < 4 ? sw_slot_value<T>(slots, sw_quad_src(mask, lane, q + d)) : sw_slot_value<T>(slots, lane);
    });
}
template <class T, class I> inline T quad_shuffle_up(T x, I delta, int line = __builtin_LINE()) {
    uint d = (uint)delta;
    return sw_simd_exchange(x, line, [d](uint32_t mask, uint lane, const char *slots) {
        uint q = lane & 3u;
        return q >= d ? sw_slot_value<T>(slots, sw_quad_src(mask, lane, q - d)) : sw_slot_value<T>(slots, lane);
    });
}
template <class T, class I> inline T quad_shuffle_rotate_down(T x, I delta, int line = __builtin_LINE()) {
    uint d = (uint)delta;
    return sw_simd_exchange(x, line, [d](uint32_t mask, uint lane, const char *slots) {
        return sw_slot_value<T>(slots, sw_quad_src(mask, lane, (lane + d) & 3u));
    });
}
template <class T, class I> inline T quad_shuffle_rotate_up(T x, I delta, int line = __builtin_LINE()) {
    uint d = (uint)delta;
    return sw_simd_exchange(x, line, [d](uint32_t mask, uint lane, const char *slots) {
        return sw_slot_value<T>(slots, sw_quad_src(mask, lane, (lane - d) & 3u));
    });
}
// Reductions over the lanes of the caller's quad that take part, lowest lane first.
#define SW_QUAD_REDUCE(NAME, OP)                                                                                   \
    template <class T> inline T NAME(T x, int line = __builtin_LINE()) {                                           \
        return sw_simd_exchange(x, line, [](uint32_t mask, uint lane, const char *slots) {                         \
            bool any;                                                                                              \
            uint base = lane & ~3u;                                                                                \
            T r = T();                                                                                             \
            sw_simd_fold(slots, mask & (0xfu << base), base + 4, r, any, [](T a, T b) { return OP; });             \
            return r;                                                                                              \
        });                                                                                                        \
    }
SW_QUAD_REDUCE(quad_sum, a + b)
SW_QUAD_REDUCE(quad_product, a * b)
SW_QUAD_REDUCE(quad_max, max(a, b))
SW_QUAD_REDUCE(quad_min, min(a, b))
SW_QUAD_REDUCE(quad_and, sw_bitwise(a, b, [](auto x, auto y) { return x & y; }))
SW_QUAD_REDUCE(quad_or, sw_bitwise(a, b, [](auto x, auto y) { return x | y; }))
SW_QUAD_REDUCE(quad_xor, sw_bitwise(a, b, [](auto x, auto y) { return x ^ y; }))
#undef SW_QUAD_REDUCE
#define SW_QUAD_PREFIX(NAME, OP, INCLUSIVE, IDENTITY)                                                              \
    template <class T> inline T NAME(T x, int line = __builtin_LINE()) {                                           \
        return sw_simd_exchange(x, line, [](uint32_t mask, uint lane, const char *slots) {                         \
            bool any;                                                                                              \
            uint base = lane & ~3u;                                                                                \
            T r = T();                                                                                             \
            sw_simd_fold(slots, mask & (0xfu << base), lane + (INCLUSIVE), r, any,                                 \
                         [](T a, T b) { return OP; });                                                             \
            return any ? r : T(IDENTITY);                                                                          \
        });                                                                                                        \
    }
SW_QUAD_PREFIX(quad_prefix_inclusive_sum, a + b, 1, 0)
SW_QUAD_PREFIX(quad_prefix_exclusive_sum, a + b, 0, 0)
SW_QUAD_PREFIX(quad_prefix_inclusive_product, a * b, 1, 1)
SW_QUAD_PREFIX(quad_prefix_exclusive_product, a * b, 0, 1)
#undef SW_QUAD_PREFIX
inline bool quad_all(bool pred, int line = __builtin_LINE()) {
    return sw_simd_exchange(pred, line, [](uint32_t mask, uint lane, const char *slots) {
        for (uint l = lane & ~3u; l < (lane & ~3u) + 4; l++)
            if ((mask >> l & 1u) && !sw_slot_value<bool>(slots, l)) return false;
        return true;
    });
}
inline bool quad_any(bool pred, int line = __builtin_LINE()) {
    return sw_simd_exchange(pred, line, [](uint32_t mask, uint lane, const char *slots) {
        for (uint l = lane & ~3u; l < (lane & ~3u) + 4; l++)
            if ((mask >> l & 1u) && sw_slot_value<bool>(slots, l)) return true;
        return false;
    });
}

// simd_vote: the ballot of active lanes (MSL's 64-bit type; 32 lanes used).
struct simd_vote {
    typedef uint64_t vote_t;
    vote_t v;
    explicit constexpr simd_vote(vote_t x = 0) : v(x) {}
    explicit constexpr operator vote_t() const { return v; }
    bool all() const { return v == 0xffffffffu; }
    bool any() const { return v != 0; }
};
inline simd_vote simd_ballot(bool pred, int line = __builtin_LINE()) {
    return sw_simd_exchange(pred, line, [](uint32_t mask, uint, const char *slots) {
        uint64_t bits = 0;
        for (uint l = 0; l < 32; l++)
            if ((mask >> l & 1u) && sw_slot_value<bool>(slots, l)) bits |= 1ull << l;
        return simd_vote(bits);
    });
}
inline simd_vote simd_active_threads_mask(int line = __builtin_LINE()) {
    uint32_t mask = sw_rt_simd_sync(line);
    return simd_vote(mask);
}
inline bool simd_all(bool pred, int line = __builtin_LINE()) {
    return sw_simd_exchange(pred, line, [](uint32_t mask, uint, const char *slots) {
        for (uint l = 0; l < 32; l++)
            if ((mask >> l & 1u) && !sw_slot_value<bool>(slots, l)) return false;
        return true;
    });
}
inline bool simd_any(bool pred, int line = __builtin_LINE()) {
    return sw_simd_exchange(pred, line, [](uint32_t mask, uint, const char *slots) {
        for (uint l = 0; l < 32; l++)
            if ((mask >> l & 1u) && sw_slot_value<bool>(slots, l)) return true;
        return false;
    });
}
inline bool simd_is_first(int line = __builtin_LINE()) {
    uint32_t mask = sw_rt_simd_sync(line);
    return mask && (uint)__builtin_ctz(mask) == sw_lane();
}

// ---- atomics ----
enum memory_order {
    memory_order_relaxed = __ATOMIC_RELAXED,
    memory_order_acquire = __ATOMIC_ACQUIRE,
    memory_order_release = __ATOMIC_RELEASE,
    memory_order_acq_rel = __ATOMIC_ACQ_REL,
    memory_order_seq_cst = __ATOMIC_SEQ_CST,
};
enum thread_scope { thread_scope_thread, thread_scope_simdgroup, thread_scope_threadgroup, thread_scope_device };

// Every access here is sequentially consistent, so a fence only has to stop the
// compiler from moving accesses across it.
inline void atomic_thread_fence(mem_flags flags, memory_order, thread_scope = thread_scope_device) {
    sw_device_fence(flags);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

template <class T> struct atomic {
    T sw_value;   // trivially constructible: lives in buffers and threadgroup memory
};
typedef atomic<int> atomic_int;
typedef atomic<uint> atomic_uint;
typedef atomic<bool> atomic_bool;
typedef atomic<float> atomic_float;
typedef atomic<ulong> atomic_ulong;
typedef atomic<long> atomic_long;

template <class T> inline T *sw_atomic_ptr(const volatile atomic<T> *a) { return const_cast<T *>(&a->sw_value); }

// Device atomics land in threadgroup order, so a dispatch's bytes do not depend on the
// workers (sw_abi.h, executor atomics.c): an atomic whose value the kernel reads first
// takes its group's turn; a float fetch-op whose value is discarded (the pre-pass
// renames those statements to sw_discard_*) is recorded and applied when the group
// ends.  Full checks record nothing, so they see every access where the kernel made it.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SW_ATOMIC_DEFER 0
#endif
#endif
#ifdef SW_COUNT
// The counting variant (count.h) neither: deferred or not would depend on the workers.
#define SW_ATOMIC_DEFER 0
#endif
#ifndef SW_ATOMIC_DEFER
#define SW_ATOMIC_DEFER 1
#endif
template <class T> inline constexpr bool sw_atomic_is_float = std::is_same_v<T, float>;
// The word of an atomic whose value the kernel reads: its group's turn first.
template <class T> inline T *sw_atomic_turn_ptr(const volatile atomic<T> *a) {
    T *p = sw_atomic_ptr(a);
    sw_rt_atomic_turn(p, 1);
    return p;
}
// A float load or store waits only when its group has recorded float fetch-ops.
template <class T> inline T *sw_atomic_plain_ptr(const volatile atomic<T> *a) {
    T *p = sw_atomic_ptr(a);
    if constexpr (sw_atomic_is_float<T>) sw_rt_atomic_turn(p, 0);
    return p;
}

template <class T, class U> inline void atomic_store_explicit(volatile atomic<T> *obj, U desired, memory_order) {
    T d = (T)desired;
    __atomic_store(sw_atomic_plain_ptr(obj), &d, __ATOMIC_SEQ_CST);
}
template <class T> inline T atomic_load_explicit(const volatile atomic<T> *obj, memory_order) {
    T r;
    __atomic_load(sw_atomic_plain_ptr(obj), &r, __ATOMIC_SEQ_CST);
    return r;
}
template <class T, class U> inline T atomic_exchange_explicit(volatile atomic<T> *obj, U desired, memory_order) {
    T d = (T)desired, r;
    __atomic_exchange(sw_atomic_turn_ptr(obj), &d, &r, __ATOMIC_SEQ_CST);
    return r;
}
template <class T, class U>
inline bool atomic_compare_exchange_weak_explicit(volatile atomic<T> *obj, T *expected, U desired, memory_order,
                                                  memory_order) {
    T d = (T)desired;
    return __atomic_compare_exchange(sw_atomic_turn_ptr(obj), expected, &d, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}
template <class T, class U>
inline bool atomic_compare_exchange_strong_explicit(volatile atomic<T> *obj, T *expected, U desired, memory_order o1,
                                                    memory_order o2) {
    return atomic_compare_exchange_weak_explicit(obj, expected, desired, o1, o2);
}

// Read-modify-write through a compare-and-swap loop (float add, min/max).
template <class T, class F> inline T sw_atomic_rmw(T *p, F f) {
    T old;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    T next = f(old);
    while (!__atomic_compare_exchange(p, &old, &next, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) next = f(old);
    return old;
}
// A discarded float fetch-op: the word is read here (an out-of-bounds one faults at
// the kernel's line), then recorded, or applied now when the executor says so.
template <class F> inline void sw_atomic_deferred(volatile atomic<float> *obj, int op, float a, F f) {
    float *p = sw_atomic_ptr(obj), cur;
    __atomic_load(p, &cur, __ATOMIC_RELAXED);
    if (!sw_rt_atomic_defer(p, op, a)) sw_atomic_rmw(p, f);
}
// NAME returns the old value (the group takes its turn); sw_discard_NAME is the same
// operation as a statement: on integers it applies at once (the final value is the
// same in any order), on floats it is recorded.  INT(p, a) is the integer operation,
// EXPR the new value from old and a (floats; AOP its code, -1: not for floats).
#define SW_ATOMIC_FETCH(NAME, INT, EXPR, AOP)                                                                      \
    template <class T, class U> inline T NAME(volatile atomic<T> *obj, U arg, memory_order) {                      \
        T a = (T)arg;                                                                                              \
        if constexpr (std::is_integral_v<T>) return INT(sw_atomic_turn_ptr(obj), a);                               \
        else return sw_atomic_rmw(sw_atomic_turn_ptr(obj), [a](T old) { return (T)(EXPR); });                     \
    }                                                                                                              \
    template <class T, class U> inline void sw_discard_##NAME(volatile atomic<T> *obj, U arg, memory_order o) {    \
        T a = (T)arg;                                                                                              \
        if constexpr (std::is_integral_v<T>) (void)INT(sw_atomic_ptr(obj), a);                                     \
        else if constexpr (sw_atomic_is_float<T> && SW_ATOMIC_DEFER && AOP >= 0)                                   \
            sw_atomic_deferred(obj, AOP, a, [a](T old) { return (T)(EXPR); });                                     \
        else (void)NAME(obj, arg, o);                                                                              \
    }
template <class T> inline T sw_int_add(T *p, T a) { return __atomic_fetch_add(p, a, __ATOMIC_SEQ_CST); }
template <class T> inline T sw_int_sub(T *p, T a) { return __atomic_fetch_sub(p, a, __ATOMIC_SEQ_CST); }
template <class T> inline T sw_int_and(T *p, T a) { return __atomic_fetch_and(p, a, __ATOMIC_SEQ_CST); }
template <class T> inline T sw_int_or(T *p, T a) { return __atomic_fetch_or(p, a, __ATOMIC_SEQ_CST); }
template <class T> inline T sw_int_xor(T *p, T a) { return __atomic_fetch_xor(p, a, __ATOMIC_SEQ_CST); }
template <class T> inline T sw_int_min(T *p, T a) { return sw_atomic_rmw(p, [a](T old) { return a < old ? a : old; }); }
template <class T> inline T sw_int_max(T *p, T a) { return sw_atomic_rmw(p, [a](T old) { return old < a ? a : old; }); }
SW_ATOMIC_FETCH(atomic_fetch_add_explicit, sw_int_add, old + a, SW_AOP_ADD)
SW_ATOMIC_FETCH(atomic_fetch_sub_explicit, sw_int_sub, old - a, SW_AOP_SUB)
SW_ATOMIC_FETCH(atomic_fetch_and_explicit, sw_int_and, old, -1)
SW_ATOMIC_FETCH(atomic_fetch_or_explicit, sw_int_or, old, -1)
SW_ATOMIC_FETCH(atomic_fetch_xor_explicit, sw_int_xor, old, -1)
SW_ATOMIC_FETCH(atomic_fetch_min_explicit, sw_int_min, (a < old ? a : old), SW_AOP_MIN)
SW_ATOMIC_FETCH(atomic_fetch_max_explicit, sw_int_max, (old < a ? a : old), SW_AOP_MAX)
#undef SW_ATOMIC_FETCH

// ---- simdgroup_matrix<T, 8, 8> ----
// Lane l holds row (q & 4) + (l / 2) % 4, columns (q & 2) * 2 + (l % 2) * 2 and +1,
// where q = l / 4 (Apple's layout; kernels reading thread_elements() rely on it).
//
// Products are deferred: simdgroup_multiply(_accumulate) does not synchronise the
// simdgroup.  Each lane writes its operands (its two elements of a, b and c, or the
// log entry still to produce them) and the address of its destination matrix into
// the next entry of the simdgroup's product log (sw_rt_mma_log, sw_abi.h), and marks
// the destination pending.  The first read of a pending matrix (thread_elements(),
// simdgroup_store, a copy) flushes the log: at a simd sync the lowest lane present
// computes every entry for every lane, in log order, and writes each lane's results
// into its destination matrices (the other lanes wait at a second sync, their
// matrices alive on their stacks).  A chain of products that only feed each other (a
// tile's accumulation loop) thus costs two synchronisations instead of one per
// product; a full log (SW_MMA_ENTRIES products) is flushed too.  Each element is
// computed exactly as before (k = 0..7 in order, in float, rounded to the
// destination type), so results are bit-identical.
// A matrix that is overwritten or goes out of scope while pending clears its entry's
// destination; the entry's value stays in the log for later entries that use it.
// thread_elements() hands out a reference that the kernel may keep and read after a
// later product into the same matrix; so once it has been called, the matrix is
// pinned for its lifetime: products into it are flushed at once (the old behaviour).
// Lanes that flush with different log lengths, or without every lane that wrote the
// log, diverged around simdgroup matrix operations (undefined in MSL): a fault.
constexpr uint sw_mat_row(uint l) { return ((l / 4) & 4u) + (l / 2) % 4; }
constexpr uint sw_mat_col(uint l) { return ((l / 4) & 2u) * 2 + (l % 2) * 2; }
// Where lane l's two elements start in a row-major 8x8 matrix (a table: every
// product reads it once per lane).
struct sw_mat_pos_table {
    uint8_t of[SW_SIMD_WIDTH];
    constexpr sw_mat_pos_table() : of() {
        for (uint l = 0; l < SW_SIMD_WIDTH; l++) of[l] = (uint8_t)(sw_mat_row(l) * 8 + sw_mat_col(l));
    }
};
inline constexpr sw_mat_pos_table sw_mat_pos{};

// The lane holding element (row, col) of an 8x8 matrix (col even; the inverse of
// sw_mat_row / sw_mat_col): lane bits are r2 c2 r1 r0 c1.
inline uint sw_mat_lane(uint row, uint col) {
    return ((row & 4u) << 2) | ((col & 4u) << 1) | ((row & 2u) << 1) | ((row & 1u) << 1) | ((col >> 1) & 1u);
}

// Vector loops over a product's columns and a simdgroup's lanes.  The counting
// variant's middle end vectorises for the baseline CPU (ir_target.h: 128-bit SSE),
// and its last run cannot widen that (clang_step.c): there the IR's vectors are
// made as wide as the loop, and the last run compiles them for this host's units
// (the product log's evaluation was 3x the plain variant's time in a counted run).
#ifdef SW_COUNT
#define SW_COLUMN_LOOP _Pragma("clang loop vectorize(enable) vectorize_width(8) unroll(disable)")
#define SW_LANE_LOOP _Pragma("clang loop vectorize(enable) vectorize_width(32)")
#else
#define SW_COLUMN_LOOP _Pragma("clang loop vectorize(enable) unroll(disable)")
#define SW_LANE_LOOP _Pragma("clang loop vectorize(enable)")
#endif

// D += A B for 8x8 float matrices, j outermost: every element still sums j = 0..7 in
// order (the MMA's order, and the bits of both the fiber and the lanes build), and
// the loop over columns runs the 8 columns together (vector code, no reordering).
inline void sw_mma_product(float (&d)[8][8], const float (&a)[8][8], const float (&b)[8][8]) {
    for (uint j = 0; j < 8; j++)
        for (uint r = 0; r < 8; r++) {
            float x = a[r][j];
            // vector code even in the counting variant, whose kernels are scalar
            // (-fno-vectorize: cxx.c): this evaluation is not counted; one rounding
            // an element either way
            SW_COLUMN_LOOP
            for (uint c = 0; c < 8; c++) d[r][c] += x * b[j][c];
        }
}

#ifndef SW_LANES // the lanes build has its own simdgroup_matrix (sw_lanes.h)
#define SW_MMA_ENTRIES 128
// Rounds a product d (8x8) to the destination's element type into res (as float,
// all 64 elements), and stores the elements of each lane in `lanes` into that lane's
// destination matrix (dst[lane]), when it has one: one call per entry, not per lane.
typedef void (*sw_mma_store_fn)(void *const *dst, uint32_t lanes, const float (*d)[8], float (*res)[8]);
// One product of the log.  A lane writes its elements of the operands where they
// sit in the 8x8 matrices (Apple's layout), so an operand every lane supplied is
// whole already, and the per-lane fields are arrays over lanes (compared at once).
struct sw_mma_entry {
    float op[3][8][8];                      // a, b, c (c: zeros for a plain multiply)
    float res[8][8];                        // the result, rounded to the destination type (after the flush)
    int16_t ref[3][SW_SIMD_WIDTH];          // per operand and lane: the entry producing it, or -1 (op holds it)
    void *dst[SW_SIMD_WIDTH];               // each lane's destination matrix, or null (overwritten/gone)
    sw_mma_store_fn store[SW_SIMD_WIDTH];   // each lane's rounding and store (one for all in a well-formed kernel)
};
struct sw_mma_log {
    uint32_t count[SW_SIMD_WIDTH]; // entries each lane appended since the last flush (header, zeroed per threadgroup)
    sw_mma_entry entry[SW_MMA_ENTRIES];
};
static_assert(sizeof(sw_mma_log) <= SW_MMA_LOG_BYTES, "product log larger than the executor's block");
static_assert(SW_MMA_ENTRIES <= INT16_MAX, "entry indices are int16_t (ref, sw_pending)");
static_assert(SW_MMA_LOG_HEADER == sizeof(uint32_t) * SW_SIMD_WIDTH, "the header the executor zeroes");
// Only the product log's own functions call it, which the counting variant does not
// count (count_pass.c: is_collective): it reads the thread-local copy there too.
inline sw_mma_log *sw_mma_log_here(uint *lane) {
#if SW_RT_CURRENT_ELF
    if (__builtin_expect(sw_rt_current.mma_log != nullptr, 1)) {
        *lane = sw_rt_current.lane;
        return static_cast<sw_mma_log *>(sw_rt_current.mma_log);
    }
#endif
    return static_cast<sw_mma_log *>(sw_rt_mma_log(lane));
}

// Computes entries [0, n) for the lanes that wrote them (those of the sync in mask,
// and any other lane with the same log: one that returned, or waits elsewhere),
// stores each lane's results into its destinations, and empties their logs.
inline void sw_mma_evaluate(sw_mma_log *L, uint32_t mask, uint32_t n, int line) {
    uint32_t lanes = 0;
    for (uint l = 0; l < SW_SIMD_WIDTH; l++) {
        uint32_t c = L->count[l];
        if (c == n) lanes |= 1u << l;
        else if (c != 0 || (mask >> l & 1u))
            sw_rt_fault("simdgroup matrix operations in divergent control flow: lanes of one simdgroup read a "
                        "product after different numbers of simdgroup_multiply(_accumulate) calls",
                        line);
    }
    const uint first = (uint)__builtin_ctz(lanes);
    for (uint32_t k = 0; k < n; k++) {
        sw_mma_entry &e = L->entry[k];
        // The whole 8x8 operands, in locals (the product below then runs in
        // registers): an earlier entry's result when every lane refers to the same
        // one (an accumulation chain), else the lanes' values, with the results of
        // the entries some lanes refer to put in their places.
        float m[3][8][8];
        for (int o = 0; o < 3; o++) {
            const int16_t r0 = e.ref[o][first];
            uint32_t same = 0, refs = 0;
            SW_LANE_LOOP
            for (uint l = 0; l < SW_SIMD_WIDTH; l++) {
                same |= (uint32_t)(e.ref[o][l] == r0) << l;
                refs |= (uint32_t)(e.ref[o][l] >= 0) << l;
            }
            if ((same & lanes) == lanes && r0 >= 0) {
                __builtin_memcpy(m[o], L->entry[r0].res, sizeof m[o]);
                continue;
            }
            __builtin_memcpy(m[o], e.op[o], sizeof m[o]);
            for (uint32_t mm = refs & lanes; mm; mm &= mm - 1) {
                uint l = (uint)__builtin_ctz(mm), p = sw_mat_pos.of[l];
                const float *v = &L->entry[e.ref[o][l]].res[0][0] + p;
                float *x = &m[o][0][0] + p;
                x[0] = v[0];
                x[1] = v[1];
            }
        }
        // D = C + A B
        float (&d)[8][8] = m[2];
        sw_mma_product(d, m[0], m[1]);
        // A destination is the target of at most one entry (an overwritten one cleared
        // its dst), and later entries read res, never a matrix: storing now is safe.
        // Lanes of one well-formed kernel round to the same type: one call for all.
        const sw_mma_store_fn fn = e.store[first];
        uint32_t one_fn = 0;
        SW_LANE_LOOP
        for (uint l = 0; l < SW_SIMD_WIDTH; l++) one_fn |= (uint32_t)(e.store[l] == fn) << l;
        if ((one_fn & lanes) == lanes) {
            fn(e.dst, lanes, d, e.res);
        } else {
            for (uint32_t mm = lanes; mm; mm &= mm - 1) {
                uint l = (uint)__builtin_ctz(mm), p = sw_mat_pos.of[l];
                float res[8][8];
                e.store[l](e.dst, 1u << l, d, res);
                (&e.res[0][0])[p] = (&res[0][0])[p];
                (&e.res[0][0])[p + 1] = (&res[0][0])[p + 1];
            }
        }
    }
    for (uint32_t m = lanes; m; m &= m - 1) L->count[__builtin_ctz(m)] = 0;
}

// The counting variant (count.h) counts the kernel's work, not this emulation's: the
// product log's bookkeeping runs out of line there, in functions named sw_mma_*,
// which count_pass.c neither counts nor hooks (nor a call of one as an instruction);
// a product counts as its call of sw_rt_cnt_mma (one instruction and its flops).
#ifdef SW_COUNT
#define SW_MMA_BOOKKEEPING __attribute__((noinline))
#else
#define SW_MMA_BOOKKEEPING __attribute__((always_inline))
#endif
SW_MMA_BOOKKEEPING inline void sw_mma_lane_settle(int16_t pending, int line);
SW_MMA_BOOKKEEPING inline void sw_mma_lane_forget(int16_t *pending);
// Where the calling lane's two elements start (sw_mat_pos): which lane holds which
// elements is this emulation's layout, not an instruction a GPU's simdgroup_load or
// simdgroup_store executes; bookkeeping, then, read without a call where it can be.
SW_MMA_BOOKKEEPING inline uint sw_mma_lane_pos() {
#if SW_RT_CURRENT_ELF
    return sw_mat_pos.of[sw_rt_current.ids->thread_index_in_simdgroup];
#else
    return sw_mat_pos.of[sw_lane()];
#endif
}

template <class T, int Cols, int Rows> struct simdgroup_matrix {
    static_assert(Cols == 8 && Rows == 8, "not MSL: simdgroup matrices are 8x8 only (spec sections 2.4 and 6.7)");
    vec<T, 2> sw_elems;
    mutable int16_t sw_pending = -1; // the log entry this lane's elements await, -1: sw_elems holds them
    mutable bool sw_pinned = false;  // thread_elements() was called: products into it are not deferred

    simdgroup_matrix() = default;
    // MSL: constructing from a value makes a diagonal matrix.
    explicit simdgroup_matrix(T diag) {
        uint l = sw_lane(), r = sw_mat_row(l), c = sw_mat_col(l);
        sw_elems[0] = r == c ? diag : T(0);
        sw_elems[1] = r == c + 1 ? diag : T(0);
    }
    simdgroup_matrix(const simdgroup_matrix &o) : sw_elems(o.sw_read()), sw_pending(-1), sw_pinned(false) {}
    simdgroup_matrix &operator=(const simdgroup_matrix &o) {
        if (this != &o) {
            vec<T, 2> e = o.sw_read();
            sw_forget();
            sw_elems = e;
        }
        return *this;
    }
    ~simdgroup_matrix() { sw_forget(); }

    vec<T, 2> &thread_elements(int line = __builtin_LINE()) {
        sw_resolve(line);
        sw_pinned = true;
        return sw_elems;
    }
    const vec<T, 2> &thread_elements(int line = __builtin_LINE()) const {
        sw_resolve(line);
        sw_pinned = true;
        return sw_elems;
    }

    // This lane's elements, flushing the simdgroup's product log when they are pending.
    const vec<T, 2> &sw_read(int line = __builtin_LINE()) const {
        sw_resolve(line);
        return sw_elems;
    }
    void sw_resolve(int line) const;
    // The matrix gets a new value: a pending product no longer lands here.
    void sw_forget() { sw_mma_lane_forget(&sw_pending); }
    // A product's result, through the log (sw_mma_store_fn).
    static void sw_store(void *const *dst, uint32_t lanes, const float (*d)[8], float (*res)[8]) {
        for (uint r = 0; r < 8; r++)
            for (uint c = 0; c < 8; c++) res[r][c] = (float)static_cast<T>(d[r][c]);
        for (uint32_t m = lanes; m; m &= m - 1) {
            uint l = (uint)__builtin_ctz(m);
            if (simdgroup_matrix *mat = static_cast<simdgroup_matrix *>(dst[l])) {
                const float *x = &res[0][0] + sw_mat_pos.of[l];
                mat->sw_elems[0] = static_cast<T>(x[0]);
                mat->sw_elems[1] = static_cast<T>(x[1]);
                mat->sw_pending = -1;
            }
        }
    }
};
typedef simdgroup_matrix<float, 8, 8> simdgroup_float8x8;
typedef simdgroup_matrix<half, 8, 8> simdgroup_half8x8;
typedef simdgroup_matrix<bfloat, 8, 8> simdgroup_bfloat8x8;

// Flushes the log: the lanes meet, the lowest evaluates it for all while the others
// wait at the second sync (which does not depend on the order lanes resume in).
__attribute__((noinline)) inline void sw_mma_flush(int line) {
    uint lane;
    sw_mma_log *L = sw_mma_log_here(&lane);
    uint32_t mask = sw_rt_simd_sync(line);
    if (mask && lane == (uint)__builtin_ctz(mask)) sw_mma_evaluate(L, mask, L->count[lane], line);
    sw_rt_simd_sync(line);
}

template <class T, int C, int R> inline void simdgroup_matrix<T, C, R>::sw_resolve(int line) const {
    sw_mma_lane_settle(sw_pending, line);
}
SW_MMA_BOOKKEEPING inline void sw_mma_lane_settle(int16_t pending, int line) {
    if (pending >= 0) sw_mma_flush(line);
}
// A pending product no longer lands in the matrix whose sw_pending this is.
SW_MMA_BOOKKEEPING inline void sw_mma_lane_forget(int16_t *pending) {
    if (*pending >= 0) {
        uint lane;
        sw_mma_log_here(&lane)->entry[*pending].dst[lane] = nullptr;
        *pending = -1;
    }
}

template <class T, int C, int R = C> inline simdgroup_matrix<T, C, R> make_filled_simdgroup_matrix(T value) {
    simdgroup_matrix<T, C, R> m;
    m.sw_elems = value;
    return m;
}

// origin is (column, row) like Metal's ulong2; with transpose the source is read as
// its transpose (element (r, c) of the matrix comes from src[c * stride + r]).
template <class T, class S>
inline void simdgroup_load(simdgroup_matrix<T, 8, 8> &d, const S *src, ulong elements_per_row = 8,
                           ulong2 origin = ulong2(0), bool transpose = false) {
    d.sw_forget();
    uint pos = sw_mma_lane_pos(), r = pos / 8, c = pos % 8;
    for (uint k = 0; k < 2; k++) {
        ulong rr = r, cc = c + k;
        const S *p = transpose ? src + (origin.y + cc) * elements_per_row + origin.x + rr
                               : src + (origin.y + rr) * elements_per_row + origin.x + cc;
        d.sw_elems[k] = static_cast<T>(*p);
    }
}
template <class T, class S>
inline void simdgroup_store(const simdgroup_matrix<T, 8, 8> &m, S *dst, ulong elements_per_row = 8,
                            ulong2 origin = ulong2(0), bool transpose = false, int line = __builtin_LINE()) {
    const vec<T, 2> &e = m.sw_read(line);
    uint pos = sw_mma_lane_pos(), r = pos / 8, c = pos % 8;
    for (uint k = 0; k < 2; k++) {
        ulong rr = r, cc = c + k;
        S *p = transpose ? dst + (origin.y + cc) * elements_per_row + origin.x + rr
                         : dst + (origin.y + rr) * elements_per_row + origin.x + cc;
        *p = static_cast<S>(e[k]);
    }
}

// Records d = a * b (+ c) in the log (see above): this lane's elements of the
// operands, where they sit in the entry's matrices.
template <class T>
inline void sw_mma_operand(sw_mma_entry &e, int o, uint lane, uint pos, const simdgroup_matrix<T, 8, 8> *m) {
    if (m && m->sw_pending >= 0) {
        e.ref[o][lane] = m->sw_pending;
        return;
    }
    e.ref[o][lane] = -1;
    float *x = &e.op[o][0][0] + pos;
    x[0] = m ? (float)m->sw_elems[0] : 0.0f;
    x[1] = m ? (float)m->sw_elems[1] : 0.0f;
}
template <class TD, class TA, class TB, class TC>
SW_MMA_BOOKKEEPING inline void sw_mma_lane_record(simdgroup_matrix<TD, 8, 8> &d, const simdgroup_matrix<TA, 8, 8> &a,
                                             const simdgroup_matrix<TB, 8, 8> &b, const simdgroup_matrix<TC, 8, 8> *c,
                                             int line) {
    uint lane;
    sw_mma_log *L = sw_mma_log_here(&lane);
    if (L->count[lane] == SW_MMA_ENTRIES) sw_mma_flush(line); // full: settle it (every operand becomes a value)
    uint32_t k = L->count[lane];
    sw_mma_entry &e = L->entry[k];
    uint pos = sw_mat_pos.of[lane];
    sw_mma_operand(e, 0, lane, pos, &a);
    sw_mma_operand(e, 1, lane, pos, &b);
    sw_mma_operand(e, 2, lane, pos, c);
    if (d.sw_pending >= 0) L->entry[d.sw_pending].dst[lane] = nullptr;
    e.dst[lane] = &d;
    e.store[lane] = &simdgroup_matrix<TD, 8, 8>::sw_store;
    d.sw_pending = (int16_t)k;
    L->count[lane] = k + 1;
    if (d.sw_pinned) sw_mma_flush(line);
}
template <class TD, class TA, class TB, class TC>
__attribute__((always_inline)) inline void sw_simdgroup_mma(simdgroup_matrix<TD, 8, 8> &d, const simdgroup_matrix<TA, 8, 8> &a,
                             const simdgroup_matrix<TB, 8, 8> &b, const simdgroup_matrix<TC, 8, 8> *c,
                             int line) {
#ifdef SW_COUNT
    sw_rt_cnt_mma(std::is_same_v<TA, half> ? 1 : sizeof(TA) == 2 ? 2 : 0);
#endif
    sw_mma_lane_record(d, a, b, c, line);
}
template <class TD, class TA, class TB, class TC>
inline void simdgroup_multiply_accumulate(simdgroup_matrix<TD, 8, 8> &d,
                                          const simdgroup_matrix<TA, 8, 8> &a,
                                          const simdgroup_matrix<TB, 8, 8> &b,
                                          const simdgroup_matrix<TC, 8, 8> &c, int line = __builtin_LINE()) {
    sw_simdgroup_mma(d, a, b, &c, line);
}
template <class TD, class TA, class TB>
inline void simdgroup_multiply(simdgroup_matrix<TD, 8, 8> &d, const simdgroup_matrix<TA, 8, 8> &a,
                               const simdgroup_matrix<TB, 8, 8> &b, int line = __builtin_LINE()) {
    sw_simdgroup_mma(d, a, b, (const simdgroup_matrix<TD, 8, 8> *)nullptr, line);
}

// a * b and element-wise a + b, a - b, s * a (MSL's simdgroup_matrix operators).
// An operator has no defaulted line argument: a divergence names this header.  The
// element-wise ones read their operands through sw_read (a pending product first).
template <class T>
inline simdgroup_matrix<T, 8, 8> operator*(const simdgroup_matrix<T, 8, 8> &a, const simdgroup_matrix<T, 8, 8> &b) {
    simdgroup_matrix<T, 8, 8> d;
    sw_simdgroup_mma(d, a, b, (const simdgroup_matrix<T, 8, 8> *)nullptr, __LINE__);
    return d;
}
template <class T>
inline simdgroup_matrix<T, 8, 8> operator+(const simdgroup_matrix<T, 8, 8> &a, const simdgroup_matrix<T, 8, 8> &b) {
    simdgroup_matrix<T, 8, 8> d;
    d.sw_elems = a.sw_read(__LINE__) + b.sw_read(__LINE__);
    return d;
}
template <class T>
inline simdgroup_matrix<T, 8, 8> operator-(const simdgroup_matrix<T, 8, 8> &a, const simdgroup_matrix<T, 8, 8> &b) {
    simdgroup_matrix<T, 8, 8> d;
    d.sw_elems = a.sw_read(__LINE__) - b.sw_read(__LINE__);
    return d;
}
template <class T, class S, std::enable_if_t<is_arithmetic_v<S>, int> = 0>
inline simdgroup_matrix<T, 8, 8> operator*(S s, const simdgroup_matrix<T, 8, 8> &a) {
    simdgroup_matrix<T, 8, 8> d;
    d.sw_elems = a.sw_read(__LINE__) * sw_cvt<T>(s);
    return d;
}
template <class T, class S, std::enable_if_t<is_arithmetic_v<S>, int> = 0>
inline simdgroup_matrix<T, 8, 8> operator*(const simdgroup_matrix<T, 8, 8> &a, S s) {
    return s * a;
}
#endif // !SW_LANES

} // namespace metal

#endif
