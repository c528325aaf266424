/* The application's handles: rv_conn (a connection and what the
 * application registered on it) and rv_dom (a domain the server named),
 * their reference counts, and the checks every entry point makes on
 * them. */
#ifndef RV_CLIENT_HANDLE_H
#define RV_CLIENT_HANDLE_H

#include <pthread.h>

#include "client/remvirt.h"
#include "rv_remote.h"

struct rvc_conn;

enum { RVC_EVENTS_DOMAIN, RVC_EVENTS_NETWORK, RVC_EVENTS_POOL };

/* An application's event callback; the server knows it by callback_id,
 * which means nothing until the server's reply to REGISTER_ANY has been
 * checked and `registered` is set: until then no event reaches it. */
typedef struct lifecycle_callback {
    struct lifecycle_callback *next;
    int registered;
    int callback_id;
    int family;                 /* RVC_EVENTS_*: the server numbers each family apart */
    /* The one of these its family and event call for. */
    rv_domain_lifecycle_callback cb;
    rv_network_lifecycle_callback net_cb;
    rv_storage_pool_lifecycle_callback pool_cb;
    rv_storage_pool_refresh_callback refresh_cb;
    void *opaque;
    rv_free_callback free_cb;
} lifecycle_callback;

struct rv_conn {
    struct rvc_conn *rpc;       /* NULL once closed */
    char *uri;
    int close_callback;         /* the server took CONNECT_REGISTER_CLOSE_CALLBACK */
    int refs;                   /* the opener's, plus one per rv_dom */
    int with_loop;              /* attached to the application's event loop */
    int keepalive;              /* the server does keepalive */
    int event_callbacks;        /* the server has REGISTER_ANY (316) */
    /* The application's callbacks; cb_lock guards them.  The loop's
     * thread calls them one at a time, never with cb_lock held. */
    pthread_mutex_t cb_lock;
    lifecycle_callback *callbacks;
    lifecycle_callback *delivering; /* the one the loop's thread is running now */
    int delivering_retired;     /* ...and it was deregistered meanwhile: free it after */
    int registering;            /* REGISTER_ANY calls whose reply is not handled yet */
    pthread_cond_t registered;  /* registering dropped */
    rv_connect_close_callback close_cb;
    void *close_opaque;
    rv_free_callback close_free;
    int closed_reported;        /* the close callback has run */
};

struct rv_dom {
    rv_conn *conn;
    char *name;
    unsigned char uuid[RV_UUID_LEN];
    int id;                     /* atomic: a call may update it while another reads */
};

/* A new rv_conn for uri holding one reference (the opener's), not
 * connected yet; NULL when out of memory. */
rv_conn *rvc_handle_new(const char *uri);
void rvc_handle_ref(rv_conn *conn);
/* The last reference frees conn with the callbacks it still holds. */
void rvc_handle_unref(rv_conn *conn);

/* Free a list of callbacks, calling each one's free_cb. */
void rvc_free_callbacks(lifecycle_callback *list);

/* Entry points start with these: the connection's RPC side (with the
 * last error cleared), or NULL with the last error saying why (no
 * handle, or the connection is closed).  func names the entry point. */
struct rvc_conn *rvc_handle_rpc(rv_conn *conn, const char *func);
struct rvc_conn *rvc_dom_rpc(rv_dom *dom, const char *func);

/* 0 if conn is attached to an event loop, else -1 with the last error
 * saying how to get one. */
int rvc_handle_need_loop(rv_conn *conn, const char *func);

/* The wire form of dom; it borrows dom's name. */
rv_nonnull_domain rvc_dom_to_wire(const rv_dom *dom);
/* A handle for a domain the server sent; takes the decoded name.  NULL
 * with the last error set when out of memory. */
rv_dom *rvc_dom_from_wire(rv_conn *conn, rv_nonnull_domain *w);
/* The id a started or destroyed domain now has. */
void rvc_dom_set_id(rv_dom *dom, int id);

/* The same for networks (client/network.c). */
struct rvc_conn *rvc_net_rpc(rv_net *net, const char *func);
rv_nonnull_network rvc_net_to_wire(const rv_net *net);
rv_net *rvc_net_from_wire(rv_conn *conn, rv_nonnull_network *w);

/* Storage pools and volumes (client/storage.c).  Their structs are here
 * because generated calls go from a volume to its connection. */
struct rv_pool {
    rv_conn *conn;
    char *name;
    unsigned char uuid[RV_UUID_LEN];
};
struct rv_vol {
    rv_conn *conn;
    char *pool;
    char *name;
    char *key;
};
struct rvc_conn *rvc_pool_rpc(rv_pool *pool, const char *func);
rv_nonnull_storage_pool rvc_pool_to_wire(const rv_pool *pool);
rv_pool *rvc_pool_from_wire(rv_conn *conn, rv_nonnull_storage_pool *w);
struct rvc_conn *rvc_vol_rpc(rv_vol *vol, const char *func);
rv_nonnull_storage_vol rvc_vol_to_wire(const rv_vol *vol);
rv_vol *rvc_vol_from_wire(rv_conn *conn, rv_nonnull_storage_vol *w);

/* Domain snapshots (client/snapshot.c): a snapshot keeps its own copy of
 * its domain's handle.  The struct is here because generated calls go
 * from a snapshot to its connection. */
struct rv_snap {
    rv_conn *conn;
    char *name;
    rv_dom *dom;
};
struct rvc_conn *rvc_snap_rpc(rv_snap *snap, const char *func);
rv_nonnull_domain_snapshot rvc_snap_to_wire(const rv_snap *snap);
rv_snap *rvc_snap_from_wire(rv_conn *conn, rv_nonnull_domain_snapshot *w);

#endif
