/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-profile-run.c: the always-on profiles the daemon runs: the slots of the
 * last load of the profiles directory, each profile's session, a reload, and
 * the `profiles` command.
 *
 * PUBLIC INTERFACES (daemon-internal, daemon-int.h)
 *   daemon_profiles_load()            (re)load the directory: start, stop, keep
 *   daemon_profiles_start_pending()   start those whose old session has ended
 *   daemon_profile_session_gone()     a profile's session left the list
 *   daemon_cmd_profiles()             the `profiles` command
 *   daemon_profiles_dir               the directory (--profiles-dir)
 *
 * IMPLEMENTATION NOTES
 *   Main's alone.  A profile's files, names and retention are daemon-profile.c's
 *   (free of sockets, for the fuzzers); what its session's worker does with them
 *   is daemon-profile-rotate.c's and daemon-profile-budget.c's.  A profile's
 *   session starts as a detached session of root's would: its definition goes
 *   through daemon_start_parse() and the admission every session counts against
 *   (session_admit()).
 */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon-ctl.h"
#include "daemon-int.h"
#include "hwpmcd/files.h"
#include "hwpmcd/log.h"

/*
 * Always-on profiles (daemon-profile.c): one slot per profile file of the last
 * load, with the session that runs it.  A slot whose profile changed waits
 * (pending) until the session of its old definition has ended, so that two
 * sessions never write one directory.
 */
struct profile_slot {
	struct daemon_profile def;
	struct session *s; /* its session (running, stopping or ended), or NULL */
	bool pending;	   /* to start once no session of this name is left */
	bool kept_old;	   /* its file was refused on reload: the old definition runs on */
	char problem[1024]; /* why it is not running */
};
static struct profile_slot pslots[DAEMON_PROFILES_MAX];
static size_t npslots;
char daemon_profiles_dir[512] = DAEMON_PROFILES_DIR_DEFAULT;
static char profiles_problems[8192]; /* the last load's refused files */

/* ---- always-on profiles ---- */

/* @path, made if missing (0750): a directory of ours that nobody else may write. */
static int own_dir(const char *path, char *err, size_t errlen)
{
	int r = util_dir_ensure(path, 0750, NULL, err, errlen);

	return r == -EPERM ? -EACCES : r;
}

/* Is a session of profile @name still there (running, stopping, or ended and listed)? */
static struct session *profile_session_of(const char *name)
{
	for (size_t i = 0; i < daemon_nsessions; i++)
		if (daemon_sessions[i]->prof &&
		    strcmp(daemon_sessions[i]->prof->def.name, name) == 0)
			return daemon_sessions[i];
	return NULL;
}

/*
 * Start the session of profile slot @ps: its definition through the start's own
 * checks (as root), the budgets every session counts against, its directory
 * STATE_DIR/profiles/NAME, its first file; the worker does the rest, as for a
 * detached session.  0, or -errno with @err.
 */
