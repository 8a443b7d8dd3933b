// SPDX-License-Identifier: BSD-2-Clause
/*
 * C++ and Rust names through libiberty's demangler (the one of binutils' c++filt
 * and GCC's __cxa_demangle), in a file of its own: libiberty's headers define
 * macros (ARRAY_SIZE) that the project's headers define too.
 *
 * Rust has two manglings: v0 ("_R...", RFC 2603) and legacy, which is the Itanium
 * C++ ABI's "_ZN...E" with a last component "h" and 16 hex digits (a hash).
 * rust_demangle() takes both and refuses any other name, so it is asked first
 * for "_ZN" names, as c++filt does.  Rust names are printed as perf and pprof
 * print them: without the crates' disambiguators nor the legacy hash (no
 * DMGL_VERBOSE, which c++filt passes), "<std::fs::File as std::io::Read>::read".
 */
#include <libiberty/demangle.h>

#include "hwpmcd/report-sym.h"

char *report_demangle(const char *name)
{
	char *s;

	if (!name || name[0] != '_')
		return NULL;
	if (name[1] == 'R')
		return rust_demangle(name, DMGL_PARAMS | DMGL_ANSI);
	if (name[1] != 'Z')
		return NULL;
	if (name[2] == 'N' && (s = rust_demangle(name, DMGL_PARAMS | DMGL_ANSI)) != NULL)
		return s;
	return cplus_demangle_v3(name, DMGL_PARAMS | DMGL_ANSI | DMGL_TYPES);
}
