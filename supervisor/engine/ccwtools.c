/*
 * ccwtools.c: CCW's own tool files read as CCW reads them: cli-tools.json
 * (an agent enabled only when listed with enabled exactly true, unless
 * CCW migrates the file; primaryModel, envFile, settingsFile, effort) and cli-settings.json (defaultTool), under $CCW_DATA_DIR/.claude
 * or ~/.claude.  Never fatal: a bad file is a warning and CCW's defaults.
 */
#include <config.h>

#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "toolconfig.h"
#include "xmalloc.h"

/* CCW's directory under its data dir or HOME (CCW's name, not a tool's). */
#define CCW_DIR	".claude"

/* Warnings pile up in the config for the command line to print. */
void
config_warn(struct config *cfg, char *msg)
{
	cfg->warnings = xreallocarray(cfg->warnings, cfg->nwarnings + 1,
	    sizeof *cfg->warnings);
	cfg->warnings[cfg->nwarnings++] = msg;
}

/*
 * Where CCW keeps NAME: $CCW_DATA_DIR/.claude/NAME when that file exists,
 * else HOME/.claude/NAME (NULL without a home).  doctor shows the same.
 */
char *
config_ccw_path(const char *home, const char *name)
{
	const char	*data = getenv("CCW_DATA_DIR");
	struct stat	 sb;
	char		*p;

	if (data != NULL && *data != '\0') {
		xasprintf(&p, "%s/" CCW_DIR "/%s", data, name);
		if (lstat(p, &sb) == 0)
			return p;
		free(p);
	}
	if (home == NULL)
		return NULL;
	xasprintf(&p, "%s/" CCW_DIR "/%s", home, name);
	return p;
}

/*
 * One JSON object from a CCW file; *missing when absent.  A file that
 * does not parse is a warning naming it and the parser's complaint.
 */
static json_t *
ccwtools_read(struct config *cfg, const char *path, int *missing)
{
	json_error_t	 jerr;
	struct stat	 sb;
	json_t		*j;
	char		*msg;

	*missing = 0;
	if (stat(path, &sb) == -1 && errno == ENOENT) {
		*missing = 1;
		return NULL;
	}
	j = json_load_file(path, 0, &jerr);
	if (j != NULL && json_is_object(j))
		return j;
	if (j == NULL)
		xasprintf(&msg, "%s: line %d, column %d: %s; using CCW's "
		    "defaults (every tool enabled)", path, jerr.line,
		    jerr.column, jerr.text);
	else
		xasprintf(&msg, "%s: expected a JSON object at the top; "
		    "using CCW's defaults (every tool enabled)", path);
	config_warn(cfg, msg);
	json_decref(j);
	return NULL;
}

/* "~" and "~/x" are the home's; a relative path is CCW's directory's. */
static char *
ccwtools_expand(const char *path, const char *home, const char *dir)
{
	char	*p;

	if (path[0] == '~' && (path[1] == '\0' || path[1] == '/') &&
	    home != NULL)
		xasprintf(&p, "%s%s", home, path + 1);
	else if (path[0] == '/' || dir == NULL)
		p = xstrdup(path);
	else
		xasprintf(&p, "%s/%s", dir, path);
	return p;
}

/* The value part of a .env line: quoted, or bare up to a " #" comment. */
static char *
ccwtools_env_value(const char *v)
{
	const char	*end;
	char		*out, *o;

	while (*v == ' ' || *v == '\t')
		v++;
	if (*v == '"' || *v == '\'') {
		if ((end = strrchr(v + 1, *v)) == NULL)
			return NULL;
		out = o = xmalloc((size_t)(end - v));
		for (v++; v < end; v++) {
			if (*end == '"' && *v == '\\' && v + 1 < end) {
				v++;
				*o++ = *v == 'n' ? '\n' : *v == 't' ? '\t' :
				    *v;
			} else
				*o++ = *v;
		}
		*o = '\0';
		return out;
	}
	for (end = v; *end != '\0'; end++) {
		if (*end == '#' && (end == v || end[-1] == ' ' ||
		    end[-1] == '\t'))
			break;
	}
	while (end > v && (end[-1] == ' ' || end[-1] == '\t' ||
	    end[-1] == '\r'))
		end--;
	out = xmalloc((size_t)(end - v) + 1);
	memcpy(out, v, (size_t)(end - v));
	out[end - v] = '\0';
	return out;
}

/*
 * A .env text into ENV: KEY=VALUE lines, "export " allowed, # comments
 * and blank lines skipped, values bare, 'single' or "double" quoted
 * (\n, \t, \\ and \" inside double quotes).  A line that is none of
 * these is an error naming its number.
 */