static int profile_start(struct profile_slot *ps, char *err, size_t errlen)
{
	const struct daemon_who root = { .uid = 0, .gid = 0, .pid = 0, .admin = true };
	struct session_params *p = calloc(1, sizeof(*p));
	json_t *args = daemon_profile_args(&ps->def);
	struct daemon_start st;
	struct session *s = NULL;
	struct session_profile *pf = calloc(1, sizeof(*pf));
	char dir[sizeof(pf->dir)], path[sizeof(pf->path)];
	int cpus[DAEMON_MAX_CPUS], fd = -1, r;
	size_t ncpus = 0;
	bool all_user = true;
	time_t wall0;

	if (!p || !args || !pf) {
		snprintf(err, errlen, "out of memory");
		r = -ENOMEM;
		goto out;
	}
	r = daemon_start_parse(args, &daemon_cfg, &root, coll_max_sample_rate(), coll_max_stack(),
			       p, &st, err, errlen);
	if (r < 0)
		goto out;
	p->unwind_cache_bytes = (size_t)ps->def.unwind_cache_mb << 20;
	/* A unit that is not running yet (or restarts) is waited for, not refused. */
	p->filter.missing_ok = true;
	if ((r = session_admit(p, &st, cpus, &ncpus, err, errlen)) < 0)
		goto out;
	if ((r = daemon_state_dir_check(err, errlen)) < 0)
		goto out;
	snprintf(dir, sizeof(dir), "%.511s/profiles", daemon_cfg.state_dir);
	if ((r = own_dir(dir, err, errlen)) < 0)
		goto out;
	snprintf(dir, sizeof(dir), "%.511s/profiles/%.63s", daemon_cfg.state_dir, ps->def.name);
	if ((r = own_dir(dir, err, errlen)) < 0)
		goto out;
	for (size_t i = 0; i < p->nevents; i++)
		all_user &= p->events[i].exclude_kernel;
	if (ps->def.push_url[0] && (r = daemon_push_check(ps->def.push_url, err, errlen)) < 0)
		goto out;
	wall0 = time(NULL);
	fd = daemon_profile_open_file(dir, ps->def.name, wall0, path, sizeof(path));
	if (fd < 0) {
		r = fd;
		snprintf(err, errlen, "cannot create a file in '%s': %s", dir, strerror(-r));
		goto out;
	}
	daemon_write_vdso_beside(path);
	p->out_fd = fd;
	p->ks_fd = -1;
	fd = -1;
	r = session__new(p, daemon_next_session_id, cpus, ncpus, &s);
	if (r < 0) {
		snprintf(err, errlen, "cannot start the session: %s", strerror(-r));
		(void)unlink(path);
		goto out;
	}
	pf->def = ps->def;
	snprintf(pf->dir, sizeof(pf->dir), "%s", dir);
	snprintf(pf->path, sizeof(pf->path), "%s", path);
	pf->file_wall0 = wall0;
	pf->kallsyms = ps->def.kallsyms && p->kernel && !all_user &&
		       daemon_ksyms_probe("/proc/kallsyms") == 0;
	pthread_mutex_init(&pf->lock, NULL);
	s->prof = pf;
	pf = NULL;
	s->detached = true;
	s->owner = NULL;
	s->start_client = NULL;
	snprintf(s->path, sizeof(s->path), "%s", path);
	r = session__launch(s);
	if (r < 0) {
		snprintf(err, errlen, "cannot start the session: %s", strerror(-r));
		(void)unlink(path);
		session__free(s);
		goto out;
	}
	session_register(s);
	ps->s = s;
	ps->problem[0] = '\0';
	log_info("profile %s: session %d starting: %zu events on %zu cpus, writing '%s'",
		 ps->def.name, s->id, s->p.nevents, s->ncpus, dir);
out:
	if (fd >= 0)
		close(fd);
	free(pf);
	free(p);
	json_decref(args);
	return r;
}

/* A profile's session leaves the list: its slot hears why, if it did not start. */
void daemon_profile_session_gone(struct session *s)
{
	for (size_t i = 0; i < npslots; i++) {
		struct profile_slot *ps = &pslots[i];

		if (ps->s != s)
			continue;
		ps->s = NULL;
		if (!__atomic_load_n(&s->started, __ATOMIC_ACQUIRE))
			snprintf(ps->problem, sizeof(ps->problem), "did not start: %.900s", s->error_msg);
		else if (__atomic_load_n(&s->error, __ATOMIC_ACQUIRE))
			snprintf(ps->problem, sizeof(ps->problem), "ended: %.900s", s->error_msg);
		else
			snprintf(ps->problem, sizeof(ps->problem), "stopped (session %d); 'hwpmc "
				 "profiles reload' starts it again", s->id);
	}
}

void daemon_profiles_start_pending(void)
{
	char err[1024];

	for (size_t i = 0; i < npslots; i++) {
		struct profile_slot *ps = &pslots[i];

		if (!ps->pending || !ps->def.enabled || profile_session_of(ps->def.name))
			continue;
		ps->pending = false;
		if (profile_start(ps, err, sizeof(err)) < 0) {
			snprintf(ps->problem, sizeof(ps->problem), "did not start: %.900s", err);
			log_error("profile %s: did not start: %s", ps->def.name, err);
		}
	}
}

