// sw_lanes.h — the "lanes" (LV) execution library of the software device's prelude:
// a simdgroup's 32 lanes run together as SIMD data: one simdgroup at a time on a
// worker thread, or one fiber per simdgroup where the library has barriers.
// Included at the end of metal_stdlib.h when the translation unit defines SW_LANES
// (the LV rewriter's output does).
//
// Why: the fiber executor runs each GPU thread on its own fiber and every simd_*
// call is a fiber switch per lane.  For simd-heavy kernels that cost dominates.  The
// LV rewriter instead turns each per-lane local that may differ between lanes into a
// vary<T> (32 values, structure of arrays) and the kernel runs once per simdgroup:
// arithmetic becomes 32-wide loops clang vectorises, and simd-group functions become
// plain computations over the lane array.
//
// Divergence is handled ISPC-style with one execution mask per worker thread (bit l =
// lane l): assignments to vary<T> only change active lanes, a varying `if` narrows the
// mask (sw::lv::branch), loops collect broken/continued lanes (sw::lv::loop) and
// functions collect returned ones (sw::lv::fn).  Every result is computed by the same
// scalar C++ expression the fiber build evaluates per thread, in the same order, so
// the bits match (reductions fold from the lowest active lane, as sw_sync.h does).
//
// Contract with the rewriter (what it emits: src/swmetal/lanes_emit*.c):
//   vary<T>                varying locals/params (T scalar or metal::vec<E, 2..4>)
//   ld(B, I) / st(B, I, v) every subscript read / subscript store
//   cast<T>(args...)       casts and constructor calls of scalar/vector types
//   sel / land / lor       ?:, &&, || (operands as lambdas: evaluated only where needed)
//   u(c)                   a condition judged uniform: static_assert if it is varying
//   branch / loop / fn     varying if, loops, returns; brk() cnt() any()
//   invoke + bind<K, I>()  the entry, one simdgroup per call
// Nothing here synchronises through the executor's simd exchange (there is no other
// lane to wait for).  Threadgroup barriers and threadgroup allocations are the
// prelude's own, called once per simdgroup: such a library runs each simdgroup on a
// fiber of its own (exec.c), a barrier switches between them, and the worker's lane
// state is kept across the switch.
#ifndef GDN_SW_LANES_H
#define GDN_SW_LANES_H

