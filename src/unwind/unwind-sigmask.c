/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind-sigmask.c: sigprocmask(3) without a system call in threads that block every signal.
 *
 * PUBLIC INTERFACES
 *   unwind_block_all_signals()  (see include/hwpmcd/unwind.h)
 *   sigprocmask()               interposes on the C library's for the whole program
 *
 * IMPLEMENTATION NOTES
 *   The libunwind of this system has no per-thread cache: UNW_CACHE_PER_THREAD
 *   falls back to UNW_CACHE_GLOBAL, whose lock is taken with every signal
 *   blocked by sigprocmask() and released by a second one: two system calls per
 *   unwound frame, most of the daemon's unwinding time.  In a thread that has
 *   already blocked every signal (the session worker, which takes no signals),
 *   those calls cannot change anything: SIG_BLOCK of any set, and SIG_SETMASK of
 *   a set that contains the thread's whole mask, leave the mask as it is.  So
 *   the program's sigprocmask() (an executable's definition takes precedence
 *   over the C library's for every shared library, libunwind included) answers
 *   those from the mask it recorded, in threads that said so through
 *   unwind_block_all_signals(), and passes every other call on to
 *   pthread_sigmask(3) (what glibc's sigprocmask() is); a call that would
 *   unblock a signal passes on too and ends the shortcut for its thread.  Calls
 *   inside the C library do not come here (they use its internal names), and
 *   nothing the shortcut skips has an effect, so the interposition is exact.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "hwpmcd/unwind.h"

int sigprocmask(int how, const sigset_t *set, sigset_t *oldset);

static _Thread_local bool all_blocked;
static _Thread_local sigset_t blocked; /* the mask the kernel keeps for such a thread */

int unwind_block_all_signals(void)
{
	sigset_t full;
	int r;

	sigfillset(&full);
	r = pthread_sigmask(SIG_BLOCK, &full, NULL);
	if (r == 0)
		r = pthread_sigmask(SIG_SETMASK, NULL, &blocked);
	all_blocked = r == 0;
	return -r;
}

/*
 * Whether SIG_SETMASK of @set would leave the thread's mask as it is.  The kernel's
 * mask is the first 64 bits of glibc's sigset_t (signal n is bit n - 1).
 */
static bool keeps_all(const sigset_t *set)
{
	uint64_t b, s;

	memcpy(&b, &blocked, sizeof(b));
	memcpy(&s, set, sizeof(s));
	return (b & ~s) == 0;
}

int sigprocmask(int how, const sigset_t *set, sigset_t *oldset)
{
	int r;

	if (all_blocked && (!set || how == SIG_BLOCK || (how == SIG_SETMASK && keeps_all(set)))) {
		if (oldset)
			*oldset = blocked;
		return 0;
	}
	if (set && how != SIG_BLOCK)
		all_blocked = false; /* it may unblock something: the kernel decides from now on */
	r = pthread_sigmask(how, set, oldset);
	if (r) {
		errno = r;
		return -1;
	}
	return 0;
}