/* Each line of @text (problems, "\n"-joined) as its own log line. */
static void log_lines(int prio_error, const char *prefix, const char *text)
{
	char *copy = strdup(text);

	for (char *l = copy, *nl; l && *l; l = nl) {
		nl = strchr(l, '\n');
		if (nl)
			*nl++ = '\0';
		if (prio_error)
			log_error("%s%s", prefix, l);
		else
			log_warn("%s%s", prefix, l);
	}
	free(copy);
}

/*
 * (Re)load the profiles directory: a new or changed enabled profile starts (a
 * changed one once its old session has ended), a removed, disabled or changed
 * one is stopped, an unchanged running one runs on, and a file refused on
 * reload leaves its running profile on its previous definition.  Returns the
 * number of refused files (their problems in profiles_problems).
 */
int daemon_profiles_load(void)
{
	struct daemon_profile *defs = calloc(DAEMON_PROFILES_MAX, sizeof(*defs));
	struct profile_slot *next = calloc(DAEMON_PROFILES_MAX, sizeof(*next));
	size_t n = 0, nn = 0;
	bool *taken = calloc(DAEMON_PROFILES_MAX, sizeof(*taken));
	int problems;

	if (!defs || !next || !taken) {
		free(defs);
		free(next);
		free(taken);
		snprintf(profiles_problems, sizeof(profiles_problems), "out of memory");
		return 1;
	}
	problems = daemon_profile_load_dir(daemon_profiles_dir, &daemon_cfg, coll_max_sample_rate(),
					   coll_max_stack(), defs, DAEMON_PROFILES_MAX, &n,
					   profiles_problems, sizeof(profiles_problems));
	if (problems)
		log_lines(1, "profiles: ", profiles_problems);
	for (size_t i = 0; i < npslots; i++) {
		struct profile_slot *old = &pslots[i];
		bool running = old->s && !old->s->ended &&
			       __atomic_load_n(&old->s->state, __ATOMIC_ACQUIRE) <= SESSION_RUNNING;
		size_t j;
		char path[sizeof(daemon_profiles_dir) + DAEMON_PROFILE_NAME_MAX + 8];

		for (j = 0; j < n; j++)
			if (strcmp(defs[j].name, old->def.name) == 0)
				break;
		snprintf(path, sizeof(path), "%.511s/%.63s.conf", daemon_profiles_dir,
			 old->def.name);
		if (j == n && running && access(path, F_OK) == 0 && nn < DAEMON_PROFILES_MAX) {
			/* Its file is there but was refused: the running definition stays. */
			next[nn] = *old;
			next[nn].kept_old = true;
			snprintf(next[nn].problem, sizeof(next[nn].problem), "%.63s.conf was refused on "
				 "reload; the previous definition runs on", old->def.name);
			nn++;
			continue;
		}
		if (j < n && !taken[j] && running && defs[j].enabled &&
		    daemon_profile_same(&defs[j], &old->def) && nn < DAEMON_PROFILES_MAX) {
			next[nn] = *old;
			next[nn].def = defs[j]; /* the lines may have moved */
			next[nn].kept_old = false;
			next[nn].problem[0] = '\0';
			taken[j] = true;
			nn++;
			continue;
		}
		if (old->s && !old->s->ended && running) {
			log_info("profile %s: %s: stopping session %d", old->def.name,
				 j == n ? "removed" : !defs[j].enabled ? "disabled" : "changed",
				 old->s->id);
			old->s->orphan = true; /* freed without a word once its worker ends */
			session__request_stop(old->s);
		} else if (old->s && old->s->ended) {
			/* Ended by itself earlier and still listed: its slot goes, so does it. */
			struct session *gone = old->s;

			old->s = NULL;
			session_tell_end(gone, NULL, true);
		}
	}
	for (size_t j = 0; j < n; j++) {
		bool dup = false;

		if (taken[j])
			continue;
		for (size_t k = 0; k < nn; k++)
			dup |= strcmp(next[k].def.name, defs[j].name) == 0;
		if (dup || nn == DAEMON_PROFILES_MAX)
			continue;
		memset(&next[nn], 0, sizeof(next[nn]));
		next[nn].def = defs[j];
		next[nn].pending = defs[j].enabled;
		if (!defs[j].enabled)
			snprintf(next[nn].problem, sizeof(next[nn].problem), "enabled = no");
		nn++;
	}
	memcpy(pslots, next, nn * sizeof(*next));
	npslots = nn;
	free(defs);
	free(next);
	free(taken);
	log_info("profiles: %zu loaded from '%s'%s", n, daemon_profiles_dir,
		 problems ? " (some files were refused)" : "");
	daemon_profiles_start_pending();
	return problems;
}

