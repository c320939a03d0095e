#!/usr/bin/env bash
# test_compile_ggml.sh — llama.cpp's ggml-metal.metal (issue 36) compiles on the
# software device with `gdnbench compile`, read in place from
# ../shared/msl_corpus/ggml (never copied into the repo), with its own headers found
# through -I: every kernel and function constant listed, the bindings of a few of
# the kernels a case file would run.  SKIPs with the reason when the corpus is absent.
. "$(dirname "$0")/lib.sh"
G=$GDNBENCH
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ggml="$root/../shared/msl_corpus/ggml/src"
src="$ggml/ggml-metal/ggml-metal.metal"

if ! "$G" info 2>/dev/null | grep -Eq '^ *sw +available'; then
    skip_all "compile ggml: this build has no software Metal device (gdnbench info)"
fi
export GDNBENCH_CACHE_DIR="$TMPD/cache"

# what the device refuses names the feature and the line (issue 36's README table)
refuse() { # feature-regex declaration
    printf '#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device float *o [[buffer(0)]],\n    %s) { o[0] = 1; }\n' \
        "$2" > "$TMPD/refuse.metal"
    expect_exit 1 "compile: refuses $1" $G compile "$TMPD/refuse.metal"
    expect_match "compile: the refusal names $1 and line 4" "$ERR" "refuse.metal:4:.*not supported by the software Metal device: $1"
}
refuse "function pointers" "visible_function_table<float(float)> t [[buffer(1)]]"
refuse "ray tracing" "raytracing::acceleration_structure<> a [[buffer(1)]]"
refuse "indirect command buffers" "command_buffer cb [[buffer(1)]]"
refuse "textures" "texture2d<float> t [[texture(0)]]"
# address spaces with no memory here (they compiled as thread memory before: wrong, silently)
refuse "imageblocks .tile memory. .the threadgroup_imageblock address space" "threadgroup_imageblock float *t [[buffer(1)]]"
refuse "ray tracing .the ray_data address space" "ray_data float &r [[buffer(1)]]"
refuse "mesh shading .object-to-mesh payloads. .the object_data address space" "object_data float *p [[buffer(1)]]"

# simdgroup matrices: MSL has 8x8 only (spec 2.4, 6.7), so other sizes are refused as not
# MSL, in one line naming the line; 8x8 ones (Rows defaulting to Cols too) compile
matrix() { # element type of o, line 4 of a kernel body
    printf '#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device %s *o [[buffer(0)]]) {\n    %s\n    simdgroup_store(m, o);\n}\n' \
        "$1" "$2" > "$TMPD/matrix.metal"
}
for decl in "simdgroup_matrix<float, 16, 16> m;" "simdgroup_matrix<half, 8, 4> m;" \
            "simdgroup_float8x8 m = make_filled_simdgroup_matrix<float, 4>(1.0f);"; do
    matrix float "$decl"
    expect_exit 1 "compile: refuses $decl" $G compile "$TMPD/matrix.metal"
    expect_match "compile: '$decl' refused in one line naming line 4" "$ERR" \
        "^gdnbench: compile: [^ ]*matrix.metal:4:[0-9]+: error: not MSL: [a-z_]*simdgroup_matrix<[^>]*>: simdgroup matrices are 8x8 only \(simdgroup_matrix<T, 8, 8>, spec sections 2.4 and 6.7\)"
    [ "$(printf '%s\n' "$ERR" | grep -c .)" -eq 1 ] && pass "compile: '$decl': one line" || fail "compile: '$decl': $(printf '%s' "$ERR" | head -c 300)"
done
matrix bfloat "simdgroup_matrix<bfloat, 8, 8> m = make_filled_simdgroup_matrix<bfloat, 8>(bfloat(1.0f));"
expect_exit 0 "compile: an 8x8 bfloat matrix and make_filled_simdgroup_matrix<T, 8> compile" $G compile "$TMPD/matrix.metal"

[ -f "$src" ] || skip_all "compile ggml: no $src (the shared corpus is not next to this checkout)"

expect_exit 1 "compile ggml: without -I its own header is not found" $G compile "$src" --quiet
expect_match "compile ggml: the missing header is named" "$ERR" "ggml-common.h"

expect_exit 0 "compile ggml: ggml-metal.metal compiles" $G compile "$src" -I "$ggml"
expect_match "compile ggml: summary" "$OUT" "compiled, [0-9]+ kernels, [0-9]+ function constants"
n=$(printf '%s\n' "$OUT" | grep -c '^kernel ')
fc=$(printf '%s\n' "$OUT" | sed -n 's/.*compiled, [0-9]* kernels, \([0-9]*\) function constants.*/\1/p' | head -1)
if [ "$n" -ge 600 ]; then pass "compile ggml: $n kernels listed"; else fail "compile ggml: only $n kernels listed"; fi
if [ "${fc:-0}" -ge 50 ]; then pass "compile ggml: $fc function constants"; else fail "compile ggml: ${fc:-no} function constants"; fi
for k in kernel_bin_fuse_f32_f32_f32 kernel_rms_norm_f32 kernel_mul_mv_f32_f32 kernel_soft_max_f32 \
         kernel_unary_f16_f16_4 kernel_flash_attn_ext_f16_dk64_dv64 kernel_mul_mm_f16_f32; do
    expect_match "compile ggml: lists $k" "$OUT" "^kernel $k \(line [0-9]+\)"
done
block() { printf '%s\n' "$OUT" | awk -v k="kernel $1 " 'index($0, k) == 1 { on = 1; next } /^kernel / { on = 0 } on'; }
expect_match "compile ggml: rms_norm's argument struct" "$(block kernel_rms_norm_f32)" \
    "buffer\(0\) +args +constant ggml_metal_kargs_norm +read"
expect_match "compile ggml: rms_norm's threadgroup buffer" "$(block kernel_rms_norm_f32)" \
    "threadgroup\(0\) +shmem_f32 +threadgroup float"
expect_match "compile ggml: a required function constant" "$OUT" "function constant 1200: short FC_unary_op \(required\)"

# bfloat kernels behind GGML_METAL_HAS_BF16, as the host defines it on an M2 or later
expect_exit 0 "compile ggml: bf16 kernels listed" $G compile "$src" -I "$ggml" -D GGML_METAL_HAS_BF16
expect_match "compile ggml: a bf16 kernel" "$OUT" "^kernel kernel_mul_mv_bf16_f32 "
finish
