/* llir.h — LLVM's textual IR, read just far enough for the software device's IR
 * passes (ir_pass.h): functions, basic blocks, and each instruction's opcode,
 * result, type, operands and !dbg attachment; edits are insertions of whole lines
 * before or after an instruction, a line in an instruction's place, text in place
 * of other bytes of the module (an attribute group), or text at the end.
 *
 * A module is clang's own `-S -emit-llvm` output of one variant after its
 * optimisation pipeline.  Nothing here validates IR: the compiler that reads the
 * edited text back does.  What the reader does not recognise is LL_OTHER, never an
 * error, so a pass only ever touches instructions it understands.  Spans point into
 * the module's text and live as long as the module. */
#ifndef GDN_SW_LLIR_H
#define GDN_SW_LLIR_H

#include <stddef.h>

#include "msl/msl_lex.h"

typedef struct ll_span {
    const char *p;
    size_t n;
} ll_span;

typedef enum ll_opcode {
    LL_OTHER,
    /* floating point */
    LL_FADD, LL_FSUB, LL_FMUL, LL_FDIV, LL_FREM, LL_FNEG,
    LL_FPTRUNC, LL_FPEXT, LL_FPTOSI, LL_FPTOUI, LL_SITOFP, LL_UITOFP, LL_FCMP,
    /* integer */
    LL_ADD, LL_SUB, LL_MUL, LL_SDIV, LL_UDIV, LL_SREM, LL_UREM,
    LL_SHL, LL_LSHR, LL_ASHR, LL_AND, LL_OR, LL_XOR, LL_ICMP,
    /* memory */
    LL_LOAD, LL_STORE, LL_ATOMICRMW, LL_CMPXCHG, LL_FENCE, LL_ALLOCA, LL_GEP,
    /* control and the rest */
    LL_CALL, LL_PHI, LL_SELECT, LL_BR, LL_SWITCH, LL_RET, LL_UNREACHABLE,
    LL_OPCODE_COUNT
} ll_opcode;

/* The scalar kind of a type: what a float pass dispatches on. */
typedef enum ll_scalar {
    LL_S_OTHER, LL_S_HALF, LL_S_BFLOAT, LL_S_FLOAT, LL_S_DOUBLE,
    LL_S_I1, LL_S_I8, LL_S_I16, LL_S_I32, LL_S_I64, LL_S_PTR
} ll_scalar;

typedef struct ll_inst {
    ll_span text;      /* the whole line, without its newline */
    ll_span result;    /* "%12" or "" */
    ll_span body;      /* from the opcode to the end of the line */
    ll_opcode op;
    int dbg;           /* the N of its !dbg !N, or -1 */
    int block;         /* index into the module's blocks */
} ll_inst;

typedef struct ll_block {
    ll_span label;     /* "" for a function's unnamed entry block */
    int first_inst, ninsts;
    int func;
} ll_block;

typedef struct ll_func {
    ll_span name;      /* "@_Z3fooPf" */
    int first_block, nblocks;
} ll_func;

typedef struct ll_module ll_module;

/* Reads a module; it keeps its own copy of the text.  NULL only when out of memory. */
ll_module *ll_module_read(const char *text, size_t len);
void ll_module_free(ll_module *m);

int ll_func_count(const ll_module *m);
const ll_func *ll_func_at(const ll_module *m, int i);
int ll_block_count(const ll_module *m);
const ll_block *ll_block_at(const ll_module *m, int i);
int ll_inst_count(const ll_module *m);
const ll_inst *ll_inst_at(const ll_module *m, int i);

/* The type an instruction computes or, for a store, the type stored; for a
 * conversion, the source type (ll_inst_dest_type gives the destination). */
ll_span ll_inst_type(const ll_inst *in);
ll_span ll_inst_dest_type(const ll_inst *in);
/* The k-th operand of an arithmetic instruction or of a call's argument list,
 * without its type ("%3", "1.000000e+00"); ok = 0 past the last. */
ll_span ll_inst_operand(const ll_inst *in, int k, int *ok);
/* A call's callee ("@llvm.fma.f32"), or "" when it is not a direct call. */
ll_span ll_inst_callee(const ll_inst *in);

/* "float" -> (LL_S_FLOAT, 1); "<4 x half>" -> (LL_S_HALF, 4); other -> LL_S_OTHER. */
ll_scalar ll_type_scalar(ll_span type, int *lanes);

int ll_span_eq(ll_span s, const char *lit);
int ll_span_starts(ll_span s, const char *lit);

/* Edits, applied by ll_module_write in order of the instruction they are attached
 * to; lines are given without a trailing newline. */
void ll_insert_before(ll_module *m, int inst, const char *line);
void ll_insert_after(ll_module *m, int inst, const char *line);
/* The instruction's line replaced by another (a phi whose predecessor block was
 * split); the last replacement made is the one written. */
void ll_replace(ll_module *m, int inst, const char *line);
void ll_append(ll_module *m, const char *text);
/* The function attribute group a "define"/"declare" line names (` #N` outside
 * quoted text; parameters' attributes are spelled out), or -1. */
int ll_line_attr_group(ll_span line);
/* Where that reference is: "#N" within the line, or an empty span. */
ll_span ll_line_attr_ref(ll_span line);
/* The module's text as read (the edits are not in it). */
ll_span ll_module_text(const ll_module *m);
/* Bytes of the text outside every instruction's line (a define line's attribute
 * reference, an attribute group) written as text instead; at lies within
 * ll_module_text.  Of two overlapping replacements the first in the text wins. */
void ll_replace_text(ll_module *m, ll_span at, const char *text);
/* The module with its edits; without edits, the text read, byte for byte. */
void ll_module_write(const ll_module *m, msl_buf *out);

#endif