static const char *profile_state(const struct profile_slot *ps)
{
	int st;

	if (!ps->s)
		return !ps->def.enabled ? "disabled" : ps->pending ? "waiting" : "stopped";
	if (ps->s->ended)
		return "error";
	st = __atomic_load_n(&ps->s->state, __ATOMIC_ACQUIRE);
	if (st == SESSION_RUNNING && __atomic_load_n(&ps->s->prof->paused, __ATOMIC_RELAXED))
		return "paused";
	return session_state_name(st);
}

/* `profiles`: the list; `{"reload": true}` first reloads the directory.  Administrators only. */
void daemon_cmd_profiles(struct daemon_client *c, json_int_t id, json_t *args)
{
	json_t *v = json_object_get(args, "reload"), *rep, *arr;
	int nproblems = 0;

	if (json_object_size(args) > (v ? 1u : 0u) || (v && !json_is_boolean(v))) {
		daemon_reply_error(c, id, -EINVAL,
				   "profiles: takes only an optional {\"reload\": true}");
		return;
	}
	if (!daemon_is_admin(c)) {
		daemon_reply_error(c, id, -EPERM,
				   "profiles are the administrators' (root or group '%s')",
				   daemon_cfg.admin_group);
		return;
	}
	if (v && json_is_true(v)) {
		log_info("profiles: reload asked for by uid %u", (unsigned)c->who.uid);
		nproblems = daemon_profiles_load();
	}
	rep = daemon_reply_ok(id);
	arr = json_array();
	for (size_t i = 0; i < npslots; i++) {
		struct profile_slot *ps = &pslots[i];
		json_t *o = json_object();

		json_object_set_new(o, "name", json_string(ps->def.name));
		json_object_set_new(o, "state", json_string(profile_state(ps)));
		json_object_set_new(o, "enabled", json_boolean(ps->def.enabled));
		json_object_set_new(o, "events", json_string(ps->def.events));
		if (ps->def.period)
			json_object_set_new(o, "period", json_integer(ps->def.period));
		else
			json_object_set_new(o, "freq", json_integer(ps->def.freq));
		json_object_set_new(o, "callgraph", json_string(ps->def.callgraph));
		json_object_set_new(o, "scope", json_string(ps->def.scope));
		json_object_set_new(o, "rotate_seconds", json_integer((json_int_t)ps->def.rotate_seconds));
		json_object_set_new(o, "rotate_bytes", json_integer((json_int_t)ps->def.rotate_bytes));
		json_object_set_new(o, "retain_seconds", json_integer((json_int_t)ps->def.retain_seconds));
		json_object_set_new(o, "retain_bytes", json_integer((json_int_t)ps->def.retain_bytes));
		if (ps->problem[0])
			json_object_set_new(o, "note", json_string(ps->problem));
		if (ps->s)
			json_object_set_new(o, "status", session_json(ps->s));
		json_array_append_new(arr, o);
	}
	json_object_set_new(rep, "dir", json_string(daemon_profiles_dir));
	json_object_set_new(rep, "profiles", arr);
	if (profiles_problems[0])
		json_object_set_new(rep, "problems", json_string(profiles_problems));
	if (v && json_is_true(v))
		json_object_set_new(rep, "refused", json_integer(nproblems));
	daemon_client_send(c, rep);
}