namespace sw {
namespace lv {

// Every operation is a 32-wide loop the compiler should see in its caller (one
// vector loop per operation, operands in registers or L1): force inlining.
#define SW_LV_INLINE inline __attribute__((always_inline))

constexpr int W = SW_SIMD_WIDTH;   // 32 lanes, bit l of a mask is lane l
static_assert(W == 32, "masks are uint32_t");

// ---- per-worker execution state ----
// mask: lanes executing now; ret/brk/cnt: lanes that returned from the current
// function / broke out of / continued the innermost varying loop; live: lanes that
// exist in this simdgroup (a partial last simdgroup has fewer than 32).
struct lane_state {
    uint32_t mask, ret, brk, cnt, live;
};
// Internal linkage: a kernel library is one translation unit, and a static TLS
// variable lets the compiler compute its address once per function (local-dynamic).
static thread_local lane_state g_state;
inline lane_state &S() { return g_state; }
inline bool any() { return S().mask != 0; }
inline void brk() {
    lane_state &s = S();
    s.brk |= s.mask;
    s.mask = 0;
}
inline void cnt() {
    lane_state &s = S();
    s.cnt |= s.mask;
    s.mask = 0;
}

// ---- vary<T> ----
template <class T> struct vary;
template <class T> struct is_vary_t : std::false_type {};
template <class T> struct is_vary_t<vary<T>> : std::true_type {};
template <class T> constexpr bool is_vary = is_vary_t<metal::sw_bare_t<T>>::value;
template <class T> struct vary_of_pointer : std::false_type {};
template <class P> struct vary_of_pointer<vary<P>> : std::bool_constant<std::is_pointer_v<P>> {};

// A per-lane value that may sit next to a vary in an operation: scalars, half,
// bfloat, ext vectors, enums.
// Pointers too: `p + i` with a varying i is a varying pointer (vary<T *>), which
// ld/st dereference lane by lane (`*(device float4 *)(p + i)`).
template <class T>
constexpr bool is_lane_value = std::is_arithmetic_v<metal::sw_bare_t<T>> || metal::sw_is_fp16<metal::sw_bare_t<T>> ||
                               metal::sw_is_vector<T> || std::is_enum_v<metal::sw_bare_t<T>> ||
                               std::is_pointer_v<metal::sw_bare_t<T>> || std::is_array_v<std::remove_reference_t<T>>;
template <class T> constexpr bool is_operand = is_vary<T> || is_lane_value<T>;

struct noinit_t {};
constexpr noinit_t noinit{};

// A value converted as initialisation/assignment converts it in the fiber build:
// scalar -> scalar (half <-> bfloat through float, as the prelude does), scalar ->
// vector splat, vector -> vector component-wise.
// float -> bfloat as the prelude's __truncsfbf2 computes it (x86-64 calls that
// function for every conversion; weak, so never inlined): here in line, so that 32
// lanes convert as vector code.  Elsewhere the compiler's own conversion, as the
// fiber build gets.
SW_LV_INLINE metal::bfloat f32_to_bf16(float f) {
#if defined(__x86_64__)
    const uint32_t u = __builtin_bit_cast(uint32_t, f);
    const uint16_t h = (u & 0x7fffffffu) > 0x7f800000u ? (uint16_t)((u >> 16) | 0x40u)
                                                      : (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    return __builtin_bit_cast(metal::bfloat, h);
#else
    return (metal::bfloat)f;
#endif
}
template <class T, class U> SW_LV_INLINE T conv(const U &u) {
    typedef metal::sw_bare_t<U> B;
    if constexpr (std::is_same_v<T, B>) return (T)u;
    else if constexpr (std::is_pointer_v<T> || std::is_pointer_v<B>) {
        // (the address of a vary is 32 lanes' storage, not a lane's value)
        static_assert(!std::is_pointer_v<B> || !is_vary<std::remove_pointer_t<B>>, "pointer to a varying value");
        return (T)u;
    }
    else if constexpr (std::is_same_v<T, metal::bfloat> && std::is_same_v<B, float>) return f32_to_bf16((B)u);
    else if constexpr (metal::sw_is_vector<T> && metal::sw_is_vector<B>) return metal::sw_convert<T>((B)u);
    else if constexpr (metal::sw_is_vector<T>) return metal::sw_mk_splat<T>((B)u);
    else if constexpr (std::is_enum_v<T> || std::is_enum_v<B>) return static_cast<T>(u);
    else return metal::sw_cvt<T>((B)u);
}
template <class T, class U>
constexpr bool can_conv = (!metal::sw_is_vector<T> && !metal::sw_is_vector<U>) ||
                          (metal::sw_is_vector<T> && !metal::sw_is_vector<U>) ||
                          (metal::sw_is_vector<T> && metal::sw_is_vector<U> &&
                           metal::sw_vec_size<T> == metal::sw_vec_size<U>);

// Lane l's value of an operand: a vary's element, or the uniform value itself.
template <class X> SW_LV_INLINE auto lval(const X &x, int l) {
    if constexpr (is_vary<X>) {
        return x.get(l);
    } else if constexpr (std::is_array_v<X>) {
        // an array (threadgroup memory) as its first element's address, in its own
        // address space and writable (the operand came by const reference)
        typedef std::remove_const_t<std::remove_reference_t<decltype(x[0])>> E;
        return const_cast<E *>(&x[0]);
    } else {
        return (metal::sw_bare_t<X>)x;
    }
}
template <class X> using lane_t = decltype(lval(std::declval<const X &>(), 0));

// The lanes a masked assignment writes: all of them when every live lane is active
// (the common case: a plain loop the compiler vectorises), else a blend.
SW_LV_INLINE bool all_active(uint32_t m) { return m == S().live; }

// Lane storage.  Plain arithmetic elements (not bool, half, bfloat) are one clang
// ext vector of 32: whole-vector code (masked assignment as a blend, + - * /, the
// reductions) then works on SSA values the compiler keeps in registers, where
// 32-element arrays stayed on the stack and every `acc += a * b` went through
// memory.  Per-lane code (gathers, math functions) reads and writes the same bytes
// through p(), as an array.  Other elements: an array of 32.
template <class T>
constexpr bool vec_elem = (std::is_integral_v<T> && !std::is_same_v<T, bool>) || std::is_same_v<T, float> ||
                          std::is_same_v<T, double>;
template <class T, bool = vec_elem<T>> struct lane_store {
    typedef T type[W];
};
template <class T> struct lane_store<T, true> {   // 64-byte aligned, as the arrays were
    typedef T type __attribute__((ext_vector_type(W), aligned(64)));
};
// Integer vector of the element's size: -1 where lane l's bit of m is set, else 0.
template <class T> struct mask_of {
    typedef std::conditional_t<sizeof(T) == 1, int8_t,
                               std::conditional_t<sizeof(T) == 2, int16_t,
                                                  std::conditional_t<sizeof(T) == 4, int32_t, int64_t>>> I;
    typedef I type __attribute__((ext_vector_type(W)));
};
typedef uint32_t u32v __attribute__((ext_vector_type(W)));
SW_LV_INLINE u32v lane_bits() {
    return (u32v){1u << 0,  1u << 1,  1u << 2,  1u << 3,  1u << 4,  1u << 5,  1u << 6,  1u << 7,
                  1u << 8,  1u << 9,  1u << 10, 1u << 11, 1u << 12, 1u << 13, 1u << 14, 1u << 15,
                  1u << 16, 1u << 17, 1u << 18, 1u << 19, 1u << 20, 1u << 21, 1u << 22, 1u << 23,
                  1u << 24, 1u << 25, 1u << 26, 1u << 27, 1u << 28, 1u << 29, 1u << 30, 1u << 31};
}
// Lanes of m from a, the others from b (bit for bit: a select, no arithmetic).
template <class V> SW_LV_INLINE V blend(uint32_t m, const V &a, const V &b) {
    typedef std::remove_reference_t<decltype(a[0])> E;
    typedef typename mask_of<std::remove_cv_t<E>>::type MV;
    typedef int32_t i32v __attribute__((ext_vector_type(W)));
    const i32v k32 = (i32v)((lane_bits() & m) != 0u);
    const MV k = __builtin_convertvector(k32, MV);
    const MV r = (__builtin_bit_cast(MV, a) & k) | (__builtin_bit_cast(MV, b) & ~k);
    return __builtin_bit_cast(V, r);
}

// Scalar element.  The default constructor zeroes it, so lanes that were never
// active hold defined bits (whole-vector code reads them).
template <class T> struct alignas(64) vary {
    static_assert(!is_vary<T>, "vary<vary<T>>");
    typedef T elem;
    static constexpr bool is_vec = vec_elem<T>;
    typedef typename lane_store<T>::type store_t;
    store_t v;

    SW_LV_INLINE T *p() { return (T *)&v; }
    SW_LV_INLINE const T *p() const { return (const T *)&v; }

    SW_LV_INLINE vary() {
        if constexpr (is_vec) v = (store_t)T();
        else for (int l = 0; l < W; l++) v[l] = T();
    }
    SW_LV_INLINE explicit vary(noinit_t) {}
    vary(const vary &) = default;
    template <class U, std::enable_if_t<is_lane_value<U> && can_conv<T, metal::sw_bare_t<U>>, int> = 0>
    SW_LV_INLINE vary(const U &u) {   // broadcast: implicit, as `float x = 1;`
        const T x = conv<T>(u);
        if constexpr (is_vec) v = (store_t)x;
        else for (int l = 0; l < W; l++) v[l] = x;
    }
    template <class U, std::enable_if_t<!std::is_same_v<U, T> && can_conv<T, U>, int> = 0>
    SW_LV_INLINE vary(const vary<U> &o) {   // converting: implicit, as `float x = i;`
        T n[W];
        for (int l = 0; l < W; l++) n[l] = conv<T>(o.get(l));
        __builtin_memcpy(p(), n, sizeof n);
    }

    SW_LV_INLINE T get(int l) const { return p()[l]; }
    SW_LV_INLINE void set(int l, const T &x) { p()[l] = x; }

    // Writes f(l) into the active lanes.  f is evaluated for every lane in the blend
    // (values only, never memory: callers pass computed values).
    // (Through a local array: f may read *this, and the compiler then vectorises
    // neither loop unless it knows the two do not overlap.)
    template <class F> SW_LV_INLINE void assign(F f) {
        const uint32_t m = S().mask;
        T n[W];
        for (int l = 0; l < W; l++) n[l] = f(l);
        if constexpr (is_vec) {
            store_t nv;
            __builtin_memcpy(&nv, n, sizeof nv);
            v = blend(m, nv, v);
        } else if (all_active(m)) {
            __builtin_memcpy(v, n, sizeof v);
        } else {
            for (int l = 0; l < W; l++) v[l] = (m >> l & 1u) ? n[l] : v[l];
        }
    }
    // The whole-vector form: lanes of the mask from nv (no branch: the blend of an
    // all-active mask is a copy).
    SW_LV_INLINE void assign_vec(const store_t &nv) { v = blend(S().mask, nv, v); }
    SW_LV_INLINE vary &operator=(const vary &o) {
        if constexpr (is_vec) assign_vec(o.v);
        else assign([&](int l) { return o.v[l]; });
        return *this;
    }
    template <class U, std::enable_if_t<is_operand<U>, int> = 0> SW_LV_INLINE vary &operator=(const U &u) {
        if constexpr (is_vary<U>) {
            assign([&](int l) { return conv<T>(u.get(l)); });
        } else {
            const T x = conv<T>(u);
            if constexpr (is_vec) assign_vec((store_t)x);
            else assign([&](int) { return x; });
        }
        return *this;
    }
#define SW_LV_COMPOUND(OP)                                                                                         \
    template <class U, std::enable_if_t<is_operand<U>, int> = 0> SW_LV_INLINE vary &operator OP##=(const U &u) {               \
        return *this = (*this OP u);                                                                               \
    }
    SW_LV_COMPOUND(+) SW_LV_COMPOUND(-) SW_LV_COMPOUND(*) SW_LV_COMPOUND(/) SW_LV_COMPOUND(%)
    SW_LV_COMPOUND(&) SW_LV_COMPOUND(|) SW_LV_COMPOUND(^) SW_LV_COMPOUND(<<) SW_LV_COMPOUND(>>)
    vary &operator++() { return *this += 1; }
    vary &operator--() { return *this -= 1; }
    vary operator++(int) {
        vary old = *this;
        *this += 1;
        return old;
    }
    vary operator--(int) {
        vary old = *this;
        *this -= 1;
        return old;
    }
};

// Vector element (float4...): structure of arrays, one vary<E> per component, so
// .x .y .z .w are ordinary vary lvalues (masked assignment included).  Swizzles of
// several components (.xy) are not provided.
template <class E, int N> struct vcomps;
template <class E> struct vcomps<E, 2> {
    vary<E> x, y;
    vcomps() = default;
    explicit vcomps(noinit_t n) : x(n), y(n) {}
    vary<E> &c(int k) { return k == 0 ? x : y; }
    const vary<E> &c(int k) const { return k == 0 ? x : y; }
};
template <class E> struct vcomps<E, 3> {
    vary<E> x, y, z;
    vcomps() = default;
    explicit vcomps(noinit_t n) : x(n), y(n), z(n) {}
    vary<E> &c(int k) { return k == 0 ? x : k == 1 ? y : z; }
    const vary<E> &c(int k) const { return k == 0 ? x : k == 1 ? y : z; }
};
template <class E> struct vcomps<E, 4> {
    vary<E> x, y, z, w;
    vcomps() = default;
    explicit vcomps(noinit_t n) : x(n), y(n), z(n), w(n) {}
    vary<E> &c(int k) { return k == 0 ? x : k == 1 ? y : k == 2 ? z : w; }
    const vary<E> &c(int k) const { return k == 0 ? x : k == 1 ? y : k == 2 ? z : w; }
};

template <class E, int N> struct vary<E __attribute__((ext_vector_type(N)))> : vcomps<E, N> {
    typedef E T __attribute__((ext_vector_type(N)));
    typedef T elem;
    static constexpr bool is_vec = false;

    vary() = default;
    explicit vary(noinit_t n) : vcomps<E, N>(n) {}
    vary(const vary &) = default;
    template <class U, std::enable_if_t<is_lane_value<U> && can_conv<T, metal::sw_bare_t<U>>, int> = 0>
    SW_LV_INLINE vary(const U &u) : vcomps<E, N>(noinit) {
        const T x = conv<T>(u);
        for (int l = 0; l < W; l++) set(l, x);
    }
    template <class U, std::enable_if_t<!std::is_same_v<U, T> && can_conv<T, U>, int> = 0>
    SW_LV_INLINE vary(const vary<U> &o) : vcomps<E, N>(noinit) {
        for (int l = 0; l < W; l++) set(l, conv<T>(o.get(l)));
    }

    SW_LV_INLINE T get(int l) const {
        T r;
        for (int k = 0; k < N; k++) r[k] = this->c(k).get(l);
        return r;
    }
    SW_LV_INLINE void set(int l, const T &x) {
        for (int k = 0; k < N; k++) this->c(k).set(l, x[k]);
    }
    template <class F> SW_LV_INLINE void assign(F f) {
        const uint32_t m = S().mask;
        if (all_active(m)) {
            for (int l = 0; l < W; l++) set(l, f(l));
        } else {
            for (int l = 0; l < W; l++)
                if (m >> l & 1u) set(l, f(l));
        }
    }
    // Component by component where the components are vector-stored (a blend each).
    static constexpr bool comp_vec = vary<E>::is_vec;
    SW_LV_INLINE vary &operator=(const vary &o) {
        if constexpr (comp_vec) {
            for (int k = 0; k < N; k++) this->c(k) = o.c(k);
        } else {
            assign([&](int l) { return o.get(l); });
        }
        return *this;
    }
    template <class U, std::enable_if_t<is_operand<U>, int> = 0> SW_LV_INLINE vary &operator=(const U &u) {
        if constexpr (is_vary<U>) {
            assign([&](int l) { return conv<T>(u.get(l)); });
        } else {
            const T x = conv<T>(u);
            if constexpr (comp_vec) {
                for (int k = 0; k < N; k++) this->c(k) = (E)x[k];
            } else {
                assign([&](int) { return x; });
            }
        }
        return *this;
    }
    SW_LV_COMPOUND(+) SW_LV_COMPOUND(-) SW_LV_COMPOUND(*) SW_LV_COMPOUND(/) SW_LV_COMPOUND(%)
    SW_LV_COMPOUND(&) SW_LV_COMPOUND(|) SW_LV_COMPOUND(^) SW_LV_COMPOUND(<<) SW_LV_COMPOUND(>>)
#undef SW_LV_COMPOUND
};

// A vary of f(l) for every lane (the result of an operation: a fresh value, not masked).
template <class R, class F> SW_LV_INLINE vary<R> make_lanes(F f) {
    vary<R> r(noinit);
    if constexpr (vary<R>::is_vec) {
        R n[W];
        for (int l = 0; l < W; l++) n[l] = f(l);
        __builtin_memcpy(r.p(), n, sizeof n);
    } else {
        for (int l = 0; l < W; l++) r.set(l, f(l));
    }
    return r;
}

// Bits of the lanes where a condition holds (a uniform condition: all or none).
template <class C> SW_LV_INLINE uint32_t bits(const C &c) {
    if constexpr (is_vary<C>) {
        typedef typename C::elem E;
        if constexpr ((std::is_integral_v<E> || std::is_floating_point_v<E>) && sizeof(E) <= 4) {
            // one vector compare and a mask move, not 32 shifts and ors
            typedef std::conditional_t<std::is_same_v<E, bool>, uint8_t, E> X;
            typedef X xv __attribute__((ext_vector_type(W)));
            typedef bool bv __attribute__((ext_vector_type(W)));
            xv x;
            __builtin_memcpy(&x, c.p(), sizeof x);
            return __builtin_bit_cast(uint32_t, __builtin_convertvector(x != (X)0, bv));
        }
        uint32_t r = 0;
        for (int l = 0; l < W; l++) r |= (uint32_t)(bool)c.get(l) << l;
        return r;
    } else {
        return c ? ~0u : 0u;
    }
}

// ---- operators: the scalar C++ operation per lane (result type included) ----
// The whole-vector form of `a OP b` where it is bit for bit the per-lane one: the
// result R is a vector-stored element, a varying operand already holds R (no
// conversion of a vector), a uniform one is a plain arithmetic value converted to R
// once (the usual arithmetic conversions convert it to R too) and splat.  mode 0:
// any such R (+ - * and bitwise ops wrap the same way); 1: floating R only (/);
// 2: never (shifts, comparisons: per lane).
template <class X, class R> constexpr bool whole_operand() {
    if constexpr (is_vary<X>) return std::is_same_v<typename metal::sw_bare_t<X>::elem, R>;
    else return std::is_arithmetic_v<metal::sw_bare_t<X>> && !std::is_same_v<metal::sw_bare_t<X>, bool>;
}
template <class R, class A, class B, int MODE>
constexpr bool whole_ok = MODE != 2 && vec_elem<R> && (MODE == 0 || std::is_floating_point_v<R>) &&
                          whole_operand<A, R>() && whole_operand<B, R>();
// The same for a floating vector result (float2...): component by component, each
// as above; operands vary<R>, vary<E>, a uniform R or a uniform E (splat), so that
// component k of the lane operation is exactly E OP E.
template <class X, class R, class E> constexpr bool comp_operand() {
    typedef metal::sw_bare_t<X> XB;
    if constexpr (is_vary<X>) return std::is_same_v<typename XB::elem, R> || std::is_same_v<typename XB::elem, E>;
    else return std::is_same_v<XB, R> || std::is_same_v<XB, E>;
}
template <class R, class A, class B, int MODE> constexpr bool comp_ok_f() {
    if constexpr (MODE == 2 || !metal::sw_is_vector<R>) return false;
    else {
        typedef metal::sw_elem_t<R> E;
        return std::is_floating_point_v<E> && vec_elem<E> && comp_operand<A, R, E>() && comp_operand<B, R, E>();
    }
}
template <class R, class A, class B, int MODE> constexpr bool comp_ok = comp_ok_f<R, A, B, MODE>();
template <class E, class R, class X> SW_LV_INLINE typename vary<E>::store_t whole_c(const X &x, int k) {
    typedef metal::sw_bare_t<X> XB;
    typedef typename vary<E>::store_t V;
    if constexpr (is_vary<X>) {
        if constexpr (std::is_same_v<typename XB::elem, R>) return x.c(k).v;
        else return x.v;
    } else if constexpr (std::is_same_v<XB, R>) {
        return (V)(E)x[k];
    } else {
        return (V)(E)x;
    }
}
template <class R, class X> SW_LV_INLINE typename vary<R>::store_t whole(const X &x) {
    if constexpr (is_vary<X>) return x.v;
    else return (typename vary<R>::store_t)(R)x;
}
// a OP b for the lanes, op being the scalar (and ext-vector) operation: whole
// vectors where whole_ok (MODE as above), component by component where comp_ok,
// else lane by lane.
template <class R, int MODE, class A, class B, class F> SW_LV_INLINE vary<R> lanes_op(const A &a, const B &b, F op) {
    if constexpr (whole_ok<R, A, B, MODE>) {
        vary<R> r(noinit);
        r.v = op(whole<R>(a), whole<R>(b));
        return r;
    } else if constexpr (comp_ok<R, A, B, MODE>) {
        typedef metal::sw_elem_t<R> E;
        vary<R> r(noinit);
        for (int k = 0; k < metal::sw_vec_size<R>; k++) r.c(k).v = op(whole_c<E, R>(a, k), whole_c<E, R>(b, k));
        return r;
    } else {
        return make_lanes<R>([&](int l) { return op(lval(a, l), lval(b, l)); });
    }
}
#define SW_LV_BINOP(OP, MODE)                                                                                      \
    template <class A, class B,                                                                                    \
              std::enable_if_t<(is_vary<A> || is_vary<B>) && is_operand<A> && is_operand<B>, int> = 0,             \
              class R = std::decay_t<decltype(std::declval<lane_t<A>>() OP std::declval<lane_t<B>>())>>            \
    SW_LV_INLINE vary<R> operator OP(const A &a, const B &b) {                                                     \
        return lanes_op<R, MODE>(a, b, [](const auto &x, const auto &y) { return x OP y; });                       \
    }
SW_LV_BINOP(+, 0) SW_LV_BINOP(-, 0) SW_LV_BINOP(*, 0) SW_LV_BINOP(&, 0) SW_LV_BINOP(|, 0) SW_LV_BINOP(^, 0)
SW_LV_BINOP(<<, 2) SW_LV_BINOP(>>, 2) SW_LV_BINOP(==, 2) SW_LV_BINOP(!=, 2) SW_LV_BINOP(<, 2) SW_LV_BINOP(>, 2)
SW_LV_BINOP(<=, 2) SW_LV_BINOP(>=, 2)
#undef SW_LV_BINOP
// Integer division traps on a zero divisor: lanes that are not active (whose values
// may be anything) divide by 1 instead.  Floating division: as the other operators
// (mode 1: whole vectors for a floating result only).
#define SW_LV_DIVOP(OP)                                                                                            \
    template <class A, class B,                                                                                    \
              std::enable_if_t<(is_vary<A> || is_vary<B>) && is_operand<A> && is_operand<B>, int> = 0,             \
              class R = std::decay_t<decltype(std::declval<lane_t<A>>() OP std::declval<lane_t<B>>())>>            \
    SW_LV_INLINE vary<R> operator OP(const A &a, const B &b) {                                                     \
        typedef lane_t<B> D;                                                                                       \
        if constexpr (metal::sw_is_int_type<D> || metal::sw_is_int_type<lane_t<A>>) {                              \
            const uint32_t m = S().mask;                                                                           \
            return make_lanes<R>([&](int l) {                                                                      \
                D d = lval(b, l);                                                                                  \
                if (!(m >> l & 1u)) d = D(1);                                                                      \
                return lval(a, l) OP d;                                                                            \
            });                                                                                                    \
        } else {                                                                                                   \
            return lanes_op<R, 1>(a, b, [](const auto &x, const auto &y) { return x OP y; });                      \
        }                                                                                                          \
    }
SW_LV_DIVOP(/) SW_LV_DIVOP(%)
#undef SW_LV_DIVOP
#define SW_LV_UNOP(OP)                                                                                             \
    template <class A, class R = std::decay_t<decltype(OP std::declval<A>())>>                                     \
    SW_LV_INLINE vary<R> operator OP(const vary<A> &a) {                                                                 \
        return make_lanes<R>([&](int l) { return OP a.get(l); });                                                  \
    }
SW_LV_UNOP(-) SW_LV_UNOP(+) SW_LV_UNOP(~) SW_LV_UNOP(!)
#undef SW_LV_UNOP

// ---- u(): a condition the rewriter judged uniform ----
template <class C> inline C u(C &&c) {
    static_assert(!is_vary<C>, "sw::lv::u: this condition is varying");
    return static_cast<C &&>(c);
}

// ---- casts: T(args...), (T)x, static_cast<T>(x) ----
template <class A> constexpr bool vary_pointer = std::is_pointer_v<metal::sw_bare_t<A>> &&
                                                   is_vary<std::remove_pointer_t<metal::sw_bare_t<A>>>;
template <class T, class... A> SW_LV_INLINE T ucast(const A &...a) {
    // `*(thread uint *)&x` of a varying x would read lane 0's bits for every lane
    static_assert(!(vary_pointer<A> || ...), "cast of a pointer to a varying value");
    if constexpr (sizeof...(A) == 0) {
        return T{};
    } else if constexpr (metal::sw_is_vector<T>) {
        return metal::sw_mk<T>(a...);
    } else if constexpr (sizeof...(A) == 1 && (is_lane_value<A> && ...) && !metal::sw_is_vector<T> &&
                         (std::is_arithmetic_v<T> || metal::sw_is_fp16<T> || std::is_enum_v<T>)) {
        return conv<T>(a...);
    } else {
        return T(a...);
    }
}
template <class T, class... A> constexpr bool cast_comp() {
    if constexpr (!metal::sw_is_vector<T>) return false;
    else if constexpr (metal::sw_vec_size<T> != (int)sizeof...(A)) return false;
    else {
        typedef metal::sw_elem_t<T> E;
        return vec_elem<E> && ((is_vary<A> ? std::is_same_v<lane_t<A>, E> : std::is_same_v<metal::sw_bare_t<A>, E>) && ...);
    }
}
template <class T, class... A> SW_LV_INLINE auto cast(const A &...a) {
    if constexpr ((is_vary<A> || ...) && cast_comp<T, A...>()) {
        // T(x, y...) of N scalars of T's element: component k is argument k
        typedef metal::sw_elem_t<T> E;
        vary<T> r(noinit);
        int k = 0;
        ((r.c(k++).v = vary<E>(a).v), ...);   // every lane: a fresh value
        return r;
    } else if constexpr ((is_vary<A> || ...)) return make_lanes<T>([&](int l) { return ucast<T>(lval(a, l)...); });
    else return ucast<T>(a...);
}

// ---- ?:, &&, || ----
template <class A, class B> struct common_lane {
    typedef std::decay_t<decltype(false ? std::declval<lane_t<A>>() : std::declval<lane_t<B>>())> type;
};
// Evaluates f with the mask narrowed to m (m != 0), restoring it after.
template <class F> inline decltype(auto) under(uint32_t m, F &&f) {
    lane_state &s = S();
    const uint32_t m0 = s.mask;
    s.mask = m;
    struct restore {
        lane_state &s;
        uint32_t m0;
        ~restore() { s.mask = m0; }
    } r{s, m0};
    return f();
}
template <class C, class FA, class FB> inline auto sel(const C &c, FA fa, FB fb) {
    typedef decltype(fa()) RA;
    typedef decltype(fb()) RB;
    if constexpr (!is_vary<C>) {
        if constexpr (std::is_void_v<RA> || std::is_void_v<RB>) {
            if (c) fa();
            else fb();
        } else if constexpr (is_vary<RA> || is_vary<RB>) {
            typedef vary<typename common_lane<RA, RB>::type> R;
            return c ? R(fa()) : R(fb());
        } else {
            return c ? fa() : fb();
        }
    } else {
        const uint32_t m0 = S().mask, cb = bits(c), mt = m0 & cb, mf = m0 & ~cb;
        if constexpr (std::is_void_v<RA> || std::is_void_v<RB>) {
            if (mt) under(mt, fa);
            if (mf) under(mf, fb);
        } else {
            typedef typename common_lane<RA, RB>::type E;
            if (!mf) return vary<E>(under(mt, fa));   // only one side needed: the other's lanes are inactive
            if (!mt) return vary<E>(under(mf, fb));
            const RA a = under(mt, fa);
            const RB b = under(mf, fb);
            return make_lanes<E>([&](int l) { return (cb >> l & 1u) ? (E)lval(a, l) : (E)lval(b, l); });
        }
    }
}
template <class A, class FB> inline auto land(const A &a, FB fb) {
    typedef decltype(fb()) RB;
    if constexpr (!is_vary<A>) {
        if constexpr (is_vary<RB>) {
            if (!a) return vary<bool>(false);
            return vary<bool>(fb());
        } else {
            return a && fb();
        }
    } else {
        const uint32_t m0 = S().mask, ab = bits(a), need = m0 & ab;
        uint32_t rb = 0;
        if (need) rb = bits(under(need, fb));
        const uint32_t r = ab & rb;
        return make_lanes<bool>([&](int l) { return (bool)(r >> l & 1u); });
    }
}
template <class A, class FB> inline auto lor(const A &a, FB fb) {
    typedef decltype(fb()) RB;
    if constexpr (!is_vary<A>) {
        if constexpr (is_vary<RB>) {
            if (a) return vary<bool>(true);
            return vary<bool>(fb());
        } else {
            return a || fb();
        }
    } else {
        const uint32_t m0 = S().mask, ab = bits(a), need = m0 & ~ab;
        uint32_t rb = 0;
        if (need) rb = bits(under(need, fb));
        const uint32_t r = ab | rb;
        return make_lanes<bool>([&](int l) { return (bool)(r >> l & 1u); });
    }
}

// ---- control flow ----
// { branch b(c); if (b.then_()) S1 if (b.else_()) S2 }
struct branch {
    uint32_t m0, cb;
    bool uni;
    template <class C> explicit branch(const C &c) {
        if constexpr (is_vary<C>) {
            uni = false;
            m0 = S().mask;
            cb = bits(c);
        } else {
            uni = true;
            m0 = 0;
            cb = c ? 1u : 0u;
        }
    }
    bool then_() {
        if (uni) return cb != 0;
        lane_state &s = S();
        s.mask = m0 & cb & ~(s.ret | s.brk | s.cnt);
        return s.mask != 0;
    }
    bool else_() {
        if (uni) return cb == 0;
        lane_state &s = S();
        s.mask = m0 & ~cb & ~(s.ret | s.brk | s.cnt);
        return s.mask != 0;
    }
    ~branch() {
        if (uni) return;
        lane_state &s = S();
        s.mask = m0 & ~(s.ret | s.brk | s.cnt);
    }
    branch(const branch &) = delete;
    branch &operator=(const branch &) = delete;
};

// { init; loop L; for (; L.test(c); L.next(), step) S }
struct loop {
    uint32_t m0, brk0, cnt0;
    loop() {
        lane_state &s = S();
        m0 = s.mask;
        brk0 = s.brk;
        cnt0 = s.cnt;
        s.brk = s.cnt = 0;
    }
    template <class C> bool test(const C &c) {
        lane_state &s = S();
        const uint32_t keep = s.mask & bits(c);
        s.brk |= s.mask & ~keep;
        s.mask = keep;
        return keep != 0;
    }
    void next() {
        lane_state &s = S();
        s.cnt = 0;
        s.mask = m0 & ~(s.ret | s.brk);
    }
    ~loop() {
        lane_state &s = S();
        s.mask = m0 & ~s.ret;
        s.brk = brk0;
        s.cnt = cnt0;
    }
    loop(const loop &) = delete;
    loop &operator=(const loop &) = delete;
};

// A function with a return under varying control: fn<R> _sw_F; ... _sw_F.ret(e) ...
struct fn_base {
    uint32_t mask0, ret0, brk0, cnt0;
    fn_base() {
        lane_state &s = S();
        mask0 = s.mask;
        ret0 = s.ret;
        brk0 = s.brk;
        cnt0 = s.cnt;
        s.ret = s.brk = s.cnt = 0;
    }
    ~fn_base() {
        lane_state &s = S();
        s.mask = mask0;
        s.ret = ret0;
        s.brk = brk0;
        s.cnt = cnt0;
    }
    void returned() {
        lane_state &s = S();
        s.ret |= s.mask;
        s.mask = 0;
    }
    fn_base(const fn_base &) = delete;
    fn_base &operator=(const fn_base &) = delete;
};
template <class R> struct fn : fn_base {
    R acc{};
    template <class V> void ret(const V &v) {
        if constexpr (is_vary<R>) acc = v;   // masked: the returning lanes
        else acc = (R)v;
        returned();
    }
    R result() const { return acc; }
};
template <> struct fn<void> : fn_base {
    void ret() { returned(); }
    void result() const {}
};

// ---- subscripts ----
// Difference of two indices as the address arithmetic sees it (mod 2^64).
template <class IX> inline uint64_t idiff(IX a, IX b) {
    if constexpr (sizeof(IX) >= 8) return (uint64_t)a - (uint64_t)b;
    else if constexpr (std::is_signed_v<IX>) return (uint64_t)((int64_t)a - (int64_t)b);
    else return (uint64_t)a - (uint64_t)b;
}
// Lanes at a small constant stride: each lane's element is read as part of one
// machine word (a truncating vector move instead of 32 scalar loads), straight from
// memory and in bounds: lanes 0..15 read the word that starts at their element (it
// ends before lane 16's), lanes 16..31 the word that ends with it (it starts after
// lane 0's).  The 32 results are put together as one vector and stored at once, so
// that the consumer's wide loads of r forward from that store.
template <class T, int STRIDE, class P> SW_LV_INLINE void gather_strided(vary<T> &r, P q) {
    typedef metal::sw_bare_t<std::remove_pointer_t<P>> E;
    if constexpr (STRIDE == 1) {
        for (int l = 0; l < W; l++) r.p()[l] = (T)q[l];
    } else if constexpr (std::is_arithmetic_v<E> || metal::sw_is_fp16<E>) {
        constexpr size_t ES = sizeof(E), LB = ES * STRIDE;   // bytes per element, per lane
        typedef std::conditional_t<ES == 1, uint8_t,
                                   std::conditional_t<ES == 2, uint16_t, std::conditional_t<ES == 4, uint32_t, uint64_t>>> UE;
        typedef std::conditional_t<LB == 2, uint16_t, std::conditional_t<LB == 4, uint32_t, uint64_t>> UW;
        constexpr int H = W / 2;
        typedef UW wv __attribute__((ext_vector_type(H)));
        typedef UE ev __attribute__((ext_vector_type(H)));
        const char *c = (const char *)(const E *)q;
        UW lo[H], hi[H];
        for (int l = 0; l < H; l++) {
            __builtin_memcpy(&lo[l], c + (size_t)l * LB, sizeof(UW));
            __builtin_memcpy(&hi[l], c + (size_t)(l + H) * LB + ES - sizeof(UW), sizeof(UW));
        }
        wv wl, wh;
        __builtin_memcpy(&wl, lo, sizeof wl);
        __builtin_memcpy(&wh, hi, sizeof wh);
        ev el = __builtin_convertvector(wl, ev);
        ev eh = __builtin_convertvector(wh >> (UW)(8 * (sizeof(UW) - ES)), ev);
        if constexpr (std::is_same_v<T, E>) {
#if defined(__x86_64__) && defined(__AVX2__)
            // Whole vectors in registers, one store each: the compiler would otherwise
            // store each truncation's 16 bytes, and the consumer's 32-byte loads of r
            // would miss store-to-load forwarding (a stall per load: a third of the
            // recurrence kernel's time).
#if defined(__AVX512F__)
            constexpr size_t VMAX = 64;
#else
            constexpr size_t VMAX = 32;
#endif
            if constexpr (sizeof(ev) <= VMAX) __asm__("" : "+v"(el), "+v"(eh));
#endif
            __builtin_memcpy(r.p(), &el, sizeof el);
            __builtin_memcpy(r.p() + H, &eh, sizeof eh);
        } else {
            UE al[H], ah[H];
            __builtin_memcpy(al, &el, sizeof al);
            __builtin_memcpy(ah, &eh, sizeof ah);
            for (int l = 0; l < H; l++) {
                r.p()[l] = (T)__builtin_bit_cast(E, al[l]);
                r.p()[l + H] = (T)__builtin_bit_cast(E, ah[l]);
            }
        }
    } else {
        for (int l = 0; l < W; l++) r.p()[l] = (T)q[l * STRIDE];
    }
}
// Element idx[l] of p for the active lanes only (the others may be out of bounds).
template <class T, class P, class IX> SW_LV_INLINE vary<T> gather(P p, const vary<IX> &idx) {
    const uint32_t m = S().mask;
    if constexpr (!metal::sw_is_vector<T> && !metal::sw_is_vector<IX>) {
        if (m == ~0u) {
            vary<T> r(noinit);
            const uint64_t d = idiff(idx.p()[1], idx.p()[0]);
            bool regular = true;
            for (int l = 0; l < W; l++) regular &= idiff(idx.p()[l], idx.p()[0]) == (uint64_t)l * d;
            if (regular) {
                // q[l * d] is p[idx[l]]: same address mod 2^64
                const auto q = p + idx.p()[0];
                switch ((int64_t)d) {
                case 0: {
                    const T x = (T)q[0];
                    for (int l = 0; l < W; l++) r.p()[l] = x;
                    return r;
                }
                case 1: gather_strided<T, 1>(r, q); return r;
                case 2: gather_strided<T, 2>(r, q); return r;
                case 4: gather_strided<T, 4>(r, q); return r;
                case 8: gather_strided<T, 8>(r, q); return r;
                default: {
                    const int64_t s = (int64_t)d;
                    for (int l = 0; l < W; l++) r.p()[l] = (T)q[l * s];
                    return r;
                }
                }
            }
            for (int l = 0; l < W; l++) r.p()[l] = (T)p[idx.p()[l]];
            return r;
        }
    }
    vary<T> r;
    for (uint32_t mm = m; mm; mm &= mm - 1) {
        const int l = __builtin_ctz(mm);
        r.set(l, (T)p[lval(idx, l)]);
    }
    return r;
}

template <class Bd> struct sub_elem {
    typedef std::conditional_t<std::is_array_v<Bd>, std::remove_extent_t<Bd>, std::remove_pointer_t<Bd>> type;
};

// B[I] as an rvalue (or, for an element that is itself a vary, a class or an array, the lvalue).
template <class B, class I> SW_LV_INLINE decltype(auto) ld(B &&b, const I &i) {
    typedef std::remove_cv_t<std::remove_reference_t<B>> Bd;
    if constexpr (std::is_array_v<Bd> || std::is_pointer_v<Bd>) {
        typedef typename sub_elem<Bd>::type E;
        typedef metal::sw_bare_t<E> EB;
        if constexpr (is_vary<EB>) {
            if constexpr (!is_vary<I>) {
                return (b[i]);
            } else {
                typedef typename EB::elem T;
                vary<T> r;
                for (uint32_t mm = S().mask; mm; mm &= mm - 1) {
                    const int l = __builtin_ctz(mm);
                    r.set(l, b[i.get(l)].get(l));
                }
                return r;
            }
        } else if constexpr (!is_vary<I>) {
            if constexpr (std::is_class_v<EB> || std::is_array_v<EB>) return (b[i]);   // a row: itself
            else return (EB)b[i];
        } else {
            E *p = b;
            return gather<EB>(p, i);
        }
    } else if constexpr (is_vary<Bd> && std::is_pointer_v<typename Bd::elem>) {
        // a varying pointer: each active lane reads through its own
        typedef metal::sw_bare_t<std::remove_pointer_t<typename Bd::elem>> T;
        vary<T> r;
        for (uint32_t mm = S().mask; mm; mm &= mm - 1) {
            const int l = __builtin_ctz(mm);
            r.set(l, (T)b.get(l)[lval(i, l)]);
        }
        return r;
    } else if constexpr (is_vary<Bd>) {
        typedef typename Bd::elem V;
        static_assert(metal::sw_is_vector<V>, "subscript of a varying scalar");
        typedef metal::sw_elem_t<V> T;
        if constexpr (!is_vary<I>) {
            return (b.c((int)i));
        } else {
            vary<T> r;
            for (uint32_t mm = S().mask; mm; mm &= mm - 1) {
                const int l = __builtin_ctz(mm);
                r.p()[l] = b.c((int)i.get(l)).p()[l];
            }
            return r;
        }
    } else if constexpr (metal::sw_is_vector<Bd>) {
        typedef metal::sw_elem_t<Bd> T;
        if constexpr (!is_vary<I>) {
            return (T)b[i];
        } else {
            vary<T> r;
            for (uint32_t mm = S().mask; mm; mm &= mm - 1) {
                const int l = __builtin_ctz(mm);
                r.p()[l] = b[i.get(l)];
            }
            return r;
        }
    } else {
        if constexpr (!is_vary<I>) {
            return (b[i]);
        } else {
            typedef std::decay_t<decltype(b[std::declval<lane_t<I>>()])> T;
            vary<T> r;
            for (uint32_t mm = S().mask; mm; mm &= mm - 1) {
                const int l = __builtin_ctz(mm);
                r.set(l, b[i.get(l)]);
            }
            return r;
        }
    }
}

// B[I] = v for the active lanes.
template <class B, class I, class V> SW_LV_INLINE void st(B &&b, const I &i, const V &v) {
    typedef std::remove_cv_t<std::remove_reference_t<B>> Bd;
    // a store into a temporary (`(*p)[1] = x`: *p read as a value) would be lost
    static_assert(std::is_lvalue_reference_v<B> || std::is_pointer_v<Bd> || vary_of_pointer<Bd>::value,
                  "store into a temporary");
    const uint32_t m = S().mask;
    if (!m) return;
    if constexpr (std::is_array_v<Bd> || std::is_pointer_v<Bd>) {
        typedef typename sub_elem<Bd>::type E;
        typedef metal::sw_bare_t<E> EB;
        if constexpr (is_vary<EB>) {
            if constexpr (!is_vary<I>) {
                b[i] = v;   // masked
            } else {
                typedef typename EB::elem T;
                for (uint32_t mm = m; mm; mm &= mm - 1) {
                    const int l = __builtin_ctz(mm);
                    b[i.get(l)].set(l, conv<T>(lval(v, l)));
                }
            }
        } else if constexpr (!is_vary<I>) {
            if constexpr (!is_vary<V>) b[i] = v;
            else b[i] = v.get(31 - __builtin_clz(m));   // the last writer in lane order
        } else {
            E *p = b;
            if constexpr (!metal::sw_is_vector<EB> && !metal::sw_is_vector<lane_t<I>>) {
                if (m == ~0u) {
                    const uint64_t d = idiff(i.p()[1], i.p()[0]);
                    bool contiguous = d == 1;
                    for (int l = 0; l < W; l++) contiguous &= idiff(i.p()[l], i.p()[0]) == (uint64_t)l;
                    if (contiguous) {
                        auto q = p + i.p()[0];
                        for (int l = 0; l < W; l++) q[l] = lval(v, l);
                        return;
                    }
                }
            }
            for (uint32_t mm = m; mm; mm &= mm - 1) {   // increasing lane order: the highest lane wins
                const int l = __builtin_ctz(mm);
                p[i.get(l)] = lval(v, l);
            }
        }
    } else if constexpr (is_vary<Bd> && std::is_pointer_v<typename Bd::elem>) {
        typedef metal::sw_bare_t<std::remove_pointer_t<typename Bd::elem>> T;
        for (uint32_t mm = m; mm; mm &= mm - 1) {   // increasing lane order: the highest lane wins
            const int l = __builtin_ctz(mm);
            b.get(l)[lval(i, l)] = conv<T>(lval(v, l));
        }
    } else if constexpr (is_vary<Bd>) {
        typedef typename Bd::elem VT;
        static_assert(metal::sw_is_vector<VT>, "subscript of a varying scalar");
        typedef metal::sw_elem_t<VT> T;
        if constexpr (!is_vary<I>) {
            b.c((int)i) = v;   // masked
        } else {
            for (uint32_t mm = m; mm; mm &= mm - 1) {
                const int l = __builtin_ctz(mm);
                b.c((int)i.get(l)).p()[l] = conv<T>(lval(v, l));
            }
        }
    } else {
        static_assert(!is_vary<I> && !is_vary<V>, "varying store into a uniform value");
        b[i] = v;
    }
}

// ---- math: any varying argument -> the metal:: function per lane ----
template <class... A> constexpr bool any_vary = (is_vary<A> || ...);
template <class... A> constexpr bool all_operands = (is_operand<A> && ...);
#define SW_LV_MATH1(NAME)                                                                                          \
    template <class X, class R = std::decay_t<decltype(::metal::NAME(std::declval<X>()))>>                         \
    inline vary<R> NAME(const vary<X> &a) {                                                                        \
        return make_lanes<R>([&](int l) { return ::metal::NAME(a.get(l)); });                                      \
    }
// Two and three arguments: one overload per pattern of varying arguments, each more
// specialised than metal's unconstrained templates (select) in partial ordering.
#define SW_LV_MATH2_BODY(NAME)                                                                                     \
    {                                                                                                              \
        return make_lanes<R>([&](int l) { return ::metal::NAME(lval(a, l), lval(b, l)); });                        \
    }
#define SW_LV_R2(NAME) class R = std::decay_t<decltype(::metal::NAME(std::declval<lane_t<A>>(), std::declval<lane_t<B>>()))>
#define SW_LV_MATH2(NAME)                                                                                          \
    template <class X, class B, std::enable_if_t<!is_vary<B> && is_lane_value<B>, int> = 0, class A = vary<X>,    \
              SW_LV_R2(NAME)>                                                                                      \
    inline vary<R> NAME(const vary<X> &a, const B &b) SW_LV_MATH2_BODY(NAME)                                       \
    template <class A, class Y, std::enable_if_t<!is_vary<A> && is_lane_value<A>, int> = 0, class B = vary<Y>,    \
              SW_LV_R2(NAME)>                                                                                      \
    inline vary<R> NAME(const A &a, const vary<Y> &b) SW_LV_MATH2_BODY(NAME)                                       \
    template <class X, class Y, class A = vary<X>, class B = vary<Y>, SW_LV_R2(NAME)>                              \
    inline vary<R> NAME(const vary<X> &a, const vary<Y> &b) SW_LV_MATH2_BODY(NAME)
#define SW_LV_R3(NAME)                                                                                             \
    class R = std::decay_t<decltype(::metal::NAME(std::declval<lane_t<A>>(), std::declval<lane_t<B>>(),            \
                                                  std::declval<lane_t<C>>()))>
#define SW_LV_MATH3_BODY(NAME)                                                                                     \
    {                                                                                                              \
        return make_lanes<R>([&](int l) { return ::metal::NAME(lval(a, l), lval(b, l), lval(c, l)); });            \
    }
#define SW_LV_U(T) std::enable_if_t<!is_vary<T> && is_lane_value<T>, int> = 0
#define SW_LV_MATH3(NAME)                                                                                          \
    template <class X, class B, class C, SW_LV_U(B), SW_LV_U(C), class A = vary<X>, SW_LV_R3(NAME)>                \
    inline vary<R> NAME(const vary<X> &a, const B &b, const C &c) SW_LV_MATH3_BODY(NAME)                           \
    template <class A, class Y, class C, SW_LV_U(A), SW_LV_U(C), class B = vary<Y>, SW_LV_R3(NAME)>                \
    inline vary<R> NAME(const A &a, const vary<Y> &b, const C &c) SW_LV_MATH3_BODY(NAME)                           \
    template <class A, class B, class Z, SW_LV_U(A), SW_LV_U(B), class C = vary<Z>, SW_LV_R3(NAME)>                \
    inline vary<R> NAME(const A &a, const B &b, const vary<Z> &c) SW_LV_MATH3_BODY(NAME)                           \
    template <class X, class Y, class C, SW_LV_U(C), class A = vary<X>, class B = vary<Y>, SW_LV_R3(NAME)>         \
    inline vary<R> NAME(const vary<X> &a, const vary<Y> &b, const C &c) SW_LV_MATH3_BODY(NAME)                     \
    template <class X, class B, class Z, SW_LV_U(B), class A = vary<X>, class C = vary<Z>, SW_LV_R3(NAME)>         \
    inline vary<R> NAME(const vary<X> &a, const B &b, const vary<Z> &c) SW_LV_MATH3_BODY(NAME)                     \
    template <class A, class Y, class Z, SW_LV_U(A), class B = vary<Y>, class C = vary<Z>, SW_LV_R3(NAME)>         \
    inline vary<R> NAME(const A &a, const vary<Y> &b, const vary<Z> &c) SW_LV_MATH3_BODY(NAME)                     \
    template <class X, class Y, class Z, class A = vary<X>, class B = vary<Y>, class C = vary<Z>, SW_LV_R3(NAME)>  \
    inline vary<R> NAME(const vary<X> &a, const vary<Y> &b, const vary<Z> &c) SW_LV_MATH3_BODY(NAME)

#define SW_LV_MATH1_NAMES(X)                                                                                       \
    X(exp) X(exp2) X(exp10) X(log) X(log2) X(log10) X(sqrt) X(rsqrt) X(sin) X(cos) X(tan) X(asin) X(acos)       \
    X(atan) X(sinh) X(cosh) X(tanh) X(asinh) X(acosh) X(atanh) X(sinpi) X(cospi) X(tanpi) X(floor) X(ceil)      \
    X(round) X(rint) X(trunc) X(fabs) X(fract) X(saturate) X(sign) X(abs) X(popcount) X(clz) X(ctz)              \
    X(reverse_bits) X(isnan) X(isinf) X(isfinite) X(signbit) X(length) X(length_squared) X(normalize)
#define SW_LV_MATH2_NAMES(X)                                                                                       \
    X(pow) X(powr) X(atan2) X(fmod) X(fmin) X(fmax) X(copysign) X(step) X(fdim) X(divide) X(min) X(max)          \
    X(ldexp) X(nextafter) X(mulhi) X(absdiff) X(dot) X(distance) X(cross)
#define SW_LV_MATH3_NAMES(X)                                                                                       \
    X(fma) X(mix) X(smoothstep) X(clamp) X(select) X(fmin3) X(fmax3) X(fmedian3) X(min3) X(max3) X(median3)      \
    X(madhi) X(extract_bits)
SW_LV_MATH1_NAMES(SW_LV_MATH1)
SW_LV_MATH2_NAMES(SW_LV_MATH2)
SW_LV_MATH3_NAMES(SW_LV_MATH3)
SW_LV_MATH1(all)
SW_LV_MATH1(any)

template <class To, class From> inline vary<To> as_type(const vary<From> &x) {
    static_assert(sizeof(To) == sizeof(From), "as_type needs types of the same size");
    return make_lanes<To>([&](int l) { return ::metal::as_type<To>(x.get(l)); });
}

// ---- simd-group functions over the active lanes (sw_sync.h's results, bit for bit) ----
// Fold of the active lanes from the lowest, as sw_simd_fold: the first value itself,
// then acc = op(acc, next).  No lane: T().
template <class X, class Op> SW_LV_INLINE auto fold_active(const X &x, uint32_t m, Op op) {
    typedef lane_t<X> T;
    if constexpr (!is_vary<X>) {
        // every lane holds x: the same sequence of operations on copies
        T acc = T();
        bool any = false;
        for (uint32_t mm = m; mm; mm &= mm - 1) {
            acc = any ? op(acc, (T)x) : (T)x;
            any = true;
        }
        return acc;
    } else {
        if (m == ~0u) {
            if constexpr (X::is_vec) {
                // elements of the register, not of a copy in memory
                const typename X::store_t xv = x.v;
                T acc = xv[0];
                for (int l = 1; l < W; l++) acc = op(acc, xv[l]);
                return acc;
            } else {
                T acc = x.get(0);
                for (int l = 1; l < W; l++) acc = op(acc, x.get(l));
                return acc;
            }
        }
        T acc = T();
        bool any = false;
        for (uint32_t mm = m; mm; mm &= mm - 1) {
            const T v = x.get(__builtin_ctz(mm));
            acc = any ? op(acc, v) : v;
            any = true;
        }
        return acc;
    }
}
// Two overloads each: a vary argument (more specialised than sw_sync.h's template,
// which must never be chosen here), and a uniform one for qualified calls.
// COMP: a vector element's fold is its components' folds (+ and * are component-wise),
// each over a register.
#define SW_LV_REDUCE(NAME, OP, COMP)                                                                               \
    template <class T> SW_LV_INLINE T NAME(const vary<T> &x, int line = __builtin_LINE()) {                        \
        (void)line;                                                                                                \
        if constexpr (COMP && metal::sw_is_vector<T>) {                                                            \
            if constexpr (vary<T>::comp_vec) {                                                                     \
                typedef metal::sw_elem_t<T> E;                                                                     \
                const uint32_t m = S().mask;                                                                       \
                T r;                                                                                               \
                for (int k = 0; k < metal::sw_vec_size<T>; k++)                                                    \
                    r[k] = fold_active(x.c(k), m, [](E a, E b) { return OP; });                                    \
                return r;                                                                                          \
            } else {                                                                                               \
                return fold_active(x, S().mask, [](T a, T b) { return OP; });                                      \
            }                                                                                                      \
        } else {                                                                                                   \
            return fold_active(x, S().mask, [](T a, T b) { return OP; });                                          \
        }                                                                                                          \
    }                                                                                                              \
    template <class X, std::enable_if_t<!is_vary<X> && is_lane_value<X>, int> = 0>                                 \
    inline lane_t<X> NAME(const X &x, int line = __builtin_LINE()) {                                               \
        (void)line;                                                                                                \
        typedef lane_t<X> T;                                                                                       \
        return fold_active(x, S().mask, [](T a, T b) { return OP; });                                              \
    }
SW_LV_REDUCE(simd_sum, a + b, 1)
SW_LV_REDUCE(simd_product, a * b, 1)
SW_LV_REDUCE(simd_max, ::metal::max(a, b), 0)
SW_LV_REDUCE(simd_min, ::metal::min(a, b), 0)
SW_LV_REDUCE(simd_and, ::metal::sw_bitwise(a, b, [](auto x, auto y) { return x & y; }), 0)
SW_LV_REDUCE(simd_or, ::metal::sw_bitwise(a, b, [](auto x, auto y) { return x | y; }), 0)
SW_LV_REDUCE(simd_xor, ::metal::sw_bitwise(a, b, [](auto x, auto y) { return x ^ y; }), 0)
#undef SW_LV_REDUCE

// Lane l: the fold of the active lanes below l (and l itself when inclusive), the
// identity when there is none.  A uniform x is a vary of copies here.
#define SW_LV_PREFIX(NAME, OP, INCLUSIVE, IDENTITY)                                                                \
    template <class T> inline vary<T> NAME(const vary<T> &x, int line = __builtin_LINE()) {                        \
        return sw_prefix_##NAME(x, line);                                                                          \
    }                                                                                                              \
    template <class X, std::enable_if_t<!is_vary<X> && is_lane_value<X>, int> = 0>                                 \
    inline vary<lane_t<X>> NAME(const X &x, int line = __builtin_LINE()) {                                         \
        return sw_prefix_##NAME(x, line);                                                                          \
    }
#define SW_LV_PREFIX_IMPL(NAME, OP, INCLUSIVE, IDENTITY)                                                           \
    template <class X> inline vary<lane_t<X>> sw_prefix_##NAME(const X &x, int line) {                             \
        (void)line;                                                                                                \
        typedef lane_t<X> T;                                                                                       \
        const uint32_t m = S().mask;                                                                               \
        vary<T> r(noinit);                                                                                         \
        T acc = T();                                                                                               \
        bool any = false;                                                                                          \
        for (int l = 0; l < W; l++) {                                                                              \
            const T v = lval(x, l);                                                                                \
            if (!(INCLUSIVE)) r.set(l, any ? acc : T(IDENTITY));                                                   \
            if (m >> l & 1u) {                                                                                     \
                acc = any ? (T)(OP(acc, v)) : v;                                                                   \
                any = true;                                                                                        \
            }                                                                                                      \
            if (INCLUSIVE) r.set(l, any ? acc : T(IDENTITY));                                                      \
        }                                                                                                          \
        return r;                                                                                                  \
    }
#define SW_LV_ADD(a, b) ((a) + (b))
#define SW_LV_MUL(a, b) ((a) * (b))
SW_LV_PREFIX_IMPL(simd_prefix_inclusive_sum, SW_LV_ADD, 1, 0)
SW_LV_PREFIX_IMPL(simd_prefix_exclusive_sum, SW_LV_ADD, 0, 0)
SW_LV_PREFIX_IMPL(simd_prefix_inclusive_product, SW_LV_MUL, 1, 1)
SW_LV_PREFIX_IMPL(simd_prefix_exclusive_product, SW_LV_MUL, 0, 1)
SW_LV_PREFIX(simd_prefix_inclusive_sum, SW_LV_ADD, 1, 0)
SW_LV_PREFIX(simd_prefix_exclusive_sum, SW_LV_ADD, 0, 0)
SW_LV_PREFIX(simd_prefix_inclusive_product, SW_LV_MUL, 1, 1)
SW_LV_PREFIX(simd_prefix_exclusive_product, SW_LV_MUL, 0, 1)
#undef SW_LV_PREFIX
#undef SW_LV_PREFIX_IMPL
#undef SW_LV_ADD
#undef SW_LV_MUL

// Lane l reads lane src(l) if that lane is active, else keeps its own value
// (sw_simd_read).  A uniform x reads the same value everywhere: x itself.
template <class T, class F> inline vary<T> shuffle_by(const vary<T> &x, F src) {
    const uint32_t m = S().mask;
    return make_lanes<T>([&](int l) {
        const uint s = src((uint)l);
        return x.get((s < 32 && (m >> s & 1u)) ? (int)s : l);
    });
}
#define SW_LV_SHUFFLE(NAME, SRC)                                                                                   \
    template <class T, class I, std::enable_if_t<is_operand<I>, int> = 0>                                          \
    inline vary<T> NAME(const vary<T> &x, const I &arg, int line = __builtin_LINE()) {                             \
        (void)line;                                                                                                \
        return shuffle_by(x, [&](uint lane) {                                                                      \
            const uint d = (uint)lval(arg, (int)lane);                                                             \
            (void)d;                                                                                               \
            return (uint)(SRC);                                                                                    \
        });                                                                                                        \
    }                                                                                                              \
    template <class T, class I, std::enable_if_t<!is_vary<T> && is_lane_value<T> && is_operand<I>, int> = 0>       \
    inline metal::sw_bare_t<T> NAME(const T &x, const I &, int line = __builtin_LINE()) {                          \
        (void)line;                                                                                                \
        return x;                                                                                                  \
    }
SW_LV_SHUFFLE(simd_shuffle, d)
SW_LV_SHUFFLE(simd_broadcast, d)
SW_LV_SHUFFLE(simd_shuffle_xor, (lane ^ d) & 31u)
SW_LV_SHUFFLE(simd_shuffle_down, lane + d < 32 ? lane + d : lane)
SW_LV_SHUFFLE(simd_shuffle_up, lane >= d ? lane - d : lane)
SW_LV_SHUFFLE(simd_shuffle_rotate_down, (lane + d) & 31u)
SW_LV_SHUFFLE(simd_shuffle_rotate_up, (lane - d) & 31u)
#undef SW_LV_SHUFFLE
template <class T> inline T simd_broadcast_first(const vary<T> &x, int line = __builtin_LINE()) {
    (void)line;
    const uint32_t m = S().mask;
    return x.get(m ? __builtin_ctz(m) : 0);
}
template <class X, std::enable_if_t<!is_vary<X> && is_lane_value<X>, int> = 0>
inline lane_t<X> simd_broadcast_first(const X &x, int line = __builtin_LINE()) {
    (void)line;
    return lval(x, 0);
}
// sw_simd_fill: segments of `modulo` lanes; data from lane i + delta within the
// segment, filling_data from the lane it wraps to; an inactive source: own values.
template <class D, class F, class DL, class M>
inline auto sw_fill(const D &data, const F &fill, const DL &delta, const M &modulo, bool up) {
    typedef lane_t<D> T;
    const uint32_t m = S().mask;
    return make_lanes<T>([&](int lane) {
        const int dd = up ? -(int)(uint)lval(delta, lane) : (int)(uint)lval(delta, lane);
        const uint mo0 = (uint)lval(modulo, lane);
        const uint mo = mo0 == 0 || mo0 > 32 ? 32u : mo0;
        const uint seg = (uint)lane / mo * mo;
        const int i = (int)((uint)lane % mo) + dd;
        const bool wrapped = i < 0 || i >= (int)mo;
        uint src = seg + (uint)((i % (int)mo + (int)mo) % (int)mo);
        if (src >= 32 || !(m >> src & 1u)) src = (uint)lane;
        return wrapped ? (T)lval(fill, (int)src) : (T)lval(data, (int)src);
    });
}
// Patterns of varying data/filling_data, each more specialised than sw_sync.h's
// (T data, T filling_data, ...) template.
#define SW_LV_FILL(NAME, UP)                                                                                       \
    template <class T, class DL, class M, std::enable_if_t<is_operand<DL> && is_operand<M>, int> = 0>              \
    inline vary<T> NAME(const vary<T> &data, const vary<T> &fill, const DL &delta, const M &modulo,                \
                        int line = __builtin_LINE()) {                                                             \
        return sw_fill(data, fill, delta, modulo, UP);                                                             \
    }                                                                                                              \
    template <class T, class DL, std::enable_if_t<is_operand<DL>, int> = 0>                                        \
    inline vary<T> NAME(const vary<T> &data, const vary<T> &fill, const DL &delta, int line = __builtin_LINE()) {  \
        return sw_fill(data, fill, delta, 32u, UP);                                                                \
    }                                                                                                              \
    template <class T, class F, class DL, class M,                                                                 \
              std::enable_if_t<!is_vary<F> && is_lane_value<F> && is_operand<DL> && is_operand<M>, int> = 0>       \
    inline vary<T> NAME(const vary<T> &data, const F &fill, const DL &delta, const M &modulo,                      \
                        int line = __builtin_LINE()) {                                                             \
        return sw_fill(data, fill, delta, modulo, UP);                                                             \
    }                                                                                                              \
    template <class T, class F, class DL, std::enable_if_t<!is_vary<F> && is_lane_value<F> && is_operand<DL>, int> = 0> \
    inline vary<T> NAME(const vary<T> &data, const F &fill, const DL &delta, int line = __builtin_LINE()) {        \
        return sw_fill(data, fill, delta, 32u, UP);                                                                \
    }                                                                                                              \
    template <class D, class T, class DL, class M,                                                                 \
              std::enable_if_t<!is_vary<D> && is_lane_value<D> && is_operand<DL> && is_operand<M>, int> = 0>       \
    inline vary<T> NAME(const D &data, const vary<T> &fill, const DL &delta, const M &modulo,                      \
                        int line = __builtin_LINE()) {                                                             \
        return sw_fill(data, fill, delta, modulo, UP);                                                             \
    }                                                                                                              \
    template <class D, class T, class DL, std::enable_if_t<!is_vary<D> && is_lane_value<D> && is_operand<DL>, int> = 0> \
    inline vary<T> NAME(const D &data, const vary<T> &fill, const DL &delta, int line = __builtin_LINE()) {        \
        return sw_fill(data, fill, delta, 32u, UP);                                                                \
    }
SW_LV_FILL(simd_shuffle_and_fill_down, false)
SW_LV_FILL(simd_shuffle_and_fill_up, true)
#undef SW_LV_FILL

// Votes.  Uniform predicates too: metal's simd_all(bool) etc. are non-templates the
// rewriter must not reach (they synchronise fibers), so call these qualified.
template <class P, std::enable_if_t<is_operand<P>, int> = 0> inline bool simd_all(const P &p, int line = __builtin_LINE()) {
    (void)line;
    const uint32_t m = S().mask;
    return (bits(p) & m) == m;
}
template <class P, std::enable_if_t<is_operand<P>, int> = 0> inline bool simd_any(const P &p, int line = __builtin_LINE()) {
    (void)line;
    return (bits(p) & S().mask) != 0;
}
template <class P, std::enable_if_t<is_operand<P>, int> = 0>
inline metal::simd_vote simd_ballot(const P &p, int line = __builtin_LINE()) {
    (void)line;
    return metal::simd_vote(bits(p) & S().mask);
}
inline metal::simd_vote simd_active_threads_mask(int line = __builtin_LINE()) {
    (void)line;
    return metal::simd_vote(S().mask);
}
inline vary<bool> simd_is_first(int line = __builtin_LINE()) {
    (void)line;
    const uint32_t m = S().mask;
    const int f = m ? __builtin_ctz(m) : -1;
    return make_lanes<bool>([&](int l) { return l == f; });
}
// Nothing to wait for: the simdgroup runs as one.
inline void simdgroup_barrier(metal::mem_flags, int line = __builtin_LINE()) { (void)line; }
} // namespace lv
} // namespace sw

