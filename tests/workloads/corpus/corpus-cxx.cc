// SPDX-License-Identifier: BSD-2-Clause
/*
 * corpus-cxx.cc: C++ exceptions thrown through several frames.
 *
 * usage: hwpmc-corpus-cxx [SECONDS]
 *   main -> x_outer (catches) -> x_mid (an object with a destructor) ->
 *   x_thrower -> x_burn, then x_thrower throws.  Samples land in x_burn and in
 *   libstdc++/libgcc while the exception unwinds x_thrower and x_mid: both must
 *   unwind to main.  Built like corpus.c: no frame pointers, noinline.
 */
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <stdexcept>

#define NOINL __attribute__((noinline, noclone))

static volatile uint64_t sink;

struct Guard {
	~Guard() { sink = sink + 1; }
};

static double now()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

extern "C" {
NOINL uint64_t x_burn(uint64_t n)
{
	uint64_t x = sink;

	for (uint64_t i = 0; i < n; i++)
		x ^= x * 6364136223846793005ull + i;
	return x;
}

NOINL void x_thrower(uint64_t n)
{
	sink = sink + x_burn(n);
	throw std::runtime_error("corpus");
}

NOINL void x_mid(uint64_t n)
{
	Guard g;

	x_thrower(n);
	sink = sink + 2; // not reached: keeps the call from being a tail call
}

NOINL uint64_t x_outer(double seconds)
{
	double end = now() + seconds;
	uint64_t caught = 0;

	while (now() < end) {
		try {
			x_mid(20000);
		} catch (const std::runtime_error &) {
			caught++;
		}
	}
	return caught;
}
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;

	return x_outer(seconds) > 0 ? 0 : 1;
}