int
config_env_parse(const char *text, json_t *env, char **err)
{
	const char	*line = text, *nl, *k, *ke, *eq;
	char		*buf, *val;
	unsigned	 lineno = 0;
	size_t		 n;

	for (; line != NULL && *line != '\0'; line = nl != NULL ? nl + 1 :
	    NULL) {
		lineno++;
		nl = strchr(line, '\n');
		n = nl != NULL ? (size_t)(nl - line) : strlen(line);
		buf = xmalloc(n + 1);
		memcpy(buf, line, n);
		buf[n] = '\0';
		for (k = buf; *k == ' ' || *k == '\t'; k++)
			;
		if (*k == '\0' || *k == '#' || (*k == '\r' && k[1] == '\0')) {
			free(buf);
			continue;
		}
		if (strncmp(k, "export ", 7) == 0)
			for (k += 7; *k == ' '; k++)
				;
		for (ke = k; *ke == '_' || isalnum((unsigned char)*ke); ke++)
			;
		for (eq = ke; *eq == ' ' || *eq == '\t'; eq++)
			;
		val = NULL;
		if (ke == k || isdigit((unsigned char)*k) || *eq != '=' ||
		    (val = ccwtools_env_value(eq + 1)) == NULL) {
			xasprintf(err, "line %u: expected KEY=VALUE", lineno);
			free(buf);
			return -1;
		}
		buf[ke - buf] = '\0';
		json_object_set_new(env, k, json_string(val));
		free(val);
		free(buf);
	}
	return 0;
}

/* envFile read now, so a bad one is a warning at start, not a dead tool. */
static json_t *
ccwtools_env_file(struct config *cfg, const char *tool, const char *path)
{
	json_t	*env;
	FILE	*fp;
	char	*text = NULL, *err = NULL, *msg;
	size_t	 len = 0;

	if ((fp = fopen(path, "r")) == NULL) {
		xasprintf(&msg, "%s (envFile of %s): %s; ignored", path, tool,
		    strerror(errno));
		config_warn(cfg, msg);
		return NULL;
	}
	if (getdelim(&text, &len, '\0', fp) < 0) {
		free(text);
		text = xstrdup("");
	}
	fclose(fp);
	env = json_object();
	if (config_env_parse(text, env, &err) == -1) {
		xasprintf(&msg, "%s (envFile of %s): %s; ignored", path, tool,
		    err);
		config_warn(cfg, msg);
		json_decref(env);
		env = NULL;
	}
	free(err);
	free(text);
	return env;
}

/* KEY of CCW's entry into options.OPT unless our own options set it. */
static void
ccwtools_opt(struct tool_cfg *t, const char *opt, json_t *v)
{
	if (v == NULL)
		return;
	if (t->options == NULL)
		t->options = json_object();
	if (json_object_get(t->options, opt) == NULL)
		json_object_set(t->options, opt, v);
	json_decref(v);
}

/*
 * Does CCW migrate this file as it reads it (claude-cli-tools.ts,
 * migrateConfig)?  It does when parseFloat(version || '1.0') is below
 * 3.3 or not a number, or when the file has "models".  A migrated file
 * keeps CCW's older meaning: a default tool it lacks, and an entry
 * without "enabled", are enabled.  Files CCW writes ("3.4.0") are not.
 */
static int
ccwtools_migrates(const json_t *root)
{
	const json_t	*v = json_object_get(root, "version");
	const char	*s;
	char		 num[32];
	size_t		 n;

	if (json_object_get(root, "models") != NULL)
		return 1;
	if (json_is_number(v) && json_number_value(v) != 0)
		return !(json_number_value(v) >= 3.3);
	if ((s = json_string_value(v)) == NULL || *s == '\0')
		return 1;
	/* parseFloat: leading blanks, then the longest decimal prefix */
	while (isspace((unsigned char)*s))
		s++;
	n = strspn(s, "+-0123456789.eE");
	if (n == 0 || n >= sizeof num)
		return 1;
	memcpy(num, s, n);
	num[n] = '\0';
	return !(strtod(num, NULL) >= 3.3);
}

/*
 * One agent row CCW's file leaves out (absent, or not an object): CCW
 * enables it only when it migrates the file (it adds its defaults).
 */
static void
ccwtools_absent(struct tool_cfg *t, const struct ccw_set *set, int migrate)
{
	if (!migrate && !set->enabled && adapter_is_agent(t->name))
		t->enabled = 0;
}

