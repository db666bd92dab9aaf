/*
 * servemetrics.c: GET /metrics in Prometheus text (format 0.0.4): the
 * loop files of the hosted roots by status (read on serve's I/O thread),
 * the workers of every hosted loop and of /api/agents by state, state
 * commits, event subscribers, queues, /mcp's sessions, the socket's and
 * HTTP's counters; the hosts' meters (worker and loop durations,
 * outcomes, tokens, cost), the process's own (from /proc/self, on the
 * I/O thread) and the build.
 */
#include <config.h>

#include <sys/resource.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "agent.h"
#include "bus.h"
#include "committer.h"
#include "host.h"
#include "meter.h"
#include "serveint.h"
#include "sock.h"
#include "sse.h"
#include "ws.h"
#include "xmalloc.h"

#define METRICS_NSTATUS	(AS_SHUTDOWN + 1)	/* enum agent_status */

/*
 * The loop statuses CCW knows, and interrupted: running with nobody
 * driving it (loopdriver.c); a file with another is not counted.
 */
static const char *const metrics_loop_status[] = {
	"created", "running", "paused", "completed", "failed", "interrupted"
};
#define METRICS_NLOOP	(sizeof metrics_loop_status / \
			    sizeof metrics_loop_status[0])

/* The process's own figures, read from /proc/self (ok: it was read). */
struct metrics_proc {
	int			 ok;
	double			 start_s, cpu_s;
	unsigned long long	 rss, fds, max_fds;
};

/* One scrape: the files counted on the I/O thread, the reply after. */
struct metrics_job {
	struct serve_call	*c;
	size_t			 loops[METRICS_NLOOP];
	struct metrics_proc	 proc;
};

/* A label value or HELP text escaped as the format wants (\\, \", \n). */
static void
metrics_escape(struct evbuffer *b, const char *v, int quote)
{
	for (; *v != '\0'; v++) {
		if (*v == '\\')
			evbuffer_add(b, "\\\\", 2);
		else if (*v == '\n')
			evbuffer_add(b, "\\n", 2);
		else if (*v == '"' && quote)
			evbuffer_add(b, "\\\"", 2);
		else
			evbuffer_add(b, v, 1);
	}
}

/* A family's HELP and TYPE lines: once per name, before its samples. */
static void
metrics_family(struct evbuffer *b, const char *name, const char *type,
    const char *help)
{
	evbuffer_add_printf(b, "# HELP %s ", name);
	metrics_escape(b, help, 0);
	evbuffer_add_printf(b, "\n# TYPE %s %s\n", name, type);
}

/* One sample; label: NULL, or one name with its value (escaped). */
static void
metrics_sample(struct evbuffer *b, const char *name, const char *label,
    const char *value, unsigned long long n)
{
	evbuffer_add_printf(b, "%s", name);
	if (label != NULL) {
		evbuffer_add_printf(b, "{%s=\"", label);
		metrics_escape(b, value, 1);
		evbuffer_add(b, "\"}", 2);
	}
	evbuffer_add_printf(b, " %llu\n", n);
}

/* A family of one unlabelled sample. */
static void
metrics_one(struct evbuffer *b, const char *name, const char *type,
    const char *help, unsigned long long n)
{
	metrics_family(b, name, type, help);
	metrics_sample(b, name, NULL, NULL, n);
}

/* An unlabelled family and its value, for a listener's rows. */
struct metrics_row {
	const char		*name;
	const char		*type;
	const char		*help;
	unsigned long long	 n;
};

/* Each of n rows as a family of one unlabelled sample. */
static void
metrics_rows(struct evbuffer *b, const struct metrics_row *rows, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		metrics_one(b, rows[i].name, rows[i].type, rows[i].help,
		    rows[i].n);
}

/* A label value and its count, for a counter by reason. */
struct metrics_reason {
	const char		*reason;
	unsigned long long	 n;
};

/* A counter family with one sample per reason (the rows, n of them). */
static void
metrics_reasons(struct evbuffer *b, const char *name, const char *help,
    const struct metrics_reason *rows, size_t n)
{
	size_t	i;

	metrics_family(b, name, "counter", help);
	for (i = 0; i < n; i++)
		metrics_sample(b, name, "reason", rows[i].reason, rows[i].n);
}

