/* rvsh: the event commands: waiting for domain, network and storage pool events. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "rvsh.h"

static const char *lifecycle_event_name(int event)
{
    static const char *const names[] = {
        "Defined", "Undefined", "Started", "Suspended", "Resumed", "Stopped", "Shutdown",
        "PMSuspended", "Crashed",
    };
    return event >= 0 && event < (int)(sizeof(names) / sizeof(names[0])) ? names[event]
                                                                          : "unknown";
}

/* virsh's words for each event's details. */
static const char *lifecycle_detail_name(int event, int detail)
{
    static const char *const defined[] = { "Added", "Updated", "Renamed", "Snapshot" };
    static const char *const undefined[] = { "Removed", "Renamed" };
    static const char *const started[] = { "Booted", "Migrated", "Restored", "Snapshot",
                                           "Event wakeup", "Recreated" };
    static const char *const suspended[] = { "Paused", "Migrated", "I/O Error", "Watchdog",
                                             "Restored", "Snapshot", "API error", "Post-copy",
                                             "Post-copy Error" };
    static const char *const resumed[] = { "Unpaused", "Migrated", "Snapshot", "Post-copy",
                                           "Post-copy Error" };
    static const char *const stopped[] = { "Shutdown", "Destroyed", "Crashed", "Migrated",
                                           "Saved", "Failed", "Snapshot" };
    static const char *const shutdown[] = { "Finished", "Finished after guest request",
                                            "Finished after host request" };
    static const char *const pmsuspended[] = { "Memory", "Disk" };
    static const char *const crashed[] = { "Core Dump", "Crashloaded" };
    const char *const *names = NULL;
    int n = 0;
#define USE(list) (names = (list), n = (int)(sizeof(list) / sizeof((list)[0])))
    switch (event) {
    case RV_DOMAIN_EVENT_DEFINED: USE(defined); break;
    case RV_DOMAIN_EVENT_UNDEFINED: USE(undefined); break;
    case RV_DOMAIN_EVENT_STARTED: USE(started); break;
    case RV_DOMAIN_EVENT_SUSPENDED: USE(suspended); break;
    case RV_DOMAIN_EVENT_RESUMED: USE(resumed); break;
    case RV_DOMAIN_EVENT_STOPPED: USE(stopped); break;
    case RV_DOMAIN_EVENT_SHUTDOWN: USE(shutdown); break;
    case RV_DOMAIN_EVENT_PMSUSPENDED: USE(pmsuspended); break;
    case RV_DOMAIN_EVENT_CRASHED: USE(crashed); break;
    default: break;
    }
#undef USE
    return detail >= 0 && detail < n ? names[detail] : "unknown";
}

/* In the event loop's thread. */
static void on_lifecycle(rv_conn *conn, rv_dom *dom, int event, int detail, void *opaque)
{
    shell *sh = opaque;
    (void)conn;
    pthread_mutex_lock(&sh->lock);
    /* Without --loop only the first counts, even if more arrive before
     * the command deregisters. */
    if (!sh->events_wanted || sh->events_seen < sh->events_wanted) {
        /* Printed before the waiting command can print its count. */
        printf("event 'lifecycle' for domain '%s': %s %s\n", rv_domain_get_name(dom),
               lifecycle_event_name(event), lifecycle_detail_name(event, detail));
        fflush(stdout);
        sh->events_seen++;
        pthread_cond_signal(&sh->changed);
    }
    pthread_mutex_unlock(&sh->lock);
}

static void on_net_lifecycle(rv_conn *conn, rv_net *net, int event, int detail, void *opaque)
{
    static const char *const names[] = { "Defined", "Undefined", "Started", "Stopped" };
    shell *sh = opaque;
    (void)conn, (void)detail;
    pthread_mutex_lock(&sh->lock);
    if (!sh->events_wanted || sh->events_seen < sh->events_wanted) {
        printf("event 'lifecycle' for network %s: %s\n", rv_network_get_name(net),
               event >= 0 && event < 4 ? names[event] : "unknown");
        fflush(stdout);
        sh->events_seen++;
        pthread_cond_signal(&sh->changed);
    }
    pthread_mutex_unlock(&sh->lock);
}

/* One line of pool event output, as virsh prints it, counted (without
 * --loop only the first). */
static void print_pool_event(shell *sh, const char *kind, rv_pool *pool, const char *what)
{
    pthread_mutex_lock(&sh->lock);
    if (!sh->events_wanted || sh->events_seen < sh->events_wanted) {
        printf("event '%s' for storage pool %s%s%s\n", kind, rv_storage_pool_get_name(pool),
               what ? ": " : "", what ? what : "");
        fflush(stdout);
        sh->events_seen++;
        pthread_cond_signal(&sh->changed);
    }
    pthread_mutex_unlock(&sh->lock);
}

static void on_pool_lifecycle(rv_conn *conn, rv_pool *pool, int event, int detail, void *opaque)
{
    static const char *const names[] = { "Defined", "Undefined", "Started", "Stopped",
                                         "Created", "Deleted" };
    (void)conn, (void)detail;
    print_pool_event(opaque, "lifecycle", pool, event >= 0 && event < 6 ? names[event] : "unknown");
}

