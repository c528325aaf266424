/* The memory budget: what all clients together may make remvirtd hold
 * (their input and output buffers, partial packets included, and the
 * stream data waiting for an endpoint), counted in three buckets at once:
 * all clients, read-only clients, and each user (a Unix socket's uid, a
 * network client's SASL user or certificate DN, one bucket for network
 * clients with neither).  Each bucket has a limit from remvirtd.conf.
 *
 * A client owns one share and re-states what it holds after each change
 * to its buffers: a few integer operations, no lookup (the user's bucket
 * is found when the client connects or authenticates).  Who may grow is
 * decided by client.c: the client that would pass a limit is closed. */
#ifndef RV_SERVER_BUDGET_H
#define RV_SERVER_BUDGET_H

#include <stddef.h>

typedef struct rvs_budget_bucket {
    size_t used;
    size_t limit;
    const char *key;            /* the remvirtd.conf key that sets limit */
} rvs_budget_bucket;

typedef struct rvs_budget_user rvs_budget_user;

typedef struct rvs_budget {
    rvs_budget_bucket all;
    rvs_budget_bucket readonly;
    size_t user_limit;
    rvs_budget_user *users;     /* those with a client connected */
} rvs_budget;

struct rvs_budget_user {
    rvs_budget_bucket bucket;
    int clients;
    rvs_budget_user *next;
    char name[];                /* "uid 1000", "SASL user bob", ... */
};

/* One client's part: where it is counted and how much it holds. */
typedef struct rvs_budget_share {
    rvs_budget *budget;
    rvs_budget_user *user;      /* NULL: not counted (admin, detached, closed) */
    size_t held;
    int readonly;
} rvs_budget_share;

void rvs_budget_init(rvs_budget *b, size_t all, size_t readonly, size_t user);

/* Counts what the client holds (s->held) under user `name` and, if
 * readonly, with the read-only clients, from now on: at first (s->user
 * NULL) and again when it authenticates or becomes read-only.  -1 when out
 * of memory, nothing changed. */
int rvs_budget_join(rvs_budget_share *s, rvs_budget *b, const char *name, int readonly);
/* Stops counting it: the buckets get back what it holds. */
void rvs_budget_leave(rvs_budget_share *s);

/* The client now holds `now` bytes.  Unsigned arithmetic wraps, so one
 * subtraction serves growth and shrinking alike. */
static inline void rvs_budget_hold(rvs_budget_share *s, size_t now)
{
    size_t delta = now - s->held;
    s->held = now;
    s->budget->all.used += delta;
    s->user->bucket.used += delta;
    if (s->readonly)
        s->budget->readonly.used += delta;
}

/* The first of the client's buckets that `more` bytes would take past its
 * limit, or NULL. */
static inline const rvs_budget_bucket *rvs_budget_over(const rvs_budget_share *s, size_t more)
{
    if (s->user->bucket.used + more > s->user->bucket.limit)
        return &s->user->bucket;
    if (s->readonly && s->budget->readonly.used + more > s->budget->readonly.limit)
        return &s->budget->readonly;
    if (s->budget->all.used + more > s->budget->all.limit)
        return &s->budget->all;
    return NULL;
}

/* "uid 1000's budget (memory_budget_user_bytes = 8388608, 8123456 bytes
 * held)", for the log line that closes a client. */
const char *rvs_budget_describe(const rvs_budget_share *s, const rvs_budget_bucket *b,
                                char *buf, size_t len);

#endif