/* A listener's open and accepted connections: ccw_WHO_connections... */
static void
metrics_conns(struct evbuffer *b, const char *who, const char *what,
    unsigned long long open, unsigned long long accepted)
{
	char	name[64], help[128];

	snprintf(name, sizeof name, "ccw_%s_connections", who);
	snprintf(help, sizeof help, "Open %s connections.", what);
	metrics_one(b, name, "gauge", help, open);
	snprintf(name, sizeof name, "ccw_%s_accepted_total", who);
	snprintf(help, sizeof help, "%s connections accepted.", what);
	metrics_one(b, name, "counter", help, accepted);
}

/*
 * A sample with n labels (names k, values v, escaped) and, when le is
 * not NULL, a histogram bucket's le after them; the value as given.
 */
static void
metrics_labelled(struct evbuffer *b, const char *name,
    const char *const *k, const char *const *v, size_t n, const char *le,
    const char *value)
{
	size_t	i;

	evbuffer_add_printf(b, "%s", name);
	for (i = 0; i < n || (i == n && le != NULL); i++) {
		evbuffer_add_printf(b, "%s%s=\"", i == 0 ? "{" : ",",
		    i < n ? k[i] : "le");
		metrics_escape(b, i < n ? v[i] : le, 1);
		evbuffer_add(b, "\"", 1);
	}
	evbuffer_add_printf(b, "%s %s\n", i > 0 ? "}" : "", value);
}

/* A count as a sample's value. */
static void
metrics_count(struct evbuffer *b, const char *name, const char *const *k,
    const char *const *v, size_t n, unsigned long long c)
{
	char	num[32];

	snprintf(num, sizeof num, "%llu", c);
	metrics_labelled(b, name, k, v, n, NULL, num);
}

/* A real (seconds, dollars) as a sample's value, in plain decimals. */
static void
metrics_real(struct evbuffer *b, const char *name, const char *const *k,
    const char *const *v, size_t n, double x)
{
	char	num[64];

	snprintf(num, sizeof num, "%.6f", x);
	metrics_labelled(b, name, k, v, n, NULL, num);
}

/* What metrics_meter_row writes a row of a meter's table as. */
struct metrics_rows {
	struct evbuffer		*b;
	enum meter_table	 t;
	const char		*name;		/* the family */
	const char *const	*keys;		/* its label names */
	size_t			 nkeys;
	int			 what;		/* METRICS_ROW_* */
};
#define METRICS_ROW_HIST	0	/* NAME_bucket, NAME_sum, NAME_count */
#define METRICS_ROW_COUNT	1	/* the row's count */
#define METRICS_ROW_TOKENS	2	/* tokens by direction */
#define METRICS_ROW_COST	3	/* dollars */

/* A histogram's samples: cumulative buckets up to +Inf, sum, count. */
static void
metrics_hist(struct metrics_rows *w, const char *const *lv,
    const struct meter_row *r)
{
	const double		*bound;
	char			 name[96], le[32], num[32];
	unsigned long long	 cum = 0;
	size_t			 n, i;

	bound = meter_bounds(w->t, &n);
	snprintf(name, sizeof name, "%s_bucket", w->name);
	for (i = 0; i <= n; i++) {
		cum += i < n ? r->bucket[i] : 0;
		if (i < n)
			snprintf(le, sizeof le, "%g", bound[i]);
		snprintf(num, sizeof num, "%llu", i < n ? cum :
		    (unsigned long long)r->count);
		metrics_labelled(w->b, name, w->keys, lv, w->nkeys,
		    i < n ? le : "+Inf", num);
	}
	snprintf(name, sizeof name, "%s_sum", w->name);
	metrics_real(w->b, name, w->keys, lv, w->nkeys, r->sum);
	snprintf(name, sizeof name, "%s_count", w->name);
	metrics_count(w->b, name, w->keys, lv, w->nkeys, r->count);
}

