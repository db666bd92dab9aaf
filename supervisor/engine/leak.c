/*
 * leak.c: the one report of processes that outlived their worker: a
 * warning in the log, the count in the host's meter (serve's
 * ccw_processes_leaked_total) and a processes_leaked event naming the
 * agent on the host's bus.  Whoever finds them (the sweep at a worker's
 * death, a cgroup with processes left) reports through here.
 */
#include <config.h>

#include <jansson.h>

#include "agent.h"
#include "bus.h"
#include "children.h"
#include "leak.h"
#include "log.h"
#include "meter.h"

/*
 * n processes of agent_id (of loop_id) outlived its worker and were
 * ended; how names them (e.g. "sleep[123] bash[124]") or says how they
 * were found.  meter, bus: the host's (NULL: not counted, not
 * published).  The host calls this (host.c's leak listener).
 */
void
leak_report(struct meter *meter, struct bus *bus, const char *loop_id,
    const char *agent_id, unsigned n, const char *how)
{
	if (n == 0)
		return;
	log_warnx("%s%s%s: %u process%s outlived the worker and %s ended: %s",
	    loop_id != NULL ? loop_id : "", loop_id != NULL ? " " : "",
	    agent_id, n, n == 1 ? "" : "es", n == 1 ? "was" : "were",
	    how != NULL ? how : "");
	if (meter != NULL)
		meter_leaked(meter, n);
	if (bus != NULL)
		bus_publish(bus, "processes_leaked", json_pack("{s:s, s:s?, "
		    "s:s, s:I, s:s, s:s++}", "level", "warning", "loop_id",
		    loop_id, "agent_id", agent_id, "count", (json_int_t)n,
		    "processes", how != NULL ? how : "", "message", agent_id,
		    ": processes outlived the worker and were ended: ",
		    how != NULL ? how : ""));
}

/*
 * An agent's worker died and left n processes, now ended: told to the
 * listener on the process's one child registry (a host: leak_report),
 * which every agent table shares, whichever front end made it.
 */
void
leak_agent(struct agent *a, unsigned n, const char *how)
{
	children_leaked(a->sup->children, a->sup->loop_id, a->id, n, how);
}
