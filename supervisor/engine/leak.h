/*
 * leak.h: processes that outlived their worker (the sweep's, or a
 * cgroup's leftovers): counted in the host's meter for
 * ccw_processes_leaked_total and published as a warning event.
 */
#ifndef CCW_LEAK_H
#define CCW_LEAK_H

struct agent;
struct bus;
struct meter;

void	leak_report(struct meter *, struct bus *, const char *, const char *,
	    unsigned, const char *);
void	leak_agent(struct agent *, unsigned, const char *);

#endif