/* meter_walk's visit: one row as its family wants it. */
static void
metrics_meter_row(const char *const *lv, const struct meter_row *r,
    void *arg)
{
	struct metrics_rows	*w = arg;
	const char		*k[2] = { w->keys[0], "direction" };
	const char		*v[2] = { lv[0], "in" };

	if (w->what == METRICS_ROW_HIST)
		metrics_hist(w, lv, r);
	else if (w->what == METRICS_ROW_COUNT)
		metrics_count(w->b, w->name, w->keys, lv, w->nkeys, r->count);
	else if (w->what == METRICS_ROW_COST)
		metrics_real(w->b, w->name, w->keys, lv, w->nkeys, r->cost_usd);
	else {
		metrics_count(w->b, w->name, k, v, 2, r->tokens_in);
		v[1] = "out";
		metrics_count(w->b, w->name, k, v, 2, r->tokens_out);
	}
}

/* One family of a meter's table: HELP, TYPE, a sample set per row. */
static void
metrics_meter_family(struct evbuffer *b, struct meter *m,
    enum meter_table t, int what, const char *name, const char *type,
    const char *help)
{
	static const char *const	 worker[] = { "role", "tool", "outcome" };
	static const char *const	 loop[] = { "status" };
	static const char *const	 tool[] = { "tool" };
	static const char *const	 sent[] = { "sink", "kind" };
	static const char *const	 kind[] = { "kind" };
	struct metrics_rows		 w = { b, t, name, t == METER_WORKERS ?
	    worker : t == METER_LOOPS ? loop : t == METER_TOOLS ? tool :
	    t == METER_NOTIFY_DEBOUNCED ? kind : sent, t == METER_WORKERS ? 3 :
	    t == METER_NOTIFY_SENT || t == METER_NOTIFY_FAILED ? 2 : 1, what };

	metrics_family(b, name, type, help);
	meter_walk(m, t, metrics_meter_row, &w);
}

/*
 * The families of the meter's tables, in the order served: each row's
 * table, what of its rows it shows, its name, type and help.
 */
static const struct metrics_meter_row {
	enum meter_table	 table;
	int			 what;
	const char		*name, *type, *help;
} metrics_meter_rows[] = {
	{ METER_WORKERS, METRICS_ROW_HIST,
	    "ccw_worker_duration_seconds", "histogram",
	    "Worker runs by role, tool and outcome (success, else "
	    "the result's error kind, else its status), from spawn "
	    "to result." },
	{ METER_WORKERS, METRICS_ROW_COUNT,
	    "ccw_worker_outcomes_total", "counter",
	    "Worker results by role, tool and outcome (success, "
	    "else the error kind, else the status)." },
	{ METER_TOOLS, METRICS_ROW_TOKENS,
	    "ccw_worker_tokens_total", "counter",
	    "Tokens the workers' tools reported, by tool and "
	    "direction (in, out)." },
	{ METER_TOOLS, METRICS_ROW_COST,
	    "ccw_worker_cost_usd_total", "counter",
	    "Cost in US dollars the workers' tools reported, by "
	    "tool." },
	{ METER_LOOPS, METRICS_ROW_HIST,
	    "ccw_loop_duration_seconds", "histogram",
	    "Loop runs by final status, from their start in this "
	    "process to their end." },
	{ METER_LOOPS, METRICS_ROW_COUNT,
	    "ccw_loops_ended_total", "counter",
	    "Loop runs ended, by final status." },
	{ METER_NOTIFY_SENT, METRICS_ROW_COUNT,
	    "ccw_notify_sent_total", "counter",
	    "Notifications delivered, by sink and kind (the "
	    "config's notify)." },
	{ METER_NOTIFY_FAILED, METRICS_ROW_COUNT,
	    "ccw_notify_failed_total", "counter",
	    "Notifications whose delivery failed (dead-lettered), "
	    "by sink and kind." },
	{ METER_NOTIFY_DEBOUNCED, METRICS_ROW_COUNT,
	    "ccw_notify_debounced_total", "counter",
	    "Notifications not sent: the same loop and kind within "
	    "debounce_ms, by kind." },
};