/* One of CCW's tool entries over ours: set[] marks what our file set. */
static void
ccwtools_entry(struct config *cfg, struct tool_cfg *t, json_t *v,
    const struct ccw_set *set, int migrate, const char *home,
    const char *dir)
{
	json_t		*e, *m;
	const char	*s;
	char		*p;

	e = json_object_get(v, "enabled");
	/*
	 * CCW: enabled === true; "false", "true", 1 all disable.  Absent
	 * (or null, as "??" reads it) is true only in a migrated file.
	 */
	if (e == NULL || json_is_null(e))
		ccwtools_absent(t, set, migrate);
	else if (!set->enabled)
		t->enabled = json_is_true(e);
	m = json_object_get(v, "primaryModel");
	if (json_is_string(m) && json_string_length(m) > 0 &&
	    strlen(json_string_value(m)) == json_string_length(m) &&
	    !set->model && t->model == NULL)
		t->model = xstrdup(json_string_value(m));
	if ((s = json_string_value(json_object_get(v, "envFile"))) != NULL &&
	    *s != '\0') {
		p = ccwtools_expand(s, home, dir);
		ccwtools_opt(t, "env", ccwtools_env_file(cfg, t->name, p));
		free(p);
	}
	if (!(adapter_find(t->name)->flags & ADAPTER_CCW_SETTINGS))
		return;
	if ((s = json_string_value(json_object_get(v, "settingsFile"))) !=
	    NULL && *s != '\0') {
		p = ccwtools_expand(s, home, dir);
		ccwtools_opt(t, "settings_file", json_string(p));
		free(p);
	}
	if ((s = json_string_value(json_object_get(v, "effort"))) != NULL &&
	    *s != '\0')
		ccwtools_opt(t, "effort", json_string(s));
}

/* cli-settings.json's defaultTool, when it names an agent tool we have. */
static char *
ccwtools_settings_default(struct config *cfg, const char *home, char **why)
{
	json_t		*j;
	const char	*s;
	char		*path, *name = NULL;
	int		 missing;

	if ((path = config_ccw_path(home, "cli-settings.json")) == NULL)
		return NULL;
	j = ccwtools_read(cfg, path, &missing);
	s = json_string_value(json_object_get(j, "defaultTool"));
	if (adapter_is_agent(s)) {
		name = xstrdup(s);
		xasprintf(why, "defaultTool in %s", path);
	}
	json_decref(j);
	free(path);
	return name;
}

/*
 * The default tool when our file named none: CCW's (cli-settings.json's
 * defaultTool, else the table's ADAPTER_CCW_DEFAULT row) when the user
 * has CCW's files, else the ADAPTER_DEFAULT row; when that one is
 * disabled, the first enabled agent CLI in the table's (CCW's) order.
 */
static void
ccwtools_default(struct config *cfg, const char *home, int have_ccw)
{
	const struct tool_cfg	*t, *cur = NULL, *first = NULL;
	char			*name, *why = NULL;
	size_t			 i;

	if ((name = ccwtools_settings_default(cfg, home, &why)) == NULL) {
		name = xstrdup(adapter_flagged(have_ccw ? ADAPTER_CCW_DEFAULT :
		    ADAPTER_DEFAULT)->name);
		if (have_ccw)
			xasprintf(&why, "CCW's default (%s)", name);
		else
			why = xstrdup("built-in default");
	}
	/* cfg->tools parallels the table: its order is CCW's */
	for (i = 0; i < cfg->ntools; i++) {
		t = &cfg->tools[i];
		if (strcmp(t->name, name) == 0)
			cur = t;
		if (first == NULL && t->enabled && adapter_is_agent(t->name))
			first = t;
	}
	if (cur != NULL && !cur->enabled && first != NULL) {
		free(why);
		xasprintf(&why, "%s is disabled: the first enabled tool",
		    name);
		free(name);
		name = xstrdup(first->name);
	}
	free(cfg->default_tool);
	cfg->default_tool = name;
	free(cfg->default_reason);
	cfg->default_reason = why;
}

/*
 * CCW's files over the config: SET[i] says what our file set for tool i
 * (it wins); the default tool is chosen here unless our file named one.
 */
void
config_ccw_apply(struct config *cfg, const char *home,
    const struct ccw_set *set, int default_set)
{
	json_t		*root = NULL, *tools, *v;
	char		*path, *dir = NULL, *slash, *msg;
	size_t		 i;
	int		 missing = 1, migrate;

	if ((path = config_ccw_path(home, "cli-tools.json")) != NULL) {
		root = ccwtools_read(cfg, path, &missing);
		dir = xstrdup(path);
		if ((slash = strrchr(dir, '/')) != NULL)
			*slash = '\0';
	}
	tools = json_object_get(root, "tools");
	migrate = root == NULL || ccwtools_migrates(root);
	if (tools != NULL && !json_is_object(tools)) {
		xasprintf(&msg, "%s: tools: expected an object; read as "
		    "listing no tool, as CCW reads it", path);
		config_warn(cfg, msg);
		tools = NULL;
	}
	/* a file CCW read: only what it lists with enabled === true */
	for (i = 0; root != NULL && i < cfg->ntools; i++) {
		v = json_object_get(tools, cfg->tools[i].name);
		if (json_is_object(v))
			ccwtools_entry(cfg, &cfg->tools[i], v, &set[i],
			    migrate, home, dir);
		else
			ccwtools_absent(&cfg->tools[i], &set[i], migrate);
	}
	json_decref(root);
	free(dir);
	free(path);
	if (!default_set)
		ccwtools_default(cfg, home, !missing);
}
