/* fusebox kit: one kernel toolkit for every fuser (libfusebox_kit.a,
 * find_package(fusebox) target fusebox::kit, pkg-config fusebox-kit).
 * Static, hidden symbols: link it into a plugin; it crosses no ABI and
 * depends only on <fusebox/fuser_abi.h> and libc (and libm; libdl for
 * kit_cuda).
 *
 *   kit_dtype.h   ScalarType codes, promotion, type names per dialect
 *   kit_oplist.h  the op table (rows)
 *   kit_ops.h     matching nodes to rows, dtype rules, printing, scalar eval
 *   kit_math.h    the kernels' math prelude (source text and compiled)
 *   kit_print.h   buffer, printer, dialect table (C, CUDA C, OpenCL C)
 *   kit_group.h   convex grouping of a block's nodes (partition)
 *   kit_cuda.h    the CUDA driver API by dlopen: modules, launches, copies
 *
 * sdk/docs/writing-a-fuser.md ("The kernel kit") prints a kernel with it. */
#ifndef FUSEBOX_KIT_H
#define FUSEBOX_KIT_H
#include <fusebox/kit/kit_dtype.h>
#include <fusebox/kit/kit_group.h>
#include <fusebox/kit/kit_math.h>
#include <fusebox/kit/kit_ops.h>
#include <fusebox/kit/kit_print.h>
#include <fusebox/kit/kit_cuda.h>
#endif