/*
 * The hosts' meters summed (one per root; capped at METER_SERIES_MAX
 * label sets a table, beyond which rows go to one "other"): durations,
 * outcomes, tokens and cost of workers, durations and ends of loops,
 * processes that outlived their worker.
 */
static void
metrics_meters(struct serve *s, struct evbuffer *b)
{
	struct meter	*m = meter_new();
	size_t		 i;

	for (i = 0; i < s->cfg.nroots; i++)
		if (s->cfg.roots[i].host != NULL)
			meter_merge(m, host_meter(s->cfg.roots[i].host));
	for (i = 0; i < sizeof metrics_meter_rows /
	    sizeof metrics_meter_rows[0]; i++)
		metrics_meter_family(b, m, metrics_meter_rows[i].table,
		    metrics_meter_rows[i].what, metrics_meter_rows[i].name,
		    metrics_meter_rows[i].type, metrics_meter_rows[i].help);
	metrics_one(b, "ccw_processes_leaked_total", "counter", "Processes "
	    "found outliving their worker and ended (each also a "
	    "processes_leaked warning event naming the agent).",
	    (unsigned long long)meter_leaked_total(m));
	meter_free(m);
}

/* /proc/self/stat's start time, CPU time and resident pages. */
static int
metrics_proc_stat(struct metrics_proc *p)
{
	char			 buf[1024], *at;
	unsigned long long	 ut, st, start, btime = 0;
	long			 rss, tck = sysconf(_SC_CLK_TCK);
	size_t			 n;
	FILE			*f;

	if ((f = fopen("/proc/self/stat", "re")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* after the command's ")": field 3 on; utime is 14, rss 24 */
	if ((at = strrchr(buf, ')')) == NULL || sscanf(at + 1, " %*c %*d %*d"
	    " %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d"
	    " %*d %llu %*u %ld", &ut, &st, &start, &rss) != 4 || tck <= 0)
		return -1;
	if ((f = fopen("/proc/stat", "re")) == NULL)
		return -1;
	while (fgets(buf, sizeof buf, f) != NULL)
		if (sscanf(buf, "btime %llu", &btime) == 1)
			break;
	fclose(f);
	p->cpu_s = (double)(ut + st) / (double)tck;
	p->start_s = (double)btime + (double)start / (double)tck;
	p->rss = rss > 0 ? (unsigned long long)rss *
	    (unsigned long long)sysconf(_SC_PAGESIZE) : 0;
	return btime != 0 ? 0 : -1;
}

/* On the I/O thread: the process's figures (its fds, its limit too). */
static void
metrics_proc_read(struct metrics_proc *p)
{
	struct rlimit	 rl;
	struct dirent	*e;
	DIR		*d;

	if (metrics_proc_stat(p) != 0 || (d = opendir("/proc/self/fd")) ==
	    NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			p->fds++;
	closedir(d);
	p->fds--;		/* the directory's own */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		p->max_fds = (unsigned long long)rl.rlim_cur;
	p->ok = 1;
}

/* The process's families (the client libraries' names) and the build. */
static void
metrics_process(const struct metrics_proc *p, struct evbuffer *b)
{
	static const char *const	k[] = { "version" };
	const char			*v[] = { PACKAGE_VERSION };

	metrics_family(b, "ccw_build_info", "gauge", "The build: 1, with "
	    "its version as a label.");
	metrics_count(b, "ccw_build_info", k, v, 1, 1);
	if (!p->ok)
		return;
	metrics_family(b, "process_start_time_seconds", "gauge", "Start "
	    "time of the process since the Unix epoch in seconds.");
	metrics_real(b, "process_start_time_seconds", NULL, NULL, 0,
	    p->start_s);
	metrics_family(b, "process_cpu_seconds_total", "counter", "Total "
	    "user and system CPU time spent in seconds.");
	metrics_real(b, "process_cpu_seconds_total", NULL, NULL, 0, p->cpu_s);
	metrics_one(b, "process_resident_memory_bytes", "gauge",
	    "Resident memory size in bytes.", p->rss);
	metrics_one(b, "process_open_fds", "gauge",
	    "Number of open file descriptors.", p->fds);
	metrics_one(b, "process_max_fds", "gauge",
	    "Maximum number of open file descriptors.", p->max_fds);
}

/* On the I/O thread: every root's loop files, counted by status. */
static void
metrics_scan_run(void *arg)
{
	struct metrics_job	*j = arg;
	json_t			*loops, *l;
	const char		*st;
	size_t			 i, k, s;

	loops = json_array();
	for (i = 0; i < j->c->s->cfg.nroots; i++)
		serve_scan_dir(j->c->s->cfg.roots[i].state_dir, loops);
	json_array_foreach(loops, k, l) {
		st = json_string_value(json_object_get(l, "status"));
		if (json_is_object(json_object_get(l, "interrupted")))
			st = "interrupted";	/* running, undriven */
		for (s = 0; s < METRICS_NLOOP; s++)
			if (strcmp(st, metrics_loop_status[s]) == 0)
				j->loops[s]++;
	}
	json_decref(loops);
	metrics_proc_read(&j->proc);
}

/* host_agents' walk: one more agent in its status's count. */
static void
metrics_count_agent(const struct agent *a, void *arg)
{
	size_t	*n = arg;

	if ((unsigned)a->status < METRICS_NSTATUS)
		n[a->status]++;
}

/* Workers by source and state: the hosted loops', /api/agents'. */
static void
metrics_workers(struct serve *s, struct evbuffer *b)
{
	size_t		 loop[METRICS_NSTATUS], api[METRICS_NSTATUS], i, k;
	struct agent	*a;
	uint64_t	 retired = 0;

	memset(loop, 0, sizeof loop);
	memset(api, 0, sizeof api);
	for (i = 0; i < s->cfg.nroots; i++) {
		host_agents(s->cfg.roots[i].host, metrics_count_agent, loop);
		if (s->cfg.roots[i].sup == NULL)
			continue;
		TAILQ_FOREACH(a, &s->cfg.roots[i].sup->agents, entry)
			metrics_count_agent(a, api);
		retired += s->cfg.roots[i].sup->retired;
	}
	metrics_one(b, "ccw_agents_retired_total", "counter", "Finished "
	    "/api/agents agents retired from memory past keep_agents (their "
	    "result read back from {id}.result.json).",
	    (unsigned long long)retired);
	metrics_family(b, "ccw_workers", "gauge", "Workers by source (the "
	    "hosted loops' or /api/agents') and state (the agent status).");
	for (k = 0; k < METRICS_NSTATUS; k++) {
		/* the fixed first label rides in the name of the second */
		metrics_sample(b, "ccw_workers", "source=\"loop\",state",
		    agent_status_name((enum agent_status)k),
		    (unsigned long long)loop[k]);
		metrics_sample(b, "ccw_workers", "source=\"api\",state",
		    agent_status_name((enum agent_status)k),
		    (unsigned long long)api[k]);
	}
}

/*
 * The containment mode in force: root 0's table chose it as every table
 * of the process does (contain.c), 1 for it and 0 for the other.
 */
static void
metrics_containment(struct serve *s, struct evbuffer *b)
{
	const struct sup	*sup = s->cfg.nroots > 0 ?
				    s->cfg.roots[0].sup : NULL;
	enum contain_mode	 k;

	metrics_family(b, "ccw_containment_mode", "gauge", "How workers "
	    "are contained: 1 for the mode in force (cgroup: a cgroup v2 "
	    "each, sweep: process groups).");
	for (k = CONTAIN_SWEEP; k <= CONTAIN_CGROUP; k++)
		metrics_sample(b, "ccw_containment_mode", "mode",
		    contain_mode_name(k), sup != NULL && sup->contain.mode == k);
}

/* The control socket's counters, when serve mounted one. */
static void
metrics_sock(struct serve *s, struct evbuffer *b)
{
	struct sock_stats	st;

	if (s->cfg.sock == NULL)
		return;
	sock_stats(s->cfg.sock, &st);
	metrics_conns(b, "socket", "control socket", st.open, st.accepted);
	metrics_reasons(b, "ccw_socket_refused_total", "Control socket "
	    "connections refused, by reason.", (struct metrics_reason[]){
	    { "uid", st.refused_uid }, { "full", st.refused_full } }, 2);
	/* the deadlines and the per-user cap at work (issue 23's floods) */
	metrics_reasons(b, "ccw_socket_closed_total", "Control socket "
	    "connections closed by serve, by reason: silent past the idle "
	    "deadline, a frame past its deadline, evicted idle at the "
	    "per-user cap.", (struct metrics_reason[]){
	    { "idle", st.closed_idle }, { "slow", st.closed_slow },
	    { "evicted", st.evicted } }, 3);
	metrics_one(b, "ccw_socket_requests_total", "counter",
	    "Requests read from the control socket.", st.requests);
	metrics_one(b, "ccw_socket_pending_calls", "gauge",
	    "Control socket requests waiting for the verb table.",
	    st.pending);
}

/* /ws: its clients, its handshakes, what it sent, whom it closed. */
static void
metrics_ws(struct serve *s, struct evbuffer *b)
{
	struct ws_stats	st;

	ws_stats(s->ws, &st);
	metrics_rows(b, (struct metrics_row[]){
	    { "ccw_ws_clients", "gauge", "WebSocket clients on /ws now.",
	      st.clients },
	    { "ccw_ws_opened_total", "counter", "/ws handshakes accepted.",
	      st.opened },
	    { "ccw_ws_refused_total", "counter",
	      "/ws handshakes refused (400, 426).", st.refused },
	    { "ccw_ws_events_sent_total", "counter", "Events written to /ws "
	      "clients, each client's copy counted.", st.sent } }, 4);
	metrics_reasons(b, "ccw_ws_closed_total", "/ws clients serve "
	    "closed: a protocol error (1002, 1007, 1009), or dropped (fallen "
	    "behind, or silent past two pings).", (struct metrics_reason[]){
	    { "protocol", st.failed }, { "dropped", st.dropped } }, 2);
}

/* /mcp's sessions: open, the cap, the idle time, how they ended. */
static void
metrics_mcp(struct serve *s, struct evbuffer *b)
{
	struct servemcp_stats	st;

	servemcp_stats(s->mcp, &st);
	metrics_one(b, "ccw_mcp_sessions", "gauge",
	    "MCP sessions open on /mcp.", st.open);
	metrics_one(b, "ccw_mcp_sessions_limit", "gauge",
	    "MCP sessions open at once; beyond, the least recently used "
	    "idle one is evicted, else the initialize gets 503.", st.max);
	metrics_one(b, "ccw_mcp_session_idle_seconds", "gauge",
	    "How long an idle MCP session lives.", st.idle_s);
	metrics_reasons(b, "ccw_mcp_sessions_ended_total", "MCP sessions "
	    "ended, by how: the client's DELETE, idle too long, evicted at "
	    "the cap.", (struct metrics_reason[]){
	    { "deleted", st.deleted }, { "expired", st.expired },
	    { "evicted", st.evicted } }, 3);
	metrics_one(b, "ccw_mcp_sessions_opened_total", "counter",
	    "MCP sessions initialized and kept.", st.opened);
	metrics_one(b, "ccw_mcp_sessions_refused_total", "counter",
	    "MCP initializes refused (503): at the cap, no session idle.",
	    st.refused);
}

/* Everything but the loop files: read now, on the event loop. */
static void
metrics_live(struct serve *s, struct evbuffer *b)
{
	static const char *const cls[] = { "1xx", "2xx", "3xx", "4xx", "5xx" };
	struct sock_stats	 ss;
	struct http_stats	 st;
	struct ws_stats		 wst;
	uint64_t		 commits = 0;
	size_t			 i;

	memset(&ss, 0, sizeof ss);
	if (s->cfg.sock != NULL)
		sock_stats(s->cfg.sock, &ss);
	for (i = 0; i < s->cfg.nroots; i++)
		commits += host_commits(s->cfg.roots[i].host);
	metrics_one(b, "ccw_loops_hosted", "gauge",
	    "Loops this process drives now.", serve_hosted(s));
	metrics_workers(s, b);
	metrics_containment(s, b);
	metrics_family(b, "ccw_state_commits_total", "counter",
	    "State file commits: the hosted loops' engine, front-end writes.");
	metrics_sample(b, "ccw_state_commits_total", "by", "engine", commits);
	metrics_sample(b, "ccw_state_commits_total", "by", "front_end",
	    s->writes);
	metrics_one(b, "ccw_events_total", "counter",
	    "Events published on the bus.", bus_last(s->cfg.bus));
	metrics_family(b, "ccw_event_subscribers", "gauge",
	    "Event subscribers: /api/events streams, control socket "
	    "subscriptions, /ws clients.");
	metrics_sample(b, "ccw_event_subscribers", "via", "sse",
	    sse_nclients(s->sse));
	metrics_sample(b, "ccw_event_subscribers", "via", "socket",
	    ss.subscribers);
	ws_stats(s->ws, &wst);
	metrics_sample(b, "ccw_event_subscribers", "via", "ws", wst.clients);
	metrics_one(b, "ccw_sse_subscribers", "gauge",
	    "Clients streaming /api/events.", sse_nclients(s->sse));
	metrics_one(b, "ccw_sse_events_sent_total", "counter",
	    "Events written to streams, each client's copy counted.",
	    sse_sent(s->sse));
	metrics_one(b, "ccw_sse_queue_bytes_max", "gauge",
	    "The deepest /api/events client queue: bytes not yet read.",
	    sse_queued_max(s->sse));
	metrics_one(b, "ccw_sse_pending_events", "gauge",
	    "Coalesced events waiting for the next flush.",
	    sse_pending(s->sse));
	metrics_one(b, "ccw_jobs_limit", "gauge",
	    "Loops run at once (--jobs; 0: no limit).", s->cfg.jobs);
	metrics_one(b, "ccw_jobs_refused_total", "counter",
	    "Starts (503) and start-up resumes refused for want of a "
	    "--jobs slot; serve queues none.", s->jobs_refused);
	metrics_ws(s, b);
	metrics_mcp(s, b);
	metrics_sock(s, b);
	http_server_stats(s->http, &st);
	metrics_conns(b, "http", "HTTP", st.open, st.accepted);
	metrics_one(b, "ccw_http_refused_total", "counter",
	    "HTTP connections refused (the cap).", st.refused);
	metrics_family(b, "ccw_http_replies_total", "counter",
	    "HTTP replies by status class.");
	for (i = 0; i < 5; i++)
		metrics_sample(b, "ccw_http_replies_total", "class", cls[i],
		    st.by_class[i + 1]);
}

/* Back on the loop: the page, unless the client left. */
static void
metrics_scan_done(void *arg)
{
	struct metrics_job	*j = arg;
	struct serve_call	*c = j->c;
	struct evbuffer		*b;
	size_t			 i;

	if (c->r != NULL && !c->s->freeing) {
		b = evbuffer_new();
		metrics_family(b, "ccw_loops", "gauge",
		    "Loop files in the hosted roots by status.");
		for (i = 0; i < METRICS_NLOOP; i++)
			metrics_sample(b, "ccw_loops", "status",
			    metrics_loop_status[i],
			    (unsigned long long)j->loops[i]);
		metrics_live(c->s, b);
		metrics_meters(c->s, b);
		metrics_process(&j->proc, b);
		http_reply(c->r, 200, "text/plain; version=0.0.4; "
		    "charset=utf-8", NULL, evbuffer_pullup(b, -1),
		    evbuffer_get_length(b));
		evbuffer_free(b);
	}
	serve_call_end(c);
	free(j);
}

/* GET /metrics: the files counted off the loop, then the page. */
void
serve_metrics(struct serve *s, struct http_req *r, const struct serve_match *m)
{
	struct metrics_job	*j = xcalloc(1, sizeof *j);

	(void)m;
	j->c = serve_call_new(s, r, &s->cfg.roots[0], NULL);
	if (committer_submit(s->io, metrics_scan_run, metrics_scan_done,
	    j) != 0) {
		metrics_scan_run(j);
		metrics_scan_done(j);
	}
}