static void on_pool_refresh(rv_conn *conn, rv_pool *pool, void *opaque)
{
    (void)conn;
    print_pool_event(opaque, "refresh", pool, NULL);
}

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

static const char *close_reason_text(int reason)
{
    switch (reason) {
    case RV_CONNECT_CLOSE_REASON_EOF: return "the server closed the connection";
    case RV_CONNECT_CLOSE_REASON_KEEPALIVE: return "the server stopped answering keepalive";
    case RV_CONNECT_CLOSE_REASON_CLIENT: return "closed";
    default: return "an error on the connection";
    }
}

int cmd_event(shell *sh, const command *cmd, const cmd_args *a)
{
    int loop = a->opts & 1, timeout = 0;
    const char *timeout_text = a->opt_values[1], *domain = a->opt_values[2];
    if (timeout_text && (parse_int(timeout_text, &timeout) < 0 || timeout <= 0)) {
        error_line("Numeric value '%s' for <timeout> option is malformed or out of range",
                   timeout_text);
        return -1;
    }
    /* net-event and pool-event: the same, for network lifecycle events
     * (--network) and storage pool lifecycle or refresh events (--pool). */
    int network = strcmp(cmd->name, "net-event") == 0;
    int storage = strcmp(cmd->name, "pool-event") == 0;
    const char *kind = a->opt_values[3];
    int refresh = storage && kind && strcmp(kind, "refresh") == 0;
    if ((network || storage) && kind && strcmp(kind, "lifecycle") != 0 && !refresh) {
        error_line("unknown event type %s", kind);
        return -1;
    }
    rv_dom *dom = domain && !network && !storage ? lookup_domain(sh, domain, BY_ANY) : NULL;
    rv_net *net = domain && network ? lookup_network(sh, domain, BY_UUID | BY_NAME) : NULL;
    rv_pool *pool = domain && storage ? lookup_pool(sh, domain) : NULL;
    if (domain && !dom && !net && !pool)
        return -1;
    pthread_mutex_lock(&sh->lock);
    sh->events_seen = 0;
    sh->events_wanted = loop ? 0 : 1;
    pthread_mutex_unlock(&sh->lock);
    int id;
    if (network)
        id = rv_connect_network_event_register_lifecycle(sh->conn, net, on_net_lifecycle, sh, NULL);
    else if (refresh)
        id = rv_connect_storage_pool_event_register_refresh(sh->conn, pool, on_pool_refresh, sh,
                                                            NULL);
    else if (storage)
        id = rv_connect_storage_pool_event_register_lifecycle(sh->conn, pool, on_pool_lifecycle,
                                                              sh, NULL);
    else
        id = rv_connect_domain_event_register_lifecycle(sh->conn, dom, on_lifecycle, sh, NULL);
    rv_domain_free(dom);
    rv_network_free(net);
    rv_storage_pool_free(pool);
    if (id < 0) {
        lib_error();
        return -1;
    }
    struct sigaction sa = { .sa_handler = on_sigint }, old;
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    sigaction(SIGINT, &sa, &old);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += timeout;
    int timed_out = 0, closed = -1, seen;
    pthread_mutex_lock(&sh->lock);
    for (;;) {
        seen = sh->events_seen;
        closed = sh->closed_reason;
        if ((!loop && seen > 0) || closed >= 0 || interrupted)
            break;
        /* Wake now and then to notice Ctrl-C. */
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 200 * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        if (timeout && (until.tv_sec > deadline.tv_sec ||
                        (until.tv_sec == deadline.tv_sec && until.tv_nsec > deadline.tv_nsec)))
            until = deadline;
        if (pthread_cond_timedwait(&sh->changed, &sh->lock, &until) == ETIMEDOUT && timeout) {
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            if (now.tv_sec > deadline.tv_sec ||
                (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec)) {
                timed_out = 1;
                seen = sh->events_seen;
                break;
            }
        }
    }
    pthread_mutex_unlock(&sh->lock);
    sigaction(SIGINT, &old, NULL);
    if (closed >= 0) {
        error_line("the connection to the hypervisor was lost: %s", close_reason_text(closed));
        printf("events received: %d\n", seen);
        return -1;
    }
    int gone = network ? rv_connect_network_event_deregister(sh->conn, id)
             : storage ? rv_connect_storage_pool_event_deregister(sh->conn, id)
                       : rv_connect_domain_event_deregister(sh->conn, id);
    if (gone < 0)
        lib_error();
    if (timed_out)
        printf("event loop timed out\n");
    printf("events received: %d\n", seen);
    /* As virsh: a timeout with no event is a failure. */
    return timed_out && seen == 0 ? -1 : 0;
}

/* Bit order matters: cmd_event reads bits 0 (loop), 1 (timeout), 2 (domain). */
static const char *const opts_event[] = { "loop", "timeout=", "domain=", NULL };

const command rvsh_event_commands[] = {
    { .name = "event", .run = cmd_event,
      .options = opts_event,
      .summary = "print domain lifecycle events as they come (the first; --loop: all; --timeout seconds)" },
    { .name = NULL },
};