// A threadgroup barrier suspends this simdgroup's fiber (exec.c init_lanes_fibers)
// while the others run on the same worker thread, and each of them sets the
// worker's one lane state (invoke: a partial last simdgroup's live mask; lanes
// retired by returns).  The state is the simdgroup's: kept here across the switch.
namespace metal {
inline void sw_lv_threadgroup_barrier(unsigned flags, int line) {
    const ::sw::lv::lane_state saved = ::sw::lv::S();
    sw_rt_threadgroup_barrier(flags, line);
    ::sw::lv::S() = saved;
}
} // namespace metal

namespace sw {
namespace lv {

// ---- the entry ----
template <int KIND, int INDEX> struct binder {};
template <int KIND, int INDEX> inline binder<KIND, INDEX> bind() { return {}; }
struct ctx {
    const sw_thread_args *args;
    const sw_ids *ids;
    const uint32_t *base;
    uint32_t sg;
};
template <int ATTR> constexpr bool attr_varies =
    ATTR == SW_ATTR_THREAD_POSITION_IN_GRID || ATTR == SW_ATTR_THREAD_POSITION_IN_THREADGROUP ||
    ATTR == SW_ATTR_THREAD_INDEX_IN_THREADGROUP || ATTR == SW_ATTR_THREAD_INDEX_IN_SIMDGROUP ||
    ATTR == SW_ATTR_THREAD_INDEX_IN_QUADGROUP || ATTR == SW_ATTR_QUADGROUP_INDEX_IN_THREADGROUP;

// Up to 3 components of an id as the parameter type V (sw::id_arg_t::get's rule).
template <class V> inline V id_value(const uint32_t *s, int ncomp) {
    if constexpr (metal::sw_is_vector<V>) {
        V v = 0;
        for (int i = 0; i < metal::sw_vec_size<V> && i < ncomp; i++) v[i] = (metal::sw_elem_t<V>)s[i];
        return v;
    } else {
        return (V)s[0];
    }
}
template <class A, int K, int I> inline A arg(const ctx &c, binder<K, I>) {
    typedef std::remove_cv_t<std::remove_reference_t<A>> V;
    if constexpr (K == SW_BIND_BUFFER) {
        void *p = c.args->buffers[I];
        if constexpr (std::is_pointer_v<A>) return (A)p;
        else if constexpr (std::is_reference_v<A>) return *(std::remove_reference_t<A> *)p;
        else return *(const A *)p;
    } else if constexpr (K == SW_BIND_THREADGROUP) {
        void *p = c.args->tg_params[I];
        if constexpr (std::is_pointer_v<A>) return (A)p;
        else return *(std::remove_reference_t<A> *)p;
    } else {
        static_assert(K == SW_BIND_ATTR, "unknown binding kind");
        const sw_ids *ids = c.ids;
        if constexpr (attr_varies<I>) {
            static_assert(is_vary<V>, "a per-thread id bound to a uniform parameter");
            typedef typename V::elem T;
            const uint32_t ax = ids->threads_per_threadgroup[0], ay = ids->threads_per_threadgroup[1];
            const bool one_d = ay == 1 && ids->threads_per_threadgroup[2] == 1;
            return make_lanes<T>([&](int l) {
                const uint32_t i = c.sg * W + (uint32_t)l;
                const uint32_t loc[3] = {one_d ? i : i % ax, one_d ? 0 : (i / ax) % ay, one_d ? 0 : i / (ax * ay)};
                uint32_t one;
                switch (I) {
                case SW_ATTR_THREAD_POSITION_IN_GRID: {
                    const uint32_t g[3] = {c.base[0] + loc[0], c.base[1] + loc[1], c.base[2] + loc[2]};
                    return id_value<T>(g, 3);
                }
                case SW_ATTR_THREAD_POSITION_IN_THREADGROUP: return id_value<T>(loc, 3);
                case SW_ATTR_THREAD_INDEX_IN_THREADGROUP: one = i; break;
                case SW_ATTR_THREAD_INDEX_IN_SIMDGROUP: one = (uint32_t)l; break;
                case SW_ATTR_THREAD_INDEX_IN_QUADGROUP: one = (uint32_t)l % 4; break;
                default: one = i / 4; break;   // quadgroup_index_in_threadgroup
                }
                return id_value<T>(&one, 1);
            });
        } else {
            uint32_t one;
            const uint32_t *s = &one;
            int n = 1;
            switch (I) {
            case SW_ATTR_THREADGROUP_POSITION_IN_GRID: s = ids->threadgroup_position_in_grid; n = 3; break;
            case SW_ATTR_THREADS_PER_THREADGROUP: s = ids->threads_per_threadgroup; n = 3; break;
            case SW_ATTR_THREADGROUPS_PER_GRID: s = ids->threadgroups_per_grid; n = 3; break;
            case SW_ATTR_THREADS_PER_GRID: s = ids->threads_per_grid; n = 3; break;
            case SW_ATTR_SIMDGROUP_INDEX_IN_THREADGROUP: one = c.sg; break;
            case SW_ATTR_SIMDGROUPS_PER_THREADGROUP: one = ids->simdgroups_per_threadgroup; break;
            case SW_ATTR_QUADGROUPS_PER_THREADGROUP:
                one = (ids->threads_per_threadgroup[0] * ids->threads_per_threadgroup[1] *
                           ids->threads_per_threadgroup[2] + 3) / 4;
                break;
            default: one = ids->threads_per_simdgroup; break;   // threads_per_simdgroup, thread_execution_width
            }
            if constexpr (is_vary<V>) return V(id_value<typename V::elem>(s, n));
            else return id_value<V>(s, n);
        }
    }
}

// Runs the kernel once for simdgroup sg of the threadgroup (its lanes l < n exist).
template <class... A, class... P>
inline void invoke(const sw_thread_args *args, const uint32_t *base, uint32_t sg, uint32_t n, void (*f)(A...),
                   P... p) {
    static_assert(sizeof...(A) == sizeof...(P), "kernel parameter count differs from its bindings");
    const ctx c = {args, args->ids, base, sg};
    lane_state &s = S();
    s.live = s.mask = n >= (uint32_t)W ? ~0u : (1u << n) - 1u;
    s.ret = s.brk = s.cnt = 0;
    f(arg<A>(c, p)...);
}

} // namespace lv
} // namespace sw

