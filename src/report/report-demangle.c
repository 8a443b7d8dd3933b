// SPDX-License-Identifier: BSD-2-Clause
/*
 * C++ names through libiberty's demangler (the one of binutils' c++filt and GCC's
 * __cxa_demangle), in a file of its own: libiberty's headers define macros
 * (ARRAY_SIZE) that the project's headers define too.
 */
#include <libiberty/demangle.h>

#include "hwpmcd/report-sym.h"

char *report_demangle(const char *name)
{
	/* The Itanium C++ ABI's names only ("_Z..."), printed as c++filt prints them. */
	if (!name || name[0] != '_' || name[1] != 'Z')
		return NULL;
	return cplus_demangle_v3(name, DMGL_PARAMS | DMGL_ANSI | DMGL_TYPES);
}
