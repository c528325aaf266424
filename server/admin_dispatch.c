/* The admin socket's dispatcher: the generic dispatch path with the admin
 * program's generated table. */
#include "server/admin.h"

#include "server/dispatch.h"
#include "server/rv_admin_dispatch.gen.h"

static const rvs_program admin_program = {
    .number = RV_ADMIN_PROGRAM,
    .version = RV_ADMIN_VERSION,
    .procs = rvs_admin_procs,
    .nprocs = &rvs_admin_nprocs,
    .driver_first = 0,
};

/* One daemon, one server: the handlers reach it here rather than through
 * every call. */
static rvs_server *admin_srv;

int rvs_admin_dispatch(rvs_client *c, const char *frame, size_t len, void *opaque)
{
    (void)opaque;
    return rvs_dispatch_frame_program(c, frame, len, &admin_program);
}

int rvs_admin_init(rv_err *err)
{
    return rvs_dispatch_check_program(&admin_program, err);
}

void rvs_admin_set_server(rvs_server *srv)
{
    admin_srv = srv;
}

rvs_server *rvs_admin_server(void)
{
    return admin_srv;
}
