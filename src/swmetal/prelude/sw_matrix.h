// sw_matrix.h — MSL's matrix types (floatCxR, halfCxR, matrix<T, C, R>) for the
// software device's prelude (included by metal_stdlib.h).
//
// As in MSL: C columns of R rows, stored column-major; m[i] is column i (a vector
// of R components); m * v treats v as a column vector (C components, result R),
// v * m as a row vector (R components, result C).  Arithmetic is in T, rounding
// after every operation like the vector arithmetic it is made of.
#ifndef GDN_SW_MATRIX_H
#define GDN_SW_MATRIX_H

namespace metal {

template <class T, int C, int R> struct matrix {
    static_assert(C >= 2 && C <= 4 && R >= 2 && R <= 4, "matrices are 2x2 to 4x4");
    typedef vec<T, R> column_type;
    column_type columns[C];

    constexpr matrix() : columns{} {}
    // A scalar: that value on the diagonal, zero elsewhere.
    constexpr explicit matrix(T diag) : columns{} {
        for (int i = 0; i < C && i < R; i++) columns[i][i] = diag;
    }
    // C column vectors, or C * R scalars in column order.
    template <class... A, std::enable_if_t<sizeof...(A) == C && (sw_is_vector<A> && ...), int> = 0>
    constexpr matrix(const A &...cols) : columns{static_cast<column_type>(cols)...} {}
    template <class... A, std::enable_if_t<sizeof...(A) == C * R && sizeof...(A) != C && (!sw_is_vector<A> && ...),
                                           int> = 0>
    constexpr matrix(const A &...s) : columns{} {
        T v[C * R] = {sw_cvt<T>(s)...};
        for (int c = 0; c < C; c++)
            for (int r = 0; r < R; r++) columns[c][r] = v[c * R + r];
    }
    template <class U> constexpr explicit matrix(const matrix<U, C, R> &m) : columns{} {
        for (int c = 0; c < C; c++)
            for (int r = 0; r < R; r++) columns[c][r] = sw_cvt<T>(m.columns[c][r]);
    }

    constexpr column_type &operator[](int i) { return columns[i]; }
    constexpr const column_type &operator[](int i) const { return columns[i]; }

    matrix &operator+=(const matrix &o) { return *this = *this + o; }
    matrix &operator-=(const matrix &o) { return *this = *this - o; }
    matrix &operator*=(T s) { return *this = *this * s; }
    matrix &operator*=(const matrix<T, C, C> &o) { return *this = *this * o; }
};

template <class T, int C, int R> inline matrix<T, C, R> operator+(const matrix<T, C, R> &a, const matrix<T, C, R> &b) {
    matrix<T, C, R> r;
    for (int c = 0; c < C; c++) r.columns[c] = a.columns[c] + b.columns[c];
    return r;
}
template <class T, int C, int R> inline matrix<T, C, R> operator-(const matrix<T, C, R> &a, const matrix<T, C, R> &b) {
    matrix<T, C, R> r;
    for (int c = 0; c < C; c++) r.columns[c] = a.columns[c] - b.columns[c];
    return r;
}
template <class T, int C, int R> inline matrix<T, C, R> operator-(const matrix<T, C, R> &a) {
    matrix<T, C, R> r;
    for (int c = 0; c < C; c++) r.columns[c] = -a.columns[c];
    return r;
}
template <class T, int C, int R, class S, std::enable_if_t<!sw_is_vector<S> && is_arithmetic_v<S>, int> = 0>
inline matrix<T, C, R> operator*(const matrix<T, C, R> &a, S s) {
    matrix<T, C, R> r;
    for (int c = 0; c < C; c++) r.columns[c] = a.columns[c] * sw_cvt<T>(s);
    return r;
}
template <class T, int C, int R, class S, std::enable_if_t<!sw_is_vector<S> && is_arithmetic_v<S>, int> = 0>
inline matrix<T, C, R> operator*(S s, const matrix<T, C, R> &a) {
    return a * s;
}
// matrix * column vector: sum over columns of m[c] * v[c].
template <class T, int C, int R> inline vec<T, R> operator*(const matrix<T, C, R> &m, const vec<T, C> &v) {
    vec<T, R> r = m.columns[0] * v[0];
    for (int c = 1; c < C; c++) r += m.columns[c] * v[c];
    return r;
}
// row vector * matrix: component c is the dot product with column c.
template <class T, int C, int R> inline vec<T, C> operator*(const vec<T, R> &v, const matrix<T, C, R> &m) {
    vec<T, C> r;
    for (int c = 0; c < C; c++) {
        T s = v[0] * m.columns[c][0];
        for (int k = 1; k < R; k++) s += v[k] * m.columns[c][k];
        r[c] = s;
    }
    return r;
}
template <class T, int K, int R, int C>
inline matrix<T, C, R> operator*(const matrix<T, K, R> &a, const matrix<T, C, K> &b) {
    matrix<T, C, R> r;
    for (int c = 0; c < C; c++) r.columns[c] = a * b.columns[c];
    return r;
}
template <class T, int C, int R> inline bool operator==(const matrix<T, C, R> &a, const matrix<T, C, R> &b) {
    for (int c = 0; c < C; c++)
        for (int r = 0; r < R; r++)
            if (!(a.columns[c][r] == b.columns[c][r])) return false;
    return true;
}
template <class T, int C, int R> inline bool operator!=(const matrix<T, C, R> &a, const matrix<T, C, R> &b) {
    return !(a == b);
}
template <class T, int C, int R> inline matrix<T, R, C> transpose(const matrix<T, C, R> &m) {
    matrix<T, R, C> t;
    for (int c = 0; c < C; c++)
        for (int r = 0; r < R; r++) t.columns[r][c] = m.columns[c][r];
    return t;
}
template <class T> inline T determinant(const matrix<T, 2, 2> &m) {
    return m[0][0] * m[1][1] - m[1][0] * m[0][1];
}
template <class T> inline T determinant(const matrix<T, 3, 3> &m) {
    return m[0][0] * (m[1][1] * m[2][2] - m[2][1] * m[1][2]) - m[1][0] * (m[0][1] * m[2][2] - m[2][1] * m[0][2]) +
           m[2][0] * (m[0][1] * m[1][2] - m[1][1] * m[0][2]);
}
template <class T> inline T determinant(const matrix<T, 4, 4> &m) {
    T det = 0;
    for (int c = 0; c < 4; c++) {
        matrix<T, 3, 3> minor;
        for (int cc = 0, k = 0; cc < 4; cc++) {
            if (cc == c) continue;
            for (int r = 1; r < 4; r++) minor.columns[k][r - 1] = m.columns[cc][r];
            k++;
        }
        T term = m.columns[c][0] * determinant(minor);
        det = (c & 1) ? det - term : det + term;
    }
    return det;
}

#define SW_DEFINE_MATRICES(T, NAME)                                                                                \
    typedef matrix<T, 2, 2> NAME##2x2;                                                                             \
    typedef matrix<T, 2, 3> NAME##2x3;                                                                             \
    typedef matrix<T, 2, 4> NAME##2x4;                                                                             \
    typedef matrix<T, 3, 2> NAME##3x2;                                                                             \
    typedef matrix<T, 3, 3> NAME##3x3;                                                                             \
    typedef matrix<T, 3, 4> NAME##3x4;                                                                             \
    typedef matrix<T, 4, 2> NAME##4x2;                                                                             \
    typedef matrix<T, 4, 3> NAME##4x3;                                                                             \
    typedef matrix<T, 4, 4> NAME##4x4;
SW_DEFINE_MATRICES(float, float)
SW_DEFINE_MATRICES(half, half)
SW_DEFINE_MATRICES(bfloat, bfloat)
#undef SW_DEFINE_MATRICES

} // namespace metal

#endif