// Qualified calls (metal::exp, fast::exp, precise::exp) reach the varying overloads
// too; unqualified ones find them by argument-dependent lookup.
namespace metal {
#define SW_LV_USING(NAME) using ::sw::lv::NAME;
SW_LV_MATH1_NAMES(SW_LV_USING)
SW_LV_MATH2_NAMES(SW_LV_USING)
SW_LV_MATH3_NAMES(SW_LV_USING)
using ::sw::lv::as_type;
namespace fast {
SW_LV_MATH1_NAMES(SW_LV_USING)
SW_LV_MATH2_NAMES(SW_LV_USING)
SW_LV_MATH3_NAMES(SW_LV_USING)
}
namespace precise {
SW_LV_MATH1_NAMES(SW_LV_USING)
SW_LV_MATH2_NAMES(SW_LV_USING)
SW_LV_MATH3_NAMES(SW_LV_USING)
}
#undef SW_LV_USING

// Uniform arguments to simd functions called unqualified: non-template overloads
// (preferred to sw_sync.h's templates) that compute over the mask instead of
// synchronising fibers.  Types not listed here still reach the fiber versions: the
// rewriter should call ::sw::lv::simd_* where it can.
#define SW_LV_UNIFORM_SIMD(T)                                                                                      \
    inline T simd_sum(T x, int line = __builtin_LINE()) { return ::sw::lv::simd_sum(x, line); }                   \
    inline T simd_product(T x, int line = __builtin_LINE()) { return ::sw::lv::simd_product(x, line); }           \
    inline T simd_max(T x, int line = __builtin_LINE()) { return ::sw::lv::simd_max(x, line); }                   \
    inline T simd_min(T x, int line = __builtin_LINE()) { return ::sw::lv::simd_min(x, line); }                   \
    inline T simd_broadcast_first(T x, int line = __builtin_LINE()) { return x; }                                 \
    inline ::sw::lv::vary<T> simd_prefix_inclusive_sum(T x, int line = __builtin_LINE()) {                        \
        return ::sw::lv::simd_prefix_inclusive_sum(x, line);                                                       \
    }                                                                                                              \
    inline ::sw::lv::vary<T> simd_prefix_exclusive_sum(T x, int line = __builtin_LINE()) {                        \
        return ::sw::lv::simd_prefix_exclusive_sum(x, line);                                                       \
    }                                                                                                              \
    inline ::sw::lv::vary<T> simd_prefix_inclusive_product(T x, int line = __builtin_LINE()) {                    \
        return ::sw::lv::simd_prefix_inclusive_product(x, line);                                                   \
    }                                                                                                              \
    inline ::sw::lv::vary<T> simd_prefix_exclusive_product(T x, int line = __builtin_LINE()) {                    \
        return ::sw::lv::simd_prefix_exclusive_product(x, line);                                                   \
    }                                                                                                              \
    template <class I> inline T simd_shuffle(T x, I, int line = __builtin_LINE()) { return x; }                   \
    template <class I> inline T simd_broadcast(T x, I, int line = __builtin_LINE()) { return x; }                 \
    template <class I> inline T simd_shuffle_xor(T x, I, int line = __builtin_LINE()) { return x; }               \
    template <class I> inline T simd_shuffle_down(T x, I, int line = __builtin_LINE()) { return x; }              \
    template <class I> inline T simd_shuffle_up(T x, I, int line = __builtin_LINE()) { return x; }                \
    template <class I> inline T simd_shuffle_rotate_down(T x, I, int line = __builtin_LINE()) { return x; }       \
    template <class I> inline T simd_shuffle_rotate_up(T x, I, int line = __builtin_LINE()) { return x; }
#define SW_LV_UNIFORM_SIMD_BITS(T)                                                                                 \
    inline T simd_and(T x, int line = __builtin_LINE()) { return ::sw::lv::simd_and(x, line); }                   \
    inline T simd_or(T x, int line = __builtin_LINE()) { return ::sw::lv::simd_or(x, line); }                     \
    inline T simd_xor(T x, int line = __builtin_LINE()) { return ::sw::lv::simd_xor(x, line); }
#define SW_LV_UNIFORM_SIMD_V(T) SW_LV_UNIFORM_SIMD(T) SW_LV_UNIFORM_SIMD(T##2) SW_LV_UNIFORM_SIMD(T##3) SW_LV_UNIFORM_SIMD(T##4)
SW_LV_UNIFORM_SIMD_V(float)
SW_LV_UNIFORM_SIMD_V(half)
SW_LV_UNIFORM_SIMD_V(bfloat)
SW_LV_UNIFORM_SIMD_V(int)
SW_LV_UNIFORM_SIMD_V(uint)
SW_LV_UNIFORM_SIMD_V(short)
SW_LV_UNIFORM_SIMD_V(ushort)
SW_LV_UNIFORM_SIMD_V(char)
SW_LV_UNIFORM_SIMD_V(uchar)
SW_LV_UNIFORM_SIMD_V(long)
SW_LV_UNIFORM_SIMD_V(ulong)
SW_LV_UNIFORM_SIMD(double)
SW_LV_UNIFORM_SIMD_BITS(float)
SW_LV_UNIFORM_SIMD_BITS(half)
SW_LV_UNIFORM_SIMD_BITS(bfloat)
SW_LV_UNIFORM_SIMD_BITS(int)
SW_LV_UNIFORM_SIMD_BITS(uint)
SW_LV_UNIFORM_SIMD_BITS(short)
SW_LV_UNIFORM_SIMD_BITS(ushort)
SW_LV_UNIFORM_SIMD_BITS(char)
SW_LV_UNIFORM_SIMD_BITS(uchar)
SW_LV_UNIFORM_SIMD_BITS(long)
SW_LV_UNIFORM_SIMD_BITS(ulong)
#undef SW_LV_UNIFORM_SIMD
#undef SW_LV_UNIFORM_SIMD_BITS
#undef SW_LV_UNIFORM_SIMD_V
} // namespace metal

