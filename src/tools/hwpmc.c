/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwpmc.c: the hwpmc command line tool: one binary, several subcommands.
 *
 * IMPLEMENTATION NOTES
 *   Like perf and git, `hwpmc CMD ARGS` runs tools_CMD_main().  Commands that
 *   talk to the daemon (record, stop, status, sessions, events) live in
 *   tools-client.c; `dump` (and later `report`) read logs and need no daemon.
 */
#include <stdio.h>
#include <string.h>

#include "hwpmcd/log.h"
#include "tools-int.h"
#include "tools-report.h"

struct tools_cmd {
	const char *name;
	int (*main)(int argc, char **argv);
	void (*usage)(FILE *out);
	const char *summary;
};

static const struct tools_cmd tools_cmds[] = {
	{ "record", tools_record_main, tools_record_usage,
	  "record samples of all CPUs, some processes or a command into a pmclog file" },
	{ "start", tools_record_main, tools_start_usage,
	  "start a detached session writing into the daemon's state directory (root)" },
	{ "status", tools_status_main, tools_status_usage,
	  "show the daemon's sessions and their counters" },
	{ "sessions", tools_status_main, tools_status_usage, "list the daemon's sessions" },
	{ "stop", tools_stop_main, tools_stop_usage, "stop a session (its log gets CLOSELOG)" },
	{ "filter", tools_filter_main, tools_filter_usage,
	  "change a running session's in-kernel sample filter" },
	{ "profiles", tools_profiles_main, tools_profiles_usage,
	  "list the daemon's always-on profiles, or reload them (root)" },
	{ "events", tools_events_main, tools_events_usage,
	  "list the events and PMUs that -e accepts" },
	{ "dump", tools_dump_main, tools_dump_usage,
	  "print every record of a pmclog file, one line each (like pmcstat -R)" },
	{ "report", tools_report_main, tools_report_usage,
	  "symbolized top list, call graph, folded stacks or flame graph of a pmclog" },
	{ "annotate", tools_report_main, tools_annotate_usage,
	  "a function's instructions and source lines with their samples (perf annotate)" },
	{ "diff", tools_report_main, tools_diff_usage,
	  "what changed between two profiles, per function or --sort key (perf diff)" },
	{ "script", tools_report_main, tools_script_usage,
	  "every sample of a pmclog, symbolized, in perf script's layout" },
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: hwpmc [--version] [--help] COMMAND [ARGS]\n"
		"\n"
		"hwpmc is the command line tool of hwpmcd, a system-wide sampling profiler\n"
		"that writes FreeBSD pmclog streams.  Commands:\n"
		"\n");
	for (size_t i = 0; i < sizeof(tools_cmds) / sizeof(tools_cmds[0]); i++)
		fprintf(out, "  %-10s %s\n", tools_cmds[i].name, tools_cmds[i].summary);
	fprintf(out,
		"\n"
		"'hwpmc help COMMAND' or 'hwpmc COMMAND --help' explains one command.\n"
		"Exit status: 0 done, 1 failed (standard error says why), 2 bad usage;\n"
		"'hwpmc record -- CMD' exits with CMD's status.\n"
		"Examples:\n"
		"  hwpmc record -a -d 5 -o all.pmclog      (needs a running hwpmcd)\n"
		"  hwpmc dump --summary all.pmclog\n"
		"  hwpmc report --callgraph all.pmclog\n");
}

static const struct tools_cmd *find_cmd(const char *name)
{
	for (size_t i = 0; i < sizeof(tools_cmds) / sizeof(tools_cmds[0]); i++)
		if (strcmp(tools_cmds[i].name, name) == 0)
			return &tools_cmds[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct tools_cmd *cmd;

	log_open("hwpmc", LOG_TARGET_PLAIN);
	if (argc < 2) {
		usage(stderr);
		return TOOLS_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return TOOLS_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("hwpmc %s\n", HWPMCD_VERSION);
		return TOOLS_EXIT_OK;
	}
	if (strcmp(argv[1], "help") == 0) {
		if (argc < 3) {
			usage(stdout);
			return TOOLS_EXIT_OK;
		}
		cmd = find_cmd(argv[2]);
		if (!cmd) {
			log_error("unknown command '%s'; 'hwpmc --help' lists the commands", argv[2]);
			return TOOLS_EXIT_USAGE;
		}
		cmd->usage(stdout);
		return TOOLS_EXIT_OK;
	}
	cmd = find_cmd(argv[1]);
	if (!cmd) {
		log_error("unknown command '%s'; 'hwpmc --help' lists the commands", argv[1]);
		return TOOLS_EXIT_USAGE;
	}
	return cmd->main(argc - 1, argv + 1);
}
