/* rvsh: what the shell's parts share.  rvsh.c reads the command line and
 * dispatches; each cmd_<family>.c holds one family's commands and their
 * table (rvsh_<family>_commands); util.c what several families use. */
#ifndef RVSH_H
#define RVSH_H

#include <pthread.h>
#include <stddef.h>

#include <libxml/tree.h>

#include "remvirt.h"

typedef struct shell {
    const char *uri;            /* NULL: the library's default */
    unsigned int open_flags;
    int json;
    int quiet;
    int reconnecting;           /* the last connection died */
    int keepalive_interval;     /* -k; 0: the library's default */
    int keepalive_count;        /* -K; -1: the library's default */
    rv_conn *conn;
    /* What the event loop's thread tells the command waiting for events. */
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int events_seen;
    int events_wanted;          /* event without --loop: 1; with it: 0 (all) */
    int closed_reason;          /* -1: open */
} shell;

/* How a command's domain argument may be resolved, as in virsh. */
enum { BY_ID = 1, BY_UUID = 2, BY_NAME = 4, BY_ANY = BY_ID | BY_UUID | BY_NAME };

#define MAX_OPTIONS 32

typedef struct cmd_args {
    const char *value;          /* the first positional argument, if any */
    const char *value2;         /* the second (command.arg2), if any */
    const char *value3;         /* the third (command.arg3), if any */
    unsigned int opts;          /* bit i: options[i] was given */
    const char *opt_values[MAX_OPTIONS];    /* for options written "name=" */
} cmd_args;

typedef struct command command;
struct command {
    const char *name;           /* NULL ends a table */
    int (*run)(shell *sh, const command *cmd, const cmd_args *a);
    const char *arg;            /* name of the required argument, or NULL */
    int arg_optional;           /* ...which may be left out (freecell [<cellno>]) */
    unsigned int lookup;        /* BY_* when arg is a domain */
    /* A second positional argument (vol-upload <vol> <file>), or NULL;
     * when not required it may be left out (domblkstat <domain> [<device>]). */
    const char *arg2;
    int arg2_required;
    const char *arg3;           /* a required third one (vol-create-as's capacity), or NULL */
    const char *const *options; /* NULL-terminated; "name=" takes a value */
    const char *summary;
};

/* The families' commands, in the order help lists them. */
extern const command rvsh_domain_commands[];
extern const command rvsh_host_commands[];
extern const command rvsh_event_commands[];
extern const command rvsh_stats_commands[];
extern const command rvsh_network_commands[];
extern const command rvsh_storage_commands[];
extern const command rvsh_snapshot_commands[];
extern const command rvsh_nodedev_commands[];
extern const command rvsh_iface_commands[];
extern const command rvsh_secret_commands[];
extern const command rvsh_nwfilter_commands[];
extern const command rvsh_dommanage_commands[];
extern const command rvsh_domstats_commands[];
extern const command rvsh_node_commands[];
extern const command rvsh_cpu_commands[];
extern const command rvsh_domtune_commands[];

/* Options more than one family uses. */
extern const char *const opts_list[];       /* all, inactive, json */
extern const char *const opts_json[];
extern const char *const opts_disable[];

/* ---- util.c ---- */
/* "error: ..." on stderr, as virsh prints a failure. */
void error_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The library's reason for the last failure, as an error line. */
void lib_error(void);
int has_opt(const command *cmd, const cmd_args *a, const char *name);
const char *opt_value(const command *cmd, const cmd_args *a, const char *name);
const char *state_name(int state);
const char *reason_name(int state, int reason);
const char *yes_no(int v);
void json_string(const char *s);
void json_key(const char *key, int *first);
void json_str_field(const char *key, const char *value, int *first);
void json_num_field(const char *key, unsigned long long value, int known, int *first);
void json_bool_field(const char *key, int value, int *first);
int parse_int(const char *s, int *out);
int read_file(const char *path, char **out);
size_t text_width(const char *s);
void print_cell(const char *s, size_t width, int last);
int print_line(char *s);
void print_size(const char *label, unsigned long long bytes);
void print_table(const char *const *heads, size_t ncols, const char *const *cells, size_t nrows);
xmlNode *xml_child(const xmlNode *n, const char *name);
char *xml_text(const xmlNode *n);
void list_failed(shell *sh, int (*count)(rv_conn *conn), const char *what);
xmlDoc *parse_xml(const char *xml, const char *what);
char *xml_attr(const xmlNode *n, const char *name);
char *cpumap_ranges(const unsigned char *map, int ncpus);
const char *param_text(const rv_typed_parameter *p, char *buf, size_t size);
void json_param(const rv_typed_parameter *p);
int affect_flags(const command *cmd, const cmd_args *a, unsigned int *flags);

/* ---- lookups, with virsh's error lines when not found ---- */
rv_dom *lookup_domain(shell *sh, const char *text, unsigned int how);
rv_net *lookup_network(shell *sh, const char *text, unsigned int how);
rv_pool *lookup_pool(shell *sh, const char *text);

/* event, net-event, pool-event (cmd_event.c). */
int cmd_event(shell *sh, const command *cmd, const cmd_args *a);

#endif