// ---- simdgroup_matrix<T, 8, 8> ----
// The simdgroup runs as one, so a matrix is one uniform 8x8 value (row-major), and
// a product is the plain 8x8x8 loop the fiber build's deferred log ends in
// (sw_mma_product, same order, same roundings: same bits), with no lane
// bookkeeping.  thread_elements() hands out the lanes' view in Apple's layout
// (sw_mat_row/sw_mat_col): a vary<vec<T, 2>> kept in the matrix, which from then
// on is the value (the kernel may write through the reference at any time), so
// every later operation converts between the two views.  Operations are
// simdgroup-wide: called with some lanes inactive (divergent control flow,
// undefined in MSL) they are reported as a fault of the dispatch.
namespace metal {
inline void sw_lv_matrix_uniform(int line) {
    if (::sw::lv::S().mask != ::sw::lv::S().live)
        sw_rt_fault("simdgroup matrix operation in divergent control flow (some lanes of the simdgroup inactive)",
                    line);
}
template <class T, int Cols, int Rows> struct simdgroup_matrix {
    static_assert(Cols == 8 && Rows == 8, "not MSL: simdgroup matrices are 8x8 only (spec sections 2.4 and 6.7)");
    mutable T sw_m[8][8];                     // the value, unless sw_pinned
    ::sw::lv::vary<vec<T, 2>> sw_el;          // the lanes' view, once thread_elements() was called
    bool sw_pinned = false;

    simdgroup_matrix() = default;
    explicit simdgroup_matrix(T diag) {
        for (int r = 0; r < 8; r++)
            for (int c = 0; c < 8; c++) sw_m[r][c] = r == c ? diag : T(0);
    }
    simdgroup_matrix(const simdgroup_matrix &o) : sw_pinned(false) { __builtin_memcpy(sw_m, o.sw_rows(), sizeof sw_m); }
    simdgroup_matrix &operator=(const simdgroup_matrix &o) {
        if (this != &o) {
            __builtin_memcpy(sw_m, o.sw_rows(), sizeof sw_m);
            sw_changed();
        }
        return *this;
    }

    // The value, row-major (from the lanes' view when that is the value).
    const T (&sw_rows() const)[8][8] {
        if (sw_pinned)
            for (uint l = 0; l < SW_SIMD_WIDTH; l++) {
                T *x = &sw_m[0][0] + sw_mat_pos.of[l];
                x[0] = sw_el.x.get((int)l);
                x[1] = sw_el.y.get((int)l);
            }
        return sw_m;
    }
    // sw_m was written: the lanes' view follows.
    void sw_changed() {
        if (sw_pinned)
            for (uint l = 0; l < SW_SIMD_WIDTH; l++) {
                const T *x = &sw_m[0][0] + sw_mat_pos.of[l];
                sw_el.x.set((int)l, x[0]);
                sw_el.y.set((int)l, x[1]);
            }
    }
    ::sw::lv::vary<vec<T, 2>> &thread_elements(int line = __builtin_LINE()) {
        (void)line;
        if (!sw_pinned) {
            sw_pinned = true;
            sw_changed();
        }
        return sw_el;
    }
};
typedef simdgroup_matrix<float, 8, 8> simdgroup_float8x8;
typedef simdgroup_matrix<half, 8, 8> simdgroup_half8x8;
typedef simdgroup_matrix<bfloat, 8, 8> simdgroup_bfloat8x8;

template <class T, int C, int R = C> inline simdgroup_matrix<T, C, R> make_filled_simdgroup_matrix(T value) {
    simdgroup_matrix<T, C, R> m;
    for (int r = 0; r < 8; r++)
        for (int c = 0; c < 8; c++) m.sw_m[r][c] = value;
    return m;
}
// origin is (column, row); with transpose element (r, c) comes from src[c * stride + r].
// The elements a load or store moves: all 64, or in a partial simdgroup (a
// threadgroup size not a multiple of 32) those of the lanes that exist, as on fibers,
// where each lane moves its own two (the others' addresses may be out of bounds).
// A product there reads elements no lane holds (zeros here, whatever the product
// log held on fibers): not matched, a partial simdgroup's product is undefined.
template <class F> inline void sw_lv_matrix_each(F f) {
    const uint32_t live = ::sw::lv::S().live;
    if (live == ~0u) {
        for (uint r = 0; r < 8; r++)
            for (uint c = 0; c < 8; c++) f(r, c);
        return;
    }
    for (uint32_t m = live; m; m &= m - 1) {
        const uint pos = sw_mat_pos.of[__builtin_ctz(m)];
        f(pos / 8, pos % 8);
        f(pos / 8, pos % 8 + 1);
    }
}
template <class T, class S>
SW_LV_INLINE void simdgroup_load(simdgroup_matrix<T, 8, 8> &d, const S *src, ulong elements_per_row = 8,
                           ulong2 origin = ulong2(0), bool transpose = false, int line = __builtin_LINE()) {
    sw_lv_matrix_uniform(line);
    if (::sw::lv::S().live == ~0u) {
        // the whole simdgroup: rows (or columns) of 8 in a loop the compiler vectorises
        const S *base = src + origin.y * elements_per_row + origin.x;
        for (ulong r = 0; r < 8; r++)
            for (ulong c = 0; c < 8; c++)
                d.sw_m[r][c] = static_cast<T>(transpose ? base[c * elements_per_row + r]
                                                        : base[r * elements_per_row + c]);
        d.sw_changed();
        return;
    }
    for (int r = 0; r < 8; r++)
            for (int c = 0; c < 8; c++) d.sw_m[r][c] = T(0);   // elements no lane holds
    sw_lv_matrix_each([&](ulong r, ulong c) {
        const S *p = transpose ? src + (origin.y + c) * elements_per_row + origin.x + r
                               : src + (origin.y + r) * elements_per_row + origin.x + c;
        d.sw_m[r][c] = static_cast<T>(*p);
    });
    d.sw_changed();
}
template <class T, class S>
inline void simdgroup_store(const simdgroup_matrix<T, 8, 8> &m, S *dst, ulong elements_per_row = 8,
                            ulong2 origin = ulong2(0), bool transpose = false, int line = __builtin_LINE()) {
    sw_lv_matrix_uniform(line);
    const T (&v)[8][8] = m.sw_rows();
    sw_lv_matrix_each([&](ulong r, ulong c) {
        S *p = transpose ? dst + (origin.y + c) * elements_per_row + origin.x + r
                         : dst + (origin.y + r) * elements_per_row + origin.x + c;
        *p = static_cast<S>(v[r][c]);
    });
}
// d = a b (+ c): the operands as floats, the product in float, rounded to d's type.
// An operand as floats: float matrices as they are, others converted into tmp.
template <class T> SW_LV_INLINE const float (&sw_lv_floats(const T (&v)[8][8], float (&tmp)[8][8]))[8][8] {
    if constexpr (std::is_same_v<T, float>) {
        (void)tmp;
        return v;
    } else {
        for (int r = 0; r < 8; r++)
            for (int k = 0; k < 8; k++) tmp[r][k] = (float)v[r][k];
        return tmp;
    }
}
template <class TD, class TA, class TB, class TC>
SW_LV_INLINE void sw_lv_mma(simdgroup_matrix<TD, 8, 8> &d, const simdgroup_matrix<TA, 8, 8> &a,
                      const simdgroup_matrix<TB, 8, 8> &b, const simdgroup_matrix<TC, 8, 8> *c, int line) {
    sw_lv_matrix_uniform(line);
    float ta[8][8], tb[8][8], fd[8][8];
    // fd is written before d: a and b may be d itself, and are read from their own storage
    const float (&fa)[8][8] = sw_lv_floats(a.sw_rows(), ta);
    const float (&fb)[8][8] = sw_lv_floats(b.sw_rows(), tb);
    if (c) {
        const TC (&vc)[8][8] = c->sw_rows();
        for (int r = 0; r < 8; r++)
            for (int k = 0; k < 8; k++) fd[r][k] = (float)vc[r][k];
    } else {
        for (int r = 0; r < 8; r++)
            for (int k = 0; k < 8; k++) fd[r][k] = 0.0f;
    }
    sw_mma_product(fd, fa, fb);
    for (int r = 0; r < 8; r++)
        for (int k = 0; k < 8; k++) d.sw_m[r][k] = static_cast<TD>(fd[r][k]);
    d.sw_changed();
}
template <class TD, class TA, class TB, class TC>
inline void simdgroup_multiply_accumulate(simdgroup_matrix<TD, 8, 8> &d, const simdgroup_matrix<TA, 8, 8> &a,
                                          const simdgroup_matrix<TB, 8, 8> &b, const simdgroup_matrix<TC, 8, 8> &c,
                                          int line = __builtin_LINE()) {
    sw_lv_mma(d, a, b, &c, line);
}
template <class TD, class TA, class TB>
inline void simdgroup_multiply(simdgroup_matrix<TD, 8, 8> &d, const simdgroup_matrix<TA, 8, 8> &a,
                               const simdgroup_matrix<TB, 8, 8> &b, int line = __builtin_LINE()) {
    sw_lv_mma(d, a, b, (const simdgroup_matrix<TD, 8, 8> *)nullptr, line);
}
template <class T>
inline simdgroup_matrix<T, 8, 8> operator*(const simdgroup_matrix<T, 8, 8> &a, const simdgroup_matrix<T, 8, 8> &b) {
    simdgroup_matrix<T, 8, 8> d;
    sw_lv_mma(d, a, b, (const simdgroup_matrix<T, 8, 8> *)nullptr, __LINE__);
    return d;
}
// Element-wise: T arithmetic per element, as the fiber build's vec<T, 2> operations.
template <class T, class F> inline simdgroup_matrix<T, 8, 8> sw_lv_elementwise(F f) {
    sw_lv_matrix_uniform(__LINE__);
    simdgroup_matrix<T, 8, 8> d;
    for (int r = 0; r < 8; r++)
        for (int c = 0; c < 8; c++) d.sw_m[r][c] = f(r, c);
    return d;
}
template <class T>
inline simdgroup_matrix<T, 8, 8> operator+(const simdgroup_matrix<T, 8, 8> &a, const simdgroup_matrix<T, 8, 8> &b) {
    const T (&x)[8][8] = a.sw_rows();
    const T (&y)[8][8] = b.sw_rows();
    return sw_lv_elementwise<T>([&](int r, int c) -> T { return x[r][c] + y[r][c]; });
}
template <class T>
inline simdgroup_matrix<T, 8, 8> operator-(const simdgroup_matrix<T, 8, 8> &a, const simdgroup_matrix<T, 8, 8> &b) {
    const T (&x)[8][8] = a.sw_rows();
    const T (&y)[8][8] = b.sw_rows();
    return sw_lv_elementwise<T>([&](int r, int c) -> T { return x[r][c] - y[r][c]; });
}
template <class T, class S, std::enable_if_t<is_arithmetic_v<S>, int> = 0>
inline simdgroup_matrix<T, 8, 8> operator*(S s, const simdgroup_matrix<T, 8, 8> &a) {
    const T (&x)[8][8] = a.sw_rows();
    const T k = sw_cvt<T>(s);
    return sw_lv_elementwise<T>([&](int r, int c) -> T { return x[r][c] * k; });
}
template <class T, class S, std::enable_if_t<is_arithmetic_v<S>, int> = 0>
inline simdgroup_matrix<T, 8, 8> operator*(const simdgroup_matrix<T, 8, 8> &a, S s) {
    return s * a;
}
} // namespace metal

#undef SW_LV_MATH1
#undef SW_LV_MATH2
#undef SW_LV_MATH3
#undef SW_LV_MATH2_BODY
#undef SW_LV_MATH3_BODY
#undef SW_LV_R2
#undef SW_LV_R3
#undef SW_LV_U
#undef SW_LV_MATH1_NAMES
#undef SW_LV_MATH2_NAMES
#undef SW_LV_MATH3_NAMES

#endif
