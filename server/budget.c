#include "server/budget.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rvs_budget_init(rvs_budget *b, size_t all, size_t readonly, size_t user)
{
    *b = (rvs_budget){
        .all = { .limit = all, .key = "memory_budget_bytes" },
        .readonly = { .limit = readonly, .key = "memory_budget_readonly_bytes" },
        .user_limit = user,
    };
}

/* Users are few (one per uid or identity with a client connected) and
 * looked up only when a client connects or authenticates. */
static rvs_budget_user *user_get(rvs_budget *b, const char *name)
{
    for (rvs_budget_user *u = b->users; u; u = u->next)
        if (strcmp(u->name, name) == 0) {
            u->clients++;
            return u;
        }
    size_t len = strlen(name) + 1;
    rvs_budget_user *u = calloc(1, sizeof(*u) + len);
    if (!u)
        return NULL;
    memcpy(u->name, name, len);
    u->bucket = (rvs_budget_bucket){ .limit = b->user_limit, .key = "memory_budget_user_bytes" };
    u->clients = 1;
    u->next = b->users;
    b->users = u;
    return u;
}

static void user_put(rvs_budget *b, rvs_budget_user *u)
{
    if (--u->clients > 0)
        return;
    for (rvs_budget_user **p = &b->users; *p; p = &(*p)->next)
        if (*p == u) {
            *p = u->next;
            break;
        }
    free(u);
}

int rvs_budget_join(rvs_budget_share *s, rvs_budget *b, const char *name, int readonly)
{
    rvs_budget_user *u = user_get(b, name);
    if (!u)
        return -1;
    rvs_budget_leave(s);
    s->budget = b;
    s->user = u;
    s->readonly = readonly;
    size_t held = s->held;
    s->held = 0;
    rvs_budget_hold(s, held);
    return 0;
}

void rvs_budget_leave(rvs_budget_share *s)
{
    if (!s->user)
        return;
    size_t held = s->held;
    rvs_budget_hold(s, 0);
    s->held = held;
    user_put(s->budget, s->user);
    s->user = NULL;
}

const char *rvs_budget_describe(const rvs_budget_share *s, const rvs_budget_bucket *b,
                                char *buf, size_t len)
{
    const char *who = b == &s->budget->all        ? "all clients"
                      : b == &s->budget->readonly ? "read-only clients"
                                                  : s->user->name;
    snprintf(buf, len, "the memory budget of %s (%s = %zu; %zu bytes held)", who, b->key,
             b->limit, b->used);
    return buf;
}
